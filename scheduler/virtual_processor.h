// A virtual processor: one kernel thread, bound to one core, that runs user-level threads.
//
// It owns three run queues. `ready_` holds the threads pinned to it and is touched only by its
// own kernel thread; other kernel threads hand it pinned threads through the lock-free `inbox_`.
// `shared_` holds free threads, under a lock, because idle processors steal from it. The NUMA
// node's queue, shared by the node's processors, holds threads bound to the node. pick() takes the
// highest priority among the three, except that a level passed over starvation_limit times runs
// next (aging), so that no runnable thread starves.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "context.h"
#include "fiber.h"
#include "park.h"
#include "preemption.h"
#include "priority_queue.h"
#include "timer_heap.h"
#include "weft/detail/yield.h"
#include "weft/scheduler.h"

namespace weft::detail {

struct NumaNode {
  int index = 0;
  SharedQueue queue;
  // Processors of this node looking for work: only they can take this node's queue.
  std::atomic<std::uint32_t> searching{0};
  std::vector<class VirtualProcessor*> vps;
};

// A parked collaborative waiter: its predicate and poll function run on the processor where it
// parked, from the idle loop and at context switches, until the predicate holds.
struct PollWaiter {
  PollWaiter* next = nullptr;
  const std::function<bool()>* pred = nullptr;
  const std::function<void()>* poll = nullptr;
  Fiber* fiber = nullptr;
  std::uint64_t epoch = 0;
};

class VirtualProcessor {
 public:
  VirtualProcessor(Scheduler::Impl& scheduler, int index, int core, NumaNode& node);
  VirtualProcessor(const VirtualProcessor&) = delete;
  ~VirtualProcessor();
  VirtualProcessor& operator=(const VirtualProcessor&) = delete;

  int index() const { return index_; }
  int core() const { return core_; }
  int numa() const { return node_.index; }
  NumaNode& node() { return node_; }
  Fiber* current() const { return current_; }
  // Timers are armed through add_timer, which also cuts the housekeeping's budget.
  TimerHeap& timers() { return timers_; }
  SharedQueue& shared() { return shared_; }
  Scheduler::Impl& scheduler() { return scheduler_; }

  void start(std::vector<VirtualProcessor*> victims);
  void join();

  // Any kernel thread.
  void push_pinned(Fiber* fiber) noexcept;
  void notify() noexcept;
  bool is_sleeping() const noexcept;
  bool wake_if_sleeping() noexcept;
  void request_reprioritize() noexcept;
  Scheduler::VpStats stats() const;

  // The attention word: one bit per rare condition that a yield must not take its fast path
  // under, so that the fast path tests one word for all of them. A bit may stay set after its
  // condition went (the yield then takes the slower path for nothing); it is never clear while
  // its condition holds, except for the moment between a condition's change and its setter's
  // store, as with the separate words it replaces. Whoever clears a bit looks at its condition
  // after the clear, so that a setter that came in between is not lost.
  enum Attention : std::uint32_t {
    // A re-sort of ready_ asked for (request_reprioritize); cleared by the owner's choose().
    kReprioritize = 1u << 0,
    // Switch hooks registered (Hooks' watcher, set and cleared under the hooks' lock).
    kSwitchHooks = 1u << 1,
    // The trace records sched events (set at construction, refreshed at each housekeeping).
    kTraceSched = 1u << 2,
    // A timer hook was registered: the housekeeping's period goes back to kHousekeepingPeriod
    // (Scheduler::add_timer_hook; cleared by the owner, which then shortens the period).
    kHousekeepingSoon = 1u << 3,
  };
  // Any kernel thread: sets (`on`) or clears `bits`.
  void set_attention(std::uint32_t bits, bool on) noexcept;

  // The owning kernel thread, on behalf of its running user thread.
  // this_thread::yield's scheduling half (weft/detail/yield.h): the switch and its end are left
  // to the caller.
  void prepare_yield(PreparedYield& yield) noexcept;
  // Switches to `fiber`, a thread this processor may run that is in no queue; the caller is
  // queued to resume first (ThreadAttr::run_at_once).
  void run_now(Fiber* fiber) noexcept;
  void park_current() noexcept;
  // Switches the running free thread out and queues it again at once, where make_runnable puts
  // it (this_thread::move_to_vp: on the processor it prefers), even with nothing else to run here.
  void requeue_current() noexcept;
  [[noreturn]] void exit_current() noexcept;
  void add_poller(PollWaiter* waiter) noexcept;
  // Arms a timer of this processor's heap (the thread that arms it parks on this processor).
  void add_timer(TimerNode* node) noexcept;
  // The adaptive spin budget of collaborative waits on this processor.
  std::int64_t spin_budget_ns() const noexcept { return spin_budget_ns_; }
  void spin_succeeded() noexcept;
  void spin_failed() noexcept;
  bool has_local_work() const noexcept;

