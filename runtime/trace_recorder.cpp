// The recording side of a trace: one buffer per kernel thread, appended to without a lock by that
// thread alone, gathered when the session stops (after the virtual processors have ended).
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/error.h"
#include "weft/trace.h"
#include "weft/trace_file.h"
#include "weft/trace_message.h"
#include "weft/trace_team.h"

namespace weft::trace {
namespace detail {
std::atomic<std::uint32_t> recorded{0};
}  // namespace detail

namespace {

constexpr std::size_t kChunkEvents = 4096;

std::uint64_t monotonic_ns() noexcept {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(now.tv_nsec);
}

// Whether the recording clock is the time-stamp counter, decided by start() before any event is
// recorded (relaxed: published to the recorders with detail::recorded, and never changed while a
// trace is recorded).
std::atomic<bool> g_tsc{false};

// The TSC is used where it ticks at one rate in every power state (invariant TSC: CPUID
// 0x80000007, EDX bit 8, Linux's nonstop_tsc) and the kernel keeps CLOCK_MONOTONIC on it: Linux
// makes "tsc" its clocksource only when the counters of all CPUs agree, and switches away if they
// stop agreeing. Then a kernel thread that moves between CPUs keeps one clock.
bool tsc_usable() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) return false;
  if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) || (edx & (1u << 8)) == 0) return false;
  std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return std::getline(source, name) && name == "tsc";
#else
  return false;
#endif
}

// The recording clock: the time-stamp counter where it is usable (28 ns a read on the KVM guest
// this was measured on, against 70 for clock_gettime, which reads it too and orders the read),
// converted to CLOCK_MONOTONIC at stop from samples of both at start and stop; CLOCK_MONOTONIC
// itself elsewhere.
std::uint64_t ticks() noexcept {
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
// are made, between two timed ones close by: a polling thread's yield (trace::Polling), a wake-up
// made by a user thread, a message's ends inside an MPI call. At most kMaxUntimed in a row: the
// next one reads the clock, which bounds how far an interpolated time can be from the truth.
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
  // Where a polling thread's yield would record its switch (trace::Polling): a switch recorded
  // there, with nothing recorded since the mark, is untimed.
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

// Never written: next == limit sends every event to the slow path.
constinit Cursor g_detached;

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
  }
  std::size_t size() const noexcept {
    if (chunks.empty()) return 0;
    return (chunks.size() - 1) * kChunkEvents +
           static_cast<std::size_t>(next - chunks.back().get());
  }
};

struct Session {
  std::mutex mutex;  // buffers, settings: taken when a kernel thread records its first event
  Settings settings;
  std::vector<std::unique_ptr<Buffer>> buffers;
  // The buffers of ended sessions, emptied (next == limit) and kept: a kernel thread's t_cursor
  // may still point at its own until its next event.
  std::vector<std::unique_ptr<Buffer>> retired;
  std::map<std::uint16_t, Communicator> communicators;  // by id
  std::uint64_t start_ticks = 0;
  std::uint64_t start_ns = 0;
  int unnamed = 0;
};

Session& session() {
  static Session* instance = new Session;  // never destroyed: recorders may outlive main's end
  return *instance;
}

// Bumped by start and stop: a kernel thread's buffer belongs to the session of its generation.
// A namespace-scope constant-initialized atomic, so that reading it costs no guard (session()'s
// static would). relaxed: a kernel thread that sees a new generation takes the session's mutex
// before it touches anything of the session.
std::atomic<std::uint32_t> g_generation{0};

// initial-exec: libweft is loaded with the program, never dlopen'ed later (scheduler/current.cpp),
// so each event finds its buffer at a fixed offset from the thread pointer. t_cursor is g_detached
// or a Buffer (of the session of t_generation).
__attribute__((tls_model("initial-exec"))) thread_local Cursor* t_cursor = &g_detached;
__attribute__((tls_model("initial-exec"))) thread_local std::uint32_t t_generation = 0;
__attribute__((tls_model("initial-exec"))) thread_local const char* t_name = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local char t_vp_name[32];

