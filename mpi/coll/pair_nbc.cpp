#include "coll/pair_nbc.h"

#include <cstring>
#include <string>
#include <utility>

#include "coll/meeting.h"
#include "coll/nbc.h"
#include "coll/pair_ring.h"
#include "comm/communicator.h"
#include "init/world.h"
#include "op/op.h"
#include "pt2pt/p2p.h"

namespace weft::mpi::collective {

namespace {

// Whether the member calling with `arguments` only sends: it may complete at its call.
bool only_sends(const PairArguments& arguments, int me) {
  return (arguments.kind == SlotKind::bcast && me == arguments.root) ||
         (arguments.kind == SlotKind::reduce && me != arguments.root);
}

// out = in0 op in1 for `count` contiguous elements, in rank order with one call of the operation
// (apply(op, a, b) makes b = a op b). `out` may be either input (MPI_IN_PLACE).
void reduce_two(const void* in0, const void* in1, void* out, std::size_t count, MPI_Datatype type,
                MPI_Op op) {
  const std::size_t bytes = count * type->size();
  if (bytes == 0) return;
  alignas(16) std::byte aside[kSlotPayload];
  if (in0 == out) {
    std::memcpy(aside, in0, bytes);
    in0 = aside;
  }
  if (in1 != out) std::memcpy(out, in1, bytes);
  apply(op, in0, out, count, type);
}

// Holds a failed member's reason for its wait's message (mpi/request/wait.cpp reads a collective
// request's reason from its instance): made only on a failure.
class Failure : public nbc::Instance {
 public:
  Failure(std::string_view function, int rank, std::string reason) : Instance(2, function) {
    set_failure(rank, std::move(reason));
  }

