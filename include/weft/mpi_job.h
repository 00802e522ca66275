// Runs an MPI job inside this process: the ranks are mpi_task threads of a weft scheduler, pinned
// to the cores chosen by placement.tasks / placement.cores_per_task. This is what a program built
// with weftcc runs in place of main, and what tests use to run ranks without a launcher.
#pragma once

#include <functional>
#include <string>
#include <vector>

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

// A rank's main as a process-based MPI runs it, for the program loader (tools/loader). A rank
// image's exit(), _exit() and _Exit() (tools/rank_libc/exit.c), and the loader's exit() that
// external libraries reach (tools/loader/process_exit.c), end the calling rank only: called by
// the thread that runs run_rank_main, they return from it, skipping the frames of main as a
// process's exit does. Called by any other thread (a rank's OpenMP worker or pthread) or in a
// child of fork, they end the process.
struct RankEnd {
  int status = 0;
  bool run_handlers = true;  // false after _exit or _Exit: no atexit handlers, no destructors
};
using RankMain = int (*)(int argc, char** argv, char** envp);
RankEnd run_rank_main(RankMain main, int argc, char** argv, char** envp);
// What the end of the calling rank means for the job, once its atexit handlers have run: as
// mpirun does for a process, a non-zero status ends the job with that status, and a rank that
// leaves MPI initialized (MPI_Init without MPI_Finalize) ends it with status 1, each with a
// message naming the rank. Otherwise it returns, and the job goes on until every rank has ended.
void rank_ended(int status);

// The descriptor on which this process tells its launcher why it ends, before it goes: that it
// ends on purpose (a rank's own non-zero exit or one without MPI_Finalize, MPI_Abort):
// kDeliberateEnd then the status as one byte; or that it lost a peer process (killed, crashed,
// gone before the job's end): kLostProcess then the peer's process number as 4 bytes in this
// machine's order. weftrun passes its acknowledgement pipe (tools/launch_protocol.h) and, among
// processes found ended, names the deliberate end or the lost process as the job's failure rather
// than what it caused in its peers. -1 (the default) tells nobody.
void report_deliberate_end_to(int fd);

// Removes what the deadlock monitor of a job of several processes left in $TMPDIR when the job's
// process 0 was `pid` and its processes ended without cleaning up (killed, or ended by an error
// that skips destructors). weftrun calls it for every process it reaps.
void remove_job_files_of_ended_process(int pid);
inline constexpr char kDeliberateEnd = 'D';
inline constexpr char kLostProcess = 'L';

// What MPI_Comm_spawn needs from the program loader (tools/loader), which alone knows rank
// images: `load` prepares one copy of the weft program at `path` for the new world rank `rank`,
// its MPI_COMM_WORLD and MPI_COMM_SELF bound to the objects `world` and `self` (MPI_Comm values),
// and returns what runs the copy in the calling thread (constructors, main with `argv`,
// finalizers) and gives main's exit status. It throws weft::Error when `path` is no weft program
// or cannot be loaded.
using RankProgram = std::function<int(const std::vector<std::string>& argv)>;
using ProgramLoader =
    std::function<RankProgram(const std::string& path, int rank, void* world, void* self)>;
// Installs the loader MPI_Comm_spawn uses from now on; without one it refuses, saying why.
void set_program_loader(ProgramLoader loader);

}  // namespace weft::mpi
