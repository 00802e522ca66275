// MPI_Bcast. The root publishes its buffer and every member copies straight from it into its own:
// for a large buffer each reader copies its own, in parallel on all cores; for a small one the
// last member to arrive copies for everyone inside the final phase, so that nobody waits for the
// root's publication. Either way the final phase keeps the root's buffer valid until the last
// copy is done. A small Bcast of up to 64 members goes through a ring of call slots instead
// (mpi/coll/ring_call.h): the root copies into its slot and returns.
#include "coll/collective.h"
#include "coll/collective_spanning.h"
#include "coll/inter_collective.h"
#include "coll/nbc.h"
#include "coll/numa_collectives.h"
#include "coll/pair_nbc.h"
#include "coll/ring_call.h"
#include "errhan/error.h"
#include "util/profiling.h"
#include "weft/trace.h"

using namespace weft::mpi;
using collective::Block;
using collective::Call;

namespace {

struct BcastSide {
  Block data;
  int root = 0;
  bool copied = false;                 // the member copied the root's data itself
  collective::numa::BcastStage stage;  // the staged path's ring, on a node's leader
  // Written by whoever copies into this member, read by it after the final phase.
  mutable collective::Truncation truncation;
};

// The nonblocking broadcast: one piece per reader, copying the root's buffer into its own.
class BcastOp : public nbc::Sided<BcastSide> {
 public:
  using Sided::Sided;

