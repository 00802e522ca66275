// Running a test body in every rank of a job: each rank initialises MPI, runs the body and
// finalises; the job's status is what the test checks last.
//
// Jobs in one process or spread over several. ctest runs the MPI test set as written (every job
// in the test's own process) and again with WEFT_TEST_PROCESSES=2 and =4 in the environment
// (tests named p2.* and p4.*, tests/CMakeLists.txt): run_ranks and run_test_job then spread the
// ranks over that many forked processes (process_job.h), so that every message and collective
// between ranks of different processes goes through UCX. A job of n ranks runs in min(P, n)
// processes; a job of one rank cannot span processes and is skipped, saying so.
//
// Spread, the ranks of different processes share no memory with each other nor with the test:
// - checks belong inside the ranks (a failed check fails its process, and so the job);
// - ranks that wait for each other, or report something the test checks after the job, do it
//   through a Shared<T> (shared_object.h) made before the job;
// - a test that needs all ranks in one address space (the single-copy path, pointers or handles
//   passed between ranks, process-wide objects) starts with WEFT_ONE_PROCESS_ONLY("why").
// docs/mpi-processes.md ("Tests") lists what is skipped and why.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "job_config.h"
#include "mpi.h"
#include "process_job.h"
#include "shared_object.h"
#include "weft/error.h"
#include "weft/mpi_job.h"

namespace weft::testing {

// How many processes the jobs of this test run spread over: WEFT_TEST_PROCESSES, 1 when unset.
inline int test_processes() {
  static const int processes = [] {
    const char* text = std::getenv("WEFT_TEST_PROCESSES");
    if (text == nullptr || *text == '\0') return 1;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (*end != '\0' || value < 1 || value > 64) {
      throw Error(std::string("WEFT_TEST_PROCESSES='") + text +
                  "': expected a number of processes from 1 to 64");
    }
    return static_cast<int>(value);
  }();
  return processes;
}

// Skips the rest of the test, with the reason, when the jobs run spread over processes: for a
// test that needs every rank of its job in one address space. A macro because the skip must
// return from the test body itself, as GTEST_SKIP does.
#define WEFT_ONE_PROCESS_ONLY(why)                                       \
  if (::weft::testing::test_processes() > 1)                             \
  GTEST_SKIP() << "needs all ranks in one process (WEFT_TEST_PROCESSES=" \
               << ::weft::testing::test_processes() << "): " << why

namespace mpi_test_detail {
inline void skip_single_rank() {
  GTEST_SKIP() << "a job of 1 rank cannot span processes (WEFT_TEST_PROCESSES=" << test_processes()
               << "); the run in one process covers it";
}
}  // namespace mpi_test_detail

// Runs rank_main(rank) in every rank of a job of `ranks` ranks on `vps` virtual processors (per
// process): in this process, or spread over min(test_processes(), ranks) processes. Returns the
// job's status: the first non-zero status of a rank in one process; spread, the status of the
// failed process (run_processes_job). A job of one rank is skipped when spread (0 is returned).
inline int run_test_job(int ranks, int vps, const std::function<int(int rank)>& rank_main,
                        std::vector<std::pair<std::string, std::string>> extra = {}) {
  Config config = job_config(ranks, vps, std::move(extra));
  const int processes = std::min(test_processes(), ranks);
  if (test_processes() > 1 && processes < 2) {
    mpi_test_detail::skip_single_rank();
    return 0;
  }
  if (processes > 1) return run_processes_job(processes, config, rank_main);
  return weft::mpi::run_job(config, rank_main);
}

inline int run_ranks(int ranks, int vps, const std::function<void(int rank)>& body,
                     std::vector<std::pair<std::string, std::string>> extra = {}) {
  return run_test_job(
      ranks, vps,
      [&](int rank) {
        MPI_Init(nullptr, nullptr);
        body(rank);
        MPI_Finalize();
        return 0;
      },
      std::move(extra));
}

// For death tests: EXPECT_EXIT(exit_with(run_ranks(...)), ...). In one process a fatal error ends
// the process from inside the job and run_ranks never returns; spread over processes it returns
// the status of the process that failed (whose message is on stderr), and this ends the test's
// process with it, as weftrun passes on its failed process's status.
[[noreturn]] inline void exit_with(int job_status) {
  std::fflush(nullptr);
  std::_Exit(job_status);
}

// The rank's MPI_COMM_WORLD errors return their class instead of ending the job.
inline void errors_return() {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

}  // namespace weft::testing
