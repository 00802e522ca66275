// MPI_Allgather and MPI_Allgatherv. Every member publishes its send block (with MPI_IN_PLACE, its
// own block of its receive buffer) and copies every other member's straight into its receive
// buffer; it writes only its own buffer, and only blocks that no other member reads. The final
// phase keeps every send block valid until the last reader is done.
#include <algorithm>
#include <optional>
#include <vector>

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
using collective::Blocks;
using collective::Call;

namespace {

struct AllgatherSide {
  Block send;  // with MPI_IN_PLACE, the member's own block of its receive buffer
  Blocks recv;
  mutable collective::Truncation truncation;  // written by the piece that fills this member
};

// The nonblocking allgather: one piece per member, copying every member's block into its buffer.
class AllgatherOp : public nbc::Sided<AllgatherSide> {
 public:
  using Sided::Sided;

 private:
  Work plan() override {
    return per_member([&](int r) { return of(r).send.bytes() * static_cast<std::size_t>(size()); });
  }
  int home(int index) const override { return index; }
  void run(int index) override {
    const AllgatherSide& to = of(index);
    for (int k = 0; k < size(); ++k) {
      const int r = (index + k) % size();
      const Block& from = of(r).send;
      const Block into = to.recv.at(r);
      if (from.address == into.address) continue;  // the member's own block, in place
      to.truncation.check(r, from, into);
      collective::transfer(from, into);
    }
  }
  int outcome(int rank, std::string* reason) const override {
    return of(rank).truncation.outcome(reason);
  }
};

// The receive blocks of an Allgather between two members, and their sizes, worked out once
// (Blocks::at walks the layout's description at every call).
struct PairBlocks {
  explicit PairBlocks(const Blocks& recv)
      : at{recv.at(0), recv.at(1)}, bytes{at[0].bytes(), at[1].bytes()} {}
  // Whether the Allgather goes through the pair ring: decided on the receive blocks, which every
  // member passes alike (their send blocks may differ in layout).
  bool fit(const Comm& comm) const {
    return collective::takes_pair_ring(comm, std::max(bytes[0], bytes[1]));
  }
  Block at[2];
  std::size_t bytes[2];
};

// A small Allgather between two members through the pair ring: each member packs its block into
// its slot, copies it from there to its own place and unpacks the other member's slot into the
// other's place, one exchange of slot lines each way where a meeting hands over its ring entry,
// both published sides and the other member's buffer. Contiguous blocks are one memcpy each
// (collective::unpack_slot).
int pair_allgather(MPI_Comm comm, std::string_view function, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, const PairBlocks& recv, int world_rank) {
  using collective::PairRing;
  collective::PairCall pair(comm, function, world_rank);
  const int me = pair.rank();
  const int other = 1 - me;
  const Block send = sendbuf == MPI_IN_PLACE ? recv.at[me]
                                             : Block{const_cast<void*>(sendbuf),
                                                     static_cast<std::size_t>(sendcount), sendtype};
  const std::size_t bytes = sendbuf == MPI_IN_PLACE ? recv.bytes[me] : send.bytes();
  // A send block larger than the receive blocks (an error the reader reports from `bytes`) is cut
  // to the payload, which still holds more than the member's own receive block.
  const std::size_t packed = std::min(bytes, PairRing::kPayload);
  PairRing::Slot& slot = pair.claim();
  slot.header = {PairRing::Kind::allgather, 0, send.count, bytes, MPI_DATATYPE_NULL, MPI_OP_NULL};
  collective::pack_into_slot(send, packed, slot.payload);
  pair.post(slot);
  collective::Truncation truncation;
  if (send.address != recv.at[me].address) {
    // Only this member writes its slot until its next call: the other member reads it meanwhile.
    truncation.check(me, Block{nullptr, bytes, MPI_BYTE}, recv.at[me]);
    collective::unpack_slot(slot.payload, packed, recv.at[me], recv.bytes[me]);
  }
  const PairRing::Slot& theirs = pair.await(PairRing::Kind::allgather);
  const std::size_t sent = theirs.header.bytes;
  truncation.check(other, Block{nullptr, sent, MPI_BYTE}, recv.at[other]);
  collective::unpack_slot(theirs.payload, std::min(sent, PairRing::kPayload), recv.at[other],
                          recv.bytes[other]);
  pair.consume();
  return truncation.raise(comm, function);
}

int allgather(const collective::Start& start, MPI_Comm comm, std::string_view function,
              const void* sendbuf, int sendcount, MPI_Datatype sendtype, const Blocks& recv,
              int world_rank) {
  if (spanning::spans(comm)) {
    const Block send = spanning::own_block(sendbuf, sendcount, sendtype);
    return spanning::run(comm, function, start,
                         [=](int tag) { return spanning::allgather(send, recv, comm, tag); });
  }
  if (!start.blocking()) {
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (start.mode == collective::Start::Mode::nonblocking && comm->size() == 2) {
      const int me = comm->rank_of(world_rank);
      const collective::PairArguments arguments = collective::pair_allgather(
          me, Block{const_cast<void*>(sendbuf), static_cast<std::size_t>(sendcount), sendtype},
          recv, in_place);
      if (collective::takes_pair_nbc(*comm, collective::pair_bytes(arguments, me))) {
        return collective::issue_pair(comm, function, start, world_rank, me, arguments);
      }
    }
    return nbc::issue<AllgatherOp>(
        comm, function, start,
        [sendbuf, sendcount, sendtype, recv, in_place](AllgatherOp& op, int rank) {
          AllgatherSide& side = op.side(rank);
          side.send = in_place ? recv.at(rank)
                               : Block{const_cast<void*>(sendbuf),
                                       static_cast<std::size_t>(sendcount), sendtype};
          side.recv = recv;
        });
  }
  if (comm->size() == 2) {
    if (const PairBlocks blocks(recv); blocks.fit(*comm)) {
      return pair_allgather(comm, function, sendbuf, sendcount, sendtype, blocks, world_rank);
    }
  }
  const bool in_place = sendbuf == MPI_IN_PLACE;
  namespace numa = collective::numa;
  Call call(comm, function);
  const int me = call.rank();
  const int size = call.size();
  numa::GatherSide mine{
      in_place ? recv.at(me)
               : Block{const_cast<void*>(sendbuf), static_cast<std::size_t>(sendcount), sendtype},
      nullptr};
  collective::Truncation truncation;
  // Across NUMA nodes, decided on the receive layout, which every member passes alike.
  std::size_t total = 0;
  if (numa::may_stage(*comm)) {
    for (int r = 0; r < size; ++r) total += recv.at(r).bytes();
  }
  if (numa::considered(*comm, total)) {
    std::vector<std::size_t> blocks(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) blocks[static_cast<std::size_t>(r)] = recv.at(r).bytes();
    if (numa::plan(*comm, numa::Collective::allgather, total, 0, true, blocks).algorithm ==
        numa::Algorithm::staged) {
      const numa::Nodes nodes(numa::layout_of(*comm));
      std::optional<numa::NodeBuffer> staging;
      numa::staged_allgather(call, nodes, recv, mine, staging, truncation);
      if (me == 0) numa::count_staged(numa::Collective::allgather);
      call.phase();
      return truncation.raise(comm, function);
    }
  }
  call.publish(&mine);
  // Starting after the caller spreads the readers over the members' buffers.
  for (int k = in_place ? 1 : 0; k < size; ++k) {
    const int r = (me + k) % size;
    const Block& from = r == me ? mine.send : call.of<Block>(r);
    truncation.check(r, from, recv.at(r));
    collective::transfer(from, recv.at(r));
  }
  call.phase();
  return truncation.raise(comm, function);
}

int check_send(MPI_Comm comm, std::string_view function, const void* sendbuf, int sendcount,
               MPI_Datatype sendtype, const void* recvbuf) {
  if (int rc =
          collective::check_not_in_place(comm, function, "recvbuf", recvbuf, "only as sendbuf");
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (sendbuf == MPI_IN_PLACE) return MPI_SUCCESS;
  if (int rc = check_count(comm, function, "sendcount", sendcount); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "sendtype", sendtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_buffer(comm, function, "sendbuf", sendbuf, sendcount, sendtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return collective::check_not_aliased(comm, function, sendbuf, recvbuf, sendcount > 0);
}

int allgather_entry(const collective::Start& start, std::string_view function, const void* sendbuf,
                    int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm) {
  // Looked up once for the checks and the ring (each lookup reads the current thread).
  const int world_rank = caller_world_rank();
  if (int rc = check_initialized(function, world_rank); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function, world_rank); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::allgather(start, function, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                nullptr, nullptr, recvtype, comm);
  if (int rc = check_send(comm, function, sendbuf, sendcount, sendtype, recvbuf);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_count(comm, function, "recvcount", recvcount); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "recvtype", recvtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_buffer(comm, function, "recvbuf", recvbuf, recvcount, recvtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return allgather(start, comm, function, sendbuf, sendcount, sendtype,
                   Blocks::regular(recvbuf, recvcount, recvtype), world_rank);
}

}  // namespace

extern "C" int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgather_entry(collective::Start{}, "MPI_Allgather", sendbuf, sendcount, sendtype,
                         recvbuf, recvcount, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Allgather);

extern "C" int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgather_entry(
      collective::Start::nonblocking(request, {{sendtype, recvtype}, MPI_OP_NULL}),
      "MPI_Iallgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Iallgather);

extern "C" int PMPI_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgather_entry(
      collective::Start::persistent(request, {{sendtype, recvtype}, MPI_OP_NULL}),
      "MPI_Allgather_init", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Allgather_init);

namespace {

int allgatherv_entry(const collective::Start& start, std::string_view function, const void* sendbuf,
                     int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  // Looked up once for the checks and the ring (each lookup reads the current thread).
  const int world_rank = caller_world_rank();
  if (int rc = check_initialized(function, world_rank); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function, world_rank); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::allgather(start, function, sendbuf, sendcount, sendtype, recvbuf, 0,
                                recvcounts, displs, recvtype, comm);
  if (int rc = check_send(comm, function, sendbuf, sendcount, sendtype, recvbuf);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const int size = comm->size();
  if (int rc = collective::check_counts(comm, function, "recvcounts", recvcounts, size);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = collective::check_displs(comm, function, "displs", displs); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_datatype(comm, function, "recvtype", recvtype); rc != MPI_SUCCESS) return rc;
  if (int rc = collective::check_buffer_of(comm, function, "recvbuf", recvbuf, recvcounts, size,
                                           recvtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return allgather(start, comm, function, sendbuf, sendcount, sendtype,
                   Blocks::varying(recvbuf, recvcounts, displs, recvtype), world_rank);
}

}  // namespace

extern "C" int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgatherv_entry(collective::Start{}, "MPI_Allgatherv", sendbuf, sendcount, sendtype,
                          recvbuf, recvcounts, displs, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Allgatherv);

extern "C" int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgatherv_entry(
      collective::Start::nonblocking(request, {{sendtype, recvtype}, MPI_OP_NULL}),
      "MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Iallgatherv);

extern "C" int PMPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                                    MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgatherv_entry(
      collective::Start::persistent(request, {{sendtype, recvtype}, MPI_OP_NULL}),
      "MPI_Allgatherv_init", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
      comm);
}
WEFT_MPI_ALIAS(MPI_Allgatherv_init);
