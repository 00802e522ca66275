#include "signal.h"

#include "weft/scheduler.h"

namespace weft::omp {

std::chrono::nanoseconds Signal::max_budget() {
  static const std::chrono::nanoseconds budget = [] {
    const Scheduler* scheduler = Scheduler::current();
    return std::chrono::microseconds(
        scheduler != nullptr ? scheduler->config().get_int("scheduler.spin_us") : 50);
  }();
  return budget;
}

}  // namespace weft::omp