 private:
  int reader(int index) const { return index < root_ ? index : index + 1; }
  Work plan() override {
    root_ = of(0).root;
    return {size() - 1, of(root_).data.bytes() * static_cast<std::size_t>(size() - 1)};
  }
  int home(int index) const override { return reader(index); }
  void run(int index) override {
    const Block& from = of(root_).data;
    const BcastSide& to = of(reader(index));
    to.truncation.check(root_, from, to.data);
    collective::transfer(from, to.data);
  }
  int outcome(int rank, std::string* reason) const override {
    return of(rank).truncation.outcome(reason);
  }
  int root_ = 0;  // set by plan()
};

// A small Bcast through a ring of call slots (PairCall or FanCall, mpi/coll/ring_call.h): the root
// copies its data (`bytes`, mine.bytes()) into its slot and returns; every other member copies it
// out when it comes. A contiguous buffer is one memcpy each way (collective::unpack_slot).
template <class RingCall>
int ring_bcast(std::string_view function, const Block& mine, std::size_t bytes, int root,
               MPI_Comm comm, int world_rank) {
  using collective::SlotKind;
  RingCall ring(comm, function, world_rank);
  if (ring.rank() == root) {
    collective::CallSlot& slot = ring.claim();
    slot.header = {SlotKind::bcast, root, mine.count, bytes, MPI_DATATYPE_NULL, MPI_OP_NULL};
    collective::pack_into_slot(mine, bytes, slot.payload);
    ring.post(slot);
    return MPI_SUCCESS;
  }
  const collective::CallSlot& slot = ring.await(root, SlotKind::bcast);
  const std::size_t sent = slot.header.bytes;
  collective::unpack_slot(slot.payload, sent, mine, bytes);
  ring.finish(SlotKind::bcast, root);
  if (sent <= bytes) return MPI_SUCCESS;
  collective::Truncation truncation;
  truncation.check(root, Block{nullptr, sent, MPI_BYTE}, mine);
  return truncation.raise(comm, function);
}

int bcast_entry(const collective::Start& start, std::string_view function, void* buffer, int count,
                MPI_Datatype datatype, int root, MPI_Comm comm) {
  // Looked up once for the checks and the ring (each lookup reads the current thread).
  const int world_rank = caller_world_rank();
  if (int rc = check_initialized(function, world_rank); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function, world_rank); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::bcast(start, function, buffer, count, datatype, root, comm);
  if (int rc = check_rank(comm, function, "root", root, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_count(comm, function, "count", count); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = collective::check_not_in_place(comm, function, "buffer", buffer, "nowhere");
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_buffer(comm, function, "buffer", buffer, count, datatype); rc != MPI_SUCCESS) {
    return rc;
  }
  if (spanning::spans(comm)) {
    return spanning::run(comm, function, start, [=](int tag) {
      return spanning::bcast(buffer, count, datatype, root, comm, tag);
    });
  }
  if (!start.blocking()) {
    const Block data{buffer, static_cast<std::size_t>(count), datatype};
    if (start.mode == collective::Start::Mode::nonblocking &&
        collective::takes_pair_nbc(*comm, data.bytes())) {
      const int me = comm->rank_of(world_rank);
      return collective::issue_pair(comm, function, start, world_rank, me,
                                    collective::pair_bcast(me, root, data));
    }
    return nbc::issue<BcastOp>(comm, function, start, [data, root](BcastOp& op, int rank) {
      op.side(rank).data = data;
      op.side(rank).root = root;
    });
  }

  const Block data{buffer, static_cast<std::size_t>(count), datatype};
  const std::size_t data_bytes = data.bytes();
  if (collective::takes_pair_ring(*comm, data_bytes)) {
    return ring_bcast<collective::PairCall>(function, data, data_bytes, root, comm, world_rank);
  }
  if (collective::takes_fan_ring(*comm, data_bytes)) {
    return ring_bcast<collective::FanCall>(function, data, data_bytes, root, comm, world_rank);
  }

  Call call(comm, function);
  const int size = call.size();
  BcastSide mine;
  mine.data = {buffer, static_cast<std::size_t>(count), datatype};
  // Across NUMA nodes, decided on the root's size (every member then decides alike).
  bool staged = false;
  if (collective::numa::considered(*comm, mine.data.bytes())) {
    const std::size_t bytes =
        call.rank() == root ? mine.data.bytes() : call.of<BcastSide>(root).data.bytes();
    const collective::numa::Plan plan =
        collective::numa::plan(*comm, collective::numa::Collective::bcast, bytes, root, true);
    if (plan.algorithm == collective::numa::Algorithm::staged) {
      const collective::numa::Nodes nodes(collective::numa::layout_of(*comm));
      collective::numa::staged_bcast(call, nodes, plan, root, mine);
      if (call.rank() == root) collective::numa::count_staged(collective::numa::Collective::bcast);
      staged = true;
    }
  }
  const bool serial =
      mine.data.bytes() * static_cast<std::size_t>(size - 1) <= collective::kSerialCopyBytes;
  if (!staged && call.rank() != root && !serial) {
    const Block& from = call.of<BcastSide>(root).data;
    mine.truncation.check(root, from, mine.data);
    collective::transfer(from, mine.data);
    mine.copied = true;
  }
  if (!staged) call.publish(&mine);
  // Copies for the members that did not copy themselves (a small broadcast, or a member whose
  // size differs from the root's and so took the other path).
  call.phase([&] {
    const Block& from = call.of<BcastSide>(root).data;
    for (int r = 0; r < size; ++r) {
      const BcastSide& side = call.of<BcastSide>(r);
      if (r == root || side.copied) continue;
      side.truncation.check(root, from, side.data);
      collective::transfer(from, side.data);
    }
  });
  return mine.truncation.raise(comm, function);
}

}  // namespace

extern "C" int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return bcast_entry(collective::Start{}, "MPI_Bcast", buffer, count, datatype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Bcast);

extern "C" int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                           MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return bcast_entry(
      collective::Start::nonblocking(request, {{datatype, MPI_DATATYPE_NULL}, MPI_OP_NULL}),
      "MPI_Ibcast", buffer, count, datatype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Ibcast);

extern "C" int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root,
                               MPI_Comm comm, MPI_Info, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return bcast_entry(
      collective::Start::persistent(request, {{datatype, MPI_DATATYPE_NULL}, MPI_OP_NULL}),
      "MPI_Bcast_init", buffer, count, datatype, root, comm);
}
WEFT_MPI_ALIAS(MPI_Bcast_init);
