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

bool may_poll(const SourceEntry& source, int vp, std::int64_t now_ns) noexcept {
  // A far core steps in after this long: a rank waiting for the source polls it itself, so this
  // only bounds how long work in flight waits while the near cores compute.
  constexpr std::int64_t kFarPollNs = 50'000;
  if (source.near.empty() || vp < 0) return true;
  if (static_cast<std::size_t>(vp) < source.near.size() && source.near[vp]) return true;
  return now_ns - source.polled_ns >= kFarPollNs;
}

bool Manager::call(SourceEntry& source, const std::function<bool()>& callback) noexcept {
  try {
    return callback();
  } catch (const std::exception& e) {
    fatal("I/O manager: a callback of source '" + source.spec.name + "' threw: " + e.what());
  } catch (...) {
    fatal("I/O manager: a callback of source '" + source.spec.name + "' threw");
  }
}

bool Manager::poll_round(bool busy_core) noexcept {
  if (pending_.load(std::memory_order_relaxed) == 0) return false;
  // Another core polling now does this round's work.
  if (!lock_.try_lock()) return false;
  CallbackScope scope;
  // In block mode only what cannot be blocked on is polled.
  const bool everything = mode_ != Mode::block;
  // auto, from a busy core's scheduling point: waits the spare thread watches are left to it,
  // and a wait unanswered for io.idle_poll_us is handed to it (the event usually comes soon
  // after a request; a longer wait is not worth a poll at every scheduling point).
  const bool ageing = busy_core && mode_ == Mode::automatic;
  const std::int64_t now = steady_now_ns();
  // ... except once per io.timer_poll_us: when every core computes, the kernel may leave the
  // woken spare thread waiting for a core until its next tick (4 ms on the development machine).
  const bool armed_too = ageing && now - last_armed_poll_ns_ >= timer_poll_ns_;
  if (armed_too) last_armed_poll_ns_ = now;
  // auto: a wait is first polled half an io.switch_poll_us after its registration. Its thread's
  // own try (the read that would block) checked the descriptor just before; the scheduling point
  // that parks it and the idle loop that follows would ask the kernel again microseconds later,
  // two system calls per wait for events that take longer. An idle core still watches it at once:
  // it sleeps in poll(2) on every polled wait, young or not (poll_sleep_hook).
  const std::int64_t fresh_ns = mode_ == Mode::automatic ? switch_poll_ns_ / 2 : 0;
  bool progress = false;
  bool checked = false;
  bool newly_armed = false;
  round_fds_.clear();
  round_waits_.clear();
  if (everything) {
    for (FdWait* wait = waits_; wait != nullptr; wait = wait->next) {
      if (ageing && wait->armed && !armed_too) continue;
      // Only a polled wait is aged: an armed one reaching here is this round's poll of it.
      if (ageing && !wait->armed && now - wait->registered_ns >= idle_poll_ns_) {
        newly_armed = arm(wait) || newly_armed;
        continue;
      }
      if (now - wait->registered_ns < fresh_ns) continue;
      round_waits_.push_back(wait);
      for (nfds_t i = 0; i < wait->count; ++i) {
        round_fds_.push_back({wait->fds[i].fd, wait->fds[i].events, 0});
      }
    }
  }
  if (!round_fds_.empty()) {
    checked = true;
    // One poll(2) for every waiting descriptor: the group call of descriptor waits.
    if (libc::poll(round_fds_.data(), round_fds_.size(), 0) > 0) {
      std::size_t slot = 0;
      for (FdWait* wait : round_waits_) {
        bool ready = false;
        for (nfds_t i = 0; i < wait->count; ++i) ready = ready || round_fds_[slot + i].revents != 0;
        slot += wait->count;
        if (ready) {
          complete(wait, false, now);
          progress = true;
        } else {
          wait->last_miss_ns = now;
        }
      }
    } else {
      for (FdWait* wait : round_waits_) wait->last_miss_ns = now;
    }
  }
  round_groups_.clear();
  const int vp = busy_core ? -1 : this_thread::vp();
  // Callbacks may flag sources (removal), never add or erase them: indices stay valid.
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    SourceEntry& source = *sources_[i];
    if (source.removed || (!everything && source.spec.fd >= 0)) continue;
    if (!may_poll(source, vp, now)) continue;
    source.polled_ns = now;
    checked = true;
    bool found = false;
    if (Group* group = source.spec.group.get()) {
      if (std::find(round_groups_.begin(), round_groups_.end(), group) != round_groups_.end()) {
        continue;
      }
      round_groups_.push_back(group);
      found = call(source, group->poll_all);
    } else {
      found = call(source, source.spec.poll);
    }
    if (found) {
      progress = true;
      counters_->poll_detections.fetch_add(1, std::memory_order_relaxed);
    }
  }
  sweep_removed();
  if (newly_armed) {
    trace::instant(trace::Category::io, "io hand-off to the blocker");
    counters_->handoffs.fetch_add(1, std::memory_order_relaxed);
    wake_blocker_locked();
  }
  lock_.unlock();
  if (checked) {
    trace::instant(trace::Category::io, "io poll", progress ? 1 : 0);
    counters_->polls.fetch_add(1, std::memory_order_relaxed);
  }
  return progress;
}

