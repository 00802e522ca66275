// The hooks the I/O manager plugs into the scheduler: idle, context switch, timer.
//
// Virtual processors read an immutable snapshot of the registered hooks, through one atomic
// pointer: switch hooks run at every scheduling point, which must not take a lock. A replaced
// list is kept until the Hooks object goes (hooks are added and removed a few times per run), so
// a processor still reading it never reads freed memory. A hook being removed is flagged first;
// remove() then waits until no processor is inside it, so that the caller may free what the hook
// uses as soon as remove() returns.
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
  enum class Kind : std::uint8_t { idle, on_switch, timer, sleep, poll_sleep };
  std::uint64_t id = 0;
  Kind kind = Kind::idle;
  std::function<bool()> idle;  // idle and sleep hooks
  std::function<void()> action;
  std::function<bool(int, std::int64_t)> poll_sleep;  // poll-sleep hooks
  std::int64_t period_ns = 0;
  std::atomic<std::int64_t> next_due_ns{0};
  std::atomic<int> active{0};
  std::atomic<bool> removed{false};
};

class Hooks {
 public:
  using List = std::vector<std::shared_ptr<Hook>>;

  Hooks();
  std::uint64_t add(std::shared_ptr<Hook> hook);
  void remove(std::uint64_t id);
  // Calls `watcher` now and after each change of the list, under the hooks' lock (so calls come
  // in the order of the changes), with whether switch hooks are registered: the scheduler keeps
  // its processors' attention bit (VirtualProcessor::kSwitchHooks) with it.
  void watch_switch_hooks(std::function<void(bool)> watcher);

  bool has_switch_hooks() const noexcept {
    return switch_hooks_.load(std::memory_order_relaxed) != 0;
  }
  bool has_idle_hooks() const noexcept { return idle_hooks_.load(std::memory_order_relaxed) != 0; }
  bool has_sleep_hooks() const noexcept {
    return sleep_hooks_.load(std::memory_order_relaxed) != 0;
  }
  bool has_poll_sleep_hooks() const noexcept {
    return poll_sleep_hooks_.load(std::memory_order_relaxed) != 0;
  }
  // Set by a poll-sleep hook's owner while its sleep would watch something (the I/O manager:
  // while waits are polled): an idle processor then skips its spin (scheduler.idle_spin_us) and
  // goes to sleep in the hook at once, woken by the event itself instead of spinning for it.
  void set_sleep_early(bool early) noexcept {
    sleep_early_.store(early, std::memory_order_relaxed);
  }
  bool sleep_early() const noexcept { return sleep_early_.load(std::memory_order_relaxed); }
  // Earliest due time of a timer hook, for sleeping processors and scheduling points.
  std::int64_t next_timer_due() const noexcept {
    return next_timer_due_.load(std::memory_order_relaxed);
  }

  bool run_idle() noexcept;
  // True when a sleep hook asks the processor to keep looking for work instead of sleeping.
  bool run_sleep() noexcept;
  void run_switch() noexcept;
  // Offers a processor's sleep to the poll-sleep hooks: the first that takes it blocks until
  // `wake_fd` (an eventfd the processor's wakers write) is readable, the absolute
  // CLOCK_MONOTONIC `deadline_ns` passes (-1: none) or an event of its own comes, drains
  // `wake_fd` when it found it readable, and returns true. False when none took it: the
  // processor sleeps on its futex.
  bool run_poll_sleep(int wake_fd, std::int64_t deadline_ns) noexcept;
  // Runs the timer hooks due at `now_ns`; each period runs on one processor only.
  void run_timers(std::int64_t now_ns) noexcept;

 private:
  const List& snapshot() const noexcept {
    // acquire: pairs with publish_locked's release, so the list's contents are visible.
    return *current_.load(std::memory_order_acquire);
  }
  // Makes `list` the snapshot; the previous one stays in lists_.
  void publish_locked(std::unique_ptr<const List> list);

  std::mutex mutex_;
  std::function<void(bool)> switch_watcher_;
  std::vector<std::unique_ptr<const List>> lists_;  // every list published, the current last
  std::atomic<const List*> current_{nullptr};
  std::uint64_t next_id_ = 1;
  std::atomic<int> switch_hooks_{0};
  std::atomic<int> idle_hooks_{0};
  std::atomic<int> sleep_hooks_{0};
  std::atomic<int> poll_sleep_hooks_{0};
  std::atomic<bool> sleep_early_{false};
  std::atomic<std::int64_t> next_timer_due_{INT64_MAX};
};

}  // namespace weft::detail