// Null when not even one chunk can be had: that kernel thread then records nothing.
Buffer* new_buffer_locked(Session& s) {
  auto buffer = std::make_unique<Buffer>();
  buffer->index = static_cast<std::uint32_t>(s.buffers.size());
  buffer->max_chunks =
      std::max<std::size_t>(1, s.settings.buffer_bytes / (kChunkEvents * sizeof(Slot)));
  std::unique_ptr<Slot[]> first(new (std::nothrow) Slot[kChunkEvents]);
  if (!first) return nullptr;
  buffer->next = first.get();
  buffer->end = buffer->next + kChunkEvents;
  buffer->set_limit();
  buffer->chunks.push_back(std::move(first));
  buffer->location.name =
      t_name != nullptr ? t_name : "kernel thread " + std::to_string(++s.unnamed);
  s.buffers.push_back(std::move(buffer));
  return s.buffers.back().get();
}

// Empties the session's buffers, which their kernel threads may still point at (Session::retired).
void retire_buffers_locked(Session& s) {
  for (auto& buffer : s.buffers) {
    buffer->chunks.clear();
    buffer->next = buffer->limit = buffer->end = nullptr;
    s.retired.push_back(std::move(buffer));
  }
  s.buffers.clear();
}

// Makes `buffer` (null: none) the calling kernel thread's, for the session of `generation`.
void set_buffer(Buffer* buffer, std::uint32_t generation) noexcept {
  t_cursor = buffer != nullptr ? static_cast<Cursor*>(buffer) : &g_detached;
  t_generation = generation;
}

// The first event of a kernel thread in this session.
[[gnu::noinline]] Buffer* attach_buffer() noexcept {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  if (detail::recorded.load(std::memory_order_relaxed) == 0) return nullptr;
  Buffer* buffer = new_buffer_locked(s);
  set_buffer(buffer, g_generation.load(std::memory_order_relaxed));
  return buffer;
}

// The calling kernel thread's buffer of the current session, null if it has none and can get
// none. Called only from the out-of-line recording functions below, never inlined into a user
// thread's code: a user thread may resume on another kernel thread after any switch, so the
// buffer (a thread_local) is looked up afresh at each event, within one call that cannot switch.
Buffer* my_buffer() noexcept {
  Cursor* cursor = t_cursor;
  if (cursor != &g_detached && t_generation == g_generation.load(std::memory_order_relaxed))
      [[likely]]
    return static_cast<Buffer*>(cursor);
  return attach_buffer();
}

// Whether an event reads the clock, takes the time of the kernel thread's previous event
// (`previous`: only where the two are made at the same instant by construction, two spans that
// end together), is left untimed (`interpolated`, see kUntimed) while fewer than kMaxUntimed
// records in a row are, or takes the time of the switch into its thread where that switch is the
// last timed record (`at_resume`, see trace::End::at_resume). `switch_in`: a timed switch to a
// thread, which later records `at_resume` may take the time of. `given`: the time the caller
// passes (a message's stamp, message_stamp). `team`: `interpolated`, and no later record takes
// the switch's time (an OpenMP worker's span begins, or ends after the user's code: code ran since
// the switch); `team_end`: `at_resume` where the switch's time is to be had, else `team` (the end
// of a worker's span right after a wait: trace::TeamSpan).
enum class Timing : std::uint8_t {
  now,
  previous,
  interpolated,
  at_resume,
  switch_in,
  given,
  team,
  team_end
};

// The time of a record, per `timing`.
template <Timing timing, bool fast>
[[gnu::always_inline]] inline std::uint64_t time_of(Cursor& buffer, std::uint64_t given) noexcept {
  if constexpr (timing == Timing::previous) {
    return buffer.last_time;
  } else if constexpr (timing == Timing::given) {
    // Never before the kernel thread's last clock read, so that its track keeps its order.
    return given > buffer.last_time ? given : buffer.last_time;
  } else {
    if constexpr (timing == Timing::interpolated) {
      if (static_cast<std::uint32_t>(buffer.since_timed) < kMaxUntimed) {
        ++buffer.since_timed;
        return kUntimed;
      }
    }
    if constexpr (timing == Timing::team) buffer.since_timed &= ~kResumed;
    if constexpr (timing == Timing::at_resume || timing == Timing::team_end) {
      if ((buffer.since_timed & kResumed) != 0) {
        buffer.since_timed &= ~kResumed;
        return buffer.last_time;
      }
    }
    if constexpr (timing == Timing::team || timing == Timing::team_end) {
      // kResumed is clear here.
      if (buffer.since_timed < kMaxUntimed) {
        ++buffer.since_timed;
        return kUntimed;
      }
    }
    const std::uint64_t time = fast ? tsc_ticks() : ticks();
    buffer.last_time = time;
    buffer.since_timed = timing == Timing::switch_in ? kResumed : 0;
    return time;
  }
}

