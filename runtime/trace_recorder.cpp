// The recording side of a trace: one buffer per kernel thread, appended to without a lock by that
// thread alone, gathered when the session stops (after the virtual processors have ended).
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weft/error.h"
#include "weft/trace.h"
#include "weft/trace_file.h"

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

// The recording clock: the time-stamp counter where there is one (a few ns, against some 20 for
// clock_gettime), converted to CLOCK_MONOTONIC at stop from two samples of both.
std::uint64_t ticks() noexcept {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return monotonic_ns();
#endif
}

struct Buffer {
  Location location;
  std::vector<std::unique_ptr<Event[]>> chunks;
  Event* next = nullptr;
  Event* limit = nullptr;
  std::size_t max_chunks = 0;
  std::uint32_t index = 0;
  std::uint32_t messages = 0;

  // A full buffer keeps recording over its oldest chunk: the trace holds the last events, and
  // recording costs the same all along (what bench/run's traced runs measure).
  Event* slot() noexcept {
    if (next == limit) [[unlikely]] {
      std::unique_ptr<Event[]> chunk;
      if (chunks.size() >= max_chunks) {
        chunk = std::move(chunks.front());
        chunks.erase(chunks.begin());
        location.dropped += kChunkEvents;
      } else {
        chunk.reset(new (std::nothrow) Event[kChunkEvents]);
        if (!chunk) {
          ++location.dropped;
          return nullptr;
        }
      }
      chunks.push_back(std::move(chunk));
      next = chunks.back().get();
      limit = next + kChunkEvents;
    }
    return next++;
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
  std::uint64_t start_ticks = 0;
  std::uint64_t start_ns = 0;
  std::atomic<std::uint64_t> generation{0};
  int unnamed = 0;
  // This process's pid in the high bits of its local message ids, read once (getpid is a system
  // call): two processes' local ids then differ; the top bit, clear, tells them from remote ids.
  std::uint64_t pid_bits = 0;
};

Session& session() {
  static Session* instance = new Session;  // never destroyed: recorders may outlive main's end
  return *instance;
}

// initial-exec: libweft is loaded with the program, never dlopen'ed later (scheduler/current.cpp),
// so each event finds its buffer at a fixed offset from the thread pointer.
__attribute__((tls_model("initial-exec"))) thread_local Buffer* t_buffer = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local std::uint64_t t_generation = 0;
__attribute__((tls_model("initial-exec"))) thread_local const char* t_name = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local char t_vp_name[32];

Buffer* new_buffer_locked(Session& s) {
  auto buffer = std::make_unique<Buffer>();
  buffer->index = static_cast<std::uint32_t>(s.buffers.size());
  buffer->max_chunks =
      std::max<std::size_t>(1, s.settings.buffer_bytes / (kChunkEvents * sizeof(Event)));
  buffer->location.name =
      t_name != nullptr ? t_name : "kernel thread " + std::to_string(++s.unnamed);
  s.buffers.push_back(std::move(buffer));
  return s.buffers.back().get();
}

// Out of line, and read afresh at every event: a user thread may resume on another kernel thread
// after any switch, so a buffer address must not be kept across one.
[[gnu::noinline]] Buffer* my_buffer() noexcept {
  asm volatile("" ::: "memory");
  Session& s = session();
  const std::uint64_t generation = s.generation.load(std::memory_order_acquire);
  if (t_buffer != nullptr && t_generation == generation) [[likely]]
    return t_buffer;
  std::lock_guard lock(s.mutex);
  if (detail::recorded.load(std::memory_order_relaxed) == 0) return nullptr;
  t_buffer = new_buffer_locked(s);
  t_generation = generation;
  return t_buffer;
}

void record(EventKind kind, std::uint8_t category, std::uint64_t a, std::uint64_t b,
            std::uint32_t c = 0, std::uint16_t d = 0) noexcept {
  Buffer* buffer = my_buffer();
  if (buffer == nullptr) return;
  Event* event = buffer->slot();
  if (event == nullptr) return;
  event->time = ticks();
  event->a = a;
  event->b = b;
  event->c = c;
  event->kind = kind;
  event->category = category;
  event->d = d;
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
  record(EventKind::begin, static_cast<std::uint8_t>(category),
         reinterpret_cast<std::uintptr_t>(name), arg);
}
void end(Category category, const char* name) noexcept {
  record(EventKind::end, static_cast<std::uint8_t>(category),
         reinterpret_cast<std::uintptr_t>(name), 0);
}
void instant(Category category, const char* name, std::uint64_t arg) noexcept {
  record(EventKind::instant, static_cast<std::uint8_t>(category),
         reinterpret_cast<std::uintptr_t>(name), arg);
}
}  // namespace detail

