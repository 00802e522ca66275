// weft_loader_main: what a weftcc-built program does in place of its main. It loads the
// configuration (with weftrun's settings when weftrun started it), tells weftrun it is a weft
// program, and runs the job: every rank calls main with its own argv; in a privatized build each
// rank runs its own copy of the program, constructors, main and finalizers in its own thread.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "launch_protocol.h"
#include "program_image.h"
#include "weft/error.h"
#include "weft/mpi_job.h"
#include "weft_loader.h"

namespace {

using weft::tools::MainFunction;

// One rank's argv: main may modify the strings and the array (getopt permutes it).
class RankArguments {
 public:
  RankArguments(int argc, char** argv) : strings_(argv, argv + argc) {
    for (std::string& text : strings_) pointers_.push_back(text.data());
    pointers_.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(strings_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

void acknowledge(int fd) {
  if (fd < 0) return;
  // weftrun reads the pipe only once this process has ended; a failed write shows there as a
  // program that did not acknowledge.
  [[maybe_unused]] const ssize_t wrote = ::write(fd, &weft::tools::kAcknowledgement, 1);
  ::close(fd);
}

int run(int argc, char** argv, MainFunction shared_main) {
  // Removes weftrun's variables: the ranks' environ and the programs they start do not see them.
  const weft::tools::LaunchSettings launch = weft::tools::take_launch_settings();
  const weft::Config config =
      weft::tools::load_launch_config(launch, weft::tools::process_environment());
  acknowledge(launch.ack_fd);
  if (shared_main != nullptr) {
    return weft::mpi::run_job(config, [&](int) {
      RankArguments arguments(argc, argv);
      return shared_main(arguments.argc(), arguments.argv(), environ);
    });
  }

  const auto image = weft::tools::ProgramImage::from_running_executable();
  std::vector<weft::tools::ProgramImage::Copy> copies;
  const int ranks = static_cast<int>(config.get_int("mpi.ranks"));
  copies.reserve(static_cast<std::size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) copies.push_back(image.load(rank));
  return weft::mpi::run_job(config, [&](int rank) {
    RankArguments arguments(argc, argv);
    weft::tools::ProgramImage::Copy& copy = copies[static_cast<std::size_t>(rank)];
    copy.construct(arguments.argc(), arguments.argv(), environ);
    const int status = copy.main()(arguments.argc(), arguments.argv(), environ);
    copy.finalize();
    return status;
  });
}

}  // namespace

extern "C" int weft_loader_main(int argc, char** argv, char** /*envp*/,
                                weft_main_function shared_main) {
  const std::string program = argc > 0 && argv[0] != nullptr ? argv[0] : "weft program";
  try {
    return run(argc, argv, shared_main);
  } catch (const weft::Error& error) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), error.what());
    return 2;
  }
}
