// MPI_Reduce and MPI_Allreduce. Every member publishes its input; the elements are split into
// chunks and the member owning a chunk reduces it over all inputs, in rank order, straight into
// the result buffers: the root's (Reduce) or every member's (Allreduce). A small reduction is one
// chunk, reduced by the last member to arrive inside the final phase. Owners write disjoint chunks
// and read only their own chunk of the inputs, so an input that is also a result buffer
// (MPI_IN_PLACE) is read before it is written; the final phase keeps every buffer valid until the
// last writer is done.
#include <array>
#include <cstring>
#include <optional>

#include "coll/collective.h"
#include "coll/collective_spanning.h"
#include "coll/inter_collective.h"
#include "coll/nbc_reduction.h"
#include "coll/numa_collectives.h"
#include "coll/pair_nbc.h"
#include "coll/ring_call.h"
#include "errhan/error.h"
#include "util/profiling.h"
#include "weft/trace.h"

using namespace weft::mpi;
using collective::Call;
using collective::Contribution;

namespace {

// Reduces elements [first, first + count) of every member's input into `acc` and returns it, or
// into `scratch` when `acc` is one of the inputs (MPI_IN_PLACE) and returns that.
// `members` is the blocking Call or the nonblocking instance.
template <class Members>
void* reduce_chunk(Members& members, std::size_t first, std::size_t count, MPI_Datatype type,
                   MPI_Op op, void* acc, std::optional<collective::Scratch>& scratch) {
  auto input = [&](int r) {
    return collective::element(members.template of<Contribution>(r).input, first, *type);
  };
  bool aliased = false;
  for (int r = 0; r < members.size() && !aliased; ++r) aliased = input(r) == acc;
  if (aliased) acc = scratch.emplace(count, *type).data();
  collective::fold(members.size(), input, count, type, op, acc);
  return acc;
}

// Reduces chunk `part` of `chunks` into member `owner`'s result buffer; with `everyone`, copies it
// on into every other member's (starting after the owner spreads the writes over the members).
template <class Members>
void reduce_part(Members& members, const collective::Chunks& chunks, int part, int owner,
                 bool everyone, MPI_Datatype datatype, MPI_Op op) {
  const std::size_t first = chunks.begin(part);
  const std::size_t length = chunks.size(part);
  auto result = [&](int r) {
    return collective::element(members.template of<Contribution>(r).output, first, *datatype);
  };
  std::optional<collective::Scratch> scratch;
  void* own = result(owner);
  void* acc = reduce_chunk(members, first, length, datatype, op, own, scratch);
  if (acc != own) copy(acc, length, *datatype, own, length, *datatype);
  const int size = members.size();
  for (int k = 1; everyone && k < size; ++k) {
    copy(acc, length, *datatype, result((owner + k) % size), length, *datatype);
  }
}

// The nonblocking Reduce and Allreduce: one piece per chunk of the elements, reduced over every
// input in rank order into the root's result (Ireduce) or into every member's (Iallreduce). A
// chunk's piece runs near the member that owns it, as in the blocking calls.
template <bool kAll>
class ReduceOp : public nbc::ReductionOp<> {
 public:
  using ReductionOp::ReductionOp;

