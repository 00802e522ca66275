// The call slots of a communicator of two members inside the process: a small blocking Bcast,
// Reduce, Allreduce or Allgather passes its payload through them instead of meeting
// (mpi/coll/meeting.h), and a Barrier its arrival.
//
// Each member owns a ring of kSlots slots, one per collective call number modulo kSlots. A member
// that sends (the Bcast root, the Reduce non-root, both members of an Allreduce) copies its
// signature and payload into its slot of the call and, for Bcast and Reduce, returns at once: its
// buffer is reusable (the payload is a copy) and MPI does not make these calls synchronising, so
// back-to-back calls pipeline as they do over Open MPI's eager sends. A member that receives
// waits for the other member's slot of its call, reads it and counts it consumed (telling the
// count every kPublishEvery calls and before it waits). A sender waits only when its slot still
// holds call c - kSlots, which the other member has not consumed, or not told, yet.
//
// A call hands over the slot's lines one way (one line for a payload of up to
// kPayloadOnFirstLine bytes) and, rarely, the consumer's count the other way: an Allreduce is one
// exchange of lines each way, where a meeting of two takes the ring entry's lines too.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "coll/call_slot.h"
#include "coll/ring_waiter.h"

namespace weft::mpi::collective {

class PairRing {
 public:
  static constexpr int kSlots = kCallSlots;
  static constexpr std::size_t kPayload = kSlotPayload;
  using Kind = SlotKind;
  using Header = SlotHeader;
  using Slot = CallSlot;

  // The caller's (member `me`, 0 or 1) slot for call `call`, once the other member has consumed
  // what it held (call - kSlots), parking if need be (with `note`, its BlockedCall, on the
  // thread: RingWaiter); then fill it and post() it.
  Slot& claim(int me, std::uint64_t call, SpinBudget& spin, const void* note);
  // Makes the slot's header and payload visible to the other member, and wakes it if it sleeps.
  void post(int me, Slot& slot, std::uint64_t call);
  // The other member's slot for call `call`, parking until it is posted; read it, then consume().
  // nullptr when the other member made a nonblocking collective call numbered `call` or later
  // instead (note_nonblocking): its call `call` is not of the ring.
  const Slot* await(int me, std::uint64_t call, SpinBudget& spin, const void* note);
  // Member `me` made the nonblocking collective call (or persistent init) `call`: a member waiting
  // in the ring for that call learns that the calls do not match.
  void note_nonblocking(int me, std::uint64_t call);
  // The caller has read the other member's slot of call `call` (and every earlier one). Told to
  // the other member every kPublishEvery consumptions, and before the caller waits in the ring.
  void consume(int me, std::uint64_t call);

 private:
  // Consumptions a member counts before it stores its `consumed`. A member that writes
  // (a Reduce non-root, a Bcast root) runs ahead of the reader and then waits in claim() reading
  // the reader's count: a store at every call took the line from it at every call, a locked
  // store that the reader waited for. Half the ring: the writer still finds a free slot at each
  // look while the two run in step, and runs at most kSlots / 2 calls less far ahead.
  static constexpr int kPublishEvery = kSlots / 2;

  struct Member {
    Slot slots[kSlots];
    // Written by the member, read by the other only when it finds a slot not consumed yet (its
    // cached copy too old), so on a line of its own: call + 1 of the other member's last slot
    // the member read and told of.
    alignas(64) std::atomic<std::uint64_t> consumed{0};
    // Written and read by this member only, on a line apart from `consumed` (written at every
    // consumption, while the other may be reading `consumed`).
    // The other member's `consumed` as this member last read it.
    alignas(64) std::uint64_t seen_consumed = 0;
    // Call + 1 of the last slot consumed but not yet stored in `consumed` (0: none), and how
    // many consumptions that covers.
    std::uint64_t unpublished = 0;
    int pending = 0;
    // Call + 1 of the member's last nonblocking collective call, read by the other while it waits
    // for a slot: written at every nonblocking call, so on a line of its own.
    alignas(64) std::atomic<std::uint64_t> nonblocking{0};
    RingWaiter waiter;
  };
  // Wakes the other member of `me` if it parks.
  void wake_other(int me) { members_[1 - me].waiter.wake(); }
  // Stores the member's count of consumed slots if some consumption is not told yet: before the
  // member waits in the ring, for the other may be waiting for that count (a writer waits for a
  // slot only when it ran kSlots calls ahead; its reader then reaches its next call of the ring
  // without waiting for anything else in a correct program, MPI allowing these calls to
  // synchronise, and that call waits for the writer's slot, so it first tells the count).
  void publish(int me);

  Member members_[2];
};

}  // namespace weft::mpi::collective
