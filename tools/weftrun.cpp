// weftrun: runs a program built with weftcc or weftcxx as an MPI job of N ranks, the ranks being
// user-level threads of one process, or of P processes with -p (each its share of the ranks and of
// the node's cores, joined by the exchange weftrun serves). The settings of its command line reach
// the program at command-line precedence; its exit status is the job's.
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "elf_section.h"
#include "job_process.h"
#include "launch_protocol.h"
#include "trace_parts.h"
#include "weft/bootstrap.h"
#include "weft/bootstrap_server.h"
#include "weft/config.h"
#include "weft/error.h"
#include "weft/placement.h"
#include "weft/topology.h"
#include "weftrun_options.h"

namespace {

using weft::tools::UsageError;
using Options = weft::tools::WeftrunOptions;

constexpr std::string_view kUsage = R"(usage: weftrun [options] program [arguments...]

Runs a program built with weftcc or weftcxx (or mpicc, mpicxx) as an MPI job whose ranks are
user-level threads of one process, or of P processes on this machine with -p. mpiexec and mpirun
are other names of weftrun.

options:
  -n N, -np N              number of ranks (mpi.ranks)
  -p P, --processes P      run the ranks in P processes (default 1): contiguous blocks of ranks,
                           the remainder one each to the first processes (-n 8 -p 3: 3, 3, 2);
                           the cores are split evenly among them (scheduler.cores), or shared in
                           turn when there are fewer cores than processes. weftrun serves their
                           bootstrap exchange on a private socket (docs/bootstrap.md)
  -c C                     cores per rank (placement.cores_per_task)
  --placement POLICY       how ranks are placed on cores: scatter, numa or compact (placement.tasks)
  --progress POLICY        where progress threads run: none, colocated, numa or dedicated
                           (placement.progress)
  --trace FILE             record a trace of the job (trace.file): FILE.json for Perfetto
                           (ui.perfetto.dev) or chrome://tracing, FILE.otf2 for an OTF2 archive
                           (Vampir, otf2-print); one file for all the processes of -p;
                           trace.events chooses what is recorded (docs/observability.md)
  --stopped-limit S        with -p, a process that stays stopped (SIGSTOP) for S seconds fails the
                           job, as its peers cannot go on without it (default 30; 0: never)
  --config FILE            a TOML configuration file (instead of $WEFT_CONFIG)
  --set key=value          any configuration key below; repeatable
  --oversubscribe          accepted and ignored, as Open MPI's mpirun spells it: ranks are user
                           threads, and more ranks than cores is the normal case
  --allow-run-as-root      accepted and ignored (Open MPI's mpirun refuses root without it)
  -h, --help               this text
  --                       ends the options
Options take their value as the next argument or after '='. Settings apply in the order given,
above the file and the WEFT_* environment variables.

exit status: the job's (0 when every rank returned 0, else the first non-zero status in rank
order, or the code given to MPI_Abort); 128+S when the program was killed by signal S (SIGINT
and SIGTERM sent to weftrun are forwarded to it, followed by SIGKILL after 2 s); 2 for a bad
option or configuration, or a program not built with weftcc; 86 when weft proved a deadlock
(every rank waits in MPI and no wait can complete: the wait-for graph is on stderr; --set
deadlock.report=off disables it). With -p, when a process fails (a non-zero status or a signal)
the others are stopped (SIGTERM, then SIGKILL after 0.5 s), the failed process and its ranks are
named on stderr, and its status is the job's. SIGQUIT sent to weftrun makes every process of the
job print every user thread's stack on stderr; the job goes on.

environment: with -p, the processes get UCX_CMA_SEG_SIZE=4m unless it is set already (UCX then
reads a large message between them in 4 MiB system calls, not 512 KiB ones).
)";

// UCX settings for the processes of a job of several, where the environment does not set them:
// UCX reads them when the transport makes its worker (ucp_config_read), and the user's own value
// wins. weft cannot set them for its worker alone: UCX 1.13 takes CMA_SEG_SIZE through
// ucp_config_modify, then refuses it at worker creation ("invalid configuration", on stderr), and
// a setenv inside the running program races its other threads' getenv.
// - UCX_CMA_SEG_SIZE: a rendezvous fetch reads the sender's buffer with process_vm_readv in
//   segments of this size, one per progress call. UCX's 512 KiB made a 4 MiB message 8 calls and
//   8 progress rounds; Open MPI's vader reads it in one (docs/mpi-processes.md, "Limits").
constexpr std::pair<std::string_view, std::string_view> kUcxDefaults[] = {
    {"UCX_CMA_SEG_SIZE", "4m"}};

