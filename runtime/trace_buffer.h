// A kernel thread's trace buffer, shared by the recording functions (runtime/trace_recorder.cpp),
// which append to it, and the session (runtime/trace_session.cpp), which makes and gathers the
// buffers: the layout of a record (Slot), the cursor an event bumps, the ring of chunks, the clock.
#pragma once

#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "weft/trace_file.h"

namespace weft::trace::recording {

constexpr std::size_t kChunkEvents = 4096;

inline std::uint64_t monotonic_ns() noexcept {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(now.tv_nsec);
}

// Whether the recording clock is the time-stamp counter, decided by start() before any event is
// recorded (relaxed: published to the recorders with detail::recorded, and never changed while a
// trace is recorded).
extern std::atomic<bool> g_tsc;

// The recording clock: the time-stamp counter where it is usable (28 ns a read on the KVM guest
// this was measured on, against 70 for clock_gettime, which reads it too and orders the read),
// converted to CLOCK_MONOTONIC at stop from samples of both at start and stop; CLOCK_MONOTONIC
// itself elsewhere.
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__)
  if (g_tsc.load(std::memory_order_relaxed)) return __builtin_ia32_rdtsc();
#endif
  return monotonic_ns();
}

// The clock of an event's fast path, which runs only while the clock is the TSC (Buffer::end).
[[gnu::always_inline]] inline std::uint64_t tsc_ticks() noexcept {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return monotonic_ns();
#endif
}

// What a slot holds: an EventKind, or a record that stop() expands into several events.
enum class SlotKind : std::uint8_t {
  begin,
  end,
  instant,
  thread_switch,
  wake,
  sent,
  matched,
  // A send that met its posted receive: both ends of the message in one slot (a: the receiver's
  // rank, low 32 bits, and the sender's, high 32; b, d: as sent and matched), expanded at stop
  // into a sent and a matched event under a new message id.
  delivered,
};
static_assert(static_cast<int>(SlotKind::matched) == static_cast<int>(EventKind::matched));

// An event as recorded: Event's layout without its member initializers, so that a new chunk is
// not written twice (allocated, then filled as events come).
struct Slot {
  std::uint64_t time;  // c .. d: little-endian, written as one word by record
  std::uint64_t a;
  std::uint64_t b;
  std::uint32_t c;
  SlotKind kind;
  std::uint8_t category;
  std::uint16_t d;
};
static_assert(sizeof(Slot) == sizeof(Event));

// The time of an untimed record, set at stop by interpolation between the timed records around it
// on its kernel thread; the clock never reads 0. Untimed are the records that lie, by where they
// are made, between two timed ones close by: a polling thread's yield (trace::mark_polling_yield),
// a wake-up made by a user thread, a message's ends inside an MPI call. At most kMaxUntimed in a
// row: the next one reads the clock, which bounds how far an interpolated time can be from the
// truth.
constexpr std::uint64_t kUntimed = 0;
constexpr std::uint32_t kMaxUntimed = 15;
constexpr std::uint64_t kResumed = std::uint64_t{1} << 32;

// In a begin slot's `d`: the span of an OpenMP worker (trace::TeamSpan), whose `b` holds
// the bound of its time (the master's stamp) and `c` its argument; stop() makes it a plain begin.
constexpr std::uint16_t kTeamBegin = 1;

