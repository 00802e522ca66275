// weft-info: what weft sees on a host (topology), what it would run there (virtual processors,
// placement of tasks and progress threads) and with which settings (effective configuration).
// It only uses the public headers, so what it prints is what any program linked to weft gets.
#include <weft/config.h>
#include <weft/error.h>
#include <weft/io.h>
#include <weft/numa_copy.h>
#include <weft/placement.h>
#include <weft/topology.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "info_pictures.h"
#include "running_placement.h"
#include "stack_request.h"
#include "weft/trace_file.h"

namespace {

constexpr std::string_view kUsage = R"(usage:
  weft-info [--topology SPEC] [--config FILE] [--set key=value ...]
      the topology, the virtual processors that would run and the effective configuration
  weft-info config [--config FILE] [--set key=value ...]
      the effective configuration: every key, its value and where the value comes from
  weft-info topology [--topology SPEC]
      packages, NUMA nodes, cores and processing units, the distances between nodes, and the
      network interfaces with the NUMA node near which a job's UCX traffic is handled
      (UCX_NET_DEVICES narrows the interfaces weighed, as it narrows UCX's)
  weft-info placement --tasks N [--cores-per-task C] [--policy scatter|numa|compact]
                      [--progress none|colocated|numa|dedicated] [--topology SPEC] [--json]
                      [--svg FILE]
      the cores of N tasks of C cores each and the cores of their progress threads; --policy,
      --progress, --cores-per-task and --topology default to the configuration keys
      placement.tasks, placement.progress, placement.cores_per_task and topology. With --json the
      output is a JSON list: [{"task": 0, "core": 0, "numa": 0, "progress_core": 1}, ...].
      With --svg the machine (packages, NUMA nodes, cores) is drawn into FILE with each rank,
      OpenMP worker (cores past a rank's first) and progress thread on its core
  weft-info placement --pid PID [--svg FILE]
      every user thread of the job that process PID (weftrun, or one process of the job) runs:
      rank, OpenMP worker, progress thread..., the core it is placed on and the core it runs on
      (or last ran on), per process; --svg draws them on the machine as above
  weft-info trace-summary FILE [--svg OUT]
      per-core utilization and each rank's time in MPI (running, and waiting parked) from a
      trace that weftrun --trace wrote (FILE.json or FILE.otf2); with --svg the trace is also
      drawn into OUT: a row per core, the user threads that ran there and their spans
  weft-info io [--pid PID]
      the I/O manager's statistics (io.*) of running weft processes, or of process PID
  weft-info stacks --pid PID
      every user thread of the job that process PID (weftrun, or one process of the job) runs:
      type, rank, state, core, the MPI call it waits in, and its backtrace
  weft-info numa [--ranks N] [--bytes SIZE] [--measure] [--topology SPEC] [--set key=value]
      the NUMA-aware collectives' cost model (docs/mpi-collectives.md): its constants and where
      they come from, and for N ranks (default one per core) placed on the topology by
      placement.tasks, the algorithm Bcast (root 0), Reduce, Allreduce and Allgather would take
      for SIZE bytes (default 1M; Allgather: SIZE per rank), with the model's two times, the
      fragment, ring slots and notification tree. --measure first measures this machine's
      constants (about a second) into the cache weft's jobs read
  weft-info --help

Topology SPEC: "host" (this machine), "synthetic:<hwloc synthetic description>" such as
"synthetic:pack:2 [numa] core:4 pu:1", or "xml:<path>" of a topology exported by hwloc.
Cores are hwloc logical indices. Options take their value as the next argument or after '='.
Bad input is reported on stderr with exit status 2.
)";

// Input the user can fix: reported with the usage hint and exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string command;  // "", "config", "topology", "placement", "io", "trace-summary" or "stacks"
  std::string trace_file;
  std::optional<std::string> svg;
  weft::ConfigOverrides overrides;
  std::optional<int> tasks;
  std::optional<int> cores_per_task;
  std::optional<weft::TaskPolicy> task_policy;
  std::optional<weft::ProgressPolicy> progress_policy;
  bool json = false;
  bool help = false;
  std::optional<int> pid;
  std::optional<int> ranks;
  std::optional<std::size_t> bytes;
  bool measure = false;
};

int positive_integer(std::string_view option, std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1) {
    throw UsageError(std::string(option) + " '" + std::string(text) +
                     "' is not valid; expected an integer of at least 1");
  }
  return value;
}

