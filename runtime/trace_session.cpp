// A trace session: started and stopped around a job by the scheduler, it makes each kernel
// thread's buffer at its first event (runtime/trace_buffer.h) and, at stop, gathers what the
// buffers hold into a process's trace: records expanded into events, untimed ones placed between
// the timed ones around them, ticks made nanoseconds of CLOCK_MONOTONIC.
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace_buffer.h"
#include "weft/trace.h"
#include "weft/trace_file.h"
#include "weft/trace_message.h"

namespace weft::trace {
namespace recording {

namespace {

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

// Names of kernel threads' tracks, read when a kernel thread records its first event.
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

}  // namespace

Buffer* attach_buffer() noexcept {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  if (detail::recorded.load(std::memory_order_relaxed) == 0) return nullptr;
  Buffer* buffer = new_buffer_locked(s);
  set_buffer(buffer, g_generation.load(std::memory_order_relaxed));
  return buffer;
}

namespace {

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
}  // namespace recording

using namespace recording;

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