  // Completes a switch on the thread that was switched to: saves the switched-out context and
  // does what the switch left to do (requeue, park, release an ended thread). `fake_stack` is
  // what the switched-to context's sanitizer::start_switch saved (null for a new thread).
  void finish_switch(transfer_t from, void* fake_stack) noexcept;

  // Any thread: starts this processor's preemption timer, once the processor has made it.
  void arm_preemption() noexcept;
  // The preemption signal's handler, on this processor's kernel thread, interrupting registered
  // code whose stack pointer was `sp`: whether the running thread should yield now. True when it
  // has not switched since the previous tick and other threads wait on this processor.
  bool preemption_due(const void* sp) noexcept;

  Fiber* cached_fiber() noexcept;
  bool cache_fiber(Fiber* fiber) noexcept;

 private:
  using After = SwitchAfter;
  enum : std::uint32_t { kRunning = 0, kSleeping = 1 };

  void main();
  void idle_loop();
  // A scheduling point's choice of the next thread: count_pick() then choose(floor).
  Fiber* pick(int floor) noexcept;
  // Counts a pick, running housekeeping when its budget of picks is spent, then refilling the
  // budget (housekeeping_budget()).
  void count_pick() noexcept;
  // kHousekeepingPeriod while the housekeeping has something to keep (a timer of this processor,
  // a timer hook, a parked poller), else kQuietHousekeepingPeriod.
  std::uint32_t housekeeping_budget() const noexcept;
  // Something to keep appeared: the budget left is cut to kHousekeepingPeriod.
  void housekeeping_soon() noexcept;
  // The owner's handling of the attention bits that choose() and the yield's extras take.
  void take_attention(std::uint32_t bits) noexcept;
  Fiber* choose(int floor) noexcept;
  Fiber* pop_at(int level) noexcept;
  // The pinned queue's push and pop: a woken thread goes ahead of yielded ones within a budget
  // (kWakeAheadLimit) that each turn of a thread queued behind refills.
  void queue_ready(Fiber* fiber) noexcept;
  Fiber* pop_ready(int level) noexcept;
  // After a switch away that found this processor's switch count at `switches`: the turns other
  // threads had until the caller (`pinned` or not) resumed, at least 1.
  std::uint64_t turns_since(std::uint64_t switches, bool pinned) const noexcept;
  // prepare_yield when a switch hook, the trace, a canary stack or the housekeeping's turn is
  // there: the same choice, with them. Out of line, so that prepare_yield's own fast path calls
  // nothing and saves no register.
  [[gnu::noinline]] void prepare_yield_with_extras(PreparedYield& yield) noexcept;
  // Whether only ready_ may have work and no rare condition holds: no inbox, no bit of the
  // attention word, no free or node thread queued.
  // `handled`: bits the caller deals with itself.
  bool only_ready_has_work(std::uint32_t handled = 0) const noexcept;
  // A fast-path yield's choice: the next thread of `self`'s level `floor`, `self` queued last.
  Fiber* rotate_ready(Fiber* self, int floor) noexcept;
  // A yield beyond prepare_yield's fast path, switch included; out of line, so that the fast
  // path needs a small frame.
  [[gnu::noinline]] std::uint64_t yield_general(Fiber* self, int floor) noexcept;
  void drain_inbox() noexcept;
  Fiber* steal() noexcept;
  // Whether the one thread queued on victims_[victim] has sat there kLoneStealDelayNs (see
  // steal()).
  bool lone_settled(std::size_t victim) noexcept;
  bool run_pollers() noexcept;
  bool housekeeping(bool idle) noexcept;
  void sleep() noexcept;
  // Part of sleep(): offers the sleep to the poll-sleep hooks (the I/O manager blocking in
  // poll(2) on its waits and on wake_fd_, so that an event wakes this kernel thread directly).
  // True when one of them slept.
  bool poll_sleep(std::int64_t deadline) noexcept;
  // At a user thread's scheduling point (yield, park, exit), before the next thread is chosen:
  // a thread the hooks make runnable here (an I/O waiter whose event a poll found) can be the
  // one chosen, instead of waiting for the next scheduling point behind a whole time slice.
  void run_switch_hooks() noexcept;
  // `prev` is current_, passed for the compiler's sake: the inlined switch then knows it.
  void switch_to(Fiber* prev, Fiber* next, After after) noexcept;
  // switch_to's halves before and after the jump (the sanitizers' annotations aside); a
  // fast-path yield uses the first (prepare_yield), weft/detail/yield.h's finish_yield does the
  // second's common case inline.
  void begin_switch(Fiber* prev, Fiber* next, After after) noexcept;
  void end_switch(transfer_t from, void* fake_stack) noexcept;
  void trace_switch(Fiber* prev, After after, Fiber* next) noexcept;

