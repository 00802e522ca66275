#include "config_keys.h"

#include <algorithm>
#include <cctype>

#include "config_value.h"
#include "weft/error.h"
#include "weft/thread_type.h"

namespace weft {
namespace {

using Kind = ConfigKey::Kind;

ConfigKey integer_key(std::string name, std::int64_t min, std::int64_t max, std::int64_t fallback,
                      std::string doc) {
  return {std::move(name), Kind::integer, std::to_string(fallback), std::move(doc), min, max, {}};
}

ConfigKey boolean_key(std::string name, bool fallback, std::string doc) {
  return {std::move(name), Kind::boolean, fallback ? "true" : "false", std::move(doc), 0, 0, {}};
}

ConfigKey size_key(std::string name, std::int64_t min, std::int64_t max, std::string fallback,
                   std::string doc) {
  return {std::move(name), Kind::size, std::move(fallback), std::move(doc), min, max, {}};
}

ConfigKey enumeration_key(std::string name, std::vector<std::string> choices, std::string fallback,
                          std::string doc) {
  return {std::move(name),   Kind::enumeration, std::move(fallback), std::move(doc), 0, 0,
          std::move(choices)};
}

ConfigKey string_key(std::string name, std::vector<std::string> forms, std::string fallback,
                     std::string doc) {
  return {std::move(name), Kind::string, std::move(fallback), std::move(doc), 0, 0,
          std::move(forms)};
}

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = kKiB * kKiB;
constexpr std::int64_t kGiB = kMiB * kKiB;

struct TypeDefaults {
  int priority;
  std::string stack;
  std::string_view threads;  // what the doc calls threads of this type
};

TypeDefaults defaults_of(ThreadType type) {
  // MPI ranks run code written for a process's 8 MiB main stack, OpenMP workers the parallel
  // regions of that code. Other threads get 256 KiB: far above the 16 KiB that Argobots users
  // outgrow, and still cheap by the thousand since stacks are committed lazily.
  switch (type) {
    case ThreadType::mpi_task:
      return {4, "8M", "MPI ranks"};
    case ThreadType::omp_worker:
      return {4, "4M", "OpenMP workers"};
    case ThreadType::progress:
      return {2, "256K", "progress threads"};
    case ThreadType::io:
      return {5, "256K", "I/O threads"};
    case ThreadType::user:
      return {3, "256K", "plain user threads"};
  }
  fatal("configuration: a thread type without defaults");
}

std::vector<ConfigKey> make_keys() {
  std::vector<ConfigKey> keys = {
      string_key("topology", {"", "host", "synthetic:<hwloc synthetic description>", "xml:<path>"},
                 "",
                 "machine to schedule on: empty or host for this one; synthetic: or xml: describe "
                 "another, for tests and what-if placement"),
      integer_key("scheduler.vps", 0, 4096, 0,
                  "virtual processors (kernel threads, one per core); 0 for one per core of the "
                  "topology"),
      boolean_key("scheduler.bind", true,
                  "pin virtual processors to their cores when the topology is this machine's"),
      string_key("scheduler.cores", {}, "",
                 "processing units this process may use, as a cpu list of operating-system "
                 "indices (0-3,8); empty for all of the topology. weftrun -p gives each process "
                 "its share of the node"),
      integer_key("scheduler.starvation_limit", 1, 1000000, 32,
                  "scheduling rounds a runnable lower-priority thread may be passed over"),
      integer_key("scheduler.spin_us", 0, 1000000, 50,
                  "ceiling of the adaptive spin budget, in microseconds, before a waiting thread "
                  "parks"),
      integer_key("scheduler.idle_spin_us", 0, 1000000, 20,
                  "microseconds an idle virtual processor looks for work before it sleeps"),
      integer_key("scheduler.preempt_ms", 0, 10000, 10,
                  "CPU milliseconds after which a thread running the program's own code without "
                  "a scheduling point is switched out when others wait on its core "
                  "(weft/preemption.h); 0: threads are never preempted"),
      enumeration_key(
          "placement.tasks", {"scatter", "numa", "compact"}, "numa",
          "how MPI ranks spread over the cores: evenly over all cores leaving gaps for "
          "their OpenMP threads, balanced per NUMA node, or packed on consecutive cores"),
      enumeration_key("placement.progress", {"none", "colocated", "numa", "dedicated"}, "numa",
                      "where a rank's progress thread runs: nowhere, on the rank's core, on a "
                      "free core of its NUMA node, or on a core kept for progress"),
      integer_key("placement.cores_per_task", 1, 4096, 1,
                  "cores each MPI rank owns (its OpenMP workers run there)"),
      integer_key("mpi.ranks", 1, 1 << 20, 1,
                  "MPI ranks of the job (weftrun -n); a program started without weftrun runs one"),
      size_key("mpi.eager_limit", 0, 64 * kMiB, "8K",
               "largest message a send copies into an eager buffer when no receive is posted; "
               "larger ones wait for the receive and are copied once, straight across"),
      size_key("mpi.shared_copy_min", 0, 64 * kGiB, "256K",
               "smallest copy inside a process between contiguous buffers that two cores share: "
               "the one making it and the rank waiting for it (puts and gets: a helper thread, "
               "from 1 MiB up)"),
      size_key("mpi.remote_eager_limit", 0, 64 * kMiB, "128K",
               "largest message to a rank of another process sent at once through UCX's shared "
               "memory (the receiver buffers it if no receive is posted); larger ones and "
               "synchronous sends go by UCX's rendezvous, read once a receive matches"),
      enumeration_key("mpi.coll_numa", {"auto", "flat", "staged"}, "auto",
                      "how the blocking Bcast, Reduce, Allreduce and Allgather of ranks of one "
                      "process on several NUMA nodes move data: auto by the cost model "
                      "(docs/mpi-collectives.md), flat (every rank copies from where the data is) "
                      "or staged (one copy per NUMA node into node-local memory)"),
      string_key("mpi.coll_numa_constants", {}, "",
                 "the cost model's constants as local=,remote=,link= (ns per byte), notify=, "
                 "atomic= (ns); empty takes those weft-info numa --measure cached, else the "
                 "seed's figures (weft-info numa prints them)"),
      enumeration_key("deadlock.report", {"on", "off"}, "on",
                      "when every rank waits in MPI and no wait can complete (proven: every "
                      "thread parked, nothing in flight), print the wait-for graph and end the "
                      "job with status 86"),
      integer_key("deadlock.timeout", 0, 100000000, 0,
                  "seconds without any rank thread waking, parking or exchanging a message "
                  "after which a process prints the same report marked not proven and ends with "
                  "status 86; 0 never"),
      enumeration_key("io.mode", {"auto", "poll", "block"}, "auto",
                      "how the I/O manager detects events: poll while a core is idle and block "
                      "in a spare kernel thread when every core is busy, always poll, or always "
                      "block"),
      boolean_key("io.stats", false,
                  "print the I/O manager's statistics (polls, blocks, wake-ups, latencies) at "
                  "exit"),
      integer_key("io.idle_poll_us", 0, 1000000, 500,
                  "microseconds an idle core keeps polling after the latest wait began, before "
                  "it sleeps (and, in auto mode, blocking detection takes over)"),
      integer_key("io.switch_poll_us", 1, 1000000, 20,
                  "auto and poll modes: shortest interval, in microseconds, between two polls "
                  "at context switches"),
      integer_key("io.timer_poll_us", 10, 10000000, 1000,
                  "period, in microseconds, of the timer that polls what cannot be blocked on "
                  "(and everything in poll mode)"),
      integer_key("io.spare_threads", 0, 4096, 32,
                  "spare kernel threads that carry out the blocking calls of user threads that "
                  "cannot become waits on the I/O manager (flock, waitpid, a read of a regular "
                  "file missing the page cache, weft::io::blocking_call), their callers parked "
                  "meanwhile; a call that finds them all busy blocks its core"),
      integer_key("io.threads", 0, 4096, 0,
                  "io threads that poll from their cores' scheduling points, placed like "
                  "progress threads (placement.progress)"),
      string_key("trace.file", {}, "",
                 "record a trace of the job into this file (weftrun --trace): Perfetto / Chrome "
                 "JSON or an OTF2 archive, by the name's suffix or trace.format; empty for none"),
      enumeration_key("trace.format", {"auto", "json", "otf2", "raw"}, "auto",
                      "the trace file's format: by trace.file's suffix, Perfetto / Chrome JSON, "
                      "OTF2, or one process's raw events (what weftrun merges into one trace)"),
      string_key("trace.events", {}, "all",
                 "what a trace records, all or a comma-separated list: thread switches and "
                 "wake-ups (sched), MPI calls (mpi), "
                 "OpenMP regions, barriers and tasks (omp), nonblocking collective pieces (nbc), "
                 "I/O manager polls, blocks and hand-offs (io), messages (message)"),
      enumeration_key("trace.clock", {"auto", "monotonic"}, "auto",
                      "the clock a trace reads at its events: the time-stamp counter where it "
                      "is invariant and Linux's clocksource (converted to CLOCK_MONOTONIC when "
                      "written), else clock_gettime(CLOCK_MONOTONIC) (auto), or always the "
                      "latter (monotonic)"),
      size_key("trace.buffer", 64 * kKiB, 64 * kGiB, "256M",
               "events a trace keeps per kernel thread, in bytes (32 per event); past it the "
               "oldest are overwritten and counted, so the trace holds the job's end"),
      integer_key("priority.progress_boost", kMinPriority, kMaxPriority, 6,
                  "priority of a progress thread while it holds work"),
      boolean_key("stack.guard", true,
                  "put a guard page below each stack so that an overflow faults where it happens"),
      integer_key("stack.cache", 0, 1000000, 256, "free stacks kept per NUMA node and size"),
      integer_key("stack.max_guarded", 0, 10000000, 0,
                  "stacks with a guard page at most, beyond which stacks get a canary; 0: all "
                  "where the kernel has guard regions (Linux 6.13), else derived from "
                  "vm.max_map_count"),
  };
  for (ThreadType type : kThreadTypes) {
    const std::string name(to_string(type));
    const TypeDefaults defaults = defaults_of(type);
    keys.push_back(
        integer_key("priority." + name, kMinPriority, kMaxPriority, defaults.priority,
                    "priority of " + std::string(defaults.threads) + " (a higher one runs first)"));
    keys.push_back(size_key("stack." + name, 16 * kKiB, kGiB, defaults.stack,
                            "stack size of " + std::string(defaults.threads)));
  }
  std::sort(keys.begin(), keys.end(),
            [](const ConfigKey& a, const ConfigKey& b) { return a.name < b.name; });
  return keys;
}

std::string lower(std::string_view text) {
  std::string result(text);
  for (char& c : result) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

// A string form "prefix:<what>" takes any non-empty text after the prefix; other forms are exact.
bool matches_form(std::string_view text, std::string_view form) {
  std::size_t placeholder = form.find(":<");
  if (placeholder == std::string_view::npos) return text == form;
  std::string_view prefix = form.substr(0, placeholder + 1);
  return text.size() > prefix.size() && text.starts_with(prefix);
}

std::string joined(const std::vector<std::string>& items, std::string_view separator,
                   std::string_view last_separator) {
  std::string result;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) result.append(i + 1 == items.size() ? last_separator : separator);
    result.append(items[i].empty() ? "\"\"" : items[i]);
  }
  return result;
}

std::string size_range(const ConfigKey& key) {
  return config_value::format_size(static_cast<std::uint64_t>(key.min)) + ".." +
         config_value::format_size(static_cast<std::uint64_t>(key.max));
}

}  // namespace

