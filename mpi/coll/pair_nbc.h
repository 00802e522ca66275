// Small nonblocking collectives of a communicator of two members inside the process, without an
// instance (mpi/coll/nbc.h): MPI_Ibarrier, and MPI_Ibcast, MPI_Ireduce and MPI_Iallreduce of up
// to kSlotPayload bytes (a reduction's elements contiguous from the buffer's start), the calls
// whose blocking twins take the pair ring (mpi/coll/pair_ring.h).
//
// The communicator keeps one queue of sides: the calls one member made that the other has not
// made yet, in call order (only one member can be ahead, so one queue serves both). The member
// that comes second to a call finds the first's side at the queue's front, does the whole work at
// once (copies straight between the two members' buffers, or reduces into them) and completes the
// first member's request if it still waits; its own request completes in its call. A member that
// comes first and only sends (the Ibcast root, an Ireduce non-root) copies its data into its side
// and completes at once, as Open MPI's eager sends: its buffer is free and its MPI_Wait returns
// without waiting for the other member, so a loop of such calls pipelines as the blocking ones do.
// Every other first member's request completes when the second member calls: progress needs no
// wait, test or thread (as the instances'), and a wait parks on the request as any other.
//
// MPI-3.1 5.12 matches collective calls by issue order: sides are matched by call number (the
// communicator's count of collective calls, which blocking and nonblocking calls share), so the
// ring's blocking calls, instances and these calls interleave in any order every member issues
// alike. A member whose call is of another kind than the other's at the same number ends the job,
// as a mismatch of the instances does; against a blocking call of the ring, the pair ring's
// nonblocking note reports it (ring_call.h), against a meeting the meeting ring's. Against an
// instance's call (an erroneous program) neither member finds the other: both wait, and the
// deadlock report names the two calls.
//
// The queue is guarded by a spin lock: its critical sections are a copy or a reduction of at most
// kSlotPayload bytes, and MPI code is never preempted (weft/preemption.h), so a holder never
// leaves its lock held while the other member spins on its core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "coll/call_slot.h"
#include "coll/collective.h"
#include "mpi.h"
#include "request/request.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi::collective {

// What one member passes to its call. `send`: the Ibcast root's data, a reduction's input;
// `receive`: an Ibcast reader's buffer, a reduction's result (a Reduce root's, or both members'
// of an Allreduce). A reduction's blocks are contiguous from their address.
struct PairArguments {
  SlotKind kind = SlotKind::barrier;
  int root = 0;
  Block send;
  Block receive;
  MPI_Op op = MPI_OP_NULL;
};

// Whether the caller's nonblocking call of `kind` moving `bytes` on `comm` (an intracommunicator
// of members in this process, not persistent) goes through its PairNbc: every member decides
// alike when the signatures match, as for the pair ring. A reduction's datatype must also be
// contiguous from its buffer's start.
bool takes_pair_nbc(const Comm& comm, std::size_t bytes);

// Issues the caller's nonblocking call `function` on `comm` (takes_pair_nbc) through the
// communicator's PairNbc, its arguments checked; `start` says where its request goes.
int issue_pair(MPI_Comm comm, std::string_view function, const Start& start,
               const PairArguments& arguments);

class PairNbc {
 public:
  PairNbc();
  ~PairNbc();
  PairNbc(const PairNbc&) = delete;
  PairNbc& operator=(const PairNbc&) = delete;

  // Member `me`'s call `call` (`function`), whose request is `request`: either does the work
  // with the other member's side and completes both requests, or queues the caller's side.
  void call(int me, std::uint64_t call, std::string_view function, const PairArguments& arguments,
            Request* request);
  // The function of the call numbered `call` while a member's side of it waits, or empty: for the
  // message of a mismatch, once the job is ending.
  std::string_view function_of(std::uint64_t call);

 private:
  struct Side {
    std::uint64_t call = 0;
    std::string_view function;
    PairArguments arguments;
    // Null when the call completed when made: its data is then in `payload`.
    Request* request = nullptr;
    std::size_t bytes = 0;  // of payload
    alignas(16) std::byte payload[kSlotPayload];
  };
  // Eager copies a member keeps at most before its calls wait for the other member as the
  // others do (their data then stays in the member's buffers): a member that never lets the other
  // catch up holds that many payloads, not one per call.
  static constexpr int kMaxEager = 64;

  // A member's outcome: MPI_SUCCESS, or an error class and why.
  struct Outcome {
    int rc = MPI_SUCCESS;
    std::string reason;
  };
  // The work of call `second` of the member coming second, with the first's side `first`; each
  // member's outcome in outcomes[rank].
  static void meet(const Side& first, int first_rank, const PairArguments& second, int second_rank,
                   Outcome* outcomes);
  // Completes `request`, member `rank`'s part in `function`, with `outcome`.
  static void complete(Request* request, int rank, std::string_view function, Outcome& outcome);
  // Ends the job: the caller's call `call` (`function`) meets the other member's call `other`
  // (`other_function`), of another number or kind.
  [[noreturn]] static void mismatch(std::uint64_t call, std::string_view function,
                                    std::uint64_t other, std::string_view other_function);
  Side& push();

  detail::SpinLock lock_;
  // The member whose sides are queued (meaningful while `count_` > 0), and how many of them
  // completed at their call.
  int ahead_ = 0;
  int eager_ = 0;
  // A ring of `capacity_` sides, `count_` of them from `head_` on, grown by doubling.
  std::unique_ptr<Side[]> sides_;
  std::size_t capacity_ = 0;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace weft::mpi::collective