  Scheduler::Impl& scheduler_;
  const int index_;
  const int core_;
  NumaNode& node_;
  std::vector<VirtualProcessor*> victims_;  // other processors, nearest NUMA node first
  // Per victim, the push count at which steal() last found one thread in its queue, and when.
  struct LoneSeen {
    std::uint32_t pushes = 0;
    std::int64_t since_ns = 0;
  };
  std::vector<LoneSeen> lone_seen_;
  // Go's delay before stealing a processor's runnext thread: a hand-off between two threads of
  // one core (tens of nanoseconds to a few hundred) leaves the next one queued far shorter.
  static constexpr std::int64_t kLoneStealDelayNs = 3000;
  std::thread thread_;

  PriorityQueue ready_;
  std::atomic<Fiber*> inbox_{nullptr};
  SharedQueue shared_;
  std::atomic<std::uint32_t> attention_{0};

  Fiber* current_ = nullptr;
  fcontext_t idle_context_ = nullptr;
  // The idle loop's stack and TSan fiber, for the sanitizer builds' switch annotations.
  sanitizer::StackBounds idle_stack_;
  void* idle_tsan_fiber_ = nullptr;
  std::uint32_t bypassed_[kPriorityLevels] = {};
  unsigned rotation_ = 0;
  // Scheduling points of a busy processor between two looks at timers, timer hooks and parked
  // pollers; the picks (yields that find nothing else to run included) left until the next look.
  // While there is nothing to keep the looks are rarer (they are a detour of the yields' fast
  // path): whatever gives the housekeeping something to keep cuts the budget back
  // (housekeeping_soon).
  static constexpr std::uint32_t kHousekeepingPeriod = 16;
  static constexpr std::uint32_t kQuietHousekeepingPeriod = 256;
  std::uint32_t until_housekeeping_ = kHousekeepingPeriod;
  // Woken pinned threads queued ahead of yielded ones between two turns of a yielded one: a
  // thread that a message or a lock wakes runs at the next scheduling point instead of behind
  // every computing thread's time slice, and threads that wake each other in turn (a ping-pong on
  // one core) cannot keep the yielded ones from running.
  static constexpr int kWakeAheadLimit = 4;
  int wake_ahead_budget_ = kWakeAheadLimit;

  TimerHeap timers_;
  PollWaiter* pollers_ = nullptr;
  std::int64_t spin_budget_ns_ = 0;
  std::int64_t poll_sleep_ns_ = 50'000;

  std::vector<Fiber*> fiber_cache_;

  // Made by main() on this processor's kernel thread (its CPU clock), kept until destruction so
  // that arm_preemption never sees it go; `preemption_ready_` publishes it (release/acquire).
  std::optional<PreemptionTimer> preemption_timer_;
  std::atomic<bool> preemption_ready_{false};
  // The switch count the previous tick saw (owner only: ticks arrive on this kernel thread).
  std::uint64_t preemption_mark_ = ~std::uint64_t{0};

  std::atomic<std::uint32_t> state_{kRunning};
  // Set while a poll-sleep hook may block: a waker then writes wake_fd_ (an eventfd made at the
  // first such sleep) instead of waking the futex.
  std::atomic<bool> poll_sleeping_{false};
  int wake_fd_ = -1;
  std::atomic<std::uint64_t> switches_{0};
  std::atomic<std::uint64_t> steals_{0};
  std::atomic<std::uint64_t> sleeps_{0};
  std::atomic<std::uint64_t> remote_wakes_{0};
  std::atomic<std::uint64_t> preemptions_{0};
};

}  // namespace weft::detail