std::string_view to_string(ConfigKey::Kind kind) {
  switch (kind) {
    case Kind::integer:
      return "an integer";
    case Kind::boolean:
      return "a boolean";
    case Kind::size:
      return "a size";
    case Kind::string:
      return "a string";
    case Kind::enumeration:
      return "an enumeration";
  }
  return "a value of unknown kind";
}

std::string ConfigKey::type() const {
  switch (kind) {
    case Kind::integer:
      return "integer " + std::to_string(min) + ".." + std::to_string(max);
    case Kind::boolean:
      return "boolean";
    case Kind::size:
      return "size " + size_range(*this);
    case Kind::string:
      return choices.empty() ? "string" : "string: " + joined(choices, " | ", " | ");
    case Kind::enumeration:
      return "one of " + joined(choices, "|", "|");
  }
  return "unknown";
}

std::string ConfigKey::expected() const {
  switch (kind) {
    case Kind::integer:
      return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    case Kind::boolean:
      return "a boolean: true/false, yes/no, on/off or 1/0";
    case Kind::size:
      return "a size from " + config_value::format_size(static_cast<std::uint64_t>(min)) + " to " +
             config_value::format_size(static_cast<std::uint64_t>(max)) +
             ": bytes, or a whole number with a suffix K, M, G or T (KiB, MiB, GiB, TiB alike)";
    case Kind::string:
      return choices.empty() ? "a string" : joined(choices, ", ", " or ");
    case Kind::enumeration:
      return "one of " + joined(choices, ", ", ", ");
  }
  return "a value of an unknown kind";
}

