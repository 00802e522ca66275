// A process of a job of several processes, for the checks of weftrun -p and of the PMIx path
// (bootstrap_checks.sh): it joins the job's exchange with connect_bootstrap as the MPI job of each
// process does, without MPI, and says on stdout what it saw.
//
//   bootstrap_exchange exchange           put a value, fence, read and check every process's value,
//                                         twice; print "process I of P: ranks F+N ok"
//   bootstrap_exchange hang               the exchange, print "process I waits", wait forever
//   bootstrap_exchange hang-with-child    the same, with a child process in its process group
//                                         (printed as "process I child <pid>")
//   bootstrap_exchange exit-after-fence K C   the exchange; process K then exits with C, the
//                                         others wait forever
//   bootstrap_exchange leave-before-fence K   process K exits 0 before the first fence
//   bootstrap_exchange lose-peer K        the exchange; the others then report on the
//                                         acknowledgement pipe that they lost process K and exit
//                                         with 1 at once; K kills itself (SIGKILL) 1 s later
//   bootstrap_exchange wrong-token        joins with a token that is not the job's
//
// It prints "socket <path>", "cores <scheduler.cores>" and "UCX_CMA_SEG_SIZE <value or unset>"
// first, and "process I pid <pid>" once
// it has joined. Under weftrun it behaves as a
// weft program (the marker section, the acknowledgement); started by mpirun it runs alone.
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "launch_protocol.h"
#include "weft/bootstrap.h"
#include "weft/error.h"
#include "weft/mpi_job.h"

__attribute__((used, section(".weft_program"))) static const char weft_program[] = "test";

namespace {

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

[[noreturn]] void wait_forever() {
  while (true) ::pause();
}

int index_argument(int argc, char** argv, int at) {
  return at < argc ? std::atoi(argv[at]) : -1;
}

// Every process puts a value naming itself and the round, then checks everyone's after the fence.
void exchange(weft::Bootstrap& bootstrap, int round) {
  const int me = bootstrap.process();
  const std::string key = "round" + std::to_string(round);
  auto value_of = [&](int process) {
    return "process " + std::to_string(process) + " says " + std::to_string(round * 100 + process);
  };
  bootstrap.put(key, value_of(me));
  bootstrap.fence();
  for (int process = 0; process < bootstrap.layout().processes(); ++process) {
    const std::string got = bootstrap.get(process, key);
    if (got != value_of(process)) {
      throw weft::Error("round " + std::to_string(round) + ": process " + std::to_string(process) +
                        " put '" + got + "'; expected '" + value_of(process) + "'");
    }
  }
}

int run(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const weft::tools::LaunchSettings launch = weft::tools::take_launch_settings();
  if (launch.ack_fd >= 0) {
    [[maybe_unused]] const ssize_t wrote =
        ::write(launch.ack_fd, &weft::tools::kAcknowledgement, 1);
    if (mode != "lose-peer") ::close(launch.ack_fd);
  }
  const weft::Config config =
      weft::tools::load_launch_config(launch, weft::tools::process_environment());
  const char* socket = std::getenv("WEFT_INTERNAL_BOOTSTRAP_SOCKET");
  say("socket " + std::string(socket != nullptr ? socket : "none"));
  say("cores " + config.get_string("scheduler.cores"));
  const char* cma_segment = std::getenv("UCX_CMA_SEG_SIZE");
  say("UCX_CMA_SEG_SIZE " + std::string(cma_segment != nullptr ? cma_segment : "unset"));
  if (mode == "wrong-token") ::setenv("WEFT_INTERNAL_BOOTSTRAP_TOKEN", "0123456789abcdef", 1);

  std::unique_ptr<weft::Bootstrap> bootstrap =
      weft::connect_bootstrap(static_cast<int>(config.get_int("mpi.ranks")));
  if (!bootstrap) throw weft::Error("connect_bootstrap found no job of several processes");
  const int me = bootstrap->process();
  const weft::RankLayout& layout = bootstrap->layout();
  say("process " + std::to_string(me) + " pid " + std::to_string(::getpid()));
  if (mode == "leave-before-fence" && me == index_argument(argc, argv, 2)) return 0;
  exchange(*bootstrap, 1);
  if (mode == "lose-peer") {
    const std::int32_t lost = index_argument(argc, argv, 2);
    if (me == lost) {
      ::sleep(1);
      ::raise(SIGKILL);
    }
    char record[1 + sizeof lost] = {weft::mpi::kLostProcess};
    std::memcpy(record + 1, &lost, sizeof lost);
    [[maybe_unused]] const ssize_t wrote = ::write(launch.ack_fd, record, sizeof record);
    return 1;
  }
  if (mode == "exit-after-fence") {
    if (me == index_argument(argc, argv, 2)) return index_argument(argc, argv, 3);
    wait_forever();
  }
  exchange(*bootstrap, 2);
  say("process " + std::to_string(me) + " of " + std::to_string(layout.processes()) + ": ranks " +
      std::to_string(layout.first_rank(me)) + "+" + std::to_string(layout.ranks_of(me)) + " of " +
      std::to_string(layout.world_size()) + " ok");
  if (mode == "hang-with-child") {
    const pid_t child = ::fork();
    if (child == 0) wait_forever();
    say("process " + std::to_string(me) + " child " + std::to_string(child));
  }
  if (mode == "hang" || mode == "hang-with-child") {
    say("process " + std::to_string(me) + " waits");
    wait_forever();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bootstrap_exchange: %s\n", error.what());
    return 1;
  }
}