// What an event's fast path reads and writes of its kernel thread's buffer. A kernel thread
// without a buffer of the session being recorded points at g_detached, and a buffer of an ended
// session is left with next == limit: the fast path then checks nothing but `limit`, and the slow
// path attaches a buffer of the current session. While the clock is not the TSC, limit is kept
// at next too, so that the fast path, which reads the TSC, never runs: clock_gettime is in the
// slow path only, which then costs no register saved in the fast path.
struct Cursor {
  Slot* next = nullptr;
  Slot* limit = nullptr;
  // The time of the last event recorded with a clock read, for the events made at the same
  // instant (Timing::previous).
  std::uint64_t last_time = 0;
  // Where a polling thread's yield would record its switch (trace::mark_polling_yield): a yield's
  // switch recorded there, with nothing recorded since the mark, is untimed.
  Slot* polling_slot = nullptr;
  // Low 32 bits: the untimed records in a row since the last timed one; kResumed: the last timed
  // record is the switch into the thread now running, resumed from a park (Timing::at_resume).
  // One word, so that a timed record resets both with one store.
  std::uint64_t since_timed = 0;
  // Where a receive that has just completed noted the stamp of the message it took
  // (received_after): an end_at_resume recorded there, with nothing recorded since, is untimed
  // and bounded below by `bound`.
  Slot* bound_slot = nullptr;
  std::uint64_t bound = 0;
};

// Never written: next == limit sends every event to the slow path. t_cursor of a kernel thread
// without a buffer of the current session (runtime/trace_recorder.cpp).
extern Cursor g_detached;

struct Buffer : Cursor {
  Slot* end = nullptr;  // of the chunk: limit when the clock is the TSC
  Location location;
  std::vector<std::unique_ptr<Slot[]>> chunks;
  std::size_t max_chunks = 0;
  std::uint32_t index = 0;

  Slot* slot() noexcept {
    if (next == end) [[unlikely]]
      next_chunk();
    return next++;
  }
  // Where the fast path stops: the chunk's end, or right here unless the clock is the TSC.
  void set_limit() noexcept { limit = g_tsc.load(std::memory_order_relaxed) ? end : next; }
  // A full buffer keeps recording over its oldest chunk: the trace holds the last events, and
  // recording costs the same all along (what bench/run's traced runs measure). Where no new chunk
  // can be had, the oldest is reused too: slot() never fails, so that recording checks nothing
  // but the end of the chunk. A buffer has its first chunk from the start (new_buffer_locked).
  [[gnu::noinline]] void next_chunk() noexcept {
    std::unique_ptr<Slot[]> chunk;
    if (chunks.size() < max_chunks) chunk.reset(new (std::nothrow) Slot[kChunkEvents]);
    if (!chunk) {
      chunk = std::move(chunks.front());
      chunks.erase(chunks.begin());
      location.dropped += kChunkEvents;
    }
    chunks.push_back(std::move(chunk));
    next = chunks.back().get();
    end = next + kChunkEvents;
    // A mark left in a reused chunk would match again once the ring comes back to it.
    polling_slot = nullptr;
    bound_slot = nullptr;
  }
  std::size_t size() const noexcept {
    if (chunks.empty()) return 0;
    return (chunks.size() - 1) * kChunkEvents +
           static_cast<std::size_t>(next - chunks.back().get());
  }
};

// Bumped by start and stop: a kernel thread's buffer belongs to the session of its generation.
// A namespace-scope constant-initialized atomic, so that reading it costs no guard (session()'s
// static would). relaxed: a kernel thread that sees a new generation takes the session's mutex
// before it touches anything of the session.
extern std::atomic<std::uint32_t> g_generation;

// This process's pid in the high bits of its local message ids, read once per session (getpid is
// a system call): two processes' local ids then differ; the top bit, clear, tells them from
// remote ids. relaxed: set by start before any event is recorded, and never changed while one is.
extern std::atomic<std::uint64_t> g_pid_bits;

// Makes `buffer` (null: none) the calling kernel thread's, for the session of `generation`
// (runtime/trace_recorder.cpp, which holds the kernel thread's cursor).
void set_buffer(Buffer* buffer, std::uint32_t generation) noexcept;
// The first event of a kernel thread in this session: a new buffer of the session, made the
// thread's; null while no trace is recorded or where no chunk can be had
// (runtime/trace_session.cpp).
Buffer* attach_buffer() noexcept;

}  // namespace weft::trace::recording
