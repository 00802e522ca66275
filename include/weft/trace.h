// Recording a trace (weftrun --trace FILE, configuration keys trace.*): what ran on each virtual
// processor, the spans of MPI calls, OpenMP regions, nonblocking collective pieces and I/O
// manager work, wake-ups and messages. docs/observability.md shows what comes out.
//
// Each kernel thread records into its own buffer (a virtual processor's kernel thread into the
// buffer of that processor), so recording takes no lock and no atomic read-modify-write. While no
// trace is being recorded each recording point costs one relaxed load of a global word and a
// predictable branch: callers test enabled(category) inline and call the out-of-line recorder only
// when it holds, so an event kind that trace.events leaves out costs the same as no trace.
// docs/observability.md gives the cost of each event while one is recorded.
//
// Names are string literals (or other strings that outlive the trace): only their address is
// recorded; the text is read when the trace is written.
#pragma once

#include <atomic>
#include <cstdint>

namespace weft::trace {

// What a span or instant belongs to; trace.events selects the categories recorded.
enum class Category : std::uint8_t { sched, mpi, omp, nbc, io, message, count };

namespace detail {
// Bit c set: category c is recorded. Zero while no trace is being recorded.
extern std::atomic<std::uint32_t> recorded;
void begin(Category category, const char* name, std::uint64_t arg) noexcept;
void end(Category category, const char* name) noexcept;
// An end at the time of the calling kernel thread's previous event, without reading the clock.
void end_with_previous(Category category, const char* name) noexcept;
void end_at_resume(Category category, const char* name) noexcept;
void instant(Category category, const char* name, std::uint64_t arg) noexcept;
void polling() noexcept;
}  // namespace detail

// relaxed: a recorder that misses the start or the end of a trace by a few events loses nothing
// that matters, and the flag orders no other memory.
inline bool enabled() noexcept {
  return detail::recorded.load(std::memory_order_relaxed) != 0;
}
inline bool enabled(Category category) noexcept {
  return (detail::recorded.load(std::memory_order_relaxed) >> static_cast<int>(category) & 1) != 0;
}

// How a span's begin or end is timed, where it need not read the clock:
// - End::with_inner: the span ends together with a span nested in it, whose end is recorded just
//   before (destructors back to back, nothing between them), and takes that one's time;
// - End::at_resume: the span ends right after its thread resumed from a wait, with nothing but
//   the wait's return between (an MPI_Recv, a barrier), and takes the time of the switch into the
//   thread where that thread resumed from a park and the switch is the kernel thread's last timed
//   record; otherwise it reads the clock.
enum class End : std::uint8_t { timed, with_inner, at_resume };

// A span on the calling thread: MPI_Send, an OpenMP parallel region, a barrier. `arg` is shown
// with it (a peer rank, a size).
class Span {
 public:
  Span(Category category, const char* name, std::uint64_t arg = 0, End end = End::timed) noexcept
      : name_(enabled(category) ? name : nullptr), category_(category), end_(end) {
    if (name_ != nullptr) [[unlikely]]
      detail::begin(category, name, arg);
  }
  ~Span() {
    if (name_ != nullptr) [[unlikely]] {
      if (end_ == End::with_inner) {
        detail::end_with_previous(category_, name_);
      } else if (end_ == End::at_resume) {
        detail::end_at_resume(category_, name_);
      } else {
        detail::end(category_, name_);
      }
    }
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  const char* name_;
  Category category_;
  End end_;
};

inline void instant(Category category, const char* name, std::uint64_t arg = 0) noexcept {
  if (enabled(category)) [[unlikely]]
    detail::instant(category, name, arg);
}

// The scheduler's events, recorded by the virtual processor's kernel thread. `info` of the thread
// switched to: its rank (-1 for none), type (weft::ThreadType) and priority, and why the switch is
// made. Callers test enabled(Category::sched) first.
enum class SwitchReason : std::uint8_t { start, yield, park, exit };
// Laid out as a switch's record keeps it (its last word, little-endian: the rank, then what the
// recorder puts its kind over, the reason, the type, the priority), so that recording a switch
// packs nothing (runtime/trace_recorder.cpp, thread_switch).
struct ThreadInfo {
  std::int32_t rank = -1;
  // The thread resumes from a park: it was woken because what it waited for happened, so its
  // span ends at_resume may take this switch's time (a thread resumed from a yield may go on
  // spinning without a record).
  bool resumes_park = false;
  SwitchReason reason = SwitchReason::start;
  std::uint8_t type = 0;
  std::int8_t priority = 0;
};
void thread_switch(std::uint64_t from, std::uint64_t to, ThreadInfo to_info) noexcept;
// `waker` (0 when no user thread: the idle loop, a timer, another kernel thread) made `woken`
// runnable.
void wake(std::uint64_t waker, std::uint64_t woken) noexcept;

// Right before the yield of a wait loop of the runtime (an MPI wait's spin, an OpenMP barrier's,
// a lock's): the thread has done nothing since it last resumed but poll what it waits for, so
// the switch out of that yield is recorded without reading the clock, and its time is set, when
// the trace is written, by spreading such switches evenly between the timed events around them
// on that processor (at most 15 in a row; the 16th reads the clock). The mark holds for that
// yield's switch only: a record made before it (an NBC piece a switch hook ran) ends it, and so
// does a yield that switches to no other thread (clear_polling_mark).
inline void mark_polling_yield() noexcept {
  if (enabled(Category::sched)) [[unlikely]]
    detail::polling();
}
// Called by the scheduler, while it records switches, where a yield found no other thread to run:
// the thread goes on, and a later yield of it may follow code that is no polling.
void clear_polling_mark() noexcept;

// Messages: weft/trace_message.h.

// Names the calling kernel thread's track for what it records, when it is not a virtual
// processor (an I/O manager's spare thread, a transport's progress thread): "io spare" ...
void name_this_kernel_thread(const char* name) noexcept;

}  // namespace weft::trace