bool Manager::idle_hook() noexcept {
  return poll_round(false);
}

bool Manager::sleep_hook() noexcept {
  // auto: polled waits are left polled, the core sleeps in poll(2) on them (poll_sleep_hook),
  // woken by the event itself as a pthread in a blocking read would be: it spends no CPU while
  // it waits, and a woken wait costs no hand-off to the spare kernel thread.
  if (poll_sleep_registered_ && polled_waits_.load(std::memory_order_relaxed) > 0) {
    if (any_source_busy()) {
      hooks_of_scheduler_->set_sleep_early(false);  // the core keeps polling the source
      return true;
    }
    hand_off(false);
    return false;
  }
  // poll: an idle core polls the waits for io.idle_poll_us after the youngest was registered
  // (the event usually comes soon after a request); after that the wait is not worth a core.
  if (polled_waits_.load(std::memory_order_relaxed) > 0) {
    lock_.lock();
    const std::int64_t newest = newest_polled_ns_;
    lock_.unlock();
    if (steady_now_ns() - newest < idle_poll_ns_) return true;
  }
  // A source with work in flight completes only by being polled: this core keeps at it.
  if (any_source_busy()) return true;
  // No core polls once this one sleeps (others may sleep too): blocking takes over.
  if (mode_ == Mode::automatic) hand_off(true);
  return false;
}

