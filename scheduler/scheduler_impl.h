// The state of a running scheduler, shared by its virtual processors.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "crash_handler.h"
#include "fiber.h"
#include "hooks.h"
#include "virtual_processor.h"
#include "weft/config.h"
#include "weft/scheduler.h"
#include "weft/stack_pool.h"
#include "weft/thread.h"
#include "weft/topology.h"

namespace weft {

struct Scheduler::Impl {
  explicit Impl(const Config& config);
  ~Impl();

  Config config;
  Topology topology;
  std::vector<std::unique_ptr<detail::NumaNode>> nodes;
  std::vector<std::unique_ptr<detail::VirtualProcessor>> vps;
  StackPool stacks;
  detail::Hooks hooks;
  std::optional<detail::CrashHandler> crash_handler;
  std::vector<std::unique_ptr<Scheduler::Service>> services;

  int priorities[kThreadTypes.size()] = {};
  std::size_t stack_sizes[kThreadTypes.size()] = {};
  int progress_boost = kMaxPriority;
  std::uint32_t starvation_limit = 32;
  std::int64_t spin_ns = 50'000;
  std::int64_t idle_spin_ns = 20'000;
  long preempt_period_ms = 10;

  std::atomic<std::uint64_t> next_id{1};
  std::atomic<std::size_t> live{0};
  std::atomic<std::uint32_t> searching{0};  // idle processors looking for work, not asleep
  // Processors in sleep() (from before their last look at the queues until they are awake again):
  // lets wake_idle() skip its scan of every processor when none sleeps. See
  // VirtualProcessor::sleep.
  std::atomic<std::uint32_t> sleeping{0};
  std::atomic<bool> stopping{false};
  std::atomic<std::uint32_t> round_robin{0};
  // Futex word of shutdown(): bumped when the last thread ends.
  std::atomic<std::uint32_t> all_done{0};

  // Fiber objects not in use, for threads spawned outside a virtual processor or beyond a
  // processor's cache. Never freed before the scheduler: fibers are type-stable (see fiber.h).
  detail::SpinLock pool_lock;
  detail::Fiber* pool = nullptr;
  std::vector<std::unique_ptr<detail::Fiber>> all_fibers;

  detail::Fiber* new_fiber(const ThreadAttr& attr, std::function<void()> body);
  // Drops one reference; the last one recycles the fiber (with its stack) into a cache or the pool.
  void release_fiber(detail::Fiber* fiber) noexcept;
  // Returns a recycled fiber's stack and puts the object in the pool.
  void release_fiber_memory(detail::Fiber* fiber) noexcept;
  void thread_ended(detail::Fiber* fiber) noexcept;

  // Queues a runnable fiber where its placement says, waking a processor if one must act.
  void make_runnable(detail::Fiber* fiber) noexcept;
  // Wakes a sleeping processor of node `numa` (of any node, nearest first, unless `node_only`)
  // unless one that could take the work is already looking for it.
  void wake_idle(int numa, bool node_only) noexcept;
};

namespace detail {
// The scheduler running in this process, or null.
Scheduler::Impl* running_scheduler() noexcept;
}  // namespace detail

}  // namespace weft
