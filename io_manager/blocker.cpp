// The spare kernel thread: none of the cores' own, it blocks in poll(2) on every armed wait and
// source, so that an event wakes it (the kernel preempts a computation for it briefly), it runs
// the completion and wakes the waiting user thread. One descriptor of its set is an eventfd
// through which the manager makes it rebuild the set when something is armed. It blocks every
// signal but while waits of ppoll, pselect or epoll_pwait are armed: its poll(2) then lets
// through the signals all their masks leave unblocked, and a caught one ends them with EINTR.
#include <errno.h>
#include <unistd.h>

#include <cstdint>

#include "libc.h"
#include "manager.h"
#include "timer_heap.h"
#include "weft/trace.h"

namespace weft::io::detail {

void Manager::wake_blocker_locked() noexcept {
  if (!blocker_blocked_ || blocker_woken_ || wake_fd_ < 0) return;
  blocker_woken_ = true;
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t wrote = libc::write(wake_fd_, &one, sizeof one);
}

void Manager::interrupt_locked(SignalBits blocked, std::int64_t now_ns) noexcept {
  for (FdWait* wait = waits_; wait != nullptr;) {
    FdWait* next = wait->next;
    if (wait->masked && (wait->blocked_signals & ~blocked) == 0) {
      wait->interrupted = true;
      complete(wait, true, now_ns);
    }
    wait = next;
  }
}

void Manager::blocker_main() noexcept {
  trace::name_this_kernel_thread("io blocker");
  std::vector<pollfd> fds;
  for (;;) {
    lock_.lock();
    CallbackScope scope;
    if (blocker_stopping_) {
      lock_.unlock();
      return;
    }
    std::uint64_t drained = 0;
    [[maybe_unused]] const ssize_t got = libc::read(wake_fd_, &drained, sizeof drained);
    blocker_woken_ = false;
    const std::uint64_t generation = ++generation_;
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    for (FdWait* wait = waits_; wait != nullptr; wait = wait->next) {
      if (!wait->armed) continue;
      wait->generation = generation;
      wait->slot = fds.size();
      for (nfds_t i = 0; i < wait->count; ++i) {
        fds.push_back({wait->fds[i].fd, wait->fds[i].events, 0});
      }
    }
    // The masked waits' signals are let through only when every such wait leaves them
    // unblocked: a caught signal then interrupts them all (interrupt_locked).
    bool masked = false;
    SignalBits blocked = 0;
    for (FdWait* wait = waits_; wait != nullptr; wait = wait->next) {
      if (wait->armed && wait->masked) {
        masked = true;
        blocked |= wait->blocked_signals;
      }
    }
    const sigset_t mask = signal_set(blocked);
    bool busy = false;
    bool in_flight = false;
    for (auto& source : sources_) {
      if (!source->armed || source->removed) continue;
      // Work in flight that only polling completes: idle cores poll it (sleep_hook); this thread
      // polls it every io.timer_poll_us in case every core computes, and does not spin on a
      // core the ranks need.
      if (source->spec.busy && call(*source, source->spec.busy)) {
        in_flight = true;
        if (call(*source, source->spec.poll)) {
          counters_->block_detections.fetch_add(1, std::memory_order_relaxed);
        }
        continue;
      }
      // "Busy": events came in while it was being armed; poll it now rather than block.
      if (source->spec.arm && !call(*source, source->spec.arm)) {
        busy = true;
        if (call(*source, source->spec.poll)) {
          counters_->block_detections.fetch_add(1, std::memory_order_relaxed);
        }
        continue;
      }
      source->generation = generation;
      source->slot = fds.size();
      fds.push_back({source->spec.fd, source->spec.events, 0});
    }
    sweep_removed();
    blocker_blocked_ = !busy;
    lock_.unlock();

    const timespec period{timer_poll_ns_ / 1'000'000'000, timer_poll_ns_ % 1'000'000'000};
    const timespec zero{0, 0};
    const timespec* timeout = busy ? &zero : in_flight ? &period : nullptr;
    const bool traced = !busy && trace::enabled(trace::Category::io);
    if (traced) trace::detail::begin(trace::Category::io, "io block", fds.size());
    const int ready = libc::ppoll(fds.data(), fds.size(), timeout, masked ? &mask : nullptr);
    if (traced) trace::detail::end(trace::Category::io, "io block");
    const bool caught = ready < 0 && errno == EINTR;
    if (!busy) counters_->blocks.fetch_add(1, std::memory_order_relaxed);
    if (caught && masked) {
      lock_.lock();
      blocker_blocked_ = false;
      interrupt_locked(blocked, weft::detail::steady_now_ns());
      lock_.unlock();
      continue;
    }
    if (ready <= 0) continue;
    const std::int64_t now = weft::detail::steady_now_ns();
    lock_.lock();
    CallbackScope completing;
    blocker_blocked_ = false;
    // Whatever is still listed is alive (a waiter unlinks itself under the lock before it
    // leaves); what the set held but is gone was completed or removed meanwhile.
    for (FdWait* wait = waits_; wait != nullptr;) {
      FdWait* next = wait->next;
      if (wait->armed && wait->generation == generation) {
        bool seen = false;
        for (nfds_t i = 0; i < wait->count; ++i) seen = seen || fds[wait->slot + i].revents != 0;
        if (seen) complete(wait, true, now);
      }
      wait = next;
    }
    for (auto& source : sources_) {
      if (source->removed || !source->armed || source->generation != generation) continue;
      if (fds[source->slot].revents != 0 && call(*source, source->spec.poll)) {
        counters_->block_detections.fetch_add(1, std::memory_order_relaxed);
      }
    }
    sweep_removed();
    lock_.unlock();
  }
}

}  // namespace weft::io::detail