// "4096", "64K", "1M", "2G" (powers of 1024), as the configuration's sizes are written.
std::optional<std::uint64_t> size_of(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc()) return std::nullopt;
  const std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (suffix.empty()) return value;
  if (suffix.size() != 1) return std::nullopt;
  switch (suffix[0]) {
    case 'K':
    case 'k':
      return value << 10;
    case 'M':
    case 'm':
      return value << 20;
    case 'G':
    case 'g':
      return value << 30;
    default:
      return std::nullopt;
  }
}

Options parse(const std::vector<std::string_view>& arguments) {
  Options options;
  std::vector<std::string_view> placement_only;
  std::vector<std::string_view> numa_only;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    std::string_view argument = arguments[i];
    if (!argument.starts_with("-")) {
      if (options.command == "trace-summary" && options.trace_file.empty()) {
        options.trace_file = std::string(argument);
        continue;
      }
      if (!options.command.empty() ||
          (argument != "config" && argument != "topology" && argument != "placement" &&
           argument != "io" && argument != "trace-summary" && argument != "stacks" &&
           argument != "numa")) {
        throw UsageError("'" + std::string(argument) +
                         "' is not a command; expected config, topology, placement, io, "
                         "trace-summary, stacks or numa");
      }
      options.command = std::string(argument);
      continue;
    }
    std::string_view name = argument;
    std::optional<std::string_view> inline_value;
    if (std::size_t equals = argument.find('='); equals != std::string_view::npos) {
      name = argument.substr(0, equals);
      inline_value = argument.substr(equals + 1);
    }
    auto value = [&]() -> std::string_view {
      if (inline_value) return *inline_value;
      if (i + 1 >= arguments.size()) {
        throw UsageError(std::string(name) + " needs a value; expected " + std::string(name) +
                         " VALUE");
      }
      return arguments[++i];
    };
    if (name == "--help" || name == "-h") {
      options.help = true;
    } else if (name == "--json") {
      options.json = true;
      placement_only.push_back(name);
    } else if (name == "--svg") {
      options.svg = std::string(value());
      if (options.command != "trace-summary") placement_only.push_back(name);
    } else if (name == "--topology") {
      options.overrides.settings.emplace_back("topology", std::string(value()));
    } else if (name == "--config") {
      options.overrides.file = std::string(value());
    } else if (name == "--set") {
      options.overrides.settings.push_back(weft::Config::parse_setting(value()));
    } else if (name == "--pid") {
      options.pid = positive_integer(name, value());
    } else if (name == "--ranks") {
      options.ranks = positive_integer(name, value());
      numa_only.push_back(name);
    } else if (name == "--bytes") {
      std::string_view text = value();
      std::optional<std::uint64_t> bytes = size_of(text);
      if (!bytes || *bytes == 0) {
        throw UsageError("--bytes '" + std::string(text) +
                         "' is not a size; expected bytes, or a number with K, M or G");
      }
      options.bytes = static_cast<std::size_t>(*bytes);
      numa_only.push_back(name);
    } else if (name == "--measure") {
      options.measure = true;
      numa_only.push_back(name);
    } else if (name == "--tasks") {
      options.tasks = positive_integer(name, value());
      placement_only.push_back(name);
    } else if (name == "--cores-per-task") {
      options.cores_per_task = positive_integer(name, value());
      placement_only.push_back(name);
    } else if (name == "--policy") {
      std::string_view text = value();
      options.task_policy = weft::parse_task_policy(text);
      if (!options.task_policy) {
        throw UsageError("--policy '" + std::string(text) +
                         "' is not a task placement policy; expected scatter, numa or compact");
      }
      placement_only.push_back(name);
    } else if (name == "--progress") {
      std::string_view text = value();
      options.progress_policy = weft::parse_progress_policy(text);
      if (!options.progress_policy) {
        throw UsageError("--progress '" + std::string(text) +
                         "' is not a progress thread policy; expected none, colocated, numa or "
                         "dedicated");
      }
      placement_only.push_back(name);
    } else {
      throw UsageError("unknown option '" + std::string(argument) +
                       "'; expected --topology, --config, --set, --help, or with placement "
                       "--tasks, --cores-per-task, --policy, --progress, --json");
    }
  }
  if (options.command != "placement" && !placement_only.empty()) {
    throw UsageError(std::string(placement_only.front()) +
                     " only applies to placement; expected 'weft-info placement " +
                     std::string(placement_only.front()) + " ...'");
  }
  if (options.command != "numa" && !numa_only.empty()) {
    throw UsageError(std::string(numa_only.front()) +
                     " only applies to numa; expected 'weft-info numa " +
                     std::string(numa_only.front()) + " ...'");
  }
  if (options.command != "io" && options.command != "stacks" && options.command != "placement" &&
      options.pid) {
    throw UsageError(
        "--pid only applies to io, stacks and placement; expected 'weft-info io --pid PID'");
  }
  if (options.command == "placement" && options.pid &&
      (options.tasks || options.json || options.cores_per_task || options.task_policy ||
       options.progress_policy)) {
    throw UsageError(
        "placement --pid shows a running job's threads and takes --svg only; expected "
        "'weft-info placement --pid PID [--svg FILE]'");
  }
  if (options.command == "stacks" && !options.pid && !options.help) {
    throw UsageError("stacks needs the job's process; expected --pid PID");
  }
  if (options.command == "trace-summary" && options.trace_file.empty() && !options.help) {
    throw UsageError("trace-summary needs a trace file; expected 'weft-info trace-summary FILE'");
  }
  if (options.command == "placement" && !options.tasks && !options.pid && !options.help) {
    throw UsageError(
        "placement needs the number of tasks or a running job; expected --tasks N "
        "or --pid PID");
  }
  return options;
}

