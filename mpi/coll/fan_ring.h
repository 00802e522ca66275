// The call slots of a communicator of 3 to kMaxMembers members inside the process: a small
// blocking Bcast or Reduce passes its payload through them instead of meeting (mpi/coll/meeting.h),
// as the pair ring (mpi/coll/pair_ring.h) does for two members.
//
// Each member owns kSlots slots, one per collective call number modulo kSlots. The Bcast root, or
// each non-root of a Reduce, copies its signature and payload into its slot of the call and
// returns at once: its buffer is reusable and MPI does not make these calls synchronising, so
// back-to-back calls pipeline as they do over Open MPI's eager sends, and on an oversubscribed core
// a member runs up to kSlots calls before it needs another member to run. The members that read
// (every non-root of a Bcast, the root of a Reduce) wait for the slots of their call, read them,
// and then store the call in their `finished` count. A writer waits only when its slot still holds
// call c - kSlots and a reader of that call has not finished it.
//
// Where the meeting of N members hands every member's arrival to every other through the meeting
// (a count all of them increment, then the release), a Bcast hands the root's slot line to each
// reader, and a Reduce each non-root's slot line to the root; the `finished` counts travel only
// when a writer's cached copy is too old, at most once in kSlots calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "coll/call_slot.h"
#include "coll/ring_waiter.h"

namespace weft::mpi::collective {

class FanRing {
 public:
  // Above this, a member's scan of the others' counts costs more than a meeting's lines, and the
  // slots (kSlots of 320 bytes a member) more memory than a call is worth.
  static constexpr int kMaxMembers = 64;

  explicit FanRing(int size);

  // The caller's (member `me`) slot for call `call`, once the members that read what it held have
  // finished that call, parking if need be; then fill it (header.kind and header.root say who
  // reads it: every other member for a Bcast, the root for a Reduce) and post() it.
  CallSlot& claim(int me, std::uint64_t call, SpinBudget& spin, const void* note);
  // Makes the slot visible to its readers and wakes those that sleep.
  void post(int me, CallSlot& slot, std::uint64_t call);
  // Member `from`'s slot for call `call`, parking until it is posted; nullptr when `from` made a
  // nonblocking collective call numbered `call` or later instead (note_nonblocking).
  const CallSlot* await(int me, int from, std::uint64_t call, SpinBudget& spin, const void* note);
  // Member `me` made the nonblocking collective call (or persistent init) `call`: a member waiting
  // in the ring for its slot of that call learns that the calls do not match.
  void note_nonblocking(int me, std::uint64_t call);
  // Tells the writers of call `call` (the root of a Bcast, every other member of a Reduce whose
  // root is the caller) that the caller has read their slots.
  void finish(int me, std::uint64_t call, SlotKind kind, int root);

 private:
  struct Member {
    CallSlot slots[kCallSlots];
    // Call + 1 of the last call whose slots the member read (it reads in call order, so every
    // earlier call it read is finished too). Written by the member, read by a writer only when
    // its cached copy is too old.
    alignas(64) std::atomic<std::uint64_t> finished{0};
    // Call + 1 of the member's last nonblocking collective call, read by a reader while it waits
    // for the member's slot: on a line of its own.
    alignas(64) std::atomic<std::uint64_t> nonblocking{0};
    RingWaiter waiter;
  };
  // Whether every reader of what slot `slot` of member `me` held (call number + 1 `held`) has
  // finished it, by the caller's copies of their counts, read again where too old.
  bool readers_done(int me, const CallSlot& slot, std::uint64_t held);
  // Whether member `other` has finished call held - 1, by the copy member `me` keeps.
  bool finished(int me, int other, std::uint64_t held);

  const int size_;
  std::unique_ptr<Member[]> members_;
  // The others' `finished` as member `me` last read them: row `me`, written and read by member
  // `me` only, on lines of its own.
  std::uint64_t& seen(int me, int other) {
    return seen_[static_cast<std::size_t>(me) * row_lines_ + other / 8].counts[other % 8];
  }
  struct alignas(64) Line {
    std::uint64_t counts[8] = {};
  };
  const int row_lines_;
  std::unique_ptr<Line[]> seen_;
};

}  // namespace weft::mpi::collective
