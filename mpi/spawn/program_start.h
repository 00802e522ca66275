// How MPI_Comm_spawn turns commands into new ranks of this job: it finds each command's program
// (the info keys `wdir` and `path`, then the search path), has the program loader prepare one copy
// of it per new rank, and starts each copy in an mpi_task thread of this process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mpi.h"
#include "weft/mpi_job.h"

namespace weft::mpi::spawning {

// One command of a spawn, as the root passed it.
struct Command {
  std::string command;
  std::vector<std::string> arguments;  // without argv[0]
  int maxprocs = 0;
  MPI_Info info = MPI_INFO_NULL;
};

// What the root learned about a command: the program to run, or why it cannot.
struct Resolved {
  std::string path;
  std::string problem;  // empty when path is a weft program weft can start here
};

// Finds a command's program and checks the info keys weft honours: `wdir` (where a relative
// command is found), `path` (directories searched for a command without a slash, before wdir,
// the working directory and $PATH), `host` (this host only: the new ranks are threads of the
// root's process) and `soft` (counts up to maxprocs; weft always starts maxprocs).
Resolved resolve(const Command& command);

// The value of `key` in `info`, or nullptr when it is not set.
const std::string* info_value(MPI_Info info, const std::string& key);

// The loader set by set_program_loader, or null when none was.
ProgramLoader program_loader();

// New ranks started together by one spawn: their own MPI_COMM_WORLD and MPI_COMM_SELF, the
// children's side of the intercommunicator to the parents, and a thread per rank.
struct Children {
  std::vector<int> ranks;  // world ranks, in the new world's rank order
  MPI_Comm world = MPI_COMM_NULL;
  MPI_Comm self = MPI_COMM_NULL;
};

// Makes the ranks of the commands (already resolved; paths[i] for commands[i]) and their world,
// loads a copy of its program for each, binds each to the intercommunicator side made from
// `parents` (world ranks) and the contexts given, and starts them. Throws weft::Error when a
// copy cannot be loaded (nothing has started then).
Children start(const std::vector<Command>& commands, const std::vector<std::string>& paths,
               const std::vector<int>& parents, std::uint32_t context, std::uint32_t local_context);

}  // namespace weft::mpi::spawning
