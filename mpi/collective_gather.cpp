// MPI_Gather and MPI_Gatherv. The root publishes where each member's block goes. For large
// blocks every other member copies its send buffer straight into its block of the root's receive
// buffer, on all cores at once; for small ones the last member to arrive copies them all inside
// the final phase, so that nobody waits for the root's publication. Every sender's size is
// checked against its block there (the root reports truncation, as a receive would).
#include "collective.h"
#include "error.h"
#include "profiling.h"

using namespace weft::mpi;
using collective::Block;
using collective::Blocks;
using collective::Call;

namespace {

struct GatherSide {
  Block send;
  Blocks recv;          // significant at the root
  bool copied = false;  // the member wrote its block into the root's buffer itself
  // The root's, written in the final phase by the member checking every sender's size.
  mutable collective::Truncation truncation;
};

int gather(MPI_Comm comm, std::string_view function, const void* sendbuf, int sendcount,
           MPI_Datatype sendtype, const Blocks& recv, int root) {
  Call call(comm);
  const int me = call.rank();
  const int size = call.size();
  GatherSide mine;
  mine.send = {const_cast<void*>(sendbuf), static_cast<std::size_t>(sendcount), sendtype};
  mine.recv = recv;
  if (me == root) {
    if (sendbuf != MPI_IN_PLACE) {
      mine.truncation.check(me, mine.send, recv.at(me));
      collective::transfer(mine.send, recv.at(me));
    }
  } else if (mine.send.bytes() * static_cast<std::size_t>(size) > collective::kSerialCopyBytes) {
    collective::transfer(mine.send, call.of<GatherSide>(root).recv.at(me));
    mine.copied = true;
  }
  call.publish(&mine);
  call.phase([&] {
    const GatherSide& target = call.of<GatherSide>(root);
    for (int r = 0; r < size; ++r) {
      if (r == root) continue;
      const GatherSide& side = call.of<GatherSide>(r);
      target.truncation.check(r, side.send, target.recv.at(r));
      if (!side.copied) collective::transfer(side.send, target.recv.at(r));
    }
  });
  return mine.truncation.raise(comm, function);
}

// The checks of the send side (every member's, unless MPI_IN_PLACE at the root), and the root's
// send buffer against its receive buffer.
int check_send(MPI_Comm comm, std::string_view function, const void* sendbuf, int sendcount,
               MPI_Datatype sendtype, const void* recvbuf, int root) {
  const bool is_root = comm->my_rank() == root;
  if (!is_root) {
    if (int rc = collective::check_not_in_place(comm, function, "sendbuf", sendbuf,
                                                "only as sendbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (sendbuf == MPI_IN_PLACE) return MPI_SUCCESS;
  if (int rc = check_count(comm, function, "sendcount", sendcount); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, "sendtype", sendtype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_buffer(comm, function, "sendbuf", sendbuf, sendcount, sendtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (!is_root) return MPI_SUCCESS;
  return collective::check_not_aliased(comm, function, sendbuf, recvbuf, sendcount > 0);
}

}  // namespace

extern "C" int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Gather";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_rank(comm, kFunction, "root", root, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_send(comm, kFunction, sendbuf, sendcount, sendtype, recvbuf, root);
      rc != MPI_SUCCESS) {
    return rc;
  }
  Blocks recv;
  if (comm->my_rank() == root) {
    if (int rc = check_count(comm, kFunction, "recvcount", recvcount); rc != MPI_SUCCESS) return rc;
    if (int rc = check_datatype(comm, kFunction, "recvtype", recvtype); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_not_in_place(comm, kFunction, "recvbuf", recvbuf,
                                                "only as sendbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_buffer(comm, kFunction, "recvbuf", recvbuf, recvcount, recvtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
    recv = Blocks::regular(recvbuf, recvcount, recvtype);
  }
  return gather(comm, kFunction, sendbuf, sendcount, sendtype, recv, root);
}
WEFT_MPI_ALIAS(MPI_Gather);

extern "C" int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  constexpr std::string_view kFunction = "MPI_Gatherv";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_rank(comm, kFunction, "root", root, false); rc != MPI_SUCCESS) return rc;
  if (int rc = check_send(comm, kFunction, sendbuf, sendcount, sendtype, recvbuf, root);
      rc != MPI_SUCCESS) {
    return rc;
  }
  Blocks recv;
  if (comm->my_rank() == root) {
    const int size = comm->size();
    if (int rc = collective::check_counts(comm, kFunction, "recvcounts", recvcounts, size);
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_displs(comm, kFunction, "displs", displs); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = check_datatype(comm, kFunction, "recvtype", recvtype); rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_not_in_place(comm, kFunction, "recvbuf", recvbuf,
                                                "only as sendbuf at the root");
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (int rc = collective::check_buffer_of(comm, kFunction, "recvbuf", recvbuf, recvcounts, size,
                                             recvtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
    recv = Blocks::varying(recvbuf, recvcounts, displs, recvtype);
  }
  return gather(comm, kFunction, sendbuf, sendcount, sendtype, recv, root);
}
WEFT_MPI_ALIAS(MPI_Gatherv);
