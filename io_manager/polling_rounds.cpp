// The I/O manager's rounds over its sources and descriptor waits, and the hooks the scheduler calls
// into it: at a switch, on an idle core and before a core sleeps; the hand-off of what is polled
// to the blocker when every core is busy (docs/io_manager.md). The manager's life, its sources'
// registration and the waits' bookkeeping are in manager.cpp.
#include <sys/eventfd.h>

#include <algorithm>
#include <string>

#include "current.h"
#include "libc.h"
#include "manager.h"
#include "scheduler_impl.h"
#include "virtual_processor.h"
#include "weft/error.h"
#include "weft/this_thread.h"
#include "weft/trace.h"

namespace weft::io::detail {

using weft::detail::steady_now_ns;

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
