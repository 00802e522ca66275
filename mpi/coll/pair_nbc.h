// Small nonblocking collectives of a communicator of two members inside the process, without an
// instance (mpi/coll/nbc.h): MPI_Ibarrier, and MPI_Ibcast, MPI_Igather(v), MPI_Iscatter(v),
// MPI_Iallgather(v), MPI_Ialltoall(v,w), MPI_Ireduce and MPI_Iallreduce whose block between the
// two members is at most kPairBytes (a reduction's elements contiguous from the buffer's start).
//
// Each member posts its side of a call (what it passes, worked out in its own call) into a ring
// of its own, then arrives: one fetch_add on a word both members share, their balance of calls
// (member 0's count minus member 1's), tells it whether the other member made this call already.
// The member that comes second reads the first's side in the first's ring, does the whole work at
// once (copies straight between the two members' buffers, or reduces into them) and completes the
// first member's request if it still waits; its own request completes in its call. No lock: the
// first member never waits for the second's copies (it left), and the second never waits at all.
// A member that comes first and only sends (the Ibcast and Iscatter root, an Igather or Ireduce
// non-root) copies its block for the other into its side before it arrives (and, the Iscatter
// root, its own block into its buffer after) and completes at once, as Open MPI's eager sends:
// its buffer is free and its MPI_Wait returns without waiting for the other member, so a loop of
// such calls pipelines as the blocking ones do. Every other first member's request completes when
// the second member calls: progress needs no wait, test or thread (as the instances'), and a wait
// parks on the request as any other.
//
// MPI-3.1 5.12 matches collective calls by issue order: the two members' k-th calls of the queue
// meet, and the second checks that they have one call number (the communicator's count of
// collective calls, which blocking and nonblocking calls share), so the ring's blocking calls,
// instances and these calls interleave in any order every member issues alike. A member whose call
// is of another kind than the other's at the same number ends the job, as a mismatch of the
// instances does; against a blocking call of the ring, the pair ring's nonblocking note reports it
// (ring_call.h), against a meeting the meeting ring's. Against an instance's call (an erroneous
// program) neither member finds the other: both wait, and the deadlock report names the two calls.
//
// A member far ahead of the other (the side kRing calls back in its ring not read yet) posts its
// side into a spill list under a spin lock instead: never the common path.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coll/call_slot.h"
#include "coll/collective.h"
#include "mpi.h"
#include "request/request.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi::collective {

// The largest block between the two members (of a reduction, its input) that takes the queue.
// Below nbc::kInlineBytes an instance's last arrival copies everything itself too, so the queue
// saves the instance's overhead (about 700 instructions an Ibcast at 1 KiB, 600 at 4 KiB: an
// eager side copies its block twice); an eager side keeps a buffer of this size (docs/mpi-nbc.md).
inline constexpr std::size_t kPairBytes = 4096;

// A block a member passes, and what a copy from or into it needs, worked out once by that member
// outside the queue's lock: where its data starts when its type is contiguous (else nullptr: a
// copy then asks the datatype engine) and its size.
struct PairBlock {
  PairBlock() = default;
  explicit PairBlock(const Block& block);
  // `bytes` packed bytes at `data`.
  static PairBlock packed(std::byte* data, std::size_t bytes);

  Block block;
  std::byte* data = nullptr;
  std::size_t bytes = 0;
};

// What one member passes to its call.
struct PairArguments {
  SlotKind kind = SlotKind::barrier;
  int root = 0;
  // The kinds that move blocks (every kind but the reductions and the barrier): the member's
  // block for member r is to[r], moved where sends[r]; it receives member r's block into from[r]
  // (a member that receives nothing from r leaves it empty). MPI_IN_PLACE leaves a member's own
  // block where it is (sends[me] false); an in-place Ialltoall sends from its receive blocks
  // (to[r] is from[r], `in_place`). The flags first: with the kind and the side's header, on the
  // one line of an eager side that the other member reads.
  bool sends[2] = {false, false};
  bool in_place = false;
  PairBlock to[2];
  PairBlock from[2];
  // The reductions: `send`, the input; `receive`, the result (a Reduce root's, or both members'
  // of an Allreduce), both contiguous from their address.
  Block send;
  Block receive;
  MPI_Op op = MPI_OP_NULL;
};