bool Manager::poll_sleep_hook(int wake_fd, std::int64_t deadline_ns) noexcept {
  if (polled_waits_.load(std::memory_order_relaxed) == 0) return false;
  // One core at a time: it watches every polled wait, the others sleep on their futex.
  // acquire/release: hands sleep_fds_ from one sleeping core to the next.
  bool expected = false;
  if (!poll_sleeper_.compare_exchange_strong(expected, true, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
    return false;
  }
  sleep_fds_.clear();
  sleep_fds_.push_back({wake_fd, POLLIN, 0});
  lock_.lock();
  const std::uint64_t set = ++sleep_set_;
  for (FdWait* wait = waits_; wait != nullptr; wait = wait->next) {
    if (wait->armed) continue;
    wait->sleep_set = set;
    wait->sleep_slot = sleep_fds_.size();
    for (nfds_t i = 0; i < wait->count; ++i) {
      sleep_fds_.push_back({wait->fds[i].fd, wait->fds[i].events, 0});
    }
  }
  const bool any = sleep_fds_.size() > 1;
  if (any) {
    sleeper_wake_fd_ = wake_fd;
    sleeper_rebuild_ = false;
  }
  lock_.unlock();
  if (any) {
    timespec timeout{};
    if (deadline_ns >= 0) {
      const std::int64_t left = std::max<std::int64_t>(0, deadline_ns - steady_now_ns());
      timeout.tv_sec = left / 1'000'000'000;
      timeout.tv_nsec = left % 1'000'000'000;
    }
    counters_->poll_sleeps.fetch_add(1, std::memory_order_relaxed);
    const bool answered = libc::ppoll(sleep_fds_.data(), sleep_fds_.size(),
                                      deadline_ns >= 0 ? &timeout : nullptr, nullptr) > 0;
    lock_.lock();
    sleeper_wake_fd_ = -1;
    const bool rebuild = sleeper_rebuild_;
    // The waits poll(2) found ready are completed from its answer, here: a polling round of the
    // idle loop would ask the kernel again (one system call per event, as much as the event's
    // own wake-up costs a blocking reader). Only waits still listed are alive; those of this set
    // carry its number.
    if (answered) complete_sleep_set_locked(set);
    lock_.unlock();
    const bool event = std::any_of(sleep_fds_.begin() + 1, sleep_fds_.end(),
                                   [](const pollfd& fd) { return fd.revents != 0; });
    // The core's wake-up eventfd is drained only when written (by a waker, or by wait() for a
    // rebuild): a read that finds it empty is a system call per sleep for nothing. A waker
    // that writes it after poll(2) returned is seen by the processor (poll_sleep()).
    if ((sleep_fds_[0].revents & POLLIN) != 0 || rebuild) {
      eventfd_t count = 0;
      ::eventfd_read(wake_fd, &count);
    }
    // Woken for work: this core may now compute without a scheduling point for a long time, so
    // the waits go to blocking, as when a core sleeps in poll mode (not for a new wait to add).
    if (!event && !rebuild && (sleep_fds_[0].revents & POLLIN) != 0) hand_off(true);
  }
  poll_sleeper_.store(false, std::memory_order_release);
  return any;
}

void Manager::complete_sleep_set_locked(std::uint64_t set) noexcept {
  const std::int64_t now = steady_now_ns();
  for (FdWait* wait = waits_; wait != nullptr;) {
    FdWait* next = wait->next;  // complete() unlinks it
    if (wait->sleep_set == set) {
      bool ready = false;
      for (nfds_t i = 0; i < wait->count; ++i) {
        ready = ready || sleep_fds_[wait->sleep_slot + i].revents != 0;
      }
      if (ready) {
        complete(wait, false, now);
        counters_->poll_sleep_detections.fetch_add(1, std::memory_order_relaxed);
      }
    }
    wait = next;
  }
}

bool Manager::any_source_busy() noexcept {
  if (pending_.load(std::memory_order_relaxed) == 0) return false;
  // Another core holding the lock is polling the sources itself.
  if (!lock_.try_lock()) return true;
  CallbackScope scope;
  bool busy = false;
  // Far cores too stay awake for a busy source (SourceSpec::near_vps): they poll it when the near
  // ones do not.
  for (auto& source : sources_) {
    if (!source->removed && source->spec.busy && call(*source, source->spec.busy)) {
      busy = true;
      break;
    }
  }
  lock_.unlock();
  return busy;
}

void Manager::switch_hook() noexcept {
  // auto: a scheduling point while no core looks for work: every core is busy, so the sources
  // with a descriptor go to blocking (PIOMan's decision): their callbacks then run on the spare
  // kernel thread as soon as the event comes, whatever the cores compute. Waits of user threads
  // stay polled here (see poll_round): a woken thread runs at a scheduling point of its core
  // anyway, where this hook polls before the next thread is chosen.
  if (mode_ == Mode::automatic && unarmed_sources_.load(std::memory_order_relaxed) != 0 &&
      scheduler_.searching_vps() == 0) {
    hand_off(false);
  }
  // Busy cores poll at their scheduling points, at most once per io.switch_poll_us.
  if (pending_.load(std::memory_order_relaxed) == 0) return;
  const std::int64_t now = steady_now_ns();
  std::int64_t last = last_switch_poll_ns_.load(std::memory_order_relaxed);
  // Relaxed: the time is only a rate limit; the CAS lets one core poll per period.
  if (now - last >= switch_poll_ns_ &&
      last_switch_poll_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
    poll_round(true);
  }
}

void Manager::hand_off(bool waits) noexcept {
  if ((waits ? polled_waits_.load(std::memory_order_relaxed) : 0) +
          unarmed_sources_.load(std::memory_order_relaxed) ==
      0) {
    return;
  }
  lock_.lock();
  bool moved = false;
  if (waits) {
    for (FdWait* wait = waits_; wait != nullptr; wait = wait->next) moved = arm(wait) || moved;
  }
  for (auto& source : sources_) {
    if (!source->armed && !source->removed && source->spec.fd >= 0) {
      source->armed = true;
      moved = true;
    }
  }
  unarmed_sources_.store(0, std::memory_order_relaxed);
  if (moved) {
    trace::instant(trace::Category::io, "io hand-off to the blocker");
    counters_->handoffs.fetch_add(1, std::memory_order_relaxed);
    wake_blocker_locked();
  }
  lock_.unlock();
}

bool Manager::arm(FdWait* wait) noexcept {
  if (wait->armed) return false;
  wait->armed = true;
  polled_waits_.fetch_sub(1, std::memory_order_relaxed);
  update_sleep_early();
  return true;
}

}  // namespace weft::io::detail
