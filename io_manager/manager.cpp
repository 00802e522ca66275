#include "manager.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "current.h"
#include "kernel_thread_rank.h"
#include "libc.h"
#include "park.h"
#include "scheduler_impl.h"
#include "timer_heap.h"
#include "virtual_processor.h"
#include "weft/error.h"
#include "weft/placement.h"
#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/trace.h"

namespace weft::io::detail {

namespace {

using weft::detail::steady_now_ns;

std::atomic<Manager*> running_manager{nullptr};

// initial-exec, as scheduler/current.cpp's: libweft is loaded with the program, never dlopen'ed
// later. Both are read by every interposed call and written twice by every weft::io::DirectCalls
// (each UCX call of the transport): through __tls_get_addr they cost ~90 instructions a
// DirectCalls, a sixth of an 8-byte round trip between processes (docs/mpi-processes.md).
//
// Set while this kernel thread runs a callback: it holds the manager's lock, so the interposed
// calls made by the callback go straight to the C library and a removal only flags the source.
__attribute__((tls_model("initial-exec"))) thread_local bool inside_callback = false;
// Set by weft::io::DirectCalls: the interposed calls of this kernel thread go to the C library.
__attribute__((tls_model("initial-exec"))) thread_local bool direct_calls = false;

Mode parse_mode(const std::string& text) {
  if (text == "poll") return Mode::poll;
  if (text == "block") return Mode::block;
  return Mode::automatic;
}

std::unique_ptr<Scheduler::Service> make_manager(Scheduler& scheduler) {
  return std::make_unique<Manager>(scheduler);
}

// Every scheduler gets its manager: libweft registers the factory when it is loaded.
[[maybe_unused]] const bool registered = (Scheduler::add_service(&make_manager), true);

}  // namespace

CallbackScope::CallbackScope() noexcept {
  inside_callback = true;
}

CallbackScope::~CallbackScope() {
  inside_callback = false;
}

Manager::Manager(Scheduler& scheduler)
    : scheduler_(scheduler),
      mode_(parse_mode(scheduler.config().get_string("io.mode"))),
      print_stats_at_exit_(scheduler.config().get_bool("io.stats")),
      idle_poll_ns_(scheduler.config().get_int("io.idle_poll_us") * 1000),
      switch_poll_ns_(scheduler.config().get_int("io.switch_poll_us") * 1000),
      timer_poll_ns_(scheduler.config().get_int("io.timer_poll_us") * 1000),
      counters_(mode_),
      spare_threads_(static_cast<int>(scheduler.config().get_int("io.spare_threads")), *counters_) {
  // release: a thread that finds the manager sees it constructed.
  running_manager.store(this, std::memory_order_release);
  spawn_io_threads();
}

Manager::~Manager() {
  for (Scheduler::HookId id : hooks_) scheduler_.remove_hook(id);
  if (blocker_.joinable()) {
    lock_.lock();
    blocker_stopping_ = true;
    blocker_woken_ = false;
    wake_blocker_locked();
    lock_.unlock();
    blocker_.join();
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
  running_manager.store(nullptr, std::memory_order_release);
  if (print_stats_at_exit_) print_stats();
}

void Manager::stop() {
  // release/acquire: the flag is the only data handed over; it pairs with the io threads' load.
  io_threads_stop_.store(true, std::memory_order_release);
  for (Thread& thread : io_threads_) thread.join();
  io_threads_.clear();
}

Manager* Manager::running() noexcept {
  // acquire: pairs with the constructor's release.
  return running_manager.load(std::memory_order_acquire);
}

bool Manager::in_callback() noexcept {
  return inside_callback;
}

bool Manager::bypassed() noexcept {
  return inside_callback || direct_calls;
}

}  // namespace weft::io::detail

namespace weft::io {

DirectCalls::DirectCalls() noexcept : previous_(detail::direct_calls) {
  detail::direct_calls = true;
}

DirectCalls::~DirectCalls() {
  detail::direct_calls = previous_;
}

}  // namespace weft::io

namespace weft::io::detail {

void Manager::spawn_io_threads() {
  const int count = static_cast<int>(scheduler_.config().get_int("io.threads"));
  if (count == 0) return;
  const Config& config = scheduler_.config();
  const std::vector<TaskPlace> places = place_tasks(
      CoreLayout::of(scheduler_.topology()), count, 1,
      parse_task_policy(config.get_string("placement.tasks")).value_or(TaskPolicy::numa),
      parse_progress_policy(config.get_string("placement.progress"))
          .value_or(ProgressPolicy::numa));
  for (const TaskPlace& place : places) {
    ThreadAttr attr;
    attr.type = ThreadType::io;
    // VP i runs on core i; a progress core beyond the VPs in use has no VP to pin to.
    attr.placement = place.progress_core >= 0 && place.progress_core < scheduler_.num_vps()
                         ? Placement::pinned(place.progress_core)
                         : Placement::free();
    // The thread parks as a collaborative waiter: its core polls for it in its idle loop and
    // at every 16th scheduling point, busy or not, until the manager stops.
    io_threads_.push_back(spawn(attr, [this] {
      weft::wait_until([this] { return io_threads_stop_.load(std::memory_order_acquire); },
                       [this] { poll_round(false); });
    }));
  }
}

void Manager::ensure_polling() {
  if (polling_started_.load(std::memory_order_acquire)) return;
  std::lock_guard guard(start_mutex_);
  if (polling_started_.load(std::memory_order_relaxed)) return;
  // The poll-sleep hook before the sleep hook that relies on it: a processor that sees the
  // sleep hook (the list is published with release) sees the flag.
  if (mode_ == Mode::automatic) {
    if (weft::Scheduler::Impl* impl = weft::detail::running_scheduler()) {
      auto hook = std::make_shared<weft::detail::Hook>();
      hook->kind = weft::detail::Hook::Kind::poll_sleep;
      hook->poll_sleep = [this](int wake_fd, std::int64_t deadline_ns) {
        return poll_sleep_hook(wake_fd, deadline_ns);
      };
      poll_sleep_registered_ = true;
      hooks_of_scheduler_ = &impl->hooks;
      hooks_.push_back(impl->hooks.add(std::move(hook)));
    }
  }
  if (mode_ != Mode::block) {
    hooks_.push_back(scheduler_.add_idle_hook([this] { return idle_hook(); }));
    hooks_.push_back(scheduler_.add_sleep_hook([this] { return sleep_hook(); }));
    hooks_.push_back(scheduler_.add_switch_hook([this] { switch_hook(); }));
  }
  // release: pairs with the acquire above, so the hooks are registered for whoever sees true.
  polling_started_.store(true, std::memory_order_release);
}

void Manager::ensure_timer() {
  if (timer_started_.load(std::memory_order_acquire)) return;
  std::lock_guard guard(start_mutex_);
  if (timer_started_.load(std::memory_order_relaxed)) return;
  // Sources that cannot be blocked on still need idle cores to poll them in block mode.
  if (mode_ == Mode::block) {
    hooks_.push_back(scheduler_.add_idle_hook([this] { return poll_round(false); }));
  }
  hooks_.push_back(scheduler_.add_timer_hook(std::chrono::nanoseconds(timer_poll_ns_),
                                             [this] { poll_round(false); }));
  // release: as in ensure_polling.
  timer_started_.store(true, std::memory_order_release);
}

void Manager::ensure_blocker() {
  if (blocker_started_.load(std::memory_order_acquire)) return;
  std::lock_guard guard(start_mutex_);
  if (blocker_started_.load(std::memory_order_relaxed)) return;
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) fatal("I/O manager: eventfd for the spare kernel thread failed");
  {
    // The spare thread takes no signal but those the masks of ppoll, pselect and epoll_pwait let
    // through while it waits for them: a signal the program blocks stays pending for the wait.
    const AsyncSignalsBlocked blocked;
    const weft::detail::RuntimeThreadCreation runtime_thread;  // a rank's wait may start it
    blocker_ = std::thread([this] { blocker_main(); });
  }
  // release: as in ensure_polling.
  blocker_started_.store(true, std::memory_order_release);
}

void Manager::link(FdWait* wait) noexcept {
  wait->prev = nullptr;
  wait->next = waits_;
  if (waits_ != nullptr) waits_->prev = wait;
  waits_ = wait;
  pending_.fetch_add(1, std::memory_order_relaxed);
  if (!wait->armed) polled_waits_.fetch_add(1, std::memory_order_relaxed);
  update_sleep_early();
}

void Manager::unlink(FdWait* wait) noexcept {
  if (wait->prev != nullptr) {
    wait->prev->next = wait->next;
  } else {
    waits_ = wait->next;
  }
  if (wait->next != nullptr) wait->next->prev = wait->prev;
  pending_.fetch_sub(1, std::memory_order_relaxed);
  if (!wait->armed) polled_waits_.fetch_sub(1, std::memory_order_relaxed);
  update_sleep_early();
  // The spare thread still unblocks the signals this wait let through: it rebuilds its set, so
  // that a signal the program blocks again is not caught there for nobody.
  if (wait->masked) wake_blocker_locked();
}

void Manager::complete(FdWait* wait, bool by_blocker, std::int64_t now_ns) noexcept {
  unlink(wait);
  wait->done = true;
  wait->detected_ns = now_ns;
  if (by_blocker) {
    counters_->block_detections.fetch_add(1, std::memory_order_relaxed);
  } else {
    counters_->poll_detections.fetch_add(1, std::memory_order_relaxed);
    counters_->poll_gap_ns.fetch_add(static_cast<std::uint64_t>(now_ns - wait->last_miss_ns),
                                     std::memory_order_relaxed);
    counters_->poll_gaps.fetch_add(1, std::memory_order_relaxed);
  }
  weft::detail::unpark(wait->fiber, wait->epoch);
}

void Manager::update_sleep_early() noexcept {
  // Without polled waits the flag is off: the spin stays for everything else a core waits for
  // (threads woken from other cores).
  if (hooks_of_scheduler_ == nullptr) return;
  hooks_of_scheduler_->set_sleep_early(polled_waits_.load(std::memory_order_relaxed) > 0);
}

void Manager::run_blocking(void (*body)(void*), void* context) noexcept {
  [[maybe_unused]] const weft::detail::SanitizerCallScope sanitizer_scope;
  spare_threads_.run(body, context);
}

WaitEnd Manager::wait(const pollfd* fds, nfds_t count, std::int64_t deadline_ns,
                      const sigset_t* mask) {
  [[maybe_unused]] const weft::detail::SanitizerCallScope sanitizer_scope;
  weft::detail::Fiber* self = weft::detail::current_fiber();
  if (mode_ != Mode::block) {
    ensure_polling();
    if (mode_ == Mode::poll) ensure_timer();
  }
  if (mode_ != Mode::poll || mask != nullptr) ensure_blocker();
  FdWait wait;
  wait.fds = fds;
  wait.count = count;
  wait.fiber = self;
  wait.registered_ns = wait.last_miss_ns = steady_now_ns();
  if (mask != nullptr) {
    wait.masked = true;
    wait.blocked_signals = signal_bits(*mask);
  }
  // Polled first (unless the mode is block): the core that parks us is about to look for work
  // and poll. The switch and sleep hooks hand the wait to the spare thread when no core polls.
  // A masked wait is armed at once in every mode: only a kernel thread blocked in the kernel
  // with the mask applied can take a signal for it; idle cores poll it too.
  wait.armed = mode_ == Mode::block || wait.masked;
  lock_.lock();
  wait.epoch = weft::detail::prepare_park(self);
  link(&wait);
  if (wait.armed) {
    wake_blocker_locked();
  } else {
    newest_polled_ns_ = wait.registered_ns;
    // A core sleeping in poll(2) on the other waits adds this one to its set.
    if (sleeper_wake_fd_ >= 0) {
      sleeper_rebuild_ = true;
      ::eventfd_write(sleeper_wake_fd_, 1);
    }
  }
  lock_.unlock();
  weft::detail::TimerNode timer;
  if (deadline_ns >= 0) {
    timer.deadline_ns = deadline_ns;
    timer.fiber = self;
    timer.epoch = wait.epoch;
    weft::detail::current_vp()->add_timer(&timer);
  }
  weft::detail::park();
  if (deadline_ns >= 0) timer.heap->cancel(&timer);
  // Taking the lock also waits for a completer still inside complete() with our frame.
  lock_.lock();
  if (!wait.done) unlink(&wait);
  lock_.unlock();
  if (!wait.done) return WaitEnd::timed_out;
  counters_->wakeups.fetch_add(1, std::memory_order_relaxed);
  counters_->wakeup_ns.fetch_add(static_cast<std::uint64_t>(steady_now_ns() - wait.detected_ns),
                                 std::memory_order_relaxed);
  return wait.interrupted ? WaitEnd::interrupted : WaitEnd::ready;
}

std::uint64_t Manager::add_source(SourceSpec spec) {
  if (in_callback()) {
    throw Error("weft::io::Source: source '" + spec.name +
                "' is registered from inside an I/O manager callback; register it from a thread");
  }
  const bool blockable = spec.fd >= 0;
  const bool to_block = blockable && (mode_ == Mode::block || spec.low_reactivity);
  if (!blockable || mode_ != Mode::block) ensure_polling();
  if (!blockable || mode_ == Mode::poll) ensure_timer();
  if (blockable && mode_ != Mode::poll) ensure_blocker();
  auto entry = std::make_unique<SourceEntry>();
  for (int vp : spec.near_vps) {
    if (vp < 0 || vp >= scheduler_.num_vps()) continue;  // a core this process does not run
    if (entry->near.empty())
      entry->near.assign(static_cast<std::size_t>(scheduler_.num_vps()), false);
    entry->near[static_cast<std::size_t>(vp)] = true;
  }
  entry->spec = std::move(spec);
  entry->armed = to_block;
  lock_.lock();
  entry->id = next_source_id_++;
  const std::uint64_t id = entry->id;
  sources_.push_back(std::move(entry));
  pending_.fetch_add(1, std::memory_order_relaxed);
  if (to_block) {
    wake_blocker_locked();
  } else if (blockable && mode_ == Mode::automatic) {
    unarmed_sources_.fetch_add(1, std::memory_order_relaxed);
  }
  lock_.unlock();
  return id;
}

void Manager::remove_source(std::uint64_t id) {
  // A callback already holds the lock: flag the source, the round erases it.
  const bool held = in_callback();
  if (!held) lock_.lock();
  for (auto& entry : sources_) {
    if (entry->id == id && !entry->removed) {
      entry->removed = true;
      pending_.fetch_sub(1, std::memory_order_relaxed);
      if (!entry->armed && entry->spec.fd >= 0 && mode_ == Mode::automatic) {
        unarmed_sources_.fetch_sub(1, std::memory_order_relaxed);
      }
      break;
    }
  }
  if (!held) {
    sweep_removed();
    lock_.unlock();
  }
}

void Manager::sweep_removed() noexcept {
  std::erase_if(sources_, [](const auto& entry) { return entry->removed; });
}

}  // namespace weft::io::detail