template <Timing timing>
[[gnu::noinline]] void record_slow(SlotKind kind, std::uint8_t category, std::uint64_t a,
                                   std::uint64_t b, std::uint64_t tail,
                                   std::uint64_t given) noexcept {
  Buffer* buffer = my_buffer();
  if (buffer == nullptr) return;
  const std::uint64_t time = time_of<timing, false>(*buffer, given);
  Slot* slot = buffer->slot();
  *slot = Slot{time, a, b, 0, kind, category, 0};
  std::memcpy(&slot->c, &tail, sizeof tail);
  buffer->set_limit();
}

// `tail` holds c, kind, category and d as they lie in a Slot, written with one store. The fast
// path saves no register: the slow path is a tail call.
template <Timing timing>
[[gnu::always_inline]] inline void record(SlotKind kind, std::uint8_t category, std::uint64_t a,
                                          std::uint64_t b, std::uint32_t c = 0, std::uint16_t d = 0,
                                          std::uint64_t given = 0) noexcept {
  const std::uint64_t tail = c | static_cast<std::uint64_t>(kind) << 32 |
                             static_cast<std::uint64_t>(category) << 40 |
                             static_cast<std::uint64_t>(d) << 48;
  Cursor* buffer = t_cursor;
  if (buffer->next == buffer->limit) [[unlikely]]
    return record_slow<timing>(kind, category, a, b, tail, given);
  const std::uint64_t time = time_of<timing, true>(*buffer, given);
  Slot* slot = buffer->next++;
  slot->time = time;
  slot->a = a;
  slot->b = b;
  std::memcpy(&slot->c, &tail, sizeof tail);
}

// Untimed records (kUntimed) get times spread evenly between the timed events before and after
// them on their track, in clock ticks. A bounded record is moved up to its bound where the spread
// puts it earlier, and the untimed records after it on the track with it: an end whose `b` holds
// the stamp of the message its call received (received_after), which cannot have ended before
// that message was sent, and a message's end whose start has a time (`sent`: the times of the
// starts by id, in order; an id is a queued message's address, which later messages reuse, and
// the latest start no later than the next timed record is the bound: its own start is no later
// than that), and an OpenMP worker's begin (kTeamBegin), whose `b` holds its master's stamp at the
// region's begin: the worker was started after it. Neither goes past the next timed record of its
// kernel thread, which came after it.
using SentTimes = std::unordered_map<std::uint64_t, std::vector<std::uint64_t>>;
void interpolate_untimed(std::vector<Event>& events, std::uint64_t end_ticks,
                         const SentTimes& sent) {
  const std::size_t n = events.size();
  for (std::size_t i = 0; i < n;) {
    if (events[i].time != kUntimed) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < n && events[j].time == kUntimed) ++j;
    const std::uint64_t after = j < n ? events[j].time : end_ticks;
    const std::uint64_t before = i > 0 ? std::min(events[i - 1].time, after) : after;
    const std::uint64_t steps = j - i + 1;
    std::uint64_t floor = before;  // the largest bound met so far in this run, at most `after`
    for (std::size_t k = i; k < j; ++k) {
      Event& event = events[k];
      if (event.kind == EventKind::end && event.b != 0) {
        floor = std::max(floor, std::min(event.b, after));
        event.b = 0;
      } else if (event.kind == EventKind::begin && event.d == kTeamBegin) {
        floor = std::max(floor, std::min(event.b, after));
        event.b = event.c;
        event.c = 0;
        event.d = 0;
      } else if (event.kind == EventKind::matched) {
        if (auto starts = sent.find(event.a); starts != sent.end()) {
          auto start = std::upper_bound(starts->second.begin(), starts->second.end(), after);
          if (start != starts->second.begin()) floor = std::max(floor, *std::prev(start));
        }
      }
      event.time = std::max(floor, before + (after - before) * (k - i + 1) / steps);
    }
    i = j;
  }
}