// "NAME=value" entries of kUcxDefaults for the variables this process's environment lacks.
std::vector<std::string> ucx_defaults() {
  std::vector<std::string> entries;
  for (const auto& [name, value] : kUcxDefaults) {
    if (std::getenv(std::string(name).c_str()) == nullptr) {
      entries.push_back(std::string(name) + "=" + std::string(value));
    }
  }
  return entries;
}

// Where execvp would find `name`.
std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) != 0) {
      throw UsageError("cannot run program '" + name + "': " + ::strerror(errno));
    }
    return name;
  }
  const char* path = std::getenv("PATH");
  std::string_view directories = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const std::size_t colon = directories.find(':');
    std::string directory(directories.substr(0, colon));
    std::string candidate = (directory.empty() ? "." : directory) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    directories.remove_prefix(colon + 1);
  }
  throw UsageError("program '" + name + "' not found in PATH");
}

// An ELF program without weft's marker would run once, as an ordinary program: refused before it
// runs. Anything else (a script) is started, and must then acknowledge.
void check_weft_program(const std::string& path, const std::string& name) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // exec will report it
  const bool foreign = weft::tools::is_elf64(fd) &&
                       !weft::tools::find_elf_section(fd, weft::tools::kProgramMarkerSection);
  ::close(fd);
  if (foreign) {
    throw UsageError("'" + name +
                     "' was not built with weftcc or weftcxx, so it cannot run as weft ranks; "
                     "rebuild it with weftcc (or mpicc)");
  }
}

int status_of(const weft::tools::JobOutcome& outcome, const std::string& name) {
  if (outcome.signaled) {
    std::fprintf(stderr, "weftrun: '%s' was killed by signal %d (%s)\n", name.c_str(), outcome.code,
                 ::strsignal(outcome.code));
    return 128 + outcome.code;
  }
  if (!outcome.acknowledged) {
    std::fprintf(stderr,
                 "weftrun: '%s' ended with status %d without starting weft ranks: it was not built "
                 "with weftcc or weftcxx\n",
                 name.c_str(), outcome.code);
    return outcome.code != 0 ? outcome.code : 2;
  }
  return outcome.code;
}

// "process 1 (ranks 3-5) of 'app'"
std::string process_name(const weft::RankLayout& layout, int process, const std::string& name) {
  const int first = layout.first_rank(process);
  const int count = layout.ranks_of(process);
  return "process " + std::to_string(process) + " (" +
         (count == 1 ? "rank " + std::to_string(first)
                     : "ranks " + std::to_string(first) + "-" + std::to_string(first + count - 1)) +
         ") of '" + name + "'";
}

// The status of a job of several processes: that of the process that failed first, else 0.
int status_of(const weft::tools::JobOutcomes& outcomes, const weft::RankLayout& layout,
              const std::string& name) {
  const int processes = static_cast<int>(outcomes.processes.size());
  if (outcomes.failed) {
    const int failed = *outcomes.failed;
    const weft::tools::JobOutcome& outcome = outcomes.processes[failed];
    const std::string who = process_name(layout, failed, name);
    const char* others = processes > 1 ? "; the other processes were stopped" : "";
    if (outcome.stopped_by != 0) {
      std::fprintf(stderr,
                   "weftrun: %s stayed stopped by signal %d (%s) past --stopped-limit; the other "
                   "processes cannot go on without it, so the job was ended\n",
                   who.c_str(), outcome.stopped_by, ::strsignal(outcome.stopped_by));
      return 128 + outcome.stopped_by;
    }
    if (outcome.signaled) {
      std::fprintf(stderr, "weftrun: %s was killed by signal %d (%s)%s\n", who.c_str(),
                   outcome.code, ::strsignal(outcome.code), others);
      return 128 + outcome.code;
    }
    if (!outcome.acknowledged) {
      std::fprintf(stderr,
                   "weftrun: %s ended with status %d without starting weft ranks: it was not "
                   "built with weftcc or weftcxx%s\n",
                   who.c_str(), outcome.code, others);
      return outcome.code;
    }
    std::fprintf(stderr, "weftrun: %s exited with status %d%s\n", who.c_str(), outcome.code,
                 others);
    return outcome.code;
  }
  for (int process = 0; process < processes; ++process) {
    if (!outcomes.processes[process].acknowledged) {
      std::fprintf(stderr,
                   "weftrun: %s ended with status 0 without starting weft ranks: it was not built "
                   "with weftcc or weftcxx\n",
                   process_name(layout, process, name).c_str());
      return 2;
    }
  }
  return 0;
}