// "0-3,8"
std::string ranges(const std::vector<int>& sorted) {
  std::string text;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (i > 0) text += ',';
    text += std::to_string(sorted[i]);
    if (j > i) text += '-' + std::to_string(sorted[j]);
    i = j + 1;
  }
  return text;
}

// Rows of cells printed in left-aligned columns two spaces apart.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out << line << '\n';
  }
}

// The interfaces and where communication goes (notes/seeds.md, 004; weft/placement.h).
void print_nics(std::ostream& out, const weft::Topology& topology) {
  const std::vector<weft::Topology::Nic>& nics = topology.nics();
  out << '\n';
  if (!nics.empty()) {
    std::vector<std::vector<std::string>> rows = {{"interface", "kind", "numa", "link GB/s"}};
    for (const weft::Topology::Nic& nic : nics) {
      std::ostringstream link;
      link << nic.link_gbytes_per_s;
      rows.push_back({nic.name,
                      nic.kind == weft::Topology::Nic::Kind::openfabrics ? "RDMA" : "network",
                      !nic.numa.empty()     ? ranges(nic.numa)
                      : nic.numa_os.empty() ? "unknown"
                                            : "os " + ranges(nic.numa_os) + " (not here)",
                      nic.link_gbytes_per_s > 0 ? link.str() : "unknown"});
    }
    print_table(out, rows);
  }
  const char* devices = std::getenv("UCX_NET_DEVICES");
  const weft::NicPlacement placement =
      weft::place_near_nics(nics, devices != nullptr ? devices : "");
  out << "Traffic between hosts: " << placement.reason;
  if (!placement.numa.empty()) {
    std::vector<int> cores;
    for (int node : placement.numa) {
      for (int core : topology.cores_of_numa(node)) cores.push_back(core);
    }
    out << "; the UCX worker is polled from cores " << ranges(cores)
        << " and made with its memory there";
  }
  out << '\n';
}