std::string read_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

namespace detail {
void begin(Category category, const char* name, std::uint64_t arg) noexcept {
  record<Timing::now>(SlotKind::begin, static_cast<std::uint8_t>(category),
                      reinterpret_cast<std::uintptr_t>(name), arg);
}
void end(Category category, const char* name) noexcept {
  record<Timing::now>(SlotKind::end, static_cast<std::uint8_t>(category),
                      reinterpret_cast<std::uintptr_t>(name), 0);
}
// Where the thread did not resume from a park but its receive noted the stamp of the message it
// took, with nothing recorded since (received_after), the end reads no clock: it is untimed and
// bounded below by the stamp (interpolate_untimed). That takes the clock read off the critical
// path of a ping-pong between two cores: it was made after the receiver saw the message, before
// it sent the reply.
void end_at_resume(Category category, const char* name) noexcept {
  Cursor* buffer = t_cursor;
  if (buffer->next == buffer->bound_slot && buffer->next != buffer->limit &&
      buffer->since_timed < kMaxUntimed) {
    // since_timed below kMaxUntimed: kResumed is clear, so no switch time is to be had.
    buffer->bound_slot = nullptr;
    ++buffer->since_timed;
    Slot* slot = buffer->next++;
    slot->time = kUntimed;
    slot->a = reinterpret_cast<std::uintptr_t>(name);
    slot->b = buffer->bound;
    const std::uint64_t tail = static_cast<std::uint64_t>(SlotKind::end) << 32 |
                               static_cast<std::uint64_t>(category) << 40;
    std::memcpy(&slot->c, &tail, sizeof tail);
    return;
  }
  record<Timing::at_resume>(SlotKind::end, static_cast<std::uint8_t>(category),
                            reinterpret_cast<std::uintptr_t>(name), 0);
}
// An OpenMP worker's spans lie within its master's region (trace::TeamSpan).
void begin_in_team(Category category, const char* name, std::uint64_t arg,
                   std::uint64_t after) noexcept {
  record<Timing::team>(SlotKind::begin, static_cast<std::uint8_t>(category),
                       reinterpret_cast<std::uintptr_t>(name), after,
                       static_cast<std::uint32_t>(arg), kTeamBegin);
}
void end_in_team(Category category, const char* name, bool after_wait) noexcept {
  if (after_wait) {
    return record<Timing::team_end>(SlotKind::end, static_cast<std::uint8_t>(category),
                                    reinterpret_cast<std::uintptr_t>(name), 0);
  }
  record<Timing::team>(SlotKind::end, static_cast<std::uint8_t>(category),
                       reinterpret_cast<std::uintptr_t>(name), 0);
}
void end_with_previous(Category category, const char* name) noexcept {
  record<Timing::previous>(SlotKind::end, static_cast<std::uint8_t>(category),
                           reinterpret_cast<std::uintptr_t>(name), 0);
}
void instant(Category category, const char* name, std::uint64_t arg) noexcept {
  record<Timing::now>(SlotKind::instant, static_cast<std::uint8_t>(category),
                      reinterpret_cast<std::uintptr_t>(name), arg);
}
}  // namespace detail

// Called twice per round of every wait loop, so it checks only that the cursor may be written:
// a buffer of an ended session is kept (Session::retired), and thread_switch checks the session
// before it trusts the mark (bench/trace/run: 14.5 instructions a call with that check here too,
// a quarter of the recording of a barrier or an OpenMP region).
void detail::polling(bool on) noexcept {
  Cursor* buffer = t_cursor;
  if (buffer == &g_detached) return;
  buffer->polling_slot = on ? buffer->next : nullptr;
}

