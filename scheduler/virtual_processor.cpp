#include "virtual_processor.h"

#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <string>
#include <utility>

#include "crash_handler.h"
#include "current.h"
#include "futex.h"
#include "scheduler_impl.h"
#include "switch_inline.h"
#include "weft/error.h"
#include "weft/trace_file.h"

namespace weft::detail {

namespace {
// Fiber objects (with their stacks) a processor keeps for its next spawns.
constexpr std::size_t kFiberCacheSize = 64;
// Sleep bounds of an idle processor that still has parked pollers to run.
constexpr std::int64_t kPollSleepMinNs = 50'000;
constexpr std::int64_t kPollSleepMaxNs = 1'000'000;
}  // namespace

VirtualProcessor::VirtualProcessor(Scheduler::Impl& scheduler, int index, int core, NumaNode& node)
    : scheduler_(scheduler),
      index_(index),
      core_(core),
      node_(node),
      spin_budget_ns_(scheduler.spin_ns / 4) {
  fiber_cache_.reserve(kFiberCacheSize);
  // The trace starts before the processors are made (Scheduler::Impl); housekeeping() follows a
  // later change.
  if (trace::enabled(trace::Category::sched)) attention_.store(kTraceSched);
}

void VirtualProcessor::start(std::vector<VirtualProcessor*> victims) {
  victims_ = std::move(victims);
  lone_seen_.assign(victims_.size(), LoneSeen{});
  thread_ = std::thread([this] { main(); });
}

void VirtualProcessor::join() {
  if (thread_.joinable()) thread_.join();
}

void VirtualProcessor::main() {
  set_current_vp(this);
  trace::attach_virtual_processor(index_, scheduler_.topology.core(core_).os_index, numa());
  AlternateSignalStack alternate_stack;
  // Without this the kernel may defer a sleeping processor's wake-up by its default 50 us slack.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  if (scheduler_.config.get_bool("scheduler.bind")) {
    try {
      scheduler_.topology.bind_current_thread(core_);
    } catch (const std::exception& e) {
      fatal(std::string("virtual processor ") + std::to_string(index_) + ": " + e.what());
    }
  }
  idle_tsan_fiber_ = sanitizer::current_fiber();
  if (!sanitizer::kThread) {
    // ThreadSanitizer defers asynchronous signals to its own safe points, where a switch from the
    // handler would run behind its back: its builds stay cooperative.
    preemption_timer_.emplace(scheduler_.preempt_period_ms);
    // seq_cst, against allow_preemption_in's publication of its first range (preemption.cpp).
    preemption_ready_.store(true);
    if (preemptible_code_registered()) preemption_timer_->arm();
  }
  idle_loop();
  for (Fiber* fiber : fiber_cache_) scheduler_.release_fiber_memory(fiber);
  fiber_cache_.clear();
  set_current_vp(nullptr);
}

