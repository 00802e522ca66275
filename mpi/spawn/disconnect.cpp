// MPI_Comm_disconnect (MPI-4.1 11.10.4): collective over the communicator; it returns once the
// communication of every member on it is done, and frees it.
#include <string>
#include <string_view>

#include "comm/communicator.h"
#include "errhan/error.h"
#include "init/world.h"
#include "util/profiling.h"

extern "C" int PMPI_Comm_disconnect(MPI_Comm* comm) {
  constexpr std::string_view kFunction = "MPI_Comm_disconnect";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (comm == nullptr) {
    return weft::mpi::raise(MPI_COMM_NULL, kFunction, MPI_ERR_ARG,
                            "comm = NULL, expected the address of a communicator handle");
  }
  if (int rc = weft::mpi::check_comm(*comm, kFunction); rc != MPI_SUCCESS) return rc;
  if ((*comm)->world || (*comm)->self) {
    return weft::mpi::raise(*comm, kFunction, MPI_ERR_COMM,
                            std::string("comm = ") +
                                ((*comm)->world ? "MPI_COMM_WORLD" : "MPI_COMM_SELF") +
                                ", expected a communicator the program created or received");
  }
  // A blocking send on comm has returned, an eager one has its copy at the receiver, so after a
  // barrier every member is done with what it sent and received; a member's nonblocking
  // operations are its own to complete (MPI_Wait) before the call, as for MPI_Comm_free.
  if (int rc = PMPI_Barrier(*comm); rc != MPI_SUCCESS) return rc;
  return PMPI_Comm_free(comm);
}
WEFT_MPI_ALIAS(MPI_Comm_disconnect);
