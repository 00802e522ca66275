// The recording side of a trace: each event appended to its kernel thread's buffer
// (runtime/trace_buffer.h) without a lock, by that thread alone, with the fewest instructions and
// clock reads its place allows (docs/observability.md, "What recording costs").
#include <bit>
#include <cstddef>
#include <cstring>

#include "trace_buffer.h"
#include "weft/trace.h"
#include "weft/trace_file.h"
#include "weft/trace_message.h"
#include "weft/trace_team.h"

namespace weft::trace {
namespace detail {
std::atomic<std::uint32_t> recorded{0};
}  // namespace detail

namespace recording {

// Defined here, beside the recording functions that read them: within this file they need no
// load of their address (libweft's globals may otherwise be interposed).
constinit Cursor g_detached;
std::atomic<bool> g_tsc{false};
std::atomic<std::uint32_t> g_generation{0};
std::atomic<std::uint64_t> g_pid_bits{0};

namespace {

// initial-exec: libweft is loaded with the program, never dlopen'ed later (scheduler/current.cpp),
// so each event finds its buffer at a fixed offset from the thread pointer. t_cursor is g_detached
// or a Buffer (of the session of t_generation).
__attribute__((tls_model("initial-exec"))) thread_local Cursor* t_cursor = &g_detached;
__attribute__((tls_model("initial-exec"))) thread_local std::uint32_t t_generation = 0;

}  // namespace

// Makes `buffer` (null: none) the calling kernel thread's, for the session of `generation`.
void set_buffer(Buffer* buffer, std::uint32_t generation) noexcept {
  t_cursor = buffer != nullptr ? static_cast<Cursor*>(buffer) : &g_detached;
  t_generation = generation;
}

namespace {

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
// thread, whose `given` is kResumed where the thread resumes from a park (later records
// `at_resume` may take the switch's time), else 0. `given`: the time the caller passes (a
// message's stamp, message_stamp). `team`: `interpolated`, and no later record takes
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
    buffer.since_timed = timing == Timing::switch_in ? given : 0;
    return time;
  }
}

template <Timing timing>
[[gnu::noinline]] void record_slow(std::uint64_t a, std::uint64_t b, std::uint64_t tail,
                                   std::uint64_t given) noexcept {
  Buffer* buffer = my_buffer();
  if (buffer == nullptr) return;
  const std::uint64_t time = time_of<timing, false>(*buffer, given);
  Slot* slot = buffer->slot();
  slot->time = time;
  slot->a = a;
  slot->b = b;
  std::memcpy(&slot->c, &tail, sizeof tail);
  buffer->set_limit();
}

// `tail` holds c, kind, category and d as they lie in a Slot (packed by tail_of, or as a switch's
// ThreadInfo lies), written with one store. The fast path saves no register: the slow path is a
// tail call.
template <Timing timing>
[[gnu::always_inline]] inline void record_packed(std::uint64_t a, std::uint64_t b,
                                                 std::uint64_t tail,
                                                 std::uint64_t given = 0) noexcept {
  Cursor* buffer = t_cursor;
  if (buffer->next == buffer->limit) [[unlikely]]
    return record_slow<timing>(a, b, tail, given);
  const std::uint64_t time = time_of<timing, true>(*buffer, given);
  Slot* slot = buffer->next++;
  slot->time = time;
  slot->a = a;
  slot->b = b;
  std::memcpy(&slot->c, &tail, sizeof tail);
}

constexpr std::uint64_t tail_of(SlotKind kind, std::uint8_t category, std::uint32_t c = 0,
                                std::uint16_t d = 0) noexcept {
  return c | static_cast<std::uint64_t>(kind) << 32 | static_cast<std::uint64_t>(category) << 40 |
         static_cast<std::uint64_t>(d) << 48;
}

template <Timing timing>
[[gnu::always_inline]] inline void record(SlotKind kind, std::uint8_t category, std::uint64_t a,
                                          std::uint64_t b, std::uint32_t c = 0, std::uint16_t d = 0,
                                          std::uint64_t given = 0) noexcept {
  record_packed<timing>(a, b, tail_of(kind, category, c, d), given);
}

}  // namespace
}  // namespace recording

using namespace recording;

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

// Called before each yield of every wait loop, so it checks only that the cursor may be written:
// a buffer of an ended session is kept (Session::retired), and thread_switch checks the session
// before it trusts the mark. The mark needs no clearing after the yield: the switch's record
// moves `next` past it, and a yield that switches to no other thread clears it
// (clear_polling_mark).
void detail::polling() noexcept {
  Cursor* buffer = t_cursor;
  if (buffer == &g_detached) return;
  buffer->polling_slot = buffer->next;
}

void clear_polling_mark() noexcept {
  Cursor* buffer = t_cursor;
  if (buffer == &g_detached) return;
  buffer->polling_slot = nullptr;
}

// The switched-to thread's ThreadInfo is the record's last word as it lies: its rank in `c`, its
// type and priority in `d`, its reason in `category`, and resumes_park (0 or 1) in the byte of
// `kind`, which an OR with thread_switch (3) overwrites whatever it holds.
static_assert(sizeof(ThreadInfo) == sizeof(std::uint64_t) && offsetof(ThreadInfo, rank) == 0 &&
              offsetof(ThreadInfo, resumes_park) == 4 && offsetof(ThreadInfo, reason) == 5 &&
              offsetof(ThreadInfo, type) == 6 && offsetof(ThreadInfo, priority) == 7);
static_assert((static_cast<unsigned>(SlotKind::thread_switch) & 1u) == 1u &&
              std::endian::native == std::endian::little);

void thread_switch(std::uint64_t from, std::uint64_t to, ThreadInfo to_info) noexcept {
  std::uint64_t word;
  std::memcpy(&word, &to_info, sizeof word);
  const std::uint64_t tail = word | tail_of(SlotKind::thread_switch, 0);
  Cursor* buffer = t_cursor;
  if (buffer->next == buffer->polling_slot && buffer != &g_detached &&
      to_info.reason == SwitchReason::yield && to != 0 &&
      t_generation == g_generation.load(std::memory_order_relaxed)) {
    // A polling thread's yield (trace::mark_polling_yield), nothing recorded since it was
    // marked, to a thread (the idle loop may wait long before the next timed event).
    buffer->polling_slot = nullptr;
    buffer->since_timed &= ~kResumed;
    return record_packed<Timing::interpolated>(from, to, tail);
  }
  // resumes_park is bit 32 of the word, kResumed's: no branch.
  static_assert(kResumed == std::uint64_t{1} << 32);
  record_packed<Timing::switch_in>(from, to, tail, word & kResumed);
}

// A wake-up made by a user thread lies between the records of that thread's run on this kernel
// thread; one made by the idle loop, a timer or another kernel thread may follow a long wait, and
// reads the clock.
void wake(std::uint64_t waker, std::uint64_t woken) noexcept {
  constexpr auto category = static_cast<std::uint8_t>(Category::sched);
  if (waker != 0) return record<Timing::interpolated>(SlotKind::wake, category, woken, waker);
  record<Timing::now>(SlotKind::wake, category, woken, waker);
}

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

std::uint64_t read_stamp() noexcept {
  const Cursor* buffer = t_cursor;
  if (buffer == &g_detached || t_generation != g_generation.load(std::memory_order_relaxed))
    return 0;
  return ticks();
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

}  // namespace weft::trace
