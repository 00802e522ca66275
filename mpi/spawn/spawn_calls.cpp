// MPI_Comm_spawn, MPI_Comm_spawn_multiple and MPI_Comm_get_parent (MPI-4.1 11.8): the root
// starts the children as new ranks of its own process (spawn/program_start.h) and broadcasts what
// the parents need to make their side of the intercommunicator: its contexts and the children's
// world ranks. Nothing else crosses between processes, so a spawn from a communicator spanning
// several processes works as one inside a single process.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "comm/intercomm.h"
#include "errhan/error.h"
#include "group/group.h"
#include "init/world.h"
#include "spawn/program_start.h"
#include "util/profiling.h"
#include "weft/error.h"

namespace weft::mpi::spawning {

namespace {

std::vector<std::string> arguments_of(char** argv) {
  std::vector<std::string> out;
  if (argv == MPI_ARGV_NULL) return out;
  for (char** a = argv; *a != nullptr; ++a) out.emplace_back(*a);
  return out;
}

// Checks what only the root passes; empty when it is fine.
std::string check_commands(const std::vector<Command>& commands) {
  for (std::size_t c = 0; c < commands.size(); ++c) {
    const std::string which = commands.size() > 1 ? " of command " + std::to_string(c) : "";
    if (commands[c].maxprocs < 0) {
      return "maxprocs" + which + " = " + std::to_string(commands[c].maxprocs) +
             ", expected a count >= 0";
    }
  }
  return {};
}

// The spawn itself, at every member of `comm`; `commands` matter at the root only.
int spawn(std::string_view function, const std::vector<Command>& commands, int root, MPI_Comm comm,
          MPI_Comm* intercomm, int* errcodes) {
  if (int rc = inter::check_rooted_creation(function, comm, root, intercomm, "intercomm");
      rc != MPI_SUCCESS) {
    return rc;
  }
  const int tag = inter::next_call_tag(comm);
  // {class, context, parents' local context, children asked for, their world ranks...}
  std::vector<int> info;
  std::string problem;
  int error_class = MPI_SUCCESS;
  if (comm->my_rank() == root) {
    problem = check_commands(commands);
    error_class = problem.empty() ? MPI_SUCCESS : MPI_ERR_ARG;
    std::vector<std::string> paths;
    for (const Command& c : commands) {
      if (!problem.empty()) break;
      const Resolved resolved = resolve(c);
      if (!resolved.problem.empty()) {
        problem = resolved.problem;
        error_class = MPI_ERR_SPAWN;
      }
      paths.push_back(resolved.path);
    }
    Children children;
    const std::uint32_t context = allocate_context();
    const std::uint32_t local_context = allocate_context();
    if (problem.empty()) {
      try {
        children = start(commands, paths, members_of(comm), context, allocate_context());
      } catch (const Error& e) {
        problem = e.what();
        error_class = MPI_ERR_SPAWN;
      }
    }
    int asked = 0;
    for (const Command& c : commands) asked += std::max(c.maxprocs, 0);
    info = {error_class, static_cast<int>(context), static_cast<int>(local_context), asked};
    info.insert(info.end(), children.ranks.begin(), children.ranks.end());
  }
  int rc = inter::bcast_ints(comm, root, tag, info);
  if (rc == MPI_SUCCESS && info.size() < 4) rc = MPI_ERR_INTERN;
  if (rc == MPI_SUCCESS) rc = info[0];
  *intercomm = MPI_COMM_NULL;
  // One code per child asked for: a spawn starts all of them or none.
  if (errcodes != MPI_ERRCODES_IGNORE && info.size() >= 4) {
    for (int i = 0; i < info[3]; ++i) errcodes[i] = rc;
  }
  if (rc != MPI_SUCCESS) {
    if (problem.empty())
      problem = "the spawn failed at the root (rank " + std::to_string(root) + ")";
    return raise(comm, function, rc, problem);
  }
  const std::vector<int> children(info.begin() + 4, info.end());
  *intercomm = inter::adopt_side(members_of(comm), children, static_cast<std::uint32_t>(info[1]),
                                 static_cast<std::uint32_t>(info[2]), true);
  return MPI_SUCCESS;
}

}  // namespace

}  // namespace weft::mpi::spawning

using weft::mpi::spawning::Command;

extern "C" int PMPI_Comm_spawn(const char* command, char* argv[], int maxprocs, MPI_Info info,
                               int root, MPI_Comm comm, MPI_Comm* intercomm,
                               int array_of_errcodes[]) {
  constexpr std::string_view kFunction = "MPI_Comm_spawn";
  std::vector<Command> commands;
  if (comm != MPI_COMM_NULL && weft::mpi::world() != nullptr && comm->my_rank() == root) {
    if (command == nullptr) {
      return weft::mpi::raise(comm, kFunction, MPI_ERR_ARG,
                              "command = NULL, expected the program to start");
    }
    commands.push_back(Command{command, weft::mpi::spawning::arguments_of(argv), maxprocs, info});
  }
  return weft::mpi::spawning::spawn(kFunction, commands, root, comm, intercomm, array_of_errcodes);
}
WEFT_MPI_ALIAS(MPI_Comm_spawn);

extern "C" int PMPI_Comm_spawn_multiple(int count, char* array_of_commands[],
                                        char** array_of_argv[], const int array_of_maxprocs[],
                                        const MPI_Info array_of_info[], int root, MPI_Comm comm,
                                        MPI_Comm* intercomm, int array_of_errcodes[]) {
  constexpr std::string_view kFunction = "MPI_Comm_spawn_multiple";
  std::vector<Command> commands;
  if (comm != MPI_COMM_NULL && weft::mpi::world() != nullptr && comm->my_rank() == root) {
    if (count <= 0 || array_of_commands == nullptr || array_of_maxprocs == nullptr) {
      return weft::mpi::raise(
          comm, kFunction, MPI_ERR_ARG,
          "count = " + std::to_string(count) +
              ", expected at least one command, with array_of_commands and array_of_maxprocs");
    }
    for (int c = 0; c < count; ++c) {
      if (array_of_commands[c] == nullptr) {
        return weft::mpi::raise(
            comm, kFunction, MPI_ERR_ARG,
            "array_of_commands[" + std::to_string(c) + "] = NULL, expected the program to start");
      }
      commands.push_back(Command{
          array_of_commands[c],
          weft::mpi::spawning::arguments_of(array_of_argv != MPI_ARGVS_NULL ? array_of_argv[c]
                                                                            : MPI_ARGV_NULL),
          array_of_maxprocs[c], array_of_info != nullptr ? array_of_info[c] : MPI_INFO_NULL});
    }
  }
  return weft::mpi::spawning::spawn(kFunction, commands, root, comm, intercomm, array_of_errcodes);
}
WEFT_MPI_ALIAS(MPI_Comm_spawn_multiple);

extern "C" int PMPI_Comm_get_parent(MPI_Comm* parent) {
  constexpr std::string_view kFunction = "MPI_Comm_get_parent";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (parent == nullptr) {
    return weft::mpi::raise(MPI_COMM_NULL, kFunction, MPI_ERR_ARG,
                            "parent = NULL, expected where to store the communicator");
  }
  const MPI_Comm comm = weft::mpi::caller_state().parent;
  // Freed or disconnected by this rank: MPI_COMM_NULL from then on (MPI-4.1 11.8.2).
  *parent = comm != nullptr && !comm->local_of_caller().freed ? comm : MPI_COMM_NULL;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_get_parent);