// The arguments of member `me`'s call of a kind that moves blocks, root `root` (ignored by
// Iallgather and Ialltoall): the Ibcast's `data`; an Igather's `send` (empty in place) and, at
// the root, `receive`; an Iscatter's `send` blocks at the root and `data`, its receive block
// (empty at an in-place root); an Iallgather's `data` (its own receive block in place) and
// `receive`; an Ialltoall's `send` (ignored in place) and `receive`.
PairArguments pair_bcast(int me, int root, const Block& data);
PairArguments pair_gather(int me, int root, const Block& send, const Blocks& receive,
                          bool in_place);
PairArguments pair_scatter(int me, int root, const Blocks& send, const Block& data, bool in_place);
PairArguments pair_allgather(int me, const Block& data, const Blocks& receive, bool in_place);
PairArguments pair_alltoall(int me, const Blocks& send, const Blocks& receive, bool in_place);

// The bytes of the block between the two members in member `me`'s arguments: the larger of what
// it sends to and receives from the other, which both members see alike when the signatures match.
std::size_t pair_bytes(const PairArguments& arguments, int me);

// Whether the caller's nonblocking call moving a block of `bytes` between the members of `comm`
// (an intracommunicator of members in this process, not persistent) goes through its PairNbc:
// every member decides alike when the signatures match, as for the pair ring. A reduction's
// datatype must also be contiguous from its buffer's start.
bool takes_pair_nbc(const Comm& comm, std::size_t bytes);

// Issues the nonblocking call `function` on `comm` (takes_pair_nbc) of the caller, world rank
// `world_rank` and member `me`, through the communicator's PairNbc, its arguments checked; `start`
// says where its request goes.
int issue_pair(MPI_Comm comm, std::string_view function, const Start& start, int world_rank, int me,
               const PairArguments& arguments);

class PairNbc {
 public:
  PairNbc();
  ~PairNbc();
  PairNbc(const PairNbc&) = delete;
  PairNbc& operator=(const PairNbc&) = delete;

  // Member `me`'s call `call` (`function`), whose request is `request`: either does the work
  // with the other member's side and completes both requests, or leaves the caller's side for it.
  void call(int me, std::uint64_t call, std::string_view function, const PairArguments& arguments,
            Request* request);
  // The function of the call numbered `call` while a member's side of it waits, or empty: for the
  // message of a mismatch, once the job is ending.
  std::string_view function_of(std::uint64_t call);

 private:
  struct alignas(64) Side {
    // Index + 1 of the side held (a member's count of its calls of this queue before it; 0:
    // none). Written by its member before it arrives, read by the other after it arrives second;
    // atomic only so that function_of may read it (and `call`) from another thread.
    std::atomic<std::uint64_t> index{0};
    std::atomic<std::uint64_t> call{0};
    // Null when the call completed when made: its block for the other member (packed) is then in
    // `payload`, kPairBytes allocated at the side's first such call and kept for the next.
    Request* request = nullptr;
    std::size_t bytes = 0;  // of payload
    std::unique_ptr<std::byte[]> payload;
    // Its kind and flags, with the fields above, on the first line: all that the other member
    // reads of an eager side of 8 bytes, with its payload.
    PairArguments arguments;
    std::string_view function;
  };
  // Sides a member's ring holds: a member whose side of the call `kRing` calls back has not been
  // read yet spills. As many as the eager copies a member keeps (kMaxEager), so that a sender
  // running ahead on them does not spill (with 16, an Ibcast root on one core with its reader
  // spilled 3 calls in 4: about 90 instructions a call more); 20 KiB a member.
  static constexpr std::uint64_t kRing = 64;
  // Sides a member has posted that the other member may not have read yet (as far as the member
  // knows) past which its calls no longer copy eagerly and wait for the other member as the
  // others do (their data then stays in the member's buffers): a member that never lets the
  // other catch up holds that many payloads, not one per call.
  static constexpr std::uint64_t kMaxEager = 64;