VirtualProcessor::~VirtualProcessor() {
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void VirtualProcessor::idle_loop() {
  bool searching = false;
  std::int64_t search_start = 0;
  // seq_cst on the searching counts: a waker pushes work, then reads them; a processor that
  // stops searching then re-reads the queues before sleeping (see sleep()). One of the two sees
  // the other.
  auto stop_searching = [&] {
    if (searching) {
      searching = false;
      scheduler_.searching.fetch_sub(1);
      node_.searching.fetch_sub(1);
    }
  };
  for (;;) {
    Fiber* next = pick(0);
    if (next == nullptr && !housekeeping(true)) {
      next = steal();
      if (next != nullptr) steals_.fetch_add(1, std::memory_order_relaxed);
    }
    if (next != nullptr) {
      stop_searching();
      switch_to(current_, next, After::nothing);
      continue;
    }
    if (scheduler_.stopping.load() && scheduler_.live.load() == 0) break;
    const std::int64_t now = steady_now_ns();
    if (!searching) {
      searching = true;
      search_start = now;
      scheduler_.searching.fetch_add(1);
      node_.searching.fetch_add(1);
    }
    if (now - search_start < scheduler_.idle_spin_ns && !scheduler_.hooks.sleep_early()) {
      spin_pause();
      continue;
    }
    if (scheduler_.hooks.has_sleep_hooks() && scheduler_.hooks.run_sleep()) {
      search_start = now;
      continue;
    }
    stop_searching();
    sleep();
  }
  stop_searching();
}

bool VirtualProcessor::has_local_work() const noexcept {
  return !ready_.empty() || inbox_.load(std::memory_order_relaxed) != nullptr ||
         shared_.mask_hint() != 0 || node_.queue.mask_hint() != 0;
}

void VirtualProcessor::sleep() noexcept {
  // seq_cst increment before the seq_cst loads of the queues below: a waker that queues work and
  // then reads zero here (wake_idle) read it before this increment, so the loads see its work.
  scheduler_.sleeping.fetch_add(1);
  struct CountOut {
    std::atomic<std::uint32_t>& sleeping;
    // relaxed: a waker that still sees this processor counted only scans the processors for
    // nothing; the count itself stays exact (read-modify-writes see the latest value).
    ~CountOut() { sleeping.fetch_sub(1, std::memory_order_relaxed); }
  } count_out{scheduler_.sleeping};
  // seq_cst store then seq_cst loads of the queues: a thread that queues work and then reads
  // state_ (seq_cst) either sees kSleeping and wakes us, or we see its work here.
  state_.store(kSleeping);
  bool work = inbox_.load() != nullptr || !ready_.empty() || shared_.mask_seq_cst() != 0 ||
              node_.queue.mask_seq_cst() != 0;
  // A thread alone in another processor's queue, queued there by that processor's own thread, is
  // that processor's to run at its next scheduling point (the wake rule wakes nobody for it):
  // not work to stay awake for. Anything else queued is: its waker may have read `sleeping`
  // before this processor counted itself in.
  for (VirtualProcessor* victim : victims_) {
    work = work || (victim->shared_.mask_seq_cst() != 0 && !victim->shared_.owner_lone());
  }
  if (work || (scheduler_.stopping.load() && scheduler_.live.load() == 0)) {
    state_.store(kRunning);
    return;
  }
  std::int64_t deadline = std::min(timers_.next_deadline(), scheduler_.hooks.next_timer_due());
  for (VirtualProcessor* victim : victims_) {
    deadline = std::min(deadline, victim->timers_.next_deadline());
  }
  if (pollers_ != nullptr) {
    deadline = std::min(deadline, steady_now_ns() + poll_sleep_ns_);
    poll_sleep_ns_ = std::min(poll_sleep_ns_ * 2, kPollSleepMaxNs);
  }
  sleeps_.fetch_add(1, std::memory_order_relaxed);
  if (scheduler_.hooks.has_poll_sleep_hooks() && poll_sleep(deadline)) {
    state_.store(kRunning);
    return;
  }
  while (state_.load() == kSleeping) {
    futex_wait(&state_, kSleeping, deadline == TimerHeap::kNever ? -1 : deadline);
    if (deadline != TimerHeap::kNever && steady_now_ns() >= deadline) break;
  }
  state_.store(kRunning);
}

bool VirtualProcessor::poll_sleep(std::int64_t deadline) noexcept {
  if (wake_fd_ < 0) {
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) return false;  // the futex will do
  }
  // seq_cst store then load, against wake_if_sleeping's seq_cst exchange of state_ then load of
  // the flag: either the waker sees the flag and writes wake_fd_, or this load sees kRunning.
  poll_sleeping_.store(true);
  bool slept = false;
  if (state_.load() == kSleeping) {
    slept =
        scheduler_.hooks.run_poll_sleep(wake_fd_, deadline == TimerHeap::kNever ? -1 : deadline);
  }
  poll_sleeping_.store(false);
  // The hook drains the eventfd when its poll(2) saw it written. A waker changes state_ before
  // it writes, so kRunning here means a write the hook may have missed (made after its poll(2)
  // returned): drained now, or the next poll sleep would end at once. A read that finds the
  // eventfd empty (an event or the deadline ended the sleep) would be a system call per sleep
  // for nothing. A write still later is drained by the next sleep's hook.
  if (slept && state_.load() == kRunning) {
    eventfd_t count = 0;
    ::eventfd_read(wake_fd_, &count);  // EAGAIN when the hook drained it
  }
  return slept;
}

