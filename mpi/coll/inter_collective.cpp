#include "coll/inter_collective.h"

#include <memory>
#include <string>
#include <vector>

#include "coll/collective_spanning.h"
#include "coll/inter_exchange.h"
#include "errhan/error.h"

namespace weft::mpi::intercoll {

namespace {

using collective::Block;
using collective::Blocks;

// MPI_IN_PLACE has no meaning on an intercommunicator (MPI-4.1 6.2.2).
int check_no_in_place(MPI_Comm comm, std::string_view function, std::string_view argument,
                      const void* buffer) {
  if (buffer != MPI_IN_PLACE) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_BUFFER,
               std::string(argument) +
                   " = MPI_IN_PLACE, expected a buffer (an intercommunicator's collectives have "
                   "no in-place form)");
}

// count >= 0, a valid datatype, and a buffer that may hold the data.
int check_data(MPI_Comm comm, std::string_view function, std::string_view buffer_name,
               const void* buffer, std::string_view count_name, int count,
               std::string_view type_name, MPI_Datatype type) {
  if (int rc = check_no_in_place(comm, function, buffer_name, buffer); rc != MPI_SUCCESS) return rc;
  if (int rc = check_count(comm, function, count_name, count); rc != MPI_SUCCESS) return rc;
  if (int rc = check_datatype(comm, function, type_name, type); rc != MPI_SUCCESS) return rc;
  return check_buffer(comm, function, buffer_name, buffer, count, type);
}

// An array of one count per remote rank, its displacements and the buffer they index.
int check_varying(MPI_Comm comm, std::string_view function, std::string_view buffer_name,
                  const void* buffer, std::string_view counts_name, const int* counts,
                  const int* displs, std::string_view type_name, MPI_Datatype type, int size) {
  if (int rc = check_no_in_place(comm, function, buffer_name, buffer); rc != MPI_SUCCESS) return rc;
  if (int rc = collective::check_counts(comm, function, counts_name, counts, size);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = collective::check_displs(comm, function, "displs", displs); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_datatype(comm, function, type_name, type); rc != MPI_SUCCESS) return rc;
  return collective::check_buffer_of(comm, function, buffer_name, buffer, counts, size, type);
}

int check_reduction(MPI_Comm comm, std::string_view function, const void* buffer,
                    std::string_view buffer_name, int count, MPI_Datatype type, MPI_Op op) {
  if (int rc = check_data(comm, function, buffer_name, buffer, "count", count, "datatype", type);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return collective::check_op_on(comm, function, op, type);
}

// `count` copies of the same values, kept alive by the body that uses them.
std::shared_ptr<std::vector<int>> repeated(int size, int value) {
  return std::make_shared<std::vector<int>>(static_cast<std::size_t>(size), value);
}

}  // namespace

int barrier(const Start& start, std::string_view function, MPI_Comm comm) {
  return spanning::run(comm, function, start, [=](int tag) { return steps::barrier(comm, tag); });
}

int bcast(const Start& start, std::string_view function, void* buffer, int count, MPI_Datatype type,
          int root, MPI_Comm comm) {
  if (int rc = check_rank(comm, function, "root", root, false); rc != MPI_SUCCESS) return rc;
  if (root != MPI_PROC_NULL) {
    if (int rc = check_data(comm, function, "buffer", buffer, "count", count, "datatype", type);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  return spanning::run(comm, function, start,
                       [=](int tag) { return steps::bcast(buffer, count, type, root, comm, tag); });
}

int reduce(const Start& start, std::string_view function, const void* sendbuf, void* recvbuf,
           int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  if (int rc = check_rank(comm, function, "root", root, false); rc != MPI_SUCCESS) return rc;
  if (root == MPI_ROOT) {
    if (int rc = check_reduction(comm, function, recvbuf, "recvbuf", count, type, op);
        rc != MPI_SUCCESS) {
      return rc;
    }
  } else if (root != MPI_PROC_NULL) {
    if (int rc = check_reduction(comm, function, sendbuf, "sendbuf", count, type, op);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  return spanning::run(comm, function, start, [=](int tag) {
    return steps::reduce(sendbuf, recvbuf, count, type, op, root, comm, tag);
  });
}

int allreduce(const Start& start, std::string_view function, const void* sendbuf, void* recvbuf,
              int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (int rc = check_no_in_place(comm, function, "sendbuf", sendbuf); rc != MPI_SUCCESS) return rc;
  if (int rc = check_reduction(comm, function, recvbuf, "recvbuf", count, type, op);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_buffer(comm, function, "sendbuf", sendbuf, count, type); rc != MPI_SUCCESS) {
    return rc;
  }
  return spanning::run(comm, function, start, [=](int tag) {
    return steps::allreduce(sendbuf, recvbuf, count, type, op, comm, tag);
  });
}

int gather(const Start& start, std::string_view function, const void* sendbuf, int sendcount,
           MPI_Datatype sendtype, void* recvbuf, int recvcount, const int* recvcounts,
           const int* displs, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (int rc = check_rank(comm, function, "root", root, false); rc != MPI_SUCCESS) return rc;
  const int remote = comm->peer_count();
  if (root == MPI_ROOT) {
    const int rc = recvcounts == nullptr && displs == nullptr
                       ? check_data(comm, function, "recvbuf", recvbuf, "recvcount", recvcount,
                                    "recvtype", recvtype)
                       : check_varying(comm, function, "recvbuf", recvbuf, "recvcounts", recvcounts,
                                       displs, "recvtype", recvtype, remote);
    if (rc != MPI_SUCCESS) return rc;
  } else if (root != MPI_PROC_NULL) {
    if (int rc = check_data(comm, function, "sendbuf", sendbuf, "sendcount", sendcount, "sendtype",
                            sendtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  const bool varying = recvcounts != nullptr;
  return spanning::run(comm, function, start, [=](int tag) {
    const Block send{const_cast<void*>(sendbuf), static_cast<std::size_t>(sendcount), sendtype};
    const Blocks recv = varying ? Blocks::varying(recvbuf, recvcounts, displs, recvtype)
                                : Blocks::regular(recvbuf, recvcount, recvtype);
    return steps::gather(send, recv, root, comm, tag);
  });
}

int scatter(const Start& start, std::string_view function, const void* sendbuf, int sendcount,
            const int* sendcounts, const int* displs, MPI_Datatype sendtype, void* recvbuf,
            int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (int rc = check_rank(comm, function, "root", root, false); rc != MPI_SUCCESS) return rc;
  const int remote = comm->peer_count();
  if (root == MPI_ROOT) {
    const int rc = sendcounts == nullptr && displs == nullptr
                       ? check_data(comm, function, "sendbuf", sendbuf, "sendcount", sendcount,
                                    "sendtype", sendtype)
                       : check_varying(comm, function, "sendbuf", sendbuf, "sendcounts", sendcounts,
                                       displs, "sendtype", sendtype, remote);
    if (rc != MPI_SUCCESS) return rc;
  } else if (root != MPI_PROC_NULL) {
    if (int rc = check_data(comm, function, "recvbuf", recvbuf, "recvcount", recvcount, "recvtype",
                            recvtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  const bool varying = sendcounts != nullptr;
  return spanning::run(comm, function, start, [=](int tag) {
    const Blocks send = varying ? Blocks::varying(sendbuf, sendcounts, displs, sendtype)
                                : Blocks::regular(sendbuf, sendcount, sendtype);
    const Block recv{recvbuf, static_cast<std::size_t>(recvcount), recvtype};
    return steps::scatter(send, recv, root, comm, tag);
  });
}

int allgather(const Start& start, std::string_view function, const void* sendbuf, int sendcount,
              MPI_Datatype sendtype, void* recvbuf, int recvcount, const int* recvcounts,
              const int* displs, MPI_Datatype recvtype, MPI_Comm comm) {
  const int remote = comm->peer_count();
  if (int rc = check_data(comm, function, "sendbuf", sendbuf, "sendcount", sendcount, "sendtype",
                          sendtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const bool varying = recvcounts != nullptr || displs != nullptr;
  const int rc = varying ? check_varying(comm, function, "recvbuf", recvbuf, "recvcounts",
                                         recvcounts, displs, "recvtype", recvtype, remote)
                         : check_data(comm, function, "recvbuf", recvbuf, "recvcount", recvcount,
                                      "recvtype", recvtype);
  if (rc != MPI_SUCCESS) return rc;
  // The caller's one block goes to every remote rank.
  auto counts = repeated(remote, sendcount);
  auto zeros = repeated(remote, 0);
  return spanning::run(comm, function, start, [=](int tag) {
    const Blocks send = Blocks::varying(sendbuf, counts->data(), zeros->data(), sendtype);
    const Blocks recv = varying ? Blocks::varying(recvbuf, recvcounts, displs, recvtype)
                                : Blocks::regular(recvbuf, recvcount, recvtype);
    return steps::alltoall(send, recv, comm, tag);
  });
}

int alltoall(const Start& start, std::string_view function, const Blocks& send, const Blocks& recv,
             MPI_Comm comm) {
  const int remote = comm->peer_count();
  if (int rc = check_no_in_place(comm, function, "sendbuf", send.base); rc != MPI_SUCCESS) {
    return rc;
  }
  // Per-peer arrays: counts >= 0 and a type for every block that moves data.
  for (const auto* blocks : {&send, &recv}) {
    const bool is_send = blocks == &send;
    const std::string prefix = is_send ? "send" : "recv";
    if (blocks->counts != nullptr) {
      if (int rc =
              collective::check_counts(comm, function, prefix + "counts", blocks->counts, remote);
          rc != MPI_SUCCESS) {
        return rc;
      }
      if (int rc = collective::check_displs(comm, function, is_send ? "sdispls" : "rdispls",
                                            blocks->displs);
          rc != MPI_SUCCESS) {
        return rc;
      }
      if (blocks->types != nullptr) {
        if (int rc = collective::check_types(comm, function, prefix + "types", blocks->types,
                                             blocks->counts, remote);
            rc != MPI_SUCCESS) {
          return rc;
        }
      } else if (int rc = check_datatype(comm, function, prefix + "type",
                                         const_cast<MPI_Datatype>(blocks->type));
                 rc != MPI_SUCCESS) {
        return rc;
      }
    } else {
      if (int rc = check_count(comm, function, prefix + "count", blocks->count);
          rc != MPI_SUCCESS) {
        return rc;
      }
      if (int rc = check_datatype(comm, function, prefix + "type",
                                  const_cast<MPI_Datatype>(blocks->type));
          rc != MPI_SUCCESS) {
        return rc;
      }
    }
  }
  return spanning::run(comm, function, start,
                       [=](int tag) { return steps::alltoall(send, recv, comm, tag); });
}

int reduce_scatter(const Start& start, std::string_view function, const void* sendbuf,
                   void* recvbuf, int recvcount, const int* recvcounts, MPI_Datatype type,
                   MPI_Op op, MPI_Comm comm) {
  const int local = comm->size();
  if (int rc = check_no_in_place(comm, function, "sendbuf", sendbuf); rc != MPI_SUCCESS) return rc;
  auto counts = std::make_shared<std::vector<int>>();
  if (recvcounts != nullptr) {
    if (int rc = collective::check_counts(comm, function, "recvcounts", recvcounts, local);
        rc != MPI_SUCCESS) {
      return rc;
    }
    counts->assign(recvcounts, recvcounts + local);
  } else {
    if (int rc = check_count(comm, function, "recvcount", recvcount); rc != MPI_SUCCESS) return rc;
    counts->assign(static_cast<std::size_t>(local), recvcount);
  }
  const int own = (*counts)[static_cast<std::size_t>(comm->my_rank())];
  if (int rc = check_reduction(comm, function, recvbuf, "recvbuf", own, type, op);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return spanning::run(comm, function, start, [=](int tag) {
    return steps::reduce_scatter(sendbuf, recvbuf, *counts, type, op, comm, tag);
  });
}

int refuse(std::string_view function, MPI_Comm comm) {
  return raise(comm, function, MPI_ERR_COMM,
               std::string(function) +
                   " is not defined on an intercommunicator, expected an intracommunicator");
}

}  // namespace weft::mpi::intercoll