// Runs the job in options.processes processes: each gets its block of ranks, its share of the
// cores and the variables of the exchange weftrun serves while they run.
int run_processes(const Options& options, const weft::Config& config, const std::string& path,
                  const std::string& name) {
  const int processes = options.processes;
  const int ranks = static_cast<int>(config.get_int("mpi.ranks"));
  if (processes > ranks) {
    throw UsageError("-p " + std::to_string(processes) + " needs at least " +
                     std::to_string(processes) + " ranks (one per process); the job has " +
                     std::to_string(ranks) + " (mpi.ranks, set with -n)");
  }
  const weft::RankLayout layout(ranks, processes);
  const weft::Topology topology = weft::configured_topology(config);
  const std::vector<std::string> cores = weft::split_cores(topology, processes);
  // The last process has the smallest share.
  const int fewest = processes <= topology.num_cores() ? topology.num_cores() / processes : 1;
  const std::int64_t vps = config.get_int("scheduler.vps");
  if (vps > fewest) {
    throw UsageError("scheduler.vps = " + std::to_string(vps) + " but -p " +
                     std::to_string(processes) + " leaves process " +
                     std::to_string(processes - 1) + " " + std::to_string(fewest) + " core" +
                     (fewest == 1 ? "" : "s") + " (cpus " + cores.back() + ") of the " +
                     std::to_string(topology.num_cores()) + "; expected at most " +
                     std::to_string(fewest) + ", or 0 for one per core");
  }
  const weft::BootstrapServer server(processes);
  // A trace: each process writes its raw part, merged into the one trace file once all have ended.
  const weft::trace::Settings trace = weft::trace::settings_of(config);
  std::optional<weft::tools::TraceParts> parts;
  if (!trace.file.empty()) parts.emplace(trace, processes);
  const std::vector<std::string> ucx = ucx_defaults();
  std::vector<weft::tools::ProcessLaunch> launches;
  for (int process = 0; process < processes; ++process) {
    weft::tools::ProcessLaunch launch{options.launch, server.environment(process)};
    launch.environment.insert(launch.environment.end(), ucx.begin(), ucx.end());
    launch.launch.settings.emplace_back("scheduler.cores", cores[process]);
    if (parts) {
      launch.launch.settings.emplace_back("trace.file", parts->part(process));
      launch.launch.settings.emplace_back("trace.format", "raw");
    }
    launches.push_back(std::move(launch));
  }
  const int status =
      status_of(weft::tools::run_job_processes(path, options.command, std::move(launches),
                                               options.stopped_limit),
                layout, name);
  if (parts) parts->merge();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options =
        weft::tools::parse_weftrun_options(std::vector<std::string_view>(argv + 1, argv + argc));
    if (options.help) {
      std::cout << kUsage << "\nconfiguration keys:\n" << weft::Config::documentation();
      return 0;
    }
    // The program builds the same configuration; whatever it would refuse is refused here, before
    // anything runs.
    const weft::Config config =
        weft::tools::load_launch_config(options.launch, weft::tools::process_environment());
    weft::trace::settings_of(config);  // refuses a trace file it could not write
    const std::string& name = options.command.front();
    const std::string path = resolve_program(name);
    check_weft_program(path, name);
    if (options.processes > 1) return run_processes(options, config, path, name);
    weft::tools::JobOutcomes outcomes =
        weft::tools::run_job_processes(path, options.command, {{options.launch, {}}});
    return status_of(outcomes.processes.front(), name);
  } catch (const UsageError& error) {
    std::cerr << "weftrun: " << error.what() << "\n(weftrun --help shows the options)\n";
    return 2;
  } catch (const weft::Error& error) {
    std::cerr << "weftrun: " << error.what() << "\n";
    return 2;
  }
}