void print_topology(std::ostream& out, const weft::Topology& topology) {
  out << topology.summary() << "\n\n";
  std::vector<std::vector<std::string>> rows = {{"core", "os index", "numa", "pus"}};
  for (const weft::Topology::Core& core : topology.cores()) {
    rows.push_back({std::to_string(core.index), std::to_string(core.os_index),
                    std::to_string(core.numa), ranges(core.pus)});
  }
  print_table(out, rows);
  print_nics(out, topology);
}

void print_vps(std::ostream& out, const weft::Topology& topology, const weft::Config& config) {
  const std::int64_t configured = config.get_int("scheduler.vps");
  const int vps = weft::virtual_processor_count(config, topology);
  out << "Virtual processors: " << vps << " (scheduler.vps = " << configured
      << (configured == 0 ? ": one per core" : "") << ")"
      << (!topology.is_this_machine()          ? ", not bound: the topology is not this machine's"
          : !config.get_bool("scheduler.bind") ? ", not bound: scheduler.bind is false"
                                               : ", each bound to its core")
      << '\n';
  std::vector<std::vector<std::string>> rows;
  for (int vp = 0; vp < vps; ++vp) {
    const weft::Topology::Core& core = topology.core(vp);
    rows.push_back({"  VP " + std::to_string(vp) + ":", "core " + std::to_string(core.index),
                    "NUMA node " + std::to_string(core.numa)});
  }
  print_table(out, rows);
}

weft::TaskPolicy configured_task_policy(const weft::Config& config) {
  const std::string name = config.get_string("placement.tasks");
  if (auto policy = weft::parse_task_policy(name)) return *policy;
  throw weft::Error("placement.tasks '" + name +
                    "' is not a task placement policy; expected "
                    "scatter, numa or compact");
}

weft::ProgressPolicy configured_progress_policy(const weft::Config& config) {
  const std::string name = config.get_string("placement.progress");
  if (auto policy = weft::parse_progress_policy(name)) return *policy;
  throw weft::Error("placement.progress '" + name +
                    "' is not a progress thread policy; "
                    "expected none, colocated, numa or dedicated");
}

void print_placement(std::ostream& out, const Options& options, const weft::Config& config) {
  const weft::Topology topology = weft::configured_topology(config);
  const weft::TaskPolicy task_policy =
      options.task_policy ? *options.task_policy : configured_task_policy(config);
  const weft::ProgressPolicy progress_policy =
      options.progress_policy ? *options.progress_policy : configured_progress_policy(config);
  const int cores_per_task = options.cores_per_task
                                 ? *options.cores_per_task
                                 : static_cast<int>(config.get_int("placement.cores_per_task"));
  const std::vector<weft::TaskPlace> places = weft::place_tasks(
      weft::CoreLayout::of(topology), *options.tasks, cores_per_task, task_policy, progress_policy);
  if (options.svg) {
    std::ofstream file(*options.svg, std::ios::trunc);
    if (!file) throw weft::Error("cannot create " + *options.svg);
    weft::tools::write_placement_svg(
        file, topology, places,
        std::to_string(*options.tasks) + " ranks of " + std::to_string(cores_per_task) +
            " cores on '" + topology.spec() + "', " + std::string(weft::to_string(task_policy)) +
            " placement, progress " + std::string(weft::to_string(progress_policy)));
    file.close();
    if (!file) throw weft::Error("cannot write " + *options.svg);
  }
  if (options.json) {
    out << '[';
    for (const weft::TaskPlace& place : places) {
      out << (place.task == 0 ? "" : ", ") << "{\"task\": " << place.task
          << ", \"core\": " << place.core << ", \"numa\": " << place.numa
          << ", \"progress_core\": " << place.progress_core << '}';
    }
    out << "]\n";
    return;
  }
  out << *options.tasks << (*options.tasks == 1 ? " task" : " tasks") << " of " << cores_per_task
      << (cores_per_task == 1 ? " core" : " cores") << " on topology '" << topology.spec()
      << "', task policy " << weft::to_string(task_policy) << ", progress policy "
      << weft::to_string(progress_policy) << ":\n";
  std::vector<std::vector<std::string>> rows = {{"task", "cores", "numa", "progress core"}};
  for (const weft::TaskPlace& place : places) {
    rows.push_back({std::to_string(place.task), ranges(place.cores), std::to_string(place.numa),
                    place.progress_core < 0 ? "-" : std::to_string(place.progress_core)});
  }
  print_table(out, rows);
}

