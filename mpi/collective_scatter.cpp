// MPI_Scatter and MPI_Scatterv. The root publishes where each member's block lies in its send
// buffer; every member copies its own block straight into its receive buffer (checking that it
// fits, as a receive does), and the final phase keeps the root's buffer valid until the last
// reader is done.
#include "collective.h"
#include "error.h"
#include "profiling.h"

using namespace weft::mpi;
using collective::Block;
using collective::Blocks;
using collective::Call;

namespace {

int scatter(MPI_Comm comm, std::string_view function, const Blocks& send, void* recvbuf,
            int recvcount, MPI_Datatype recvtype, int root) {
  Call call(comm);
  const int me = call.rank();
  const Block recv{recvbuf, static_cast<std::size_t>(recvcount), recvtype};
  collective::Truncation truncation;
  if (me == root) {
    call.publish(&send);
    if (recvbuf != MPI_IN_PLACE) {
      truncation.check(me, send.at(me), recv);
      collective::transfer(send.at(me), recv);
    }
  } else {
    const Block from = call.of<Blocks>(root).at(me);
    truncation.check(root, from, recv);
    collective::transfer(from, recv);
  }
  call.phase();
  return truncation.raise(comm, function);
}

// The receive side's checks (every member's, unless MPI_IN_PLACE at the root).
int check_recv(MPI_Comm comm, std::string_view function, const void* sendbuf, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root) {
  const bool is_root = comm->my_rank() == root;
  if (!is_root) {
    if (int rc = collective::check_not_in_place(comm, function, "recvbuf", recvbuf,
                                                "only as recvbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (recvbuf == MPI_IN_PLACE) return MPI_SUCCESS;
  if (int rc = check_count(comm, function, "recvcount", recvcount); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "recvtype", recvtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_buffer(comm, function, "recvbuf", recvbuf, recvcount, recvtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (!is_root) return MPI_SUCCESS;
  return collective::check_not_aliased(comm, function, sendbuf, recvbuf, recvcount > 0);
}

}  // namespace

extern "C" int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Scatter";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_rank(comm, kFunction, "root", root, false); rc != MPI_SUCCESS) return rc;
  Blocks send;
  if (comm->my_rank() == root) {
    if (int rc = collective::check_not_in_place(comm, kFunction, "sendbuf", sendbuf,
                                                "only as recvbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_count(comm, kFunction, "sendcount", sendcount); rc != MPI_SUCCESS) return rc;
    if (int rc = check_datatype(comm, kFunction, "sendtype", sendtype); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_buffer(comm, kFunction, "sendbuf", sendbuf, sendcount, sendtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
    send = Blocks::regular(sendbuf, sendcount, sendtype);
  }
  if (int rc = check_recv(comm, kFunction, sendbuf, recvbuf, recvcount, recvtype, root);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return scatter(comm, kFunction, send, recvbuf, recvcount, recvtype, root);
}
WEFT_MPI_ALIAS(MPI_Scatter);

extern "C" int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Scatterv";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_rank(comm, kFunction, "root", root, false); rc != MPI_SUCCESS) return rc;
  Blocks send;
  if (comm->my_rank() == root) {
    const int size = comm->size();
    if (int rc = collective::check_not_in_place(comm, kFunction, "sendbuf", sendbuf,
                                                "only as recvbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_counts(comm, kFunction, "sendcounts", sendcounts, size);
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_displs(comm, kFunction, "displs", displs); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_datatype(comm, kFunction, "sendtype", sendtype); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_buffer_of(comm, kFunction, "sendbuf", sendbuf, sendcounts, size,
                                             sendtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
    send = Blocks::varying(sendbuf, sendcounts, displs, sendtype);
  }
  if (int rc = check_recv(comm, kFunction, sendbuf, recvbuf, recvcount, recvtype, root);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return scatter(comm, kFunction, send, recvbuf, recvcount, recvtype, root);
}
WEFT_MPI_ALIAS(MPI_Scatterv);
