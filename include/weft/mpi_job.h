// Runs an MPI job inside this process: the ranks are mpi_task threads of a weft scheduler, pinned
// to the cores chosen by placement.tasks / placement.cores_per_task. This is what a program built
// with weftcc runs in place of main, and what tests use to run ranks without a launcher.
#pragma once

#include <functional>

#include "weft/bootstrap.h"
#include "weft/config.h"

namespace weft::mpi {

// Starts a Scheduler for `config`, runs mpi.ranks ranks each calling rank_main(world rank), waits
// for all of them and shuts the scheduler down. Returns 0 when every rank returned 0, else the
// first non-zero status (in rank order). MPI_Abort ends the process with its code, after a
// message naming the rank. Throws weft::Error for a configuration that cannot run.
// In a job of several processes (weft/bootstrap.h) this process runs its own block of ranks.
int run_job(const Config& config, const std::function<int(int rank)>& rank_main);
// The same with the bootstrap given (nullptr: a single process of mpi.ranks ranks).
int run_job(const Config& config, const std::function<int(int rank)>& rank_main,
            Bootstrap* bootstrap);

}  // namespace weft::mpi