// The NUMA-aware collectives' constants and choices (weft/numa_copy.h).
void print_numa(std::ostream& out, const Options& options, const weft::Config& config) {
  namespace numa = weft::numa_copy;
  const weft::Topology topology = weft::configured_topology(config);
  if (options.measure) {
    const weft::Topology host = weft::Topology::load("host");
    const numa::Constants measured = numa::measure(host, numa::seed_defaults());
    numa::write_cache(numa::cache_path(), measured);
    out << "Measured into " << numa::cache_path() << "\n";
  }
  const numa::Constants c = numa::effective(config.get_string("mpi.coll_numa_constants"));
  out << "Constants (" << c.source << "):\n";
  auto number = [](double value) {
    std::ostringstream text;
    text.precision(4);
    text << value;
    return text.str();
  };
  auto per_byte = [&](std::string name, double ns) {
    return std::vector<std::string>{std::move(name), number(ns), "ns/byte",
                                    "(" + number(1 / ns) + " GB/s)"};
  };
  std::vector<std::vector<std::string>> constants = {
      per_byte("  local copy (t)", c.local_ns_per_byte),
      per_byte("  remote copy", c.remote_ns_per_byte),
      per_byte("  link between nodes", c.link_ns_per_byte),
      {"  notification (t_W)", number(c.notify_ns), "ns", ""},
      {"  atomic (t_A)", number(c.atomic_ns), "ns", ""}};
  print_table(out, constants);
  out << "  as a setting: mpi.coll_numa_constants=" << c.format() << "\n\n";

  const int ranks = options.ranks ? *options.ranks : topology.num_cores();
  const std::vector<weft::TaskPlace> places =
      weft::place_tasks(weft::CoreLayout::of(topology), ranks,
                        static_cast<int>(config.get_int("placement.cores_per_task")),
                        configured_task_policy(config), weft::ProgressPolicy::none);
  numa::Layout layout;
  std::vector<int> per_node(static_cast<std::size_t>(topology.num_numa_nodes()), 0);
  for (const weft::TaskPlace& place : places) {
    layout.node_of.push_back(place.numa);
    ++per_node[static_cast<std::size_t>(place.numa)];
  }
  const std::size_t bytes = options.bytes ? *options.bytes : std::size_t{1} << 20;
  out << ranks << (ranks == 1 ? " rank" : " ranks") << " on topology '"
      << (topology.spec().empty() ? "host" : topology.spec()) << "' (" << topology.num_numa_nodes()
      << " NUMA nodes; ranks per node:";
  for (int count : per_node) out << ' ' << count;
  out << "), " << bytes << " bytes, mpi.coll_numa = " << config.get_string("mpi.coll_numa")
      << ":\n";
  std::vector<std::vector<std::string>> rows = {
      {"collective", "algorithm", "flat us", "staged us", "fragment", "slots", "tree", "why"}};
  for (numa::Collective kind : {numa::Collective::bcast, numa::Collective::reduce,
                                numa::Collective::allreduce, numa::Collective::allgather}) {
    const std::size_t moved =
        kind == numa::Collective::allgather ? bytes * static_cast<std::size_t>(ranks) : bytes;
    numa::Plan plan = numa::choose(kind, moved, layout, 0, true, c);
    const std::string mode = config.get_string("mpi.coll_numa");
    if (mode == "flat") {
      plan.algorithm = numa::Algorithm::flat;
      plan.reason = "mpi.coll_numa = flat";
    } else if (mode == "staged" && layout.nodes() > 1) {
      plan.algorithm = numa::Algorithm::staged;
      plan.reason = "mpi.coll_numa = staged";
    }
    auto us = [&](double ns) { return ns > 0 ? number(ns / 1000) : std::string("-"); };
    const bool shaped = plan.fragment > 0 && kind == numa::Collective::bcast;
    rows.push_back(
        {std::string(numa::to_string(kind)), std::string(numa::to_string(plan.algorithm)),
         us(plan.flat_ns), us(plan.staged_ns), shaped ? std::to_string(plan.fragment) : "-",
         shaped ? std::to_string(plan.slots) : "-",
         shaped ? (plan.arity == 1 ? "chain" : std::to_string(plan.arity) + "-ary") : "-",
         plan.reason});
  }
  print_table(out, rows);
}

