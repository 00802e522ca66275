// MPI_Allgather and MPI_Allgatherv. Every member publishes its send block (with MPI_IN_PLACE, its
// own block of its receive buffer) and copies every other member's straight into its receive
// buffer; it writes only its own buffer, and only blocks that no other member reads. The final
// phase keeps every send block valid until the last reader is done.
#include "collective.h"
#include "error.h"
#include "profiling.h"

using namespace weft::mpi;
using collective::Block;
using collective::Blocks;
using collective::Call;

namespace {

int allgather(MPI_Comm comm, std::string_view function, const void* sendbuf, int sendcount,
              MPI_Datatype sendtype, const Blocks& recv) {
  Call call(comm);
  const int me = call.rank();
  const int size = call.size();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const Block mine =
      in_place ? recv.at(me)
               : Block{const_cast<void*>(sendbuf), static_cast<std::size_t>(sendcount), sendtype};
  call.publish(&mine);
  collective::Truncation truncation;
  // Starting after the caller spreads the readers over the members' buffers.
  for (int k = in_place ? 1 : 0; k < size; ++k) {
    const int r = (me + k) % size;
    const Block& from = r == me ? mine : call.of<Block>(r);
    truncation.check(r, from, recv.at(r));
    collective::transfer(from, recv.at(r));
  }
  call.phase();
  return truncation.raise(comm, function);
}

int check_send(MPI_Comm comm, std::string_view function, const void* sendbuf, int sendcount,
               MPI_Datatype sendtype, const void* recvbuf) {
  if (int rc =
          collective::check_not_in_place(comm, function, "recvbuf", recvbuf, "only as sendbuf");
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (sendbuf == MPI_IN_PLACE) return MPI_SUCCESS;
  if (int rc = check_count(comm, function, "sendcount", sendcount); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "sendtype", sendtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_buffer(comm, function, "sendbuf", sendbuf, sendcount, sendtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return collective::check_not_aliased(comm, function, sendbuf, recvbuf, sendcount > 0);
}

}  // namespace

extern "C" int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Allgather";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_send(comm, kFunction, sendbuf, sendcount, sendtype, recvbuf);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_count(comm, kFunction, "recvcount", recvcount); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, kFunction, "recvtype", recvtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_buffer(comm, kFunction, "recvbuf", recvbuf, recvcount, recvtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return allgather(comm, kFunction, sendbuf, sendcount, sendtype,
                   Blocks::regular(recvbuf, recvcount, recvtype));
}
WEFT_MPI_ALIAS(MPI_Allgather);

extern "C" int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Allgatherv";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_send(comm, kFunction, sendbuf, sendcount, sendtype, recvbuf);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const int size = comm->size();
  if (int rc = collective::check_counts(comm, kFunction, "recvcounts", recvcounts, size);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = collective::check_displs(comm, kFunction, "displs", displs); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_datatype(comm, kFunction, "recvtype", recvtype); rc != MPI_SUCCESS) return rc;
  if (int rc = collective::check_buffer_of(comm, kFunction, "recvbuf", recvbuf, recvcounts, size,
                                           recvtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return allgather(comm, kFunction, sendbuf, sendcount, sendtype,
                   Blocks::varying(recvbuf, recvcounts, displs, recvtype));
}
WEFT_MPI_ALIAS(MPI_Allgatherv);
