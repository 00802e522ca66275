// MPI_Bcast: the root publishes its buffer, every other member copies straight from it into its
// own, and a phase keeps the root's buffer valid until the last reader is done.
#include "collective.h"
#include "error.h"
#include "profiling.h"

using namespace weft::mpi;

extern "C" int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Bcast";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_rank(comm, kFunction, "root", root, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_count(comm, kFunction, "count", count); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, kFunction, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = collective::check_not_in_place(comm, kFunction, "buffer", buffer, "nowhere");
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_buffer(comm, kFunction, "buffer", buffer, count, datatype);
      rc != MPI_SUCCESS) {
    return rc;
  }

  collective::Call call(comm);
  const collective::Block mine{buffer, static_cast<std::size_t>(count), datatype};
  collective::Truncation truncation;
  if (call.rank() == root) {
    call.publish(&mine);
  } else {
    const collective::Block& from = call.of<collective::Block>(root);
    truncation.check(root, from, mine);
    collective::transfer(from, mine);
  }
  call.phase();
  return truncation.raise(comm, kFunction);
}
WEFT_MPI_ALIAS(MPI_Bcast);