void thread_switch(std::uint64_t from, SwitchReason reason, std::uint64_t to,
                   ThreadInfo to_info) noexcept {
  if (!enabled(Category::sched)) return;
  record(
      EventKind::thread_switch, static_cast<std::uint8_t>(reason), from, to,
      static_cast<std::uint32_t>(to_info.rank),
      static_cast<std::uint16_t>(to_info.type | static_cast<std::uint8_t>(to_info.priority) << 8));
}

void wake(std::uint64_t waker, std::uint64_t woken) noexcept {
  if (!enabled(Category::sched)) return;
  record(EventKind::wake, static_cast<std::uint8_t>(Category::sched), woken, waker);
}

namespace {

std::uint64_t new_message_id() noexcept {
  Buffer* buffer = my_buffer();
  if (buffer == nullptr) return 0;
  return session().pid_bits | static_cast<std::uint64_t>(buffer->index & 0xffff) << 32 |
         ++buffer->messages;
}

}  // namespace

std::uint64_t local_message_id(const void* message) noexcept {
  return session().pid_bits | (reinterpret_cast<std::uintptr_t>(message) >> 3 & 0xffffffffffff);
}

void message_sent(std::uint64_t id, int peer) noexcept {
  if (!enabled(Category::message) || id == 0) return;
  record(EventKind::sent, static_cast<std::uint8_t>(Category::message), id, 0,
         static_cast<std::uint32_t>(peer));
}

void message_delivered(int receiver, int sender) noexcept {
  if (!enabled(Category::message)) return;
  const std::uint64_t id = new_message_id();
  Buffer* buffer = my_buffer();
  if (buffer == nullptr || id == 0) return;
  Event* sent = buffer->slot();
  if (sent == nullptr) return;
  const std::uint64_t now = ticks();
  *sent = Event{now,
                id,
                0,
                static_cast<std::uint32_t>(receiver),
                EventKind::sent,
                static_cast<std::uint8_t>(Category::message),
                0};
  if (Event* matched = buffer->slot()) {
    *matched = Event{now,
                     id,
                     0,
                     static_cast<std::uint32_t>(sender),
                     EventKind::matched,
                     static_cast<std::uint8_t>(Category::message),
                     0};
  }
}

void message_matched(std::uint64_t id, int peer) noexcept {
  if (!enabled(Category::message) || id == 0) return;
  record(EventKind::matched, static_cast<std::uint8_t>(Category::message), id, 0,
         static_cast<std::uint32_t>(peer));
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
  s.buffers.clear();
  s.unnamed = 0;
  s.generation.fetch_add(1, std::memory_order_release);
  s.pid_bits = (static_cast<std::uint64_t>(::getpid()) & 0x7fff) << 48;
  s.start_ns = monotonic_ns();
  s.start_ticks = ticks();
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
  t_buffer = new_buffer_locked(s);
  t_generation = s.generation.load(std::memory_order_relaxed);
  t_buffer->location.vp = vp;
  t_buffer->location.core = core;
  t_buffer->location.numa = numa;
}

ProcessTrace stop() {
  Session& s = session();
  detail::recorded.store(0, std::memory_order_relaxed);
  std::lock_guard lock(s.mutex);
  const std::uint64_t end_ticks = ticks();
  const std::uint64_t end_ns = monotonic_ns();
  const double ns_per_tick = end_ticks > s.start_ticks
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
  for (const auto& buffer : s.buffers) {
    Location location = buffer->location;
    location.events.reserve(buffer->size());
    for (std::size_t c = 0; c < buffer->chunks.size(); ++c) {
      const Event* first = buffer->chunks[c].get();
      const Event* last = c + 1 == buffer->chunks.size() ? buffer->next : first + kChunkEvents;
      for (const Event* e = first; e != last; ++e) {
        Event event = *e;
        event.time = s.start_ns + static_cast<std::uint64_t>(
                                      static_cast<double>(e->time - s.start_ticks) * ns_per_tick);
        if (event.kind == EventKind::begin || event.kind == EventKind::end ||
            event.kind == EventKind::instant) {
          event.a = intern(event.a);
        }
        location.events.push_back(event);
      }
    }
    trace.locations.push_back(std::move(location));
  }
  std::sort(trace.locations.begin(), trace.locations.end(),
            [](const Location& x, const Location& y) {
              return (x.vp < 0 ? 1 << 30 : x.vp) < (y.vp < 0 ? 1 << 30 : y.vp);
            });
  s.buffers.clear();
  s.generation.fetch_add(1, std::memory_order_release);
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
