// MPI_Scatter and MPI_Scatterv. The root publishes where each member's block lies in its send
// buffer. For large blocks every member copies its own straight into its receive buffer; for
// small ones the last member to arrive copies them all inside the final phase, so that nobody
// waits for the root's publication. A block that does not fit is truncated and reported by its
// receiver, as a receive would; the final phase keeps the root's buffer valid until then.
#include "collective.h"
#include "error.h"
#include "profiling.h"

using namespace weft::mpi;
using collective::Block;
using collective::Blocks;
using collective::Call;

namespace {

struct ScatterSide {
  Blocks send;  // significant at the root
  Block recv;
  bool copied = false;  // the member copied its block itself (or the root needs none)
  // Written by whoever copies into this member, read by it after the final phase.
  mutable collective::Truncation truncation;
};

int scatter(MPI_Comm comm, std::string_view function, const Blocks& send, void* recvbuf,
            int recvcount, MPI_Datatype recvtype, int root) {
  Call call(comm);
  const int me = call.rank();
  const int size = call.size();
  ScatterSide mine;
  mine.send = send;
  mine.recv = {recvbuf, static_cast<std::size_t>(recvcount), recvtype};
  if (me == root) {
    if (recvbuf != MPI_IN_PLACE) {
      mine.truncation.check(me, send.at(me), mine.recv);
      collective::transfer(send.at(me), mine.recv);
    }
    mine.copied = true;
  } else if (mine.recv.bytes() * static_cast<std::size_t>(size) > collective::kSerialCopyBytes) {
    const Block from = call.of<ScatterSide>(root).send.at(me);
    mine.truncation.check(root, from, mine.recv);
    collective::transfer(from, mine.recv);
    mine.copied = true;
  }
  call.publish(&mine);
  call.phase([&] {
    const Blocks& source = call.of<ScatterSide>(root).send;
    for (int r = 0; r < size; ++r) {
      const ScatterSide& side = call.of<ScatterSide>(r);
      if (side.copied) continue;
      side.truncation.check(root, source.at(r), side.recv);
      collective::transfer(source.at(r), side.recv);
    }
  });
  return mine.truncation.raise(comm, function);
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
