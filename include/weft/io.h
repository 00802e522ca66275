// The I/O manager: every pending event of the process (a descriptor a user thread waits on, a
// registered event source) and the choice, by load, of how each is detected: polled by an idle
// core, at context switches, by a timer or by an `io` thread, or waited for in the kernel by a
// spare kernel thread that is none of the cores' own (PIOMan). One manager runs beside each
// weft::Scheduler; io.mode (auto | poll | block) sets the policy.
//
// Blocking system calls of user threads (read, write, the socket calls, poll, select, epoll_wait,
// the sleeps, file locks, waits for child processes: docs/io_manager.md lists them) go through it
// without any program change: libweft defines them, and a user thread that would block waits
// here instead, or has a spare kernel thread make the call while it is parked, so its core runs
// its other threads.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace weft::io {

// io.mode. automatic is written "auto" in the configuration.
enum class Mode : std::uint8_t { automatic, poll, block };

// Checks several sources at once (one poll(2) over many descriptors, one progress call of a
// network worker). In a polling round, a group is called once for all its registered members,
// in place of their own poll callbacks.
struct Group {
  std::function<bool()> poll_all;  // true when it made progress
};

struct SourceSpec {
  std::string name;  // named in errors and diagnostics
  // Non-blocking check; returns true when it made progress. Runs on a virtual processor (idle
  // loop, scheduling point) or on the spare kernel thread, never concurrently with another
  // callback of the same manager; it must neither block nor switch (no weft waits inside).
  std::function<bool()> poll;
  // What to wait for in the kernel when the manager blocks: poll(2) events on `fd`. -1: the
  // source can only be polled (idle cores and the timer poll it, whatever io.mode says).
  int fd = -1;
  short events = POLLIN;
  // Called before the manager blocks on `fd`; false when events came in meanwhile (the manager
  // then polls instead of blocking). Optional.
  std::function<bool()> arm;
  // True while the source has work that only polling completes, which no event on `fd` would
  // announce (a transport's operations in flight): an idle core keeps polling it instead of
  // going to sleep, and the spare kernel thread polls it only every io.timer_poll_us rather than
  // spinning on a core the ranks need. Cheap, and called like `poll`. Optional.
  std::function<bool()> busy;
  // Polled through this group when set.
  std::shared_ptr<Group> group;
  // The source does not need reactivity: wait for it by blocking even when cores are idle.
  bool low_reactivity = false;
  // The virtual processors whose idle time polls the source; empty for all. A transport's worker
  // is best polled near its network interface (notes/seeds.md, 004). Another idle virtual
  // processor still polls a source none of these has polled for a while, so that cores busy with
  // computation there do not stall it.
  std::vector<int> near_vps;
};

// A registered event source; unregisters itself when destroyed. After remove() (or the
// destructor) returns, none of its callbacks runs any more, except when called from one of the
// manager's callbacks, where the removal takes effect at the end of the current round.
class Source {
 public:
  // Throws weft::Error when no scheduler runs, when poll is empty or fd is -1 with
  // low_reactivity (nothing to block on).
  explicit Source(SourceSpec spec);
  ~Source();
  Source(Source&& other) noexcept;
  Source& operator=(Source&& other) noexcept;
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  void remove();
  bool registered() const { return id_ != 0; }

 private:
  std::uint64_t id_ = 0;
};

// Waits until `fd` has one of `events` (poll(2) flags) or `timeout` passes; returns the
// descriptor's revents (0 on timeout). A user thread parks and its core runs its other threads; a
// kernel thread outside weft blocks in poll(2). Throws weft::Error for fd < 0.
short wait_fd(int fd, short events, std::optional<std::chrono::nanoseconds> timeout = std::nullopt);

// While one lives, the blocking calls of the calling kernel thread go straight to the C library
// instead of parking its user thread: for code that must not be switched away from in the middle
// (a library holding its own locks, such as a network stack called under a spin lock).
class DirectCalls {
 public:
  DirectCalls() noexcept;
  ~DirectCalls();
  DirectCalls(const DirectCalls&) = delete;
  DirectCalls& operator=(const DirectCalls&) = delete;