void thread_switch(std::uint64_t from, SwitchReason reason, std::uint64_t to,
                   ThreadInfo to_info) noexcept {
  const auto d =
      static_cast<std::uint16_t>(to_info.type | static_cast<std::uint8_t>(to_info.priority) << 8);
  const auto rank = static_cast<std::uint32_t>(to_info.rank);
  const auto category = static_cast<std::uint8_t>(reason);
  Cursor* buffer = t_cursor;
  if (buffer->next == buffer->polling_slot && buffer != &g_detached &&
      reason == SwitchReason::yield && to != 0 &&
      t_generation == g_generation.load(std::memory_order_relaxed)) {
    // A polling thread's yield (trace::Polling), nothing recorded since it was marked, to a
    // thread (the idle loop may wait long before the next timed event).
    buffer->polling_slot = nullptr;
    buffer->since_timed &= ~kResumed;
    return record<Timing::interpolated>(SlotKind::thread_switch, category, from, to, rank, d);
  }
  if (to_info.resumes_park)
    return record<Timing::switch_in>(SlotKind::thread_switch, category, from, to, rank, d);
  record<Timing::now>(SlotKind::thread_switch, category, from, to, rank, d);
}

// A wake-up made by a user thread lies between the records of that thread's run on this kernel
// thread; one made by the idle loop, a timer or another kernel thread may follow a long wait, and
// reads the clock.
void wake(std::uint64_t waker, std::uint64_t woken) noexcept {
  constexpr auto category = static_cast<std::uint8_t>(Category::sched);
  if (waker != 0) return record<Timing::interpolated>(SlotKind::wake, category, woken, waker);
  record<Timing::now>(SlotKind::wake, category, woken, waker);
}

namespace {
// This process's pid in the high bits of its local message ids, read once per session (getpid is
// a system call): two processes' local ids then differ; the top bit, clear, tells them from
// remote ids. relaxed: set by start before any event is recorded, and never changed while one is.
std::atomic<std::uint64_t> g_pid_bits{0};
}  // namespace

std::uint64_t local_message_id(const void* message) noexcept {
  return g_pid_bits.load(std::memory_order_relaxed) |
         (reinterpret_cast<std::uintptr_t>(message) >> 3 & 0xffffffffffff);
}

namespace {
// A message's end recorded by a rank inside its MPI call (a send, the receive that takes a queued
// message) lies between that call's span's begin and end, which are timed, and is left untimed;
// where MPI calls are not recorded it reads the clock.
template <SlotKind kind>
void record_in_call(std::uint64_t a, std::uint64_t b, std::uint32_t c, std::uint16_t d) noexcept {
  constexpr auto category = static_cast<std::uint8_t>(Category::message);
  if (enabled(Category::mpi)) return record<Timing::interpolated>(kind, category, a, b, c, d);
  record<Timing::now>(kind, category, a, b, c, d);
}
}  // namespace

// At the sender's last clock read (the begin of its call, or later): no later than the message
// was queued, so no later than the receive that takes it (stop() keeps that receive's untimed
// end of the message no earlier). Where MPI calls are not recorded it reads the clock.
void message_sent(std::uint64_t id, const MessageInfo& message) noexcept {
  if (id == 0) return;
  constexpr auto category = static_cast<std::uint8_t>(Category::message);
  const std::uint64_t word = message_word(message.tag, message.bytes);
  const auto peer = static_cast<std::uint32_t>(message.peer);
  const std::uint16_t comm = message_comm(message.context);
  if (enabled(Category::mpi))
    return record<Timing::previous>(SlotKind::sent, category, id, word, peer, comm);
  record<Timing::now>(SlotKind::sent, category, id, word, peer, comm);
}

void message_matched(std::uint64_t id, const MessageInfo& message) noexcept {
  if (id == 0) return;
  record_in_call<SlotKind::matched>(id, message_word(message.tag, message.bytes),
                                    static_cast<std::uint32_t>(message.peer),
                                    message_comm(message.context));
}

void message_arrived(std::uint64_t id, const MessageInfo& message) noexcept {
  if (id == 0) return;
  record<Timing::now>(SlotKind::matched, static_cast<std::uint8_t>(Category::message), id,
                      message_word(message.tag, message.bytes),
                      static_cast<std::uint32_t>(message.peer), message_comm(message.context));
}

// 0 from a kernel thread without a buffer of this session (its last clock read may be of another
// session, on another clock).
std::uint64_t stamp() noexcept {
  const Cursor* buffer = t_cursor;
  if (buffer == &g_detached || t_generation != g_generation.load(std::memory_order_relaxed))
    return 0;
  return buffer->last_time;
}

std::uint64_t message_stamp() noexcept {
  return stamp();
}

