// A trace session and its files: what the scheduler starts and stops around a job, what weftrun
// merges the processes' parts of a job with, and what weft-info trace-summary reads back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "weft/config.h"
#include "weft/trace.h"

namespace weft::trace {

// json: Chrome / Perfetto trace events; otf2: an OTF2 archive (FILE.otf2 is its anchor file);
// raw: one process's events as recorded, which weftrun merges into one json or otf2 trace.
enum class Format { json, otf2, raw };

struct Settings {
  std::string file;  // empty: no trace
  Format format = Format::json;
  std::uint32_t categories = 0;  // bit per Category
  std::size_t buffer_bytes = 0;  // per kernel thread; past it the oldest events go, counted
  // trace.clock: false for clock_gettime(CLOCK_MONOTONIC) at every event, true for the
  // time-stamp counter where it is usable (runtime/trace_session.cpp, tsc_usable).
  bool tsc = true;
};
// From trace.file, trace.format (auto: by the file name's suffix), trace.events, trace.buffer.
// Throws weft::Error naming the key for a value that cannot be used.
Settings settings_of(const Config& config);
bool otf2_available() noexcept;

// One recorded event; times are nanoseconds of the recording process's CLOCK_MONOTONIC once the
// session has stopped.
enum class EventKind : std::uint8_t { begin, end, instant, thread_switch, wake, sent, matched };
struct Event {
  std::uint64_t time = 0;
  std::uint64_t a = 0;  // begin/end/instant: name (index into strings); switch: from; wake:
                        // woken; sent/matched: message id
  std::uint64_t b = 0;  // begin/instant: arg; switch: to; wake: waker; sent/matched: the tag
                        // (low 32 bits) and the length in bytes (high 32, at most 2^32 - 1)
  std::uint32_t c = 0;  // switch: the rank of `to`; sent/matched: peer rank
  EventKind kind = EventKind::begin;
  std::uint8_t category = 0;  // begin/end/instant: Category; switch: SwitchReason
  std::uint16_t d = 0;        // switch: type | priority << 8 of `to`; sent/matched: message_comm
};

// A message event's fields (Event::b, Event::d), packed without a branch: a length past 32 bits
// is recorded as 2^32 - 1, a communicator is its context / 2 (a communicator's point-to-point and
// collective contexts are 2k and 2k + 1: MPI_COMM_WORLD 0, MPI_COMM_SELF 1), its low 16 bits.
inline std::uint64_t message_word(int tag, std::size_t bytes) noexcept {
  const std::uint64_t length = bytes < 0xffffffffu ? bytes : 0xffffffffu;
  return static_cast<std::uint32_t>(tag) | length << 32;
}
inline int message_tag(const Event& e) noexcept {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(e.b));
}
inline std::uint64_t message_bytes(const Event& e) noexcept {
  return e.b >> 32;
}
inline std::uint16_t message_comm(std::uint32_t context) noexcept {
  return static_cast<std::uint16_t>(context >> 1);
}

struct Location {
  std::string name;  // "VP 3" or the kernel thread's name
  int vp = -1;       // -1: a kernel thread that is no virtual processor
  int core = -1;
  int numa = -1;
  std::uint64_t dropped = 0;  // the oldest events, overwritten when the buffer was full
  // Of the events kept, those that read the clock; the others share the time of a read or were
  // placed between reads when the session stopped (what recording costs: docs/observability.md).
  std::uint64_t clock_reads = 0;
  std::vector<Event> events;
};

// A communicator the job made, for the OTF2 archive's definitions (recorded with the message
// events: weft/trace_message.h). `id` is message_comm of its contexts; `members` the world ranks
// of its comm ranks in order (an intercommunicator's local group, `remote` its remote group, empty
// for an intracommunicator); `self`: an MPI_COMM_SELF, where each member is alone.
struct Communicator {
  std::uint16_t id = 0;
  bool self = false;
  bool inter = false;
  std::vector<int> members;
  std::vector<int> remote;
};

struct ProcessTrace {
  int process = 0;
  int pid = 0;
  std::string host;
  std::string boot_id;  // equal boot ids: the processes share CLOCK_MONOTONIC
  std::int64_t realtime_minus_monotonic = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::vector<std::string> strings;
  std::vector<Location> locations;
  std::vector<Communicator> communicators;  // by id, each once
};

// The session of this process. start() is called before the virtual processors start, stop()
// after they have ended; each virtual processor names its kernel thread's track when it starts.
void start(const Settings& settings);
void attach_virtual_processor(int vp, int core, int numa) noexcept;
bool active() noexcept;
// Ends recording and hands over what was recorded.
ProcessTrace stop();
// stop(), then writes the file of the settings start() had; a failure is reported on stderr.
void stop_and_write() noexcept;

// Writes the processes' traces as one file; their clocks are aligned (the same CLOCK_MONOTONIC
// on one host, each process's realtime offset otherwise). Throws weft::Error.
void write(const std::vector<ProcessTrace>& processes, const std::string& path, Format format);
ProcessTrace read_raw(const std::string& path);

// weft-info trace-summary: per-core utilization and the time each rank spent in MPI, read back
// from a json or otf2 trace.
struct CoreUse {
  std::string process_name;
  std::string track;
  double busy_s = 0;
  double utilization = 0;  // busy / the trace's length, in [0, 1]
};
struct RankTime {
  int process = 0;
  int rank = 0;
  double run_s = 0;       // first start to last stop of the rank's thread
  double running_s = 0;   // on a core
  double mpi_s = 0;       // inside MPI calls, running or parked
  double mpi_wait_s = 0;  // parked inside MPI calls
};
struct Summary {
  double length_s = 0;
  std::vector<CoreUse> cores;
  std::vector<RankTime> ranks;
};
Summary summarize(const std::string& path);
// The trace drawn as SVG: a row per track, user threads' slices and the spans inside them.
void write_timeline_svg(const std::string& path, std::ostream& out);

// `text` made safe inside an SVG (XML) element or a quoted attribute value.
std::string svg_escaped(const std::string& text);

}  // namespace weft::trace
