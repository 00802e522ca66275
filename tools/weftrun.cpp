// weftrun: runs a program built with weftcc or weftcxx as an MPI job of N ranks, the ranks being
// user-level threads of one process. The settings of its command line reach the program at
// command-line precedence; its exit status is the job's.
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "elf_section.h"
#include "job_process.h"
#include "launch_protocol.h"
#include "weft/config.h"
#include "weft/error.h"

namespace {

constexpr std::string_view kUsage = R"(usage: weftrun [options] program [arguments...]

Runs a program built with weftcc or weftcxx (or mpicc, mpicxx) as an MPI job whose ranks are
user-level threads of one process.

options:
  -n N, -np N              number of ranks (mpi.ranks)
  -c C                     cores per rank (placement.cores_per_task)
  --placement POLICY       how ranks are placed on cores: scatter, numa or compact (placement.tasks)
  --progress POLICY        where progress threads run: none, colocated, numa or dedicated
                           (placement.progress)
  --config FILE            a TOML configuration file (instead of $WEFT_CONFIG)
  --set key=value          any configuration key below; repeatable
  -h, --help               this text
  --                       ends the options
Options take their value as the next argument or after '='. Settings apply in the order given,
above the file and the WEFT_* environment variables.

exit status: the job's (0 when every rank returned 0, else the first non-zero status in rank
order, or the code given to MPI_Abort); 128+S when the program was killed by signal S (SIGINT
and SIGTERM sent to weftrun are forwarded to it, followed by SIGKILL after 2 s); 2 for a bad
option or configuration, or a program not built with weftcc.
)";

// Input the user can fix: reported with a hint at --help and exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  weft::tools::LaunchSettings launch;
  std::vector<std::string> command;  // program and its arguments
  bool help = false;
};

std::string positive_integer(std::string_view option, std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1) {
    throw UsageError(std::string(option) + " '" + std::string(text) +
                     "' is not valid; expected an integer of at least 1");
  }
  return std::string(text);
}

Options parse(const std::vector<std::string_view>& arguments) {
  Options options;
  std::size_t i = 0;
  for (; i < arguments.size(); ++i) {
    const std::string_view argument = arguments[i];
    if (argument == "--") {
      ++i;
      break;
    }
    if (!argument.starts_with("-") || argument == "-") break;
    std::string_view name = argument;
    std::optional<std::string_view> inline_value;
    if (std::size_t equals = argument.find('='); equals != std::string_view::npos) {
      name = argument.substr(0, equals);
      inline_value = argument.substr(equals + 1);
    }
    auto value = [&]() -> std::string_view {
      if (inline_value) return *inline_value;
      if (i + 1 >= arguments.size()) {
        throw UsageError("option " + std::string(name) + " needs a value");
      }
      return arguments[++i];
    };
    auto& settings = options.launch.settings;
    if (name == "-h" || name == "--help") {
      options.help = true;
    } else if (name == "-n" || name == "-np") {
      settings.emplace_back("mpi.ranks", positive_integer(name, value()));
    } else if (name == "-c") {
      settings.emplace_back("placement.cores_per_task", positive_integer(name, value()));
    } else if (name == "--placement") {
      settings.emplace_back("placement.tasks", std::string(value()));
    } else if (name == "--progress") {
      settings.emplace_back("placement.progress", std::string(value()));
    } else if (name == "--config") {
      options.launch.config_file = std::string(value());
    } else if (name == "--set") {
      settings.push_back(weft::Config::parse_setting(value()));
    } else {
      throw UsageError("unknown option '" + std::string(argument) + "'");
    }
  }
  options.command.assign(arguments.begin() + static_cast<std::ptrdiff_t>(i), arguments.end());
  if (options.command.empty() && !options.help) throw UsageError("no program given");
  return options;
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

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse(std::vector<std::string_view>(argv + 1, argv + argc));
    if (options.help) {
      std::cout << kUsage << "\nconfiguration keys:\n" << weft::Config::documentation();
      return 0;
    }
    // The program builds the same configuration; whatever it would refuse is refused here, before
    // anything runs.
    weft::tools::load_launch_config(options.launch, weft::tools::process_environment());
    const std::string& name = options.command.front();
    const std::string path = resolve_program(name);
    check_weft_program(path, name);
    return status_of(weft::tools::run_job_process(path, options.command, options.launch), name);
  } catch (const UsageError& error) {
    std::cerr << "weftrun: " << error.what() << "\n(weftrun --help shows the options)\n";
    return 2;
  } catch (const weft::Error& error) {
    std::cerr << "weftrun: " << error.what() << "\n";
    return 2;
  }
}
