// The I/O manager of one scheduler: the pending waits of user threads on descriptors, the
// registered event sources, and who detects them (see docs/io_manager.md for the decision).
//
// Everything the manager holds is guarded by one spin lock, which is also held while any
// callback of a source runs: callbacks of one manager never run concurrently, and a source
// removed under the lock has no callback running. Polling rounds only try the lock (a core that
// finds another one polling goes on with its own work); the spare kernel thread takes it to build
// its descriptor set and to complete what it saw, never while it blocks.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "signal_mask.h"
#include "spare_threads.h"
#include "stats.h"
#include "weft/detail/spin_lock.h"
#include "weft/io.h"
#include "weft/scheduler.h"
#include "weft/thread.h"

namespace weft::detail {
struct Fiber;
class Hooks;
}  // namespace weft::detail

namespace weft::io::detail {

// A user thread parked until one of its descriptors is ready. Lives in the waiter's frame.
struct FdWait {
  FdWait* next = nullptr;
  FdWait* prev = nullptr;
  const pollfd* fds = nullptr;  // the waiter's descriptors; only fd and events are read
  nfds_t count = 0;
  weft::detail::Fiber* fiber = nullptr;
  std::uint64_t epoch = 0;
  bool armed = false;            // in the spare kernel thread's set
  bool done = false;             // detected; the waiter has been woken
  std::uint64_t generation = 0;  // blocking call whose descriptor set holds it
  std::size_t slot = 0;          // its first descriptor there
  std::uint64_t sleep_set = 0;   // poll sleep (poll_sleep_hook) whose descriptor set holds it
  std::size_t sleep_slot = 0;    // its first descriptor there
  std::int64_t registered_ns = 0;
  std::int64_t last_miss_ns = 0;  // last poll that found nothing
  std::int64_t detected_ns = 0;
  // The wait of a ppoll, pselect or epoll_pwait with a mask: the signals it leaves blocked. Such
  // a wait is always in the spare kernel thread's set, whose poll(2) applies the mask.
  bool masked = false;
  SignalBits blocked_signals = 0;
  bool interrupted = false;  // a caught signal ended it
};

// How a wait ended.
enum class WaitEnd : std::uint8_t { ready, timed_out, interrupted };

struct SourceEntry {
  std::uint64_t id = 0;
  SourceSpec spec;
  bool removed = false;  // removed from inside a callback: erased at the end of the round
  bool armed = false;
  std::uint64_t generation = 0;
  std::size_t slot = 0;
  std::vector<bool> near;      // spec.near_vps by virtual processor; empty for all
  std::int64_t polled_ns = 0;  // last round that polled it
};

// Whether virtual processor `vp` (-1: a busy core's scheduling point or a thread that is not a
// virtual processor) polls `source` in this round (SourceSpec::near_vps).
bool may_poll(const SourceEntry& source, int vp, std::int64_t now_ns) noexcept;

// Marks the calling kernel thread as running the manager's callbacks (it holds the lock): the
// interposed calls a callback makes go straight to the C library, and a removal only flags.
class CallbackScope {
 public:
  CallbackScope() noexcept;
  ~CallbackScope();
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;
};

class Manager final : public Scheduler::Service {
 public:
  explicit Manager(Scheduler& scheduler);
  ~Manager() override;
  void stop() override;

  // The manager of the running scheduler, or null.
  static Manager* running() noexcept;
  // True on a kernel thread that is running one of the manager's callbacks.
  static bool in_callback() noexcept;
  // True where interposed calls must go straight to the C library: in a callback, or under a
  // weft::io::DirectCalls.
  static bool bypassed() noexcept;

