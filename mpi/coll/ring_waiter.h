// The park and wake-up of a member of a ring of call slots (mpi/coll/pair_ring.h,
// mpi/coll/fan_ring.h): a member waits for a slot or a count that another member writes, spinning
// for its rank's budget and then parking; a member that writes one checks whether a member it
// concerns sleeps.
#pragma once

#include <atomic>
#include <cstdint>

#include "coll/call_slot.h"
#include "request/completion.h"
#include "weft/sync.h"
#include "weft/thread_dump.h"

namespace weft::mpi::collective {

class RingWaiter {
 public:
  // Returns once ready() holds. ready() must read with seq_cst what the other members store with
  // seq_cst before they call wake(): either this member's last look sees the store, or the writer
  // sees `sleeping_` and sets the event. While it parks, the thread carries `note` (the call's
  // BlockedCall, diagnostics/blocked_call.h): the stack dump and the deadlock report read a
  // collective's record of parked threads only, and most calls of a ring never park, so the two
  // stores on the thread's control block are made only then.
  template <class Ready>
  void wait(SpinBudget& spin, const void* note, Ready&& ready) {
    if (ready() || spin.spin_until(ready)) return;
    const void* const previous_note = this_thread::set_wait_note(note);
    sleeping_.store(true, std::memory_order_seq_cst);
    const std::int64_t parked_at = monotonic_ns();
    // A set left over from an earlier wait that ended without parking only costs one more look.
    while (!ready()) wake_.wait();
    spin.parked(monotonic_ns() - parked_at);
    // relaxed: a wake-up still on its way finds the event set for the next wait, which then looks
    // once more.
    sleeping_.store(false, std::memory_order_relaxed);
    this_thread::set_wait_note(previous_note);
  }
  // Called by another member after its seq_cst store of what this member may wait for.
  void wake() {
    // seq_cst: see wait().
    if (sleeping_.load(std::memory_order_seq_cst)) wake_.set();
  }

 private:
  // Read by the other members at every store that may concern this one, written only when it
  // parks: the line stays shared in their caches.
  alignas(64) std::atomic<bool> sleeping_{false};
  Event wake_{Event::Mode::automatic};
};

// Waits on `waiter` (the reader's) until `slot` holds call `call`, or until `nonblocking` (its
// writer's last nonblocking collective call + 1) passes `call`: the writer's call `call` is then
// no call of the ring, and the result is nullptr.
inline const CallSlot* await_slot(RingWaiter& waiter, SpinBudget& spin, const void* note,
                                  const CallSlot& slot,
                                  const std::atomic<std::uint64_t>& nonblocking,
                                  std::uint64_t call) {
  // seq_cst (acquire at least: pairs with the post's release): see RingWaiter.
  const auto posted = [&] { return slot.call.load(std::memory_order_seq_cst) == call + 1; };
  bool mismatched = false;
  waiter.wait(spin, note, [&] {
    if (posted()) return true;
    // The nonblocking count first: a post the writer made before a later nonblocking call is
    // then seen by the second look at the slot.
    if (nonblocking.load(std::memory_order_seq_cst) <= call) return false;
    mismatched = !posted();
    return true;
  });
  return mismatched ? nullptr : &slot;
}

}  // namespace weft::mpi::collective