void print_io_stats(std::ostream& out, const Options& options) {
  const std::vector<int> pids =
      options.pid ? std::vector<int>{*options.pid} : weft::io::processes_with_stats();
  if (pids.empty()) out << "no running weft process publishes I/O statistics\n";
  for (int pid : pids) {
    const std::optional<weft::io::Stats> stats = weft::io::stats_of_process(pid);
    if (!stats) {
      throw weft::Error("weft-info io: process " + std::to_string(pid) +
                        " is not a running weft process with I/O statistics");
    }
    const char* mode = stats->mode == weft::io::Mode::poll    ? "poll"
                       : stats->mode == weft::io::Mode::block ? "block"
                                                              : "auto";
    out << "process " << pid << ": io.mode " << mode << ", io.polls " << stats->polls
        << ", io.poll_detections " << stats->poll_detections << ", io.blocks " << stats->blocks
        << ", io.block_detections " << stats->block_detections << ", io.handoffs "
        << stats->handoffs << ", io.wakeups " << stats->wakeups << ", io.mean_poll_gap_us "
        << stats->mean_poll_gap_ns / 1000.0 << ", io.mean_wakeup_us "
        << stats->mean_wakeup_ns / 1000.0 << ", io.spare_calls " << stats->spare_calls
        << ", io.spare_full " << stats->spare_full << ", io.poll_sleeps " << stats->poll_sleeps
        << ", io.poll_sleep_detections " << stats->poll_sleep_detections << ", io.ready_rereads "
        << stats->ready_rereads << "\n";
  }
}

void run(const Options& options) {
  if (options.help) {
    std::cout << kUsage << "\nConfiguration keys:\n" << weft::Config::documentation();
    return;
  }
  const weft::Config config = weft::Config::load(options.overrides);
  if (options.command == "config") {
    std::cout << config.describe();
  } else if (options.command == "topology") {
    print_topology(std::cout, weft::configured_topology(config));
  } else if (options.command == "placement" && options.pid) {
    weft::tools::print_running_placement(std::cout, *options.pid, options.svg);
  } else if (options.command == "placement") {
    print_placement(std::cout, options, config);
  } else if (options.command == "numa") {
    print_numa(std::cout, options, config);
  } else if (options.command == "io") {
    print_io_stats(std::cout, options);
  } else if (options.command == "trace-summary") {
    weft::tools::print_trace_summary(std::cout, options.trace_file);
    if (options.svg) {
      std::ofstream file(*options.svg, std::ios::trunc);
      if (!file) throw weft::Error("cannot create " + *options.svg);
      weft::trace::write_timeline_svg(options.trace_file, file);
      file.close();
      if (!file) throw weft::Error("cannot write " + *options.svg);
    }
  } else if (options.command == "stacks") {
    weft::tools::print_stacks(std::cout, *options.pid);
  } else {
    const weft::Topology topology = weft::configured_topology(config);
    std::cout << topology.summary() << "\n\n";
    print_vps(std::cout, topology, config);
    std::cout << "\nEffective configuration:\n" << config.describe();
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    run(parse(std::vector<std::string_view>(argv + 1, argv + argc)));
    return 0;
  } catch (const UsageError& error) {
    std::cerr << "weft-info: " << error.what() << "\n(weft-info --help shows the usage)\n";
  } catch (const weft::Error& error) {
    std::cerr << "weft-info: " << error.what() << '\n';
  } catch (const std::exception& error) {
    std::cerr << "weft-info: " << error.what() << '\n';
    return 1;
  }
  return 2;
}