  Mode mode() const noexcept { return mode_; }
  // Parks the calling user thread until one of `fds` is ready, the steady_clock deadline in ns
  // passes (-1 for none) or, with a `mask`, a signal that the mask leaves unblocked is caught
  // (docs/io_manager.md, Signal masks).
  WaitEnd wait(const pollfd* fds, nfds_t count, std::int64_t deadline_ns,
               const sigset_t* mask = nullptr);
  // Carries out body(context) on a spare kernel thread while the calling user thread is parked.
  void run_blocking(void (*body)(void*), void* context) noexcept;
  // Counts a read that the second non-blocking try answered (Stats::ready_rereads).
  void count_ready_reread() noexcept {
    counters_->ready_rereads.fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t add_source(SourceSpec spec);
  void remove_source(std::uint64_t id);
  Stats stats() const;

 private:
  // Lazy start of what the mode needs, at the first wait or source: a process that never waits
  // for I/O pays for no hook and no extra kernel thread.
  void ensure_polling();
  void ensure_timer();
  void ensure_blocker();

  // busy_core: called at a busy core's scheduling point (the switch hook), not by an idle core,
  // a timer or an io thread.
  bool poll_round(bool busy_core) noexcept;
  bool idle_hook() noexcept;
  bool sleep_hook() noexcept;
  // auto: an idle core about to sleep while waits are polled blocks in poll(2) on them and on
  // its wake-up descriptor instead, one core at a time: the event wakes it directly.
  bool poll_sleep_hook(int wake_fd, std::int64_t deadline_ns) noexcept;
  // Whether a source says it has work in flight (SourceSpec::busy).
  // Completes the waits of poll sleep `set` whose descriptors its poll(2) found ready.
  void complete_sleep_set_locked(std::uint64_t set) noexcept;
  bool any_source_busy() noexcept;
  void switch_hook() noexcept;
  // Arms the polled sources with a descriptor, and the polled waits too when `waits`, in the
  // spare kernel thread's set.
  void hand_off(bool waits) noexcept;

  // All under lock_.
  // True when the wait was polled and is now armed.
  bool arm(FdWait* wait) noexcept;
  void link(FdWait* wait) noexcept;
  void unlink(FdWait* wait) noexcept;
  void complete(FdWait* wait, bool by_blocker, std::int64_t now_ns) noexcept;
  // auto: idle cores skip their spin (Hooks::set_sleep_early) while waits are polled: a core
  // sleeping in poll(2) is woken by the event as soon as a spinning one would see it, and
  // spends no CPU meanwhile.
  void update_sleep_early() noexcept;
  bool call(SourceEntry& source, const std::function<bool()>& callback) noexcept;
  void sweep_removed() noexcept;
  void wake_blocker_locked() noexcept;
  // The spare thread caught a signal while it blocked only `blocked` (the union of the armed
  // waits' masks): ends with EINTR every masked wait whose mask is within `blocked`, since the
  // caught signal, not in `blocked`, is one such a wait leaves unblocked.
  void interrupt_locked(SignalBits blocked, std::int64_t now_ns) noexcept;

  void blocker_main() noexcept;
  void spawn_io_threads();
  void print_stats() const;

  Scheduler& scheduler_;
  const Mode mode_;
  const bool print_stats_at_exit_;
  const std::int64_t idle_poll_ns_;
  const std::int64_t switch_poll_ns_;
  const std::int64_t timer_poll_ns_;

  weft::detail::SpinLock lock_;
  FdWait* waits_ = nullptr;
  std::vector<std::unique_ptr<SourceEntry>> sources_;
  std::uint64_t next_source_id_ = 1;
  std::vector<pollfd> round_fds_;  // the polling round's descriptors
  std::vector<FdWait*> round_waits_;
  std::vector<Group*> round_groups_;
  std::int64_t newest_polled_ns_ = 0;    // registration of the youngest polled wait
  std::int64_t last_armed_poll_ns_ = 0;  // a busy core's last poll of the armed waits (auto)
  bool blocker_blocked_ = false;         // the spare thread is in, or heading to, its blocking call
  bool blocker_woken_ = false;           // ... and its wake-up descriptor has been written
  bool blocker_stopping_ = false;
  // The wake-up descriptor of the core sleeping in poll_sleep_hook, -1 when none: a new polled
  // wait writes it, so that the core adds the wait to its set.
  int sleeper_wake_fd_ = -1;
  bool sleeper_rebuild_ = false;  // ... and it has done so since the core began to sleep
  std::uint64_t generation_ = 0;
  std::uint64_t sleep_set_ = 0;  // the last poll sleep's number (FdWait::sleep_set)

  // Hints for the hooks, written under lock_ and read without it: a stale value only delays a
  // poll or a hand-off to the next hook call, which re-checks under the lock.
  std::atomic<int> pending_{0};          // waits and sources
  std::atomic<int> polled_waits_{0};     // waits not armed in the spare thread's set
  std::atomic<int> unarmed_sources_{0};  // sources with a descriptor, not armed (auto mode)
  std::atomic<std::int64_t> last_switch_poll_ns_{0};
  // A core is in poll_sleep_hook; its descriptor set, used by that core only.
  std::atomic<bool> poll_sleeper_{false};
  bool poll_sleep_registered_ = false;                 // set before the hooks are published
  weft::detail::Hooks* hooks_of_scheduler_ = nullptr;  // for set_sleep_early, with the above
  std::vector<pollfd> sleep_fds_;

  std::mutex start_mutex_;
  std::atomic<bool> polling_started_{false};
  std::atomic<bool> timer_started_{false};
  std::atomic<bool> blocker_started_{false};
  std::vector<Scheduler::HookId> hooks_;
  int wake_fd_ = -1;
  std::thread blocker_;

  std::atomic<bool> io_threads_stop_{false};
  std::vector<Thread> io_threads_;

  PublishedCounters counters_;
  // After counters_, which its threads count into until they are joined.
  SpareThreads spare_threads_;
};

}  // namespace weft::io::detail