std::optional<std::string> ConfigKey::canonical(std::string_view text) const {
  switch (kind) {
    case Kind::integer: {
      std::optional<std::int64_t> value = config_value::parse_integer(text);
      if (!value || *value < min || *value > max) return std::nullopt;
      return std::to_string(*value);
    }
    case Kind::boolean: {
      std::optional<bool> value = config_value::parse_boolean(text);
      if (!value) return std::nullopt;
      return *value ? "true" : "false";
    }
    case Kind::size: {
      std::optional<std::uint64_t> value = config_value::parse_size(text);
      if (!value || *value < static_cast<std::uint64_t>(min) ||
          *value > static_cast<std::uint64_t>(max)) {
        return std::nullopt;
      }
      return config_value::format_size(*value);
    }
    case Kind::string: {
      bool accepted = choices.empty() ||
                      std::any_of(choices.begin(), choices.end(), [&](const std::string& form) {
                        return matches_form(text, form);
                      });
      if (!accepted) return std::nullopt;
      return std::string(text);
    }
    case Kind::enumeration: {
      std::string name = lower(config_value::trim(text));
      if (std::find(choices.begin(), choices.end(), name) == choices.end()) return std::nullopt;
      return name;
    }
  }
  return std::nullopt;
}

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = make_keys();
  return keys;
}

const ConfigKey* find_config_key(std::string_view name) {
  const std::vector<ConfigKey>& keys = config_keys();
  auto found =
      std::lower_bound(keys.begin(), keys.end(), name,
                       [](const ConfigKey& key, std::string_view n) { return key.name < n; });
  if (found == keys.end() || found->name != name) return nullptr;
  return &*found;
}

}  // namespace weft