void received_after(std::uint64_t stamp) noexcept {
  Cursor* buffer = t_cursor;
  if (buffer == &g_detached || stamp == 0) return;
  buffer->bound_slot = buffer->next;
  buffer->bound = stamp;
}

// Both ends in one slot; stop() gives them their id. At the stamp the receiver's call is bounded
// by, so that the message is not drawn delivered after the receive that took it ended.
void message_delivered(const MessageInfo& message, int sender, std::uint64_t stamp) noexcept {
  const std::uint64_t a = static_cast<std::uint32_t>(message.peer) |
                          static_cast<std::uint64_t>(static_cast<std::uint32_t>(sender)) << 32;
  const std::uint64_t b = message_word(message.tag, message.bytes);
  const std::uint16_t comm = message_comm(message.context);
  if (stamp != 0 && enabled(Category::mpi)) {
    return record<Timing::given>(SlotKind::delivered, static_cast<std::uint8_t>(Category::message),
                                 a, b, 0, comm, stamp);
  }
  record_in_call<SlotKind::delivered>(a, b, 0, comm);
}

void define_communicator(std::uint32_t context, std::span<const int> members,
                         std::span<const int> remote, bool self) noexcept {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  if (!active()) return;
  const std::uint16_t id = message_comm(context);
  if (s.communicators.contains(id)) return;
  try {
    Communicator comm;
    comm.id = id;
    comm.self = self;
    comm.inter = !remote.empty();
    comm.members.assign(members.begin(), members.end());
    comm.remote.assign(remote.begin(), remote.end());
    s.communicators.emplace(id, std::move(comm));
  } catch (const std::bad_alloc&) {
    // The archive then leaves this communicator's group undefined, as for one made before the
    // trace began.
  }
}

namespace {
std::atomic<int> g_process{0};
}  // namespace

void set_process(int process) noexcept {
  g_process.store(process, std::memory_order_relaxed);
}
int process() noexcept {
  return g_process.load(std::memory_order_relaxed);
}

void name_this_kernel_thread(const char* name) noexcept {
  t_name = name;
}

void start(const Settings& settings) {
  if (settings.file.empty() || settings.categories == 0) return;
  Session& s = session();
  std::lock_guard lock(s.mutex);
  s.settings = settings;
  retire_buffers_locked(s);
  s.communicators.clear();
  s.unnamed = 0;
  g_generation.fetch_add(1, std::memory_order_relaxed);
  g_pid_bits.store((static_cast<std::uint64_t>(::getpid()) & 0x7fff) << 48,
                   std::memory_order_relaxed);
  g_tsc.store(settings.tsc && tsc_usable(), std::memory_order_relaxed);
  s.start_ns = monotonic_ns();
  s.start_ticks = g_tsc.load(std::memory_order_relaxed) ? ticks() : s.start_ns;
  detail::recorded.store(settings.categories, std::memory_order_relaxed);
}

bool active() noexcept {
  return detail::recorded.load(std::memory_order_relaxed) != 0;
}

void attach_virtual_processor(int vp, int core, int numa) noexcept {
  std::snprintf(t_vp_name, sizeof t_vp_name, "VP %d", vp);
  t_name = t_vp_name;
  if (!active()) return;
  Session& s = session();
  std::lock_guard lock(s.mutex);
  Buffer* buffer = new_buffer_locked(s);
  set_buffer(buffer, g_generation.load(std::memory_order_relaxed));
  if (buffer == nullptr) return;
  buffer->location.vp = vp;
  buffer->location.core = core;
  buffer->location.numa = numa;
}

