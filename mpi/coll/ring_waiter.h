// The park and wake-up of a member of a ring of call slots (mpi/coll/pair_ring.h,
// mpi/coll/fan_ring.h): a member waits for a slot or a count that another member writes, spinning
// for its rank's budget and then parking; a member that writes one checks whether a member it
// concerns sleeps.
#pragma once

#include <atomic>
#include <cstdint>

#include "request/completion.h"
#include "weft/sync.h"

namespace weft::mpi::collective {

class RingWaiter {
 public:
  // Returns once ready() holds. ready() must read with seq_cst what the other members store with
  // seq_cst before they call wake(): either this member's last look sees the store, or the writer
  // sees `sleeping_` and sets the event.
  template <class Ready>
  void wait(SpinBudget& spin, Ready&& ready) {
    if (ready() || spin.spin_until(ready)) return;
    sleeping_.store(true, std::memory_order_seq_cst);
    const std::int64_t parked_at = monotonic_ns();
    // A set left over from an earlier wait that ended without parking only costs one more look.
    while (!ready()) wake_.wait();
    spin.parked(monotonic_ns() - parked_at);
    // relaxed: a wake-up still on its way finds the event set for the next wait, which then looks
    // once more.
    sleeping_.store(false, std::memory_order_relaxed);
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

}  // namespace weft::mpi::collective
