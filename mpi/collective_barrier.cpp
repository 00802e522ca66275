// MPI_Barrier: one phase of the call's meeting.
#include "collective.h"
#include "error.h"
#include "profiling.h"

using namespace weft::mpi;

extern "C" int PMPI_Barrier(MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Barrier";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  collective::Call call(comm);
  call.phase();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Barrier);