ProcessTrace stop() {
  Session& s = session();
  detail::recorded.store(0, std::memory_order_relaxed);
  std::lock_guard lock(s.mutex);
  const std::uint64_t end_ticks = ticks();
  const std::uint64_t end_ns = monotonic_ns();
  const double ns_per_tick = g_tsc.load(std::memory_order_relaxed) && end_ticks > s.start_ticks
                                 ? static_cast<double>(end_ns - s.start_ns) /
                                       static_cast<double>(end_ticks - s.start_ticks)
                                 : 1.0;
  ProcessTrace trace;
  trace.process = process();
  trace.pid = ::getpid();
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  trace.host = host;
  trace.boot_id = read_line("/proc/sys/kernel/random/boot_id");
  timespec real{};
  ::clock_gettime(CLOCK_REALTIME, &real);
  trace.realtime_minus_monotonic =
      static_cast<std::int64_t>(static_cast<std::uint64_t>(real.tv_sec) * 1'000'000'000u +
                                static_cast<std::uint64_t>(real.tv_nsec)) -
      static_cast<std::int64_t>(monotonic_ns());
  trace.start_ns = s.start_ns;
  trace.end_ns = end_ns;
  std::map<std::uintptr_t, std::uint64_t> names;
  auto intern = [&](std::uint64_t pointer) {
    auto [it, added] = names.emplace(pointer, trace.strings.size());
    if (added) trace.strings.emplace_back(reinterpret_cast<const char*>(pointer));
    return it->second;
  };
  // The start of each message sent in this process that has a time, for its untimed end.
  SentTimes sent;
  for (const auto& buffer : s.buffers) {
    std::uint32_t messages = 0;  // the ids of this kernel thread's delivered messages
    Location location = buffer->location;
    location.events.reserve(buffer->size());
    // A record that read the clock has a time of its own: the others share the time of the last
    // read (Timing::previous, at_resume), are untimed, or (a delivered message) take a stamp.
    std::uint64_t last_read = kUntimed;
    for (std::size_t c = 0; c < buffer->chunks.size(); ++c) {
      const Slot* first = buffer->chunks[c].get();
      const Slot* last = c + 1 == buffer->chunks.size() ? buffer->next : first + kChunkEvents;
      for (const Slot* e = first; e != last; ++e) {
        if (e->time != kUntimed && e->time != last_read && e->kind != SlotKind::delivered) {
          ++location.clock_reads;
          last_read = e->time;
        }
        if (e->kind == SlotKind::delivered) {
          const std::uint64_t id = g_pid_bits.load(std::memory_order_relaxed) |
                                   static_cast<std::uint64_t>(buffer->index & 0xffff) << 32 |
                                   ++messages;
          const auto receiver = static_cast<std::uint32_t>(e->a);
          const auto sender = static_cast<std::uint32_t>(e->a >> 32);
          location.events.push_back(
              Event{e->time, id, e->b, receiver, EventKind::sent, e->category, e->d});
          location.events.push_back(
              Event{e->time, id, e->b, sender, EventKind::matched, e->category, e->d});
          continue;
        }
        Event event{e->time, e->a, e->b, e->c, static_cast<EventKind>(e->kind), e->category, e->d};
        // A worker's begin keeps its bound for interpolate_untimed only while it is untimed.
        if (event.kind == EventKind::begin && event.d == kTeamBegin && event.time != kUntimed) {
          event.b = event.c;
          event.c = 0;
          event.d = 0;
        }
        if (event.kind == EventKind::begin || event.kind == EventKind::end ||
            event.kind == EventKind::instant) {
          event.a = intern(event.a);
        }
        if (event.kind == EventKind::sent && event.time != kUntimed)
          sent[event.a].push_back(event.time);
        location.events.push_back(event);
      }
    }
    trace.locations.push_back(std::move(location));
  }
  for (auto& [id, times] : sent) std::sort(times.begin(), times.end());
  for (Location& location : trace.locations) {
    interpolate_untimed(location.events, end_ticks, sent);
    for (Event& event : location.events) {
      event.time = s.start_ns + static_cast<std::uint64_t>(
                                    static_cast<double>(event.time - s.start_ticks) * ns_per_tick);
    }
  }
  std::sort(trace.locations.begin(), trace.locations.end(),
            [](const Location& x, const Location& y) {
              return (x.vp < 0 ? 1 << 30 : x.vp) < (y.vp < 0 ? 1 << 30 : y.vp);
            });
  for (auto& [id, comm] : s.communicators) trace.communicators.push_back(std::move(comm));
  s.communicators.clear();
  retire_buffers_locked(s);
  g_generation.fetch_add(1, std::memory_order_relaxed);
  return trace;
}

void stop_and_write() noexcept {
  if (!active()) return;
  const Settings settings = session().settings;
  try {
    write({stop()}, settings.file, settings.format);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "weft: trace %s not written: %s\n", settings.file.c_str(), error.what());
  }
}

}  // namespace weft::trace
