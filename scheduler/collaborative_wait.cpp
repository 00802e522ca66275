#include <chrono>
#include <thread>

#include "park.h"
#include "spin_wait.h"
#include "weft/sync.h"

namespace weft {

void wait_until(std::function<bool()> pred, std::function<void()> poll) {
  auto ready = [&] {
    if (poll) poll();
    return pred();
  };
  if (ready()) return;
  detail::Fiber* self = detail::current_fiber();
  if (self == nullptr) {
    // A kernel thread outside weft has no core to hand the poll to: poll with a backoff.
    for (int round = 0; !ready(); ++round) {
      if (round < 64) {
        detail::spin_pause();
      } else if (round < 1024) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    return;
  }
  if (detail::spin_wait(ready)) return;
  detail::PollWaiter waiter;
  waiter.pred = &pred;
  waiter.poll = &poll;
  waiter.fiber = self;
  waiter.epoch = detail::prepare_park(self);
  // The processor's idle loop and switches run the poll from now on, and unpark us once the
  // predicate holds (possibly before the park below completes, which the park handles).
  detail::current_vp()->add_poller(&waiter);
  detail::park();
}

}  // namespace weft