 private:
  Work plan() override { return {}; }
  int home(int) const override { return 0; }
  void run(int) override {}
};

}  // namespace

bool takes_pair_nbc(const Comm& comm, std::size_t bytes) {
  return comm.size() == 2 && bytes <= kSlotPayload;
}

int issue_pair(MPI_Comm comm, std::string_view function, const Start& start,
               const PairArguments& arguments) {
  if (int rc = start.check(comm, function); rc != MPI_SUCCESS) return rc;
  // Looked up once: the caller's ranks and numbers serve the note, the request and the call.
  const int world_rank = caller_world_rank();
  const int me = comm->rank_of(world_rank);
  const CallNumber number = comm->locals[static_cast<std::size_t>(me)].next_call(false);
  // A blocking call of the other member with this number (of the pair ring, or meeting in the
  // ring of meetings) learns that it does not match.
  comm->meetings.pair_ring().note_nonblocking(me, number.call);
  comm->meetings.note_nonblocking(number, function);
  Request* request = nbc::new_request(comm, world_rank, me);
  // No instance names the call in a failure's message or the deadlock report: the request does.
  request->spanning_call = function;
  request->keep.hold(start.kept);
  // Before the call: the other member may complete the request as soon as it is queued.
  *start.request = request;
  comm->meetings.pair_nbc().call(me, number.call, function, arguments, request);
  return MPI_SUCCESS;
}

PairNbc::PairNbc() = default;
PairNbc::~PairNbc() = default;

void PairNbc::call(int me, std::uint64_t call, std::string_view function,
                   const PairArguments& arguments, Request* request) {
  lock_.lock();
  if (count_ > 0 && ahead_ != me) {
    Side& first = sides_[head_];
    if (first.call != call || first.arguments.kind != arguments.kind) {
      // Copied out before the other member may grow the queue.
      const std::uint64_t other_call = first.call;
      const std::string_view other_function = first.function;
      lock_.unlock();
      mismatch(call, function, other_call, other_function);
    }
    Outcome outcomes[2];
    meet(first, 1 - me, arguments, me, outcomes);
    Request* waiting = first.request;
    const std::string_view first_function = first.function;
    if (waiting == nullptr) --eager_;
    head_ = (head_ + 1) % capacity_;
    --count_;
    lock_.unlock();
    if (waiting != nullptr) complete(waiting, 1 - me, first_function, outcomes[1 - me]);
    complete(request, me, function, outcomes[me]);
    return;
  }
  Side& mine = push();
  ahead_ = me;
  mine.call = call;
  mine.function = function;
  mine.arguments = arguments;
  mine.request = request;
  const bool eager = only_sends(arguments, me) && eager_ < kMaxEager;
  if (eager) {
    mine.request = nullptr;
    ++eager_;
    const Block& data = arguments.send;
    mine.bytes = data.bytes();
    if (arguments.kind == SlotKind::bcast) {
      transfer(data, Block{mine.payload, mine.bytes, MPI_BYTE});
    } else if (mine.bytes > 0) {
      // Contiguous from its address (pair_nbc.h): a memcpy is the datatype's copy.
      std::memcpy(mine.payload, data.address, mine.bytes);
    }
  }
  lock_.unlock();
  if (eager) {
    Outcome done;
    complete(request, me, function, done);
  }
}

void PairNbc::complete(Request* request, int rank, std::string_view function, Outcome& outcome) {
  set_empty_status(&request->status);
  request->status.MPI_ERROR = outcome.rc;
  if (outcome.rc != MPI_SUCCESS) {
    request->collective = std::make_shared<Failure>(function, rank, std::move(outcome.reason));
  }
  // Its owner may reuse or free the request from here on.
  finish(*request);
}

std::string_view PairNbc::function_of(std::uint64_t call) {
  const std::lock_guard lock(lock_);
  for (std::size_t i = 0; i < count_; ++i) {
    const Side& side = sides_[(head_ + i) % capacity_];
    if (side.call == call) return side.function;
  }
  return {};
}

void PairNbc::meet(const Side& first, int first_rank, const PairArguments& second, int second_rank,
                   Outcome* outcomes) {
  const PairArguments& one = first.arguments;
  // The first member's data: its eager copy, or its buffer while its request waits.
  const bool copied = first.request == nullptr;
  if (second.kind == SlotKind::barrier) return;
  if (second.kind == SlotKind::bcast) {
    const int root = one.root;
    const bool first_is_root = first_rank == root;
    const Block from =
        first_is_root
            ? (copied ? Block{const_cast<std::byte*>(first.payload), first.bytes, MPI_BYTE}
                      : one.send)
            : second.send;
    const Block& to = first_is_root ? second.receive : one.receive;
    Truncation truncation;
    truncation.check(root, from, to);
    transfer(from, to);
    Outcome& reader = outcomes[first_is_root ? second_rank : first_rank];
    reader.rc = truncation.outcome(&reader.reason);
    return;
  }
  // A Reduce or an Allreduce.
  const std::size_t first_bytes = copied ? first.bytes : one.send.bytes();
  if (one.send.count != second.send.count || first_bytes != second.send.bytes()) {
    // Member 1 against member 0, as agree() reports it. The members that read the result fail, as
    // the pair ring's blocking Reduce reports it: the root of a Reduce, both of an Allreduce.
    const std::size_t counts[2] = {first_rank == 0 ? one.send.count : second.send.count,
                                   first_rank == 1 ? one.send.count : second.send.count};
    const std::size_t bytes[2] = {first_rank == 0 ? first_bytes : second.send.bytes(),
                                  first_rank == 1 ? first_bytes : second.send.bytes()};
    const std::string reason =
        mismatch_reason(Mismatch{1, counts[1], bytes[1], 0, counts[0], bytes[0]});
    for (int r = 0; r < 2; ++r) {
      if (second.kind == SlotKind::allreduce || r == one.root)
        outcomes[r] = {MPI_ERR_TRUNCATE, reason};
    }
    return;
  }
  const void* first_input = copied ? first.payload : one.send.address;
  const void* in0 = first_rank == 0 ? first_input : second.send.address;
  const void* in1 = first_rank == 1 ? first_input : second.send.address;
  const std::size_t count = second.send.count;
  // The reduction's datatype and operation are alike at both members (MPI-3.1 5.9.1); the
  // operation only reads the datatype, which the handle type does not say.
  const MPI_Datatype type = const_cast<MPI_Datatype>(second.send.type);
  if (second.kind == SlotKind::reduce) {
    void* out = second_rank == one.root ? second.receive.address : one.receive.address;
    reduce_two(in0, in1, out, count, type, second.op);
    return;
  }
  // Into the second member's result, then a copy into the first's: the first's input may be
  // its result buffer (MPI_IN_PLACE), read by the reduction before the copy overwrites it.
  reduce_two(in0, in1, second.receive.address, count, type, second.op);
  if (second.send.bytes() > 0) {
    std::memcpy(one.receive.address, second.receive.address, second.send.bytes());
  }
}

void PairNbc::mismatch(std::uint64_t call, std::string_view function, std::uint64_t other,
                       std::string_view other_function) {
  // Different numbers: the lower is a call of this kind at one member and of another kind (a
  // blocking one, or an instance's) at the other.
  if (call < other) MeetingTable::out_of_order(call, function, "another collective");
  if (other < call) MeetingTable::out_of_order(other, other_function, "another collective");
  MeetingTable::out_of_order(call, function, other_function);
}

PairNbc::Side& PairNbc::push() {
  if (count_ == capacity_) {
    const std::size_t grown = capacity_ == 0 ? 8 : 2 * capacity_;
    std::unique_ptr<Side[]> sides(new Side[grown]);
    for (std::size_t i = 0; i < count_; ++i) sides[i] = sides_[(head_ + i) % capacity_];
    sides_ = std::move(sides);
    capacity_ = grown;
    head_ = 0;
  }
  return sides_[(head_ + count_++) % capacity_];
}

}  // namespace weft::mpi::collective
