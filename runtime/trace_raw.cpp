// The trace settings, and one process's raw trace: the events as recorded, in a binary file that
// weftrun reads back to merge the processes of a job into one trace.
#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "trace_write.h"
#include "weft/error.h"
#include "weft/trace_file.h"

namespace weft::trace {
namespace {

constexpr char kMagic[8] = {'W', 'E', 'F', 'T', 'T', 'R', 'C', '3'};

const char* const kCategoryNames[] = {"sched", "mpi", "omp", "nbc", "io", "message"};
static_assert(std::size(kCategoryNames) == static_cast<std::size_t>(Category::count));

class Writer {
 public:
  explicit Writer(const std::string& path) : out_(path, std::ios::binary | std::ios::trunc) {
    if (!out_) throw Error("cannot create " + path + ": " + std::strerror(errno));
  }
  template <typename T>
  void put(const T& value) {
    out_.write(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put(const std::string& text) {
    put(static_cast<std::uint64_t>(text.size()));
    out_.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  void put_ints(const std::vector<int>& values) {
    put(static_cast<std::uint64_t>(values.size()));
    out_.write(reinterpret_cast<const char*>(values.data()),
               static_cast<std::streamsize>(values.size() * sizeof(int)));
  }
  void put_events(const std::vector<Event>& events) {
    put(static_cast<std::uint64_t>(events.size()));
    out_.write(reinterpret_cast<const char*>(events.data()),
               static_cast<std::streamsize>(events.size() * sizeof(Event)));
  }
  void finish(const std::string& path) {
    out_.close();
    if (!out_) throw Error("cannot write " + path);
  }

 private:
  std::ofstream out_;
};

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw Error("cannot open " + path + ": " + std::strerror(errno));
  }
  template <typename T>
  T get() {
    T value{};
    in_.read(reinterpret_cast<char*>(&value), sizeof value);
    check();
    return value;
  }
  std::string get_string() {
    const auto size = get<std::uint64_t>();
    if (size > (1u << 20)) throw Error(path_ + " is not a weft raw trace (a string too long)");
    std::string text(size, '\0');
    in_.read(text.data(), static_cast<std::streamsize>(size));
    check();
    return text;
  }
  std::vector<int> get_ints() {
    const auto count = get<std::uint64_t>();
    if (count > (std::uint64_t{1} << 30)) throw Error(path_ + " is not a weft raw trace");
    std::vector<int> values(count);
    in_.read(reinterpret_cast<char*>(values.data()),
             static_cast<std::streamsize>(count * sizeof(int)));
    check();
    return values;
  }
  std::vector<Event> get_events() {
    const auto count = get<std::uint64_t>();
    if (count > (std::uint64_t{1} << 34)) throw Error(path_ + " is not a weft raw trace");
    std::vector<Event> events(count);
    in_.read(reinterpret_cast<char*>(events.data()),
             static_cast<std::streamsize>(count * sizeof(Event)));
    check();
    return events;
  }

 private:
  void check() {
    if (!in_) throw Error(path_ + " is truncated: not a complete weft raw trace");
  }
  std::string path_;
  std::ifstream in_;
};

}  // namespace

Settings settings_of(const Config& config) {
  Settings settings;
  settings.file = config.get_string("trace.file");
  if (settings.file.empty()) return settings;
  const std::string format = config.get_string("trace.format");
  if (format == "json") {
    settings.format = Format::json;
  } else if (format == "otf2") {
    settings.format = Format::otf2;
  } else if (format == "raw") {
    settings.format = Format::raw;
  } else if (settings.file.ends_with(".json")) {
    settings.format = Format::json;
  } else if (settings.file.ends_with(".otf2")) {
    settings.format = Format::otf2;
  } else {
    throw Error("trace.file '" + settings.file +
                "' names no format; expected a name ending in .json or .otf2, or trace.format");
  }
  if (settings.format == Format::otf2 && !otf2_available()) {
    throw Error("trace.file '" + settings.file +
                "': this weft was built without OTF2 (Debian's libotf2-trace-dev); use a .json "
                "trace");
  }
  std::string events = config.get_string("trace.events");
  std::stringstream list(events);
  std::string item;
  while (std::getline(list, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item == "all") {
      settings.categories |= (1u << static_cast<int>(Category::count)) - 1;
      continue;
    }
    const auto* found = std::find(std::begin(kCategoryNames), std::end(kCategoryNames), item);
    if (found == std::end(kCategoryNames)) {
      throw Error("trace.events '" + events + "' names '" + item +
                  "'; expected all or a comma-separated list of sched, mpi, omp, nbc, io, message");
    }
    settings.categories |= 1u << (found - std::begin(kCategoryNames));
  }
  if (settings.categories == 0) {
    throw Error(
        "trace.events is empty; expected all or a list of sched, mpi, omp, nbc, io, message");
  }
  settings.buffer_bytes = config.get_size("trace.buffer");
  settings.tsc = config.get_string("trace.clock") != "monotonic";
  return settings;
}

const char* category_name(std::uint8_t category) noexcept {
  return category < std::size(kCategoryNames) ? kCategoryNames[category] : "other";
}

std::uint8_t category_of_name(const std::string& name) noexcept {
  if (name == "thread") return kThreadCategory;
  const auto* found = std::find(std::begin(kCategoryNames), std::end(kCategoryNames), name);
  return static_cast<std::uint8_t>(found - std::begin(kCategoryNames));
}

void write_raw(const ProcessTrace& trace, const std::string& path) {
  Writer out(path);
  out.put(kMagic);
  out.put(static_cast<std::int32_t>(trace.process));
  out.put(static_cast<std::int32_t>(trace.pid));
  out.put(trace.host);
  out.put(trace.boot_id);
  out.put(trace.realtime_minus_monotonic);
  out.put(trace.start_ns);
  out.put(trace.end_ns);
  out.put(static_cast<std::uint64_t>(trace.strings.size()));
  for (const std::string& text : trace.strings) out.put(text);
  out.put(static_cast<std::uint64_t>(trace.locations.size()));
  for (const Location& location : trace.locations) {
    out.put(location.name);
    out.put(static_cast<std::int32_t>(location.vp));
    out.put(static_cast<std::int32_t>(location.core));
    out.put(static_cast<std::int32_t>(location.numa));
    out.put(location.dropped);
    out.put(location.clock_reads);
    out.put_events(location.events);
  }
  out.put(static_cast<std::uint64_t>(trace.communicators.size()));
  for (const Communicator& comm : trace.communicators) {
    out.put(comm.id);
    out.put(static_cast<std::uint8_t>(comm.self | comm.inter << 1));
    out.put_ints(comm.members);
    out.put_ints(comm.remote);
  }
  out.finish(path);
}

ProcessTrace read_raw(const std::string& path) {
  Reader in(path);
  const auto magic = in.get<std::array<char, 8>>();
  if (std::memcmp(magic.data(), kMagic, sizeof kMagic) != 0) {
    throw Error(path + " is not a weft raw trace");
  }
  ProcessTrace trace;
  trace.process = in.get<std::int32_t>();
  trace.pid = in.get<std::int32_t>();
  trace.host = in.get_string();
  trace.boot_id = in.get_string();
  trace.realtime_minus_monotonic = in.get<std::int64_t>();
  trace.start_ns = in.get<std::uint64_t>();
  trace.end_ns = in.get<std::uint64_t>();
  const auto strings = in.get<std::uint64_t>();
  if (strings > (1u << 20)) throw Error(path + " is not a weft raw trace");
  for (std::uint64_t i = 0; i < strings; ++i) trace.strings.push_back(in.get_string());
  const auto locations = in.get<std::uint64_t>();
  if (locations > (1u << 20)) throw Error(path + " is not a weft raw trace");
  for (std::uint64_t i = 0; i < locations; ++i) {
    Location location;
    location.name = in.get_string();
    location.vp = in.get<std::int32_t>();
    location.core = in.get<std::int32_t>();
    location.numa = in.get<std::int32_t>();
    location.dropped = in.get<std::uint64_t>();
    location.clock_reads = in.get<std::uint64_t>();
    location.events = in.get_events();
    for (const Event& event : location.events) {
      const bool named = event.kind == EventKind::begin || event.kind == EventKind::end ||
                         event.kind == EventKind::instant;
      if (named && event.a >= trace.strings.size()) throw Error(path + " names a string it lacks");
    }
    trace.locations.push_back(std::move(location));
  }
  const auto communicators = in.get<std::uint64_t>();
  if (communicators > (1u << 20)) throw Error(path + " is not a weft raw trace");
  for (std::uint64_t i = 0; i < communicators; ++i) {
    Communicator comm;
    comm.id = in.get<std::uint16_t>();
    const auto flags = in.get<std::uint8_t>();
    comm.self = (flags & 1) != 0;
    comm.inter = (flags & 2) != 0;
    comm.members = in.get_ints();
    comm.remote = in.get_ints();
    trace.communicators.push_back(std::move(comm));
  }
  return trace;
}

}  // namespace weft::trace
