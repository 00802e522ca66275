// Running a test body in every rank of a job: each rank initialises MPI, runs the body and
// finalises; the job's status is what the test checks last.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "job_config.h"
#include "mpi.h"
#include "weft/mpi_job.h"

namespace weft::testing {

inline int run_ranks(int ranks, int vps, const std::function<void(int rank)>& body,
                     std::vector<std::pair<std::string, std::string>> extra = {}) {
  return weft::mpi::run_job(job_config(ranks, vps, std::move(extra)), [&](int rank) {
    MPI_Init(nullptr, nullptr);
    body(rank);
    MPI_Finalize();
    return 0;
  });
}

// The rank's MPI_COMM_WORLD errors return their class instead of ending the job.
inline void errors_return() {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

}  // namespace weft::testing