 private:
  bool previous_;
};

namespace detail {
// blocking_call's engine: body(context) on a spare kernel thread while the calling user thread is
// parked, or on the calling thread; errno after it is body's.
void run_blocking(void (*body)(void*), void* context) noexcept;
}  // namespace detail

// Runs `call`, which may block its kernel thread for long (a system call the I/O manager cannot
// turn into a wait: an ioctl, a lock, a slow device), so that the calling user thread's core runs
// its other threads meanwhile: a spare kernel thread makes the call while the caller is parked
// (PIOMan's hand-off). On any other thread, with no scheduler, or when all io.spare_threads are
// busy, it runs on the calling thread. errno afterwards is the one `call` left; an exception
// from `call` is rethrown here. `call` must not use weft's blocking primitives (it does not run
// on a user thread).
template <class Call>
std::invoke_result_t<Call&> blocking_call(Call&& call) {
  using Result = std::invoke_result_t<Call&>;
  static_assert(!std::is_reference_v<Result>,
                "weft::io::blocking_call: return a value or a pointer, not a reference");
  struct Frame {
    Call& call;
    std::conditional_t<std::is_void_v<Result>, bool, std::optional<Result>> result{};
    std::exception_ptr error;
  } frame{call, {}, nullptr};
  detail::run_blocking(
      [](void* context) noexcept {
        Frame& f = *static_cast<Frame*>(context);
        try {
          if constexpr (std::is_void_v<Result>) {
            f.call();
          } else {
            f.result.emplace(f.call());
          }
        } catch (...) {
          f.error = std::current_exception();
        }
      },
      &frame);
  if (frame.error) std::rethrow_exception(frame.error);
  if constexpr (!std::is_void_v<Result>) return std::move(*frame.result);
}

struct Stats {
  Mode mode = Mode::automatic;
  std::uint64_t polls = 0;             // polling rounds that checked at least one pending event
  std::uint64_t poll_detections = 0;   // events found by polling
  std::uint64_t blocks = 0;            // blocking calls made by the spare kernel thread
  std::uint64_t block_detections = 0;  // events found by them
  std::uint64_t handoffs = 0;          // waits moved from polling to blocking by load
  std::uint64_t wakeups = 0;           // user threads woken by a detected event
  // Mean time, over events found by polling, from the last poll that found nothing to the one
  // that found the event: a bound on how late polling noticed it. 0 without such events.
  std::uint64_t mean_poll_gap_ns = 0;
  // Mean time from the detection of an event to the waiting thread running again.
  std::uint64_t mean_wakeup_ns = 0;
  // Blocking calls carried out by a spare kernel thread while their caller was parked, and those
  // that found every spare thread busy (io.spare_threads) and blocked their core.
  std::uint64_t spare_calls = 0;
  std::uint64_t spare_full = 0;
  // auto: sleeps of an idle core in poll(2) on the polled waits (woken by their events), and the
  // events that core found in that poll(2)'s own answer (counted in poll_detections too).
  std::uint64_t poll_sleeps = 0;
  std::uint64_t poll_sleep_detections = 0;
  // Reads whose first non-blocking try would have blocked, of a descriptor poll(2) then called
  // ready, and whose second try found data: on a regular file or block device, the disk read
  // the first try started in the kernel (read-ahead) had come, so no spare kernel thread was
  // needed; on a pipe or socket, data came between the try and the poll.
  std::uint64_t ready_rereads = 0;
};

// Statistics of the running scheduler's manager since it started. Throws weft::Error when no
// scheduler runs.
Stats stats();

// The statistics another process running weft publishes (what `weft-info io` prints), or
// nothing when it publishes none; and the processes that publish some.
std::optional<Stats> stats_of_process(int pid);
std::vector<int> processes_with_stats();
// Removes the statistics file of process `pid`, which ended without shutting its manager down
// (killed): its launcher calls it before reaping it, while the pid cannot be reused, so that a
// killed job leaves nothing in /dev/shm.
void remove_stats_of_ended_process(int pid);

}  // namespace weft::io
