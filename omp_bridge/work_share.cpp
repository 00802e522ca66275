#include "work_share.h"

namespace weft::omp {

IterationSpace IterationSpace::of_long(long start, long end, long incr) {
  IterationSpace space;
  space.start = static_cast<std::uint64_t>(start);
  space.incr = static_cast<std::uint64_t>(incr);
  // Distances in unsigned arithmetic: end - start may not fit a long.
  std::uint64_t distance = 0;
  std::uint64_t step = 0;
  if (incr > 0 && start < end) {
    distance = static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(start);
    step = static_cast<std::uint64_t>(incr);
  } else if (incr < 0 && start > end) {
    distance = static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(end);
    step = 0 - static_cast<std::uint64_t>(incr);
  }
  if (step != 0) space.count = distance / step + (distance % step != 0 ? 1 : 0);
  return space;
}

IterationSpace IterationSpace::of_ull(bool up, unsigned long long start, unsigned long long end,
                                      unsigned long long incr) {
  IterationSpace space;
  space.start = start;
  space.incr = incr;
  std::uint64_t distance = 0;
  std::uint64_t step = 0;
  if (up && start < end) {
    distance = end - start;
    step = incr;
  } else if (!up && start > end) {
    distance = start - end;
    step = 0 - incr;
  }
  if (step != 0) space.count = distance / step + (distance % step != 0 ? 1 : 0);
  return space;
}

void WorkShare::reset(std::uint64_t index) {
  serving_.store(index, std::memory_order_relaxed);
  init_.store(0, std::memory_order_relaxed);
  left_.store(0, std::memory_order_relaxed);
}

bool WorkShare::enter(std::uint64_t index, Signal& signal) {
  // acquire: the previous construct's last thread reset the slot's fields before publishing.
  signal.wait([&] { return serving_.load(std::memory_order_acquire) == index; });
  int expected = 0;
  // acquire on failure: see the initializer's fields once it is 2.
  if (init_.compare_exchange_strong(expected, 1, std::memory_order_acquire)) return true;
  signal.wait([&] { return init_.load(std::memory_order_acquire) == 2; });
  return false;
}

void WorkShare::published(Signal& signal) {
  // release: the fields written by the initializer.
  init_.store(2, std::memory_order_release);
  signal.notify();
}

void WorkShare::leave(int team_size, Signal& signal) {
  // acq_rel: the last thread out resets the slot after everyone's reads of it.
  if (left_.fetch_add(1, std::memory_order_acq_rel) + 1 != team_size) return;
  const std::uint64_t index = serving_.load(std::memory_order_relaxed);
  left_.store(0, std::memory_order_relaxed);
  init_.store(0, std::memory_order_relaxed);
  next.store(0, std::memory_order_relaxed);
  ordered_next.store(0, std::memory_order_relaxed);
  copy_ready.store(false, std::memory_order_relaxed);
  cancelled.store(false, std::memory_order_relaxed);
  doacross_counts.clear();
  doacross_posted.reset();
  reduce_arrived.store(0, std::memory_order_relaxed);
  reduce_done.store(false, std::memory_order_relaxed);
  task_reductions = nullptr;
  // release: the resets above, for whoever enters the next construct of this slot.
  serving_.store(index + kWorkShareSlots, std::memory_order_release);
  signal.notify();
}

}  // namespace weft::omp