bool VirtualProcessor::is_sleeping() const noexcept {
  return state_.load() == kSleeping;
}

bool VirtualProcessor::wake_if_sleeping() noexcept {
  std::uint32_t expected = kSleeping;
  if (state_.load() != kSleeping || !state_.compare_exchange_strong(expected, kRunning)) {
    return false;
  }
  // A processor in a poll-sleep hook (or about to enter it) is woken by its eventfd; one whose
  // hook declined or returned sees kRunning before its futex wait (see poll_sleep()).
  if (poll_sleeping_.load()) {
    ::eventfd_write(wake_fd_, 1);
  } else {
    futex_wake(&state_);
  }
  remote_wakes_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void VirtualProcessor::notify() noexcept {
  wake_if_sleeping();
}

void VirtualProcessor::push_pinned(Fiber* fiber) noexcept {
  if (current_vp() == this) {
    queue_ready(fiber);
    return;
  }
  Fiber* head = inbox_.load(std::memory_order_relaxed);
  do {
    fiber->inbox_next = head;
    // seq_cst: publishes the fiber and orders the push before notify()'s read of state_.
  } while (!inbox_.compare_exchange_weak(head, fiber));
  notify();
}

void VirtualProcessor::request_reprioritize() noexcept {
  // release: pairs with choose()'s acquire clear, so the re-sort sees the new priority.
  attention_.fetch_or(kReprioritize, std::memory_order_release);
  notify();
}

void VirtualProcessor::set_attention(std::uint32_t bits, bool on) noexcept {
  // relaxed: a bit only sends the yields to the path that reads the condition's own words (the
  // hooks' list, published with release and read with acquire; the trace's flag). A yield that
  // sees it one switch late is what a relaxed read of those words allowed before the word.
  if (on) {
    attention_.fetch_or(bits, std::memory_order_relaxed);
  } else {
    attention_.fetch_and(~bits, std::memory_order_relaxed);
  }
}

void VirtualProcessor::drain_inbox() noexcept {
  if (inbox_.load(std::memory_order_relaxed) == nullptr) return;
  // acquire: pairs with the pushers' release, making the fibers' fields visible.
  Fiber* list = inbox_.exchange(nullptr, std::memory_order_acquire);
  Fiber* reversed = nullptr;
  while (list != nullptr) {
    Fiber* next = list->inbox_next;
    list->inbox_next = reversed;
    reversed = list;
    list = next;
  }
  while (reversed != nullptr) {
    Fiber* next = reversed->inbox_next;
    queue_ready(reversed);
    reversed = next;
  }
}

void VirtualProcessor::queue_ready(Fiber* fiber) noexcept {
  if (std::exchange(fiber->woken, false) && wake_ahead_budget_ > 0) {
    --wake_ahead_budget_;
    ready_.push_front(fiber);
  } else {
    ready_.push_back(fiber);
  }
}

Fiber* VirtualProcessor::pop_ready(int level) noexcept {
  Fiber* fiber = ready_.pop_front(level);
  if (fiber != nullptr && !fiber->ahead) wake_ahead_budget_ = kWakeAheadLimit;
  return fiber;
}

Fiber* VirtualProcessor::pick(int floor) noexcept {
  count_pick();
  return choose(floor);
}

std::uint32_t VirtualProcessor::housekeeping_budget() const noexcept {
  const bool quiet = timers_.next_deadline() == TimerHeap::kNever && pollers_ == nullptr &&
                     scheduler_.hooks.next_timer_due() == TimerHeap::kNever;
  return quiet ? kQuietHousekeepingPeriod : kHousekeepingPeriod;
}

void VirtualProcessor::housekeeping_soon() noexcept {
  until_housekeeping_ = std::min(until_housekeeping_, kHousekeepingPeriod);
}

void VirtualProcessor::add_timer(TimerNode* node) noexcept {
  timers_.add(node);
  housekeeping_soon();
}

void VirtualProcessor::take_attention(std::uint32_t bits) noexcept {
  if ((bits & kReprioritize) != 0) {
    // Cleared before the re-sort reads the priorities: a request made after the clear sets the
    // bit again for the next pick. acquire: pairs with request_reprioritize's release.
    attention_.fetch_and(~kReprioritize, std::memory_order_acquire);
    ready_.requeue_changed();
  }
  if ((bits & kHousekeepingSoon) != 0) {
    // Cleared before the budget is cut: a hook registered after the clear sets it again.
    attention_.fetch_and(~kHousekeepingSoon, std::memory_order_relaxed);
    housekeeping_soon();
  }
}

Fiber* VirtualProcessor::choose(int floor) noexcept {
  drain_inbox();
  const std::uint32_t attention =
      attention_.load(std::memory_order_relaxed) & (kReprioritize | kHousekeepingSoon);
  if (attention != 0) [[unlikely]]
    take_attention(attention);
  const std::uint32_t all = ready_.mask() | shared_.mask_hint() | node_.queue.mask_hint();
  if (all == 0) return nullptr;
  const int top = top_level(all);
  int chosen = top >= floor ? top : -1;
  // Aging: every non-empty level passed over counts a round; one that reaches the limit runs
  // now, the highest such level first, whatever the priorities above it.
  const int cut = chosen >= 0 ? chosen : floor;
  const std::uint32_t below = all & ((1u << cut) - 1);
  if (below != 0) {
    int starving = -1;
    for (std::uint32_t m = below; m != 0; m &= m - 1) {
      const int level = std::countr_zero(m);
      if (++bypassed_[level] >= scheduler_.starvation_limit) starving = level;
    }
    if (starving >= 0) chosen = starving;
  }
  if (chosen < 0) return nullptr;
  bypassed_[chosen] = 0;
  return pop_at(chosen);
}

Fiber* VirtualProcessor::pop_at(int level) noexcept {
  // Rotate the queue tried first so that pinned, free and node threads of one level take turns.
  const unsigned first = rotation_++ % 3;
  for (unsigned i = 0; i < 3; ++i) {
    Fiber* fiber = nullptr;
    switch ((first + i) % 3) {
      case 0:
        fiber = pop_ready(level);
        break;
      case 1:
        if (shared_.mask_hint() & (1u << level)) fiber = shared_.pop_level(level);
        break;
      default:
        if (node_.queue.mask_hint() & (1u << level)) fiber = node_.queue.pop_level(level);
        break;
    }
    if (fiber != nullptr) return fiber;
  }
  return nullptr;
}

Fiber* VirtualProcessor::steal() noexcept {
  for (std::size_t i = 0; i < victims_.size(); ++i) {
    VirtualProcessor* victim = victims_[i];
    const std::size_t queued = victim->shared_.size_hint();
    if (queued == 0) continue;
    // A thread alone in a victim's queue, queued by the victim's own thread, is the next its
    // owner runs, often within a few hundred nanoseconds: two threads handing a core to each
    // other (a waiter yielding to the thread it waits for) keep one of them queued at every
    // switch. Taken at once, one of the pair moves and every later hand-off between them crosses
    // cores (an OpenMP team of 2 on 2 cores: 1.2-1.5 us a region instead of 0.3). So such a
    // thread is taken only once it sat there kLoneStealDelayNs, as Go's thieves leave a
    // processor's runnext thread 3 us: its owner is then busy with a thread that does not yield,
    // and the thread is better off here. Surplus (two or more queued) and a thread another core
    // woke (its waker asked for a searcher: the wake rule) are taken at once.
    if (queued == 1 && victim->shared_.owner_lone() && !lone_settled(i)) continue;
    Fiber* fiber = victim->shared_.pop();
    if (fiber == nullptr) continue;
    // More left there: let another sleeping processor help (it stops at the first searcher).
    if (victim->shared_.size_hint() > 1) scheduler_.wake_idle(victim->numa(), false);
    return fiber;
  }
  return nullptr;
}

bool VirtualProcessor::lone_settled(std::size_t victim) noexcept {
  LoneSeen& seen = lone_seen_[victim];
  const std::uint32_t pushes = victims_[victim]->shared_.pushes_hint();
  const std::int64_t now = steady_now_ns();
  // No push since the last look: the thread queued then is still the one there.
  if (pushes == seen.pushes) return now - seen.since_ns >= kLoneStealDelayNs;
  seen = {pushes, now};
  return false;
}

bool VirtualProcessor::run_pollers() noexcept {
  bool progress = false;
  PollWaiter** link = &pollers_;
  while (*link != nullptr) {
    PollWaiter* waiter = *link;
    if (*waiter->poll) (*waiter->poll)();
    if ((*waiter->pred)()) {
      *link = waiter->next;
      unpark(waiter->fiber, waiter->epoch);
      progress = true;
    } else {
      link = &waiter->next;
    }
  }
  if (progress) poll_sleep_ns_ = kPollSleepMinNs;
  return progress;
}

void VirtualProcessor::add_poller(PollWaiter* waiter) noexcept {
  waiter->next = pollers_;
  pollers_ = waiter;
  poll_sleep_ns_ = kPollSleepMinNs;
  housekeeping_soon();
}

bool VirtualProcessor::housekeeping(bool idle) noexcept {
  // Only this kernel thread writes this bit: a trace started or stopped after the processor was
  // made reaches the yields' fast path within a housekeeping budget of picks.
  const bool tracing = trace::enabled(trace::Category::sched);
  if (tracing != ((attention_.load(std::memory_order_relaxed) & kTraceSched) != 0)) {
    set_attention(kTraceSched, tracing);
  }
  bool progress = false;
  const std::int64_t next_timer =
      std::min(timers_.next_deadline(), scheduler_.hooks.next_timer_due());
  if (idle || next_timer != TimerHeap::kNever) {
    const std::int64_t now = steady_now_ns();
    progress = timers_.expire(now) > 0;
    if (scheduler_.hooks.next_timer_due() <= now) scheduler_.hooks.run_timers(now);
    if (idle) {
      // A busy processor cannot look at its own timers; an idle one does it for it.
      for (VirtualProcessor* victim : victims_)
        progress = victim->timers_.expire(now) > 0 || progress;
    }
  }
  if (pollers_ != nullptr) progress = run_pollers() || progress;
  if (idle && scheduler_.hooks.has_idle_hooks()) progress = scheduler_.hooks.run_idle() || progress;
  return progress;
}

void VirtualProcessor::spin_succeeded() noexcept {
  spin_budget_ns_ = std::min(spin_budget_ns_ * 2 + 1000, scheduler_.spin_ns);
}

void VirtualProcessor::spin_failed() noexcept {
  spin_budget_ns_ /= 2;
}

void VirtualProcessor::trace_switch(Fiber* prev, After after, Fiber* next) noexcept {
  const trace::SwitchReason reason = after == After::park   ? trace::SwitchReason::park
                                     : after == After::exit ? trace::SwitchReason::exit
                                     : prev == nullptr      ? trace::SwitchReason::start
                                                            : trace::SwitchReason::yield;
  if (prev != nullptr) prev->trace_parked = after == After::park;
  // Every field at once: assigned one by one over the defaults, the word is merged byte by byte.
  const trace::ThreadInfo info =
      next != nullptr
          ? trace::ThreadInfo{.rank = next->rank,
                              .resumes_park = next->trace_parked,
                              .reason = reason,
                              .type = static_cast<std::uint8_t>(next->type),
                              .priority = static_cast<std::int8_t>(
                                  next->priority.load(std::memory_order_relaxed))}
          : trace::ThreadInfo{
                .rank = -1, .resumes_park = false, .reason = reason, .type = 0, .priority = 0};
  trace::thread_switch(prev != nullptr ? prev->id : 0, next != nullptr ? next->id : 0, info);
}

void VirtualProcessor::finish_switch(transfer_t from, void* fake_stack) noexcept {
  const sanitizer::StackBounds from_stack = sanitizer::finish_switch(fake_stack);
  const auto* record = static_cast<const SwitchRecord*>(from.data);
  Fiber* fiber = record->from;
  if (fiber == nullptr) {
    idle_context_ = from.fctx;
    idle_stack_ = from_stack;
    return;
  }
  fiber->context = from.fctx;
  switch (record->after) {
    case After::nothing:
      break;
    case After::requeue:
      scheduler_.make_runnable(fiber);
      break;
    case After::park: {
      const std::uint64_t epoch = park_epoch(fiber->park.load(std::memory_order_relaxed));
      std::uint64_t expected = park_word(epoch, ParkState::parking);
      // acq_rel: a waker that later sees `parked` must also see the saved context.
      if (!fiber->park.compare_exchange_strong(expected, park_word(epoch, ParkState::parked),
                                               std::memory_order_acq_rel)) {
        // Woken while switching out (state `pending`): the wake-up left the requeue to us.
        fiber->park.store(park_word(epoch, ParkState::running), std::memory_order_relaxed);
        fiber->woken = true;
        scheduler_.make_runnable(fiber);
      }
      break;
    }
    case After::exit:
      scheduler_.thread_ended(fiber);
      break;
  }
}

void VirtualProcessor::run_switch_hooks() noexcept {
  if (scheduler_.hooks.has_switch_hooks()) scheduler_.hooks.run_switch();
}

void VirtualProcessor::run_now(Fiber* fiber) noexcept {
  Fiber* self = current_;
  if (self->placement.kind == Placement::Kind::pinned) {
    // As in prepare_yield: only this kernel thread takes fibers out of ready_.
    ready_.push_first(self);
    switch_to(self, fiber, After::nothing);
  } else {
    switch_to(self, fiber, After::requeue);
  }
}

void VirtualProcessor::park_current() noexcept {
  run_switch_hooks();
  switch_to(current_, pick(0), After::park);
}

void VirtualProcessor::requeue_current() noexcept {
  run_switch_hooks();
  switch_to(current_, pick(0), After::requeue);
}

void VirtualProcessor::exit_current() noexcept {
  run_switch_hooks();
  switch_to(current_, pick(0), After::exit);
  __builtin_unreachable();
}

Fiber* VirtualProcessor::cached_fiber() noexcept {
  if (fiber_cache_.empty()) return nullptr;
  Fiber* fiber = fiber_cache_.back();
  fiber_cache_.pop_back();
  return fiber;
}

bool VirtualProcessor::cache_fiber(Fiber* fiber) noexcept {
  if (fiber_cache_.size() >= kFiberCacheSize) return false;
  fiber_cache_.push_back(fiber);
  return true;
}

void VirtualProcessor::arm_preemption() noexcept {
  if (preemption_ready_.load()) preemption_timer_->arm();
}

bool VirtualProcessor::preemption_due(const void* sp) noexcept {
  Fiber* running = current_;
  // Inside a switch made from inlined code (weft/detail/yield.h), current_ is already the next
  // thread while the stack is still the previous one's: not a point to preempt at.
  if (running == nullptr || !running->stack.contains(sp)) return false;
  const std::uint64_t switches = switches_.load(std::memory_order_relaxed);
  if (switches != preemption_mark_) {
    preemption_mark_ = switches;
    return false;
  }
  if (!has_local_work()) return false;
  // Only this kernel thread writes the counter; readers want an approximate figure.
  preemptions_.store(preemptions_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return true;
}

Scheduler::VpStats VirtualProcessor::stats() const {
  Scheduler::VpStats s;
  s.switches = switches_.load(std::memory_order_relaxed);
  s.steals = steals_.load(std::memory_order_relaxed);
  s.sleeps = sleeps_.load(std::memory_order_relaxed);
  s.remote_wakes = remote_wakes_.load(std::memory_order_relaxed);
  s.preemptions = preemptions_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace weft::detail