  struct alignas(64) Member {
    Side ring[kRing];
    // The member's own, never read by the other. `calls`: its calls of this queue so far.
    // `other_arrived`: how many calls the other member had arrived at when this one last looked
    // at the balance (a lower bound): each call of the other's before its last one has ended, so
    // that the other reads none of this member's sides below other_arrived - 1 any more.
    alignas(64) std::uint64_t calls = 0;
    std::uint64_t other_arrived = 0;
    // Where meet() sets a block aside (an input of a reduction in place, an in-place Ialltoall's)
    // when this member comes second.
    alignas(64) std::byte scratch[kPairBytes];
  };

  // A member's outcome: MPI_SUCCESS, or an error class and why.
  struct Outcome {
    int rc = MPI_SUCCESS;
    std::string reason;
  };
  // Writes the caller's side of its call number `index` into its ring (or the spill list), with
  // its eager copy when it only sends and is not too far ahead.
  Side& post(int me, std::uint64_t index, std::uint64_t call, std::string_view function,
             const PairArguments& arguments, Request* request);
  // Reads the balance afresh into `mine.other_arrived`, the caller being at call `index`.
  void look(int me, std::uint64_t index);
  // The side of call `index` of member `owner`, which has arrived at it: in its ring or its spill
  // list (then taken out of it into *spilled, which the caller recycles once done).
  Side& posted(int owner, std::uint64_t index, std::unique_ptr<Side>* spilled);
  // The work of call `second` of the member coming second, with the first's side `first`; each
  // member's outcome in outcomes[rank]; `scratch`, the second member's.
  static void meet(const Side& first, int first_rank, const PairArguments& second, int second_rank,
                   Outcome* outcomes, std::byte* scratch);
  // The same for the kinds that move blocks, and for the reductions.
  static void move(const Side& first, int first_rank, const PairArguments& second, int second_rank,
                   Outcome* outcomes, std::byte* scratch);
  static void reduce(const Side& first, int first_rank, const PairArguments& second,
                     int second_rank, Outcome* outcomes, std::byte* scratch);
  // Member `me`, with `arguments`, only sending: copies its block for the other member into
  // `side`'s payload.
  static void copy_eagerly(Side& side, int me, const PairArguments& arguments);
  // Member `me`, first to its call with `arguments` and done at it: moves its own block (an
  // Iscatter root's not in place), which the other member's call does not see.
  static Outcome keep_own(int me, const PairArguments& arguments);
  // Completes `request`, member `rank`'s part in `function`, with `outcome`.
  static void complete(Request* request, int rank, std::string_view function, Outcome& outcome);
  // Ends the job: the caller's call `call` (`function`) meets the other member's call `other`
  // (`other_function`), of another number or kind.
  [[noreturn]] static void mismatch(std::uint64_t call, std::string_view function,
                                    std::uint64_t other, std::string_view other_function);

  Member members_[2];
  // Member 0's calls of this queue that it has arrived at, less member 1's: the one word both
  // members change, once a call each.
  alignas(64) std::atomic<std::int64_t> balance_{0};
  // The sides of a member far ahead (its ring full of sides the other has not read), in call
  // order, and the spent ones kept for reuse with their payloads.
  struct alignas(64) Spill {
    detail::SpinLock lock;
    std::deque<std::unique_ptr<Side>> sides[2];
    std::vector<std::unique_ptr<Side>> spent;
  };
  Spill spill_;
};

}  // namespace weft::mpi::collective
