// The hooks the I/O manager plugs into the scheduler: idle, context switch, timer.
//
// Virtual processors read an immutable snapshot of the registered hooks. A hook being removed is
// flagged first; remove() then waits until no processor is inside it, so that the caller may
// free what the hook uses as soon as remove() returns.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace weft::detail {

struct Hook {
  enum class Kind : std::uint8_t { idle, on_switch, timer, sleep };
  std::uint64_t id = 0;
  Kind kind = Kind::idle;
  std::function<bool()> idle;  // idle and sleep hooks
  std::function<void()> action;
  std::int64_t period_ns = 0;
  std::atomic<std::int64_t> next_due_ns{0};
  std::atomic<int> active{0};
  std::atomic<bool> removed{false};
};

class Hooks {
 public:
  using List = std::vector<std::shared_ptr<Hook>>;

  std::uint64_t add(std::shared_ptr<Hook> hook);
  void remove(std::uint64_t id);

  bool has_switch_hooks() const noexcept {
    return switch_hooks_.load(std::memory_order_relaxed) != 0;
  }
  bool has_idle_hooks() const noexcept { return idle_hooks_.load(std::memory_order_relaxed) != 0; }
  bool has_sleep_hooks() const noexcept {
    return sleep_hooks_.load(std::memory_order_relaxed) != 0;
  }
  // Earliest due time of a timer hook, for sleeping processors and scheduling points.
  std::int64_t next_timer_due() const noexcept {
    return next_timer_due_.load(std::memory_order_relaxed);
  }

  bool run_idle() noexcept;
  // True when a sleep hook asks the processor to keep looking for work instead of sleeping.
  bool run_sleep() noexcept;
  void run_switch() noexcept;
  // Runs the timer hooks due at `now_ns`; each period runs on one processor only.
  void run_timers(std::int64_t now_ns) noexcept;

 private:
  std::shared_ptr<const List> snapshot() const;
  void publish_locked();

  mutable std::mutex mutex_;
  std::shared_ptr<const List> list_ = std::make_shared<const List>();
  std::uint64_t next_id_ = 1;
  std::atomic<int> switch_hooks_{0};
  std::atomic<int> idle_hooks_{0};
  std::atomic<int> sleep_hooks_{0};
  std::atomic<std::int64_t> next_timer_due_{INT64_MAX};
};

}  // namespace weft::detail