 private:
  Work plan() override {
    const nbc::ReductionSide& first = of(0);
    root_ = first.root;
    if (disagree(root_)) return {};
    chunks_.emplace(first.count, *first.type, size());
    return {chunks_->parts(), first.bytes() * static_cast<std::size_t>(size())};
  }
  int home(int index) const override { return (root_ + index) % size(); }
  void run(int index) override {
    const nbc::ReductionSide& first = of(0);
    reduce_part(*this, *chunks_, index, kAll ? home(index) : root_, kAll, first.datatype, first.op);
  }
  int root_ = 0;  // set by plan()
  std::optional<collective::Chunks> chunks_;
};

// Whether a nonblocking reduction of `count` elements of `type` between two members goes through
// the PairNbc (mpi/coll/pair_nbc.h): its elements lie in `count * size` bytes from the buffer's
// start, which an eager side copies with one memcpy.
bool pair_nbc_reduction(const Comm& comm, int count, MPI_Datatype type) {
  return type->contiguous() && type->true_lb() == 0 &&
         collective::takes_pair_nbc(comm, static_cast<std::size_t>(count) * type->size());
}

template <bool kAll>
int ireduce(const collective::Start& start, MPI_Comm comm, std::string_view function,
            const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
            int root, int world_rank) {
  if (start.mode == collective::Start::Mode::nonblocking &&
      pair_nbc_reduction(*comm, count, datatype)) {
    const std::size_t elements = static_cast<std::size_t>(count);
    collective::PairArguments arguments;
    arguments.kind = kAll ? collective::SlotKind::allreduce : collective::SlotKind::reduce;
    arguments.root = kAll ? -1 : root;
    arguments.send = {const_cast<void*>(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf), elements,
                      datatype};
    arguments.receive = {recvbuf, elements, datatype};
    arguments.op = op;
    return collective::issue_pair(comm, function, start, world_rank, comm->rank_of(world_rank),
                                  arguments);
  }
  const nbc::ReductionSide mine =
      nbc::contribution(sendbuf, recvbuf, static_cast<std::size_t>(count), datatype, op, root);
  return nbc::issue<ReduceOp<kAll>>(
      comm, function, start,
      [mine](ReduceOp<kAll>& reduce, int rank) { reduce.side(rank) = mine; });
}

int check_reduction(MPI_Comm comm, std::string_view function, const void* sendbuf,
                    const void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    bool receives) {
  if (int rc = check_count(comm, function, "count", count); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = collective::check_op_on(comm, function, op, datatype); rc != MPI_SUCCESS) return rc;
  if (sendbuf != MPI_IN_PLACE) {
    if (int rc = check_buffer(comm, function, "sendbuf", sendbuf, count, datatype);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (!receives) return MPI_SUCCESS;
  if (int rc =
          collective::check_not_in_place(comm, function, "recvbuf", recvbuf, "only as sendbuf");
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_buffer(comm, function, "recvbuf", recvbuf, count, datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return collective::check_not_aliased(comm, function, sendbuf, recvbuf, count > 0);
}

// Whether a blocking reduction of `count` elements of `type` between two members goes through the
// pair ring: its elements then lie in `count * size` bytes from the buffer's start, as they lie in
// a slot's payload.
bool pair_reduction(const Comm& comm, int count, MPI_Datatype type) {
  return type->contiguous() && type->true_lb() == 0 &&
         collective::takes_pair_ring(comm, static_cast<std::size_t>(count) * type->size());
}

// A small Reduce (root >= 0) or Allreduce (root < 0) between two members through the pair ring:
// the non-root of a Reduce copies its input into its slot and returns; the root, or both
// members of an Allreduce, read the other's slot and reduce the two inputs in rank order. An
// Allreduce is one exchange of slot lines each way. A mismatch of signatures is reported by
// every member that reads: both of an Allreduce, the root of a Reduce (the other member has
// returned by then, as from Open MPI's eager send).
//
// The result is in0 op in1 with one call of the operation: apply(op, a, b) makes b = a op b, so
// recvbuf starts as member 1's input and member 0's is applied to it. Member 1 copies its own input
// (nothing in place) and applies the other's slot; member 0 copies the other's slot and applies
// its own input, which is never recvbuf: an Allreduce's is its slot's copy, and only a Reduce
// root's in place is set aside first. Both members of an Allreduce so compute the same thing in the
// same order, and a non-commutative operation gets rank order.
int pair_reduce(MPI_Comm comm, std::string_view function, const void* sendbuf, void* recvbuf,
                int count, MPI_Datatype datatype, MPI_Op op, int root, int world_rank) {
  using collective::PairRing;
  collective::PairCall pair(comm, function, world_rank);
  const int me = pair.rank();
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const std::size_t elements = static_cast<std::size_t>(count);
  const std::size_t bytes = elements * datatype->size();
  const PairRing::Kind kind = root >= 0 ? PairRing::Kind::reduce : PairRing::Kind::allreduce;
  const void* own = input;
  if (me != root) {
    PairRing::Slot& slot = pair.claim();
    slot.header = {kind, root, elements, bytes, datatype, op};
    if (bytes > 0) std::memcpy(slot.payload, input, bytes);
    pair.post(slot);
    if (root >= 0) return MPI_SUCCESS;
    own = slot.payload;
  }
  // A Reduce root 0's input in place, aside: recvbuf takes member 1's input first.
  alignas(16) std::byte aside[PairRing::kPayload];
  if (me == 0 && own == recvbuf && bytes > 0) {
    std::memcpy(aside, own, bytes);
    own = aside;
  }
  const PairRing::Slot& other = pair.await(kind);
  if (other.header.count != elements || other.header.bytes != bytes) {
    // As agree() reports it: member 1 against member 0.
    const std::size_t count0 = me == 0 ? elements : other.header.count;
    const std::size_t bytes0 = me == 0 ? bytes : other.header.bytes;
    const std::size_t count1 = me == 1 ? elements : other.header.count;
    const std::size_t bytes1 = me == 1 ? bytes : other.header.bytes;
    pair.consume();
    const collective::Mismatch mismatch{1, count1, bytes1, 0, count0, bytes0};
    return collective::raise_mismatch(comm, function, &mismatch);
  }
  if (bytes > 0) {
    // Contiguous from the start (pair_reduction): a memcpy is the datatype's copy.
    const void* in0 = me == 0 ? own : static_cast<const void*>(other.payload);
    const void* in1 = me == 1 ? input : static_cast<const void*>(other.payload);
    if (in1 != recvbuf) std::memcpy(recvbuf, in1, bytes);
    apply(op, in0, recvbuf, elements, datatype);
  }
  pair.consume();
  return MPI_SUCCESS;
}

// Whether a Reduce of `count` elements of `type` of 3 or more members goes through the fan ring
// (the same layout as pair_reduction's).
bool fan_reduction(const Comm& comm, int count, MPI_Datatype type) {
  return type->contiguous() && type->true_lb() == 0 &&
         collective::takes_fan_ring(comm, static_cast<std::size_t>(count) * type->size());
}

// A small Reduce of 3 to FanRing::kMaxMembers members through the fan ring: every non-root copies
// its input into its slot and returns; the root reads the slots in rank order and reduces them
// with its own input, as the meeting's flat path does. A mismatch of signatures is reported by the
// root (the others have returned by then, as from Open MPI's eager sends).
int fan_reduce(MPI_Comm comm, std::string_view function, const void* sendbuf, void* recvbuf,
               int count, MPI_Datatype datatype, MPI_Op op, int root, int world_rank) {
  using collective::CallSlot;
  using collective::SlotKind;
  collective::FanCall fan(comm, function, world_rank);
  const int me = fan.rank();
  const void* input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  const std::size_t elements = static_cast<std::size_t>(count);
  const std::size_t bytes = elements * datatype->size();
  if (me != root) {
    CallSlot& slot = fan.claim();
    slot.header = {SlotKind::reduce, root, elements, bytes, datatype, op};
    if (bytes > 0) std::memcpy(slot.payload, input, bytes);
    fan.post(slot);
    return MPI_SUCCESS;
  }
  // The root's input, aside: the result may overwrite it (MPI_IN_PLACE).
  alignas(16) std::byte aside[collective::kSlotPayload];
  if (bytes > 0) std::memcpy(aside, input, bytes);
  const int size = comm->size();
  std::array<const CallSlot*, collective::FanRing::kMaxMembers> slots{};
  for (int r = 0; r < size; ++r) {
    if (r == root) continue;
    slots[r] = &fan.await(r, SlotKind::reduce);
    if (slots[r]->header.count != elements || slots[r]->header.bytes != bytes) {
      const collective::Mismatch mismatch{
          r, slots[r]->header.count, slots[r]->header.bytes, root, elements, bytes};
      fan.finish(SlotKind::reduce, root);
      return collective::raise_mismatch(comm, function, &mismatch);
    }
  }
  collective::fold(
      size,
      [&](int r) {
        return r == root ? static_cast<const void*>(aside)
                         : static_cast<const void*>(slots[r]->payload);
      },
      elements, datatype, op, recvbuf);
  fan.finish(SlotKind::reduce, root);
  return MPI_SUCCESS;
}

// The blocking Reduce (root >= 0) or Allreduce (root < 0) of the members of this process: staged
// through one partial per NUMA node when the cost model says so, else flat.
int blocking_reduction(MPI_Comm comm, std::string_view function, const void* sendbuf, void* recvbuf,
                       int count, MPI_Datatype datatype, MPI_Op op, int root) {
  namespace numa = collective::numa;
  Call call(comm, function);
  const int size = call.size();
  const int me = call.rank();
  numa::ReductionSide mine{{sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf,
                            static_cast<std::size_t>(count), datatype},
                           nullptr};
  const numa::Collective kind = root >= 0 ? numa::Collective::reduce : numa::Collective::allreduce;
  std::optional<numa::Nodes> nodes;
  std::optional<numa::NodeScratch> partial;
  if (numa::considered(*comm, mine.contribution.bytes()) &&
      numa::plan(*comm, kind, mine.contribution.bytes(), root, commutative(op)).algorithm ==
          numa::Algorithm::staged) {
    nodes.emplace(numa::layout_of(*comm));
    const int node = nodes->node_of[static_cast<std::size_t>(me)];
    if (nodes->members[static_cast<std::size_t>(node)].front() == me) {
      partial.emplace(nodes->id[static_cast<std::size_t>(node)], mine.contribution.count,
                      *datatype);
      mine.partial = partial->data();
    }
  }
  call.publish(&mine);
  if (nodes && numa::staged_reduction(call, *nodes, root, datatype, op)) {
    if (me == (root >= 0 ? root : 0)) numa::count_staged(kind);
    call.phase();
    return MPI_SUCCESS;
  }
  const collective::Chunks chunks(mine.contribution.count, *datatype, size);
  if (root >= 0) {
    // Chunks are owned from the root on, so that the root reduces the first.
    const int own_part = (me - root + size) % size;
    collective::reduce_parts(call, chunks, root, own_part, [&](int part) {
      reduce_part(call, chunks, part, root, false, datatype, op);
    });
  } else {
    collective::reduce_parts(call, chunks, 0, me, [&](int part) {
      reduce_part(call, chunks, part, me, true, datatype, op);
    });
  }
  return collective::raise_mismatch(comm, function, call.mismatch());
}

int reduce_entry(const collective::Start& start, std::string_view function, const void* sendbuf,
                 void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm) {
  // Looked up once for the checks and the ring (each lookup reads the current thread).
  const int world_rank = caller_world_rank();
  if (int rc = check_initialized(function, world_rank); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function, world_rank); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::reduce(start, function, sendbuf, recvbuf, count, datatype, op, root, comm);
  if (int rc = check_rank(comm, function, "root", root, false); rc != MPI_SUCCESS) return rc;
  const bool is_root = comm->rank_of(world_rank) == root;
  if (!is_root) {
    if (int rc = collective::check_not_in_place(comm, function, "sendbuf", sendbuf,
                                                "only as sendbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (int rc = check_reduction(comm, function, sendbuf, recvbuf, count, datatype, op, is_root);
      rc != MPI_SUCCESS) {
    return rc;
  }

  if (spanning::spans(comm)) {
    return spanning::run(comm, function, start, [=](int tag) {
      return spanning::reduce(sendbuf, recvbuf, count, datatype, op, root, comm, tag);
    });
  }
  if (!start.blocking()) {
    return ireduce<false>(start, comm, function, sendbuf, recvbuf, count, datatype, op, root,
                          world_rank);
  }
  if (pair_reduction(*comm, count, datatype)) {
    return pair_reduce(comm, function, sendbuf, recvbuf, count, datatype, op, root, world_rank);
  }
  if (fan_reduction(*comm, count, datatype)) {
    return fan_reduce(comm, function, sendbuf, recvbuf, count, datatype, op, root, world_rank);
  }
  return blocking_reduction(comm, function, sendbuf, recvbuf, count, datatype, op, root);
}

}  // namespace

extern "C" int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return reduce_entry(collective::Start{}, "MPI_Reduce", sendbuf, recvbuf, count, datatype, op,
                      root, comm);
}
WEFT_MPI_ALIAS(MPI_Reduce);

extern "C" int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return reduce_entry(collective::Start::nonblocking(request, {{datatype, MPI_DATATYPE_NULL}, op}),
                      "MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm);
}
WEFT_MPI_ALIAS(MPI_Ireduce);

extern "C" int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info,
                                MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return reduce_entry(collective::Start::persistent(request, {{datatype, MPI_DATATYPE_NULL}, op}),
                      "MPI_Reduce_init", sendbuf, recvbuf, count, datatype, op, root, comm);
}
WEFT_MPI_ALIAS(MPI_Reduce_init);

namespace {

int allreduce_entry(const collective::Start& start, std::string_view function, const void* sendbuf,
                    void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  // Looked up once for the checks and the ring (each lookup reads the current thread).
  const int world_rank = caller_world_rank();
  if (int rc = check_initialized(function, world_rank); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function, world_rank); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter())
    return intercoll::allreduce(start, function, sendbuf, recvbuf, count, datatype, op, comm);
  if (int rc = check_reduction(comm, function, sendbuf, recvbuf, count, datatype, op, true);
      rc != MPI_SUCCESS) {
    return rc;
  }

  if (spanning::spans(comm)) {
    return spanning::run(comm, function, start, [=](int tag) {
      return spanning::allreduce(sendbuf, recvbuf, count, datatype, op, comm, tag);
    });
  }
  if (!start.blocking()) {
    return ireduce<true>(start, comm, function, sendbuf, recvbuf, count, datatype, op, 0,
                         world_rank);
  }
  if (pair_reduction(*comm, count, datatype)) {
    return pair_reduce(comm, function, sendbuf, recvbuf, count, datatype, op, -1, world_rank);
  }
  return blocking_reduction(comm, function, sendbuf, recvbuf, count, datatype, op, -1);
}

}  // namespace

extern "C" int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allreduce_entry(collective::Start{}, "MPI_Allreduce", sendbuf, recvbuf, count, datatype,
                         op, comm);
}
WEFT_MPI_ALIAS(MPI_Allreduce);

extern "C" int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allreduce_entry(
      collective::Start::nonblocking(request, {{datatype, MPI_DATATYPE_NULL}, op}),
      "MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, comm);
}
WEFT_MPI_ALIAS(MPI_Iallreduce);

extern "C" int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info,
                                   MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allreduce_entry(
      collective::Start::persistent(request, {{datatype, MPI_DATATYPE_NULL}, op}),
      "MPI_Allreduce_init", sendbuf, recvbuf, count, datatype, op, comm);
}
WEFT_MPI_ALIAS(MPI_Allreduce_init);
