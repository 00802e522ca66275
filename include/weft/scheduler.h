// The two-level M:N scheduler: one virtual processor (a kernel thread pinned to a core) per core
// in use, running typed user-level threads. One Scheduler runs per process at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "weft/config.h"
#include "weft/topology.h"

namespace weft {

class Scheduler {
 public:
  // Loads the topology (key `topology`) and starts scheduler.vps virtual processors (0: one per
  // core), each bound to its core when the topology is this machine's.
  explicit Scheduler(const Config& config = Config::load());
  // Same as shutdown().
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Waits until every thread spawned on this scheduler, detached ones included, has ended, then
  // stops the virtual processors. Must not be called from a weft thread.
  void shutdown();

  // The running scheduler of this process, or nullptr.
  static Scheduler* current();

  const Config& config() const;
  const Topology& topology() const;
  int num_vps() const;
  int vp_core(int vp) const;  // topology core of a virtual processor
  int vp_numa(int vp) const;  // its NUMA node
  std::size_t live_threads() const;
  // Virtual processors awake with nothing to run, looking for work: the ones running idle hooks.
  int searching_vps() const;

  struct VpStats {
    std::uint64_t switches = 0;      // context switches into user threads
    std::uint64_t steals = 0;        // threads this VP took from another VP's queue
    std::uint64_t sleeps = 0;        // times this VP went to sleep for lack of work
    std::uint64_t remote_wakes = 0;  // times another thread woke this VP from its sleep
    std::uint64_t preemptions = 0;   // threads switched out by its timer (weft/preemption.h)
  };
  std::vector<VpStats> stats() const;

  // Hooks for the I/O manager. A hook runs on a virtual processor's kernel thread, either from its
  // idle loop or at a scheduling point on the stack of the user thread being switched out; it
  // must neither block nor switch (no weft waits inside). remove_hook() returns once no VP runs
  // the hook any more, so it must not be called from the hook itself.
  using HookId = std::uint64_t;
  // Run by a VP that has nothing to run, while it looks for work (scheduler.idle_spin_us) before
  // it sleeps; a sleeping VP runs none. Return true when it made progress: the VP then keeps
  // looking. What must be watched while every VP sleeps needs a timer hook or a wake-up.
  HookId add_idle_hook(std::function<bool()> hook);
  // Run by a VP that looked for work for scheduler.idle_spin_us and found none, just before it
  // sleeps. Return true to keep it looking (and running the idle hooks) for another
  // scheduler.idle_spin_us: the I/O manager keeps idle cores polling while it has waits to
  // poll, then hands them over to blocking detection here.
  HookId add_sleep_hook(std::function<bool()> hook);
  // Run at every scheduling point of a user thread (yield, park, exit), before the next thread
  // is chosen, so that a thread the hook makes runnable can be chosen there; and when a VP's
  // idle loop switches into a thread. Keep it cheap or rate-limit it inside.
  HookId add_switch_hook(std::function<void()> hook);
  // Run about every `period` by some VP: at one of its scheduling points (every 16th), or woken
  // from its sleep for it.
  HookId add_timer_hook(std::chrono::nanoseconds period, std::function<void()> hook);
  void remove_hook(HookId id);

  // A module that lives beside every scheduler (the I/O manager) without the scheduler knowing
  // it. Factories registered with add_service run at the end of each Scheduler constructor, in
  // registration order. shutdown() calls every service's stop() before it waits for the threads
  // (a service ends the threads it owns there), then destroys the services in reverse order once
  // no thread is live, while the virtual processors still run.
  class Service {
   public:
    virtual ~Service() = default;
    virtual void stop() {}
  };
  using ServiceFactory = std::unique_ptr<Service> (*)(Scheduler& scheduler);
  static void add_service(ServiceFactory factory);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft
