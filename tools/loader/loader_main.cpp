// weft_loader_main: what a weftcc-built program does in place of its main. It loads the
// configuration (with weftrun's settings when weftrun started it), tells weftrun it is a weft
// program, and runs the job: every rank calls main with its own argv; in a privatized build each
// rank runs its own copy of the program, constructors, main and finalizers in its own thread.
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "launch_protocol.h"
#include "program_image.h"
#include "weft/bootstrap.h"
#include "weft/cpu_list.h"
#include "weft/error.h"
#include "weft/mpi_job.h"
#include "weft/preemption.h"
#include "weft/process_end.h"
#include "weft_loader.h"

namespace {

using weft::tools::MainFunction;

// Mappings left for what the job maps besides copies and stacks (the scheduler, malloc arenas).
constexpr std::size_t kSpareMappings = 1024;

// One rank's argv: main may modify the strings and the array (getopt permutes it).
class RankArguments {
 public:
  RankArguments(int argc, char** argv)
      : RankArguments(std::vector<std::string>(argv, argv + argc)) {}
  explicit RankArguments(std::vector<std::string> strings) : strings_(std::move(strings)) {
    for (std::string& text : strings_) pointers_.push_back(text.data());
    pointers_.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(strings_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

// The pipe stays open: a deliberate end is told on it later (weft::mpi::report_deliberate_end_to).
// Programs this one starts do not inherit it.
void acknowledge(int fd) {
  if (fd < 0) return;
  // weftrun reads the pipe only once this process has ended; a failed write shows there as a
  // program that did not acknowledge.
  [[maybe_unused]] const ssize_t wrote = ::write(fd, &weft::tools::kAcknowledgement, 1);
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  weft::mpi::report_deliberate_end_to(fd);
}

std::size_t count_lines(const char* path) {
  std::ifstream file(path);
  std::size_t lines = 0;
  for (std::string line; std::getline(file, line);) ++lines;
  return lines;
}

// Refuses a job whose copies and stacks would exhaust vm.max_map_count before loading anything:
// the mapping that fails then could be anyone's, far from the cause. Copies share arenas and,
// where the kernel has guard regions, stacks share slabs: a rank then costs no mapping of its
// own, and the slabs a few dozen.
void check_map_count(int ranks, std::size_t mappings_per_copy) {
  std::ifstream file("/proc/sys/vm/max_map_count");
  std::size_t limit = 0;
  if (!(file >> limit)) return;
  // Without guard regions the stack pool keeps its guarded stacks within the limit by itself
  // (stack.max_guarded) and gives the others a canary.
  const std::size_t per_rank = mappings_per_copy;
  if (per_rank == 0) return;
  const std::size_t needed = count_lines("/proc/self/maps") + per_rank * ranks + kSpareMappings;
  if (needed > limit) {
    throw weft::Error(
        std::to_string(ranks) + " ranks need about " + std::to_string(needed) +
        " memory mappings (" + std::to_string(per_rank) +
        " per rank for its copy of the program: this system refuses memory that is both "
        "writable and executable, so each copy's code is protected on its own), more than "
        "vm.max_map_count = " +
        std::to_string(limit) + "; run at most " +
        std::to_string((limit - std::min(limit, needed - per_rank * ranks)) / per_rank) +
        " ranks per process, or raise it (sysctl vm.max_map_count=" + std::to_string(needed * 2) +
        ")");
  }
}

// Runs a rank's copy of the program in the rank's thread: constructors, main, then (unless it
// ended with _exit) its atexit handlers, static destructors and destructor functions; then what
// the rank's end means for the job (weft::mpi::rank_ended). exit() in main comes back here.
int run_copy(weft::tools::ProgramImage::Copy& copy, RankArguments& arguments) {
  copy.construct(arguments.argc(), arguments.argv(), environ);
  const weft::mpi::RankEnd end =
      weft::mpi::run_rank_main(copy.main(), arguments.argc(), arguments.argv(), environ);
  if (end.run_handlers) {
    const weft::RankHandlersScope handlers;
    copy.finalize();
  }
  weft::mpi::rank_ended(end.status);
  return end.status;
}

// MPI_Comm_spawn's way to start programs: one image per program (the running one included),
// read at its first spawn, and a copy of it per new rank, bound to the new rank's world.
class SpawnLoader {
 public:
  explicit SpawnLoader(std::shared_ptr<const weft::tools::ProgramImage> running) {
    if (running != nullptr) images_.emplace(canonical("/proc/self/exe"), std::move(running));
  }

  weft::mpi::RankProgram load(const std::string& path, int rank, void* world, void* self) {
    std::lock_guard guard(lock_);
    std::shared_ptr<const weft::tools::ProgramImage>& image = images_[canonical(path)];
    if (image == nullptr) {
      image = std::make_shared<const weft::tools::ProgramImage>(
          weft::tools::ProgramImage::from_file(path));
    }
    check_map_count(1, image->mappings_per_copy());
    auto copy = std::make_shared<weft::tools::ProgramImage::Copy>(image->load(rank, {world, self}));
    return [copy](const std::vector<std::string>& argv) {
      RankArguments arguments(argv);
      return run_copy(*copy, arguments);
    };
  }

 private:
  static std::string canonical(const std::string& path) {
    char resolved[PATH_MAX];
    return ::realpath(path.c_str(), resolved) != nullptr ? resolved : path;
  }

  std::mutex lock_;  // ProgramImage::load is not for concurrent calls
  std::map<std::string, std::shared_ptr<const weft::tools::ProgramImage>> images_;
};

// Installs a SpawnLoader for the job, removed when the job ends.
class SpawnLoaderInstallation {
 public:
  explicit SpawnLoaderInstallation(std::shared_ptr<const weft::tools::ProgramImage> running)
      : loader_(std::make_shared<SpawnLoader>(std::move(running))) {
    weft::mpi::set_program_loader(
        [loader = loader_](const std::string& path, int rank, void* world, void* self) {
          return loader->load(path, rank, world, self);
        });
  }
  ~SpawnLoaderInstallation() { weft::mpi::set_program_loader(nullptr); }
  SpawnLoaderInstallation(const SpawnLoaderInstallation&) = delete;
  SpawnLoaderInstallation& operator=(const SpawnLoaderInstallation&) = delete;

 private:
  std::shared_ptr<SpawnLoader> loader_;
};

// The cores a PMIx launcher (srun --mpi=pmix, mpirun) bound this process to, when they are not all
// of the machine's: the process's share of the node, as weftrun -p gives each process its
// scheduler.cores. Empty without PMIx or without a binding.
std::string launcher_binding() {
  if (std::getenv("PMIX_RANK") == nullptr) return {};
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return {};
  if (CPU_COUNT(&set) >= ::sysconf(_SC_NPROCESSORS_ONLN)) return {};
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return weft::format_cpu_list(cpus);
}

// The process's configuration; under a PMIx launcher that bound it, restricted to its cores unless
// scheduler.cores says otherwise (without that, every process of a node ran on all its cores:
// srun --cpu-bind=cores put two processes on cores 0 and 1, and both ran their ranks on core 0).
weft::Config launch_config(weft::tools::LaunchSettings& launch) {
  const std::vector<std::string> environment = weft::tools::process_environment();
  weft::Config config = weft::tools::load_launch_config(launch, environment);
  const std::string bound = launcher_binding();
  if (bound.empty() || !config.get_string("scheduler.cores").empty()) return config;
  launch.settings.emplace_back("scheduler.cores", bound);
  return weft::tools::load_launch_config(launch, environment);
}

// A --no-privatize program's code is the executable's (the loader and weft are shared objects):
// its executable segments may be preempted, as a privatized program's copies are.
void allow_preempting_executable() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void*) {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          if (segment.p_type == PT_LOAD && (segment.p_flags & PF_X) != 0) {
            weft::allow_preemption_in(reinterpret_cast<const void*>(info->dlpi_addr + segment.p_vaddr),
                                      segment.p_memsz);
          }
        }
        return 1;  // the first object is the executable
      },
      nullptr);
}

int run(int argc, char** argv, MainFunction shared_main) {
  // Removes weftrun's variables: the ranks' environ and the programs they start do not see them.
  weft::tools::LaunchSettings launch = weft::tools::take_launch_settings();
  // First: whatever fails next is reported by this program, not as a program foreign to weft.
  acknowledge(launch.ack_fd);
  const weft::Config config = launch_config(launch);
  // Before the ranks exist: a process of a job of several learns which ranks are its own.
  const std::unique_ptr<weft::Bootstrap> bootstrap =
      weft::connect_bootstrap(static_cast<int>(config.get_int("mpi.ranks")));
  if (shared_main != nullptr) {
    allow_preempting_executable();
    // Its own program has no image to copy; it may still spawn other weft programs.
    const SpawnLoaderInstallation spawning(nullptr);
    return weft::mpi::run_job(
        config,
        [&](int) {
          RankArguments arguments(argc, argv);
          // Its exit() is the loader's (process_exit.c), its atexit handlers the C library's:
          // they run once, when the process exits.
          const weft::mpi::RankEnd end =
              weft::mpi::run_rank_main(shared_main, arguments.argc(), arguments.argv(), environ);
          weft::mpi::rank_ended(end.status);
          return end.status;
        },
        bootstrap.get());
  }

  const auto shared_image = std::make_shared<const weft::tools::ProgramImage>(
      weft::tools::ProgramImage::from_running_executable());
  const weft::tools::ProgramImage& image = *shared_image;
  const SpawnLoaderInstallation spawning(shared_image);
  std::vector<weft::tools::ProgramImage::Copy> copies;
  const int first = bootstrap != nullptr ? bootstrap->layout().first_rank(bootstrap->process()) : 0;
  const int ranks = bootstrap != nullptr ? bootstrap->layout().ranks_of(bootstrap->process())
                                         : static_cast<int>(config.get_int("mpi.ranks"));
  image.reserve(static_cast<std::size_t>(ranks), first);
  check_map_count(ranks, image.mappings_per_copy());
  copies.reserve(static_cast<std::size_t>(ranks));
  for (int rank = first; rank < first + ranks; ++rank) copies.push_back(image.load(rank));
  return weft::mpi::run_job(
      config,
      [&](int rank) {
        RankArguments arguments(argc, argv);
        weft::tools::ProgramImage::Copy& copy = copies[static_cast<std::size_t>(rank - first)];
        return run_copy(copy, arguments);
      },
      bootstrap.get());
}

// Output lost to a full disk or a file size limit must not end as a success (as coreutils'
// close_stdout): the ranks' printf calls failed silently, and only the stream's error flag, or
// the last flush, still knows.
int check_standard_output(const std::string& program, int status) {
  errno = 0;
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return status;
  const int error = errno;
  std::fprintf(stderr, "%s: writing standard output failed%s%s; the output is incomplete\n",
               program.c_str(), error != 0 ? ": " : "", error != 0 ? std::strerror(error) : "");
  return status == 0 ? 1 : status;
}

}  // namespace

extern "C" int weft_loader_main(int argc, char** argv, char** /*envp*/,
                                weft_main_function shared_main) {
  const std::string program = argc > 0 && argv[0] != nullptr ? argv[0] : "weft program";
  try {
    return check_standard_output(program, run(argc, argv, shared_main));
  } catch (const weft::Error& error) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), error.what());
    return 2;
  }
}
