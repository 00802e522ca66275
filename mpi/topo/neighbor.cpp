// Neighbourhood collectives (MPI-4.1 8.6-8.8): blocking, nonblocking and persistent.
//
// Each is the caller's sends to its out-neighbours and receives from its in-neighbours,
// point-to-point messages in the communicator's collective context under the call's tag
// (coll/spanning_exchange.h), so they never match the program's messages and take the same
// path inside a process (the matching engine's single copy) as between processes (the
// transport). A member only knows its own neighbours, so there is nothing for the members to
// meet over: each posts its part and waits for it. A nonblocking or persistent call runs the
// same exchange in a thread of the rank that completes the request (coll/collective_spanning.h),
// so its messages leave during the call and it progresses while the caller computes.
// The order the messages are posted in decides how repeated neighbours match (topology.h).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "coll/collective.h"
#include "coll/collective_spanning.h"
#include "coll/spanning_exchange.h"
#include "comm/communicator.h"
#include "datatype/datatype.h"
#include "errhan/error.h"
#include "topo/topology.h"
#include "util/profiling.h"
#include "weft/trace.h"

namespace {

using weft::mpi::NeighbourPlan;
using weft::mpi::Topology;
using weft::mpi::collective::Block;
using weft::mpi::collective::Start;

// Where each send block is read and each receive block written.
struct Layout {
  std::vector<Block> sends;
  std::vector<Block> receives;
};

Block block_at(const void* base, MPI_Aint byte_offset, int count, MPI_Datatype type) {
  return {const_cast<char*>(static_cast<const char*>(base)) + byte_offset,
          static_cast<std::size_t>(count), type};
}

int run(MPI_Comm comm, std::string_view function, const Start& start, const NeighbourPlan& plan,
        Layout layout) {
  return weft::mpi::spanning::run(
      comm, function, start, [comm, plan, layout = std::move(layout)](int tag) {
        weft::mpi::spanning::Exchange exchange(comm, tag);
        for (const weft::mpi::NeighbourMessage& m : plan.receives) {
          exchange.receive(m.peer, layout.receives[static_cast<std::size_t>(m.block)]);
        }
        for (const weft::mpi::NeighbourMessage& m : plan.sends) {
          exchange.send(m.peer, layout.sends[static_cast<std::size_t>(m.block)]);
        }
        return exchange.wait();
      });
}

// The checks every neighbourhood collective makes first; on success *plan is the caller's.
int check_call(MPI_Comm comm, std::string_view function, const void* sendbuf, const void* recvbuf,
               NeighbourPlan* plan) {
  const Topology* topology = nullptr;
  if (int rc = weft::mpi::check_topology(comm, function, MPI_UNDEFINED, &topology);
      rc != MPI_SUCCESS) {
    return rc;
  }
  for (auto [argument, buffer] : {std::pair{"sendbuf", sendbuf}, std::pair{"recvbuf", recvbuf}}) {
    if (int rc = weft::mpi::collective::check_not_in_place(
            comm, function, argument, buffer,
            "nowhere: neighbourhood collectives have no in-place form");
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  *plan = weft::mpi::plan_of(*topology, comm->my_rank());
  return MPI_SUCCESS;
}

int check_regular(MPI_Comm comm, std::string_view function, std::string_view count_argument,
                  int count, std::string_view type_argument, MPI_Datatype type) {
  if (int rc = weft::mpi::check_count(comm, function, count_argument, count); rc != MPI_SUCCESS) {
    return rc;
  }
  return weft::mpi::check_datatype(comm, function, type_argument, type);
}

// Counts (and, unless null is passed for the argument's name, displacements) of `blocks` blocks.
int check_varying(MPI_Comm comm, std::string_view function, std::string_view counts_argument,
                  const int* counts, std::string_view displs_argument, const void* displs,
                  int blocks) {
  if (blocks == 0) return MPI_SUCCESS;
  if (int rc = weft::mpi::collective::check_counts(comm, function, counts_argument, counts, blocks);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return weft::mpi::collective::check_displs(comm, function, displs_argument,
                                             static_cast<const int*>(displs));
}

int allgather(const Start& start, std::string_view function, const void* sendbuf, int sendcount,
              MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm) {
  NeighbourPlan plan;
  if (int rc = check_call(comm, function, sendbuf, recvbuf, &plan); rc != MPI_SUCCESS) return rc;
  if (int rc = check_regular(comm, function, "sendcount", sendcount, "sendtype", sendtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_regular(comm, function, "recvcount", recvcount, "recvtype", recvtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  Layout layout;
  layout.sends.assign(static_cast<std::size_t>(plan.send_blocks),
                      block_at(sendbuf, 0, sendcount, sendtype));
  for (int i = 0; i < plan.recv_blocks; ++i) {
    layout.receives.push_back(
        block_at(recvbuf, MPI_Aint{i} * recvcount * recvtype->extent(), recvcount, recvtype));
  }
  return run(comm, function, start, plan, std::move(layout));
}

int allgatherv(const Start& start, std::string_view function, const void* sendbuf, int sendcount,
               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[],
               MPI_Datatype recvtype, MPI_Comm comm) {
  NeighbourPlan plan;
  if (int rc = check_call(comm, function, sendbuf, recvbuf, &plan); rc != MPI_SUCCESS) return rc;
  if (int rc = check_regular(comm, function, "sendcount", sendcount, "sendtype", sendtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_varying(comm, function, "recvcounts", recvcounts, "displs", displs,
                             plan.recv_blocks);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_datatype(comm, function, "recvtype", recvtype); rc != MPI_SUCCESS) {
    return rc;
  }
  Layout layout;
  layout.sends.assign(static_cast<std::size_t>(plan.send_blocks),
                      block_at(sendbuf, 0, sendcount, sendtype));
  for (int i = 0; i < plan.recv_blocks; ++i) {
    layout.receives.push_back(
        block_at(recvbuf, MPI_Aint{displs[i]} * recvtype->extent(), recvcounts[i], recvtype));
  }
  return run(comm, function, start, plan, std::move(layout));
}

int alltoall(const Start& start, std::string_view function, const void* sendbuf, int sendcount,
             MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
             MPI_Comm comm) {
  NeighbourPlan plan;
  if (int rc = check_call(comm, function, sendbuf, recvbuf, &plan); rc != MPI_SUCCESS) return rc;
  if (int rc = check_regular(comm, function, "sendcount", sendcount, "sendtype", sendtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_regular(comm, function, "recvcount", recvcount, "recvtype", recvtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  Layout layout;
  for (int i = 0; i < plan.send_blocks; ++i) {
    layout.sends.push_back(
        block_at(sendbuf, MPI_Aint{i} * sendcount * sendtype->extent(), sendcount, sendtype));
  }
  for (int i = 0; i < plan.recv_blocks; ++i) {
    layout.receives.push_back(
        block_at(recvbuf, MPI_Aint{i} * recvcount * recvtype->extent(), recvcount, recvtype));
  }
  return run(comm, function, start, plan, std::move(layout));
}

int alltoallv(const Start& start, std::string_view function, const void* sendbuf,
              const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
              const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  NeighbourPlan plan;
  if (int rc = check_call(comm, function, sendbuf, recvbuf, &plan); rc != MPI_SUCCESS) return rc;
  if (int rc = check_varying(comm, function, "sendcounts", sendcounts, "sdispls", sdispls,
                             plan.send_blocks);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_varying(comm, function, "recvcounts", recvcounts, "rdispls", rdispls,
                             plan.recv_blocks);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_datatype(comm, function, "sendtype", sendtype); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_datatype(comm, function, "recvtype", recvtype); rc != MPI_SUCCESS) {
    return rc;
  }
  Layout layout;
  for (int i = 0; i < plan.send_blocks; ++i) {
    layout.sends.push_back(
        block_at(sendbuf, MPI_Aint{sdispls[i]} * sendtype->extent(), sendcounts[i], sendtype));
  }
  for (int i = 0; i < plan.recv_blocks; ++i) {
    layout.receives.push_back(
        block_at(recvbuf, MPI_Aint{rdispls[i]} * recvtype->extent(), recvcounts[i], recvtype));
  }
  return run(comm, function, start, plan, std::move(layout));
}

int alltoallw(const Start& start, std::string_view function, const void* sendbuf,
              const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
              void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
              const MPI_Datatype recvtypes[], MPI_Comm comm) {
  NeighbourPlan plan;
  if (int rc = check_call(comm, function, sendbuf, recvbuf, &plan); rc != MPI_SUCCESS) return rc;
  if (int rc = check_varying(comm, function, "sendcounts", sendcounts, "sdispls", sdispls,
                             plan.send_blocks);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_varying(comm, function, "recvcounts", recvcounts, "rdispls", rdispls,
                             plan.recv_blocks);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (plan.send_blocks > 0) {
    if (int rc = weft::mpi::collective::check_types(comm, function, "sendtypes", sendtypes,
                                                    sendcounts, plan.send_blocks);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  if (plan.recv_blocks > 0) {
    if (int rc = weft::mpi::collective::check_types(comm, function, "recvtypes", recvtypes,
                                                    recvcounts, plan.recv_blocks);
        rc != MPI_SUCCESS) {
      return rc;
    }
  }
  Layout layout;
  for (int i = 0; i < plan.send_blocks; ++i) {
    layout.sends.push_back(
        block_at(sendbuf, sdispls[i], sendcounts[i], sendcounts[i] == 0 ? MPI_BYTE : sendtypes[i]));
  }
  for (int i = 0; i < plan.recv_blocks; ++i) {
    layout.receives.push_back(
        block_at(recvbuf, rdispls[i], recvcounts[i], recvcounts[i] == 0 ? MPI_BYTE : recvtypes[i]));
  }
  return run(comm, function, start, plan, std::move(layout));
}

}  // namespace

extern "C" int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                       MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgather(Start{}, "MPI_Neighbor_allgather", sendbuf, sendcount, sendtype, recvbuf,
                   recvcount, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Neighbor_allgather);

extern "C" int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                        MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgather(Start::nonblocking(request), "MPI_Ineighbor_allgather", sendbuf, sendcount,
                   sendtype, recvbuf, recvcount, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Ineighbor_allgather);

extern "C" int PMPI_Neighbor_allgather_init(const void* sendbuf, int sendcount,
                                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                                            MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgather(Start::persistent(request), "MPI_Neighbor_allgather_init", sendbuf, sendcount,
                   sendtype, recvbuf, recvcount, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Neighbor_allgather_init);

extern "C" int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void* recvbuf, const int recvcounts[], const int displs[],
                                        MPI_Datatype recvtype, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgatherv(Start{}, "MPI_Neighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf,
                    recvcounts, displs, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Neighbor_allgatherv);

extern "C" int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                         void* recvbuf, const int recvcounts[], const int displs[],
                                         MPI_Datatype recvtype, MPI_Comm comm,
                                         MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgatherv(Start::nonblocking(request), "MPI_Ineighbor_allgatherv", sendbuf, sendcount,
                    sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Ineighbor_allgatherv);

extern "C" int PMPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount,
                                             MPI_Datatype sendtype, void* recvbuf,
                                             const int recvcounts[], const int displs[],
                                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                                             MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return allgatherv(Start::persistent(request), "MPI_Neighbor_allgatherv_init", sendbuf, sendcount,
                    sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Neighbor_allgatherv_init);

extern "C" int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                      MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoall(Start{}, "MPI_Neighbor_alltoall", sendbuf, sendcount, sendtype, recvbuf,
                  recvcount, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Neighbor_alltoall);

extern "C" int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                       MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoall(Start::nonblocking(request), "MPI_Ineighbor_alltoall", sendbuf, sendcount,
                  sendtype, recvbuf, recvcount, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Ineighbor_alltoall);

extern "C" int PMPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount,
                                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info,
                                           MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoall(Start::persistent(request), "MPI_Neighbor_alltoall_init", sendbuf, sendcount,
                  sendtype, recvbuf, recvcount, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Neighbor_alltoall_init);

extern "C" int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                                       const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                       const int recvcounts[], const int rdispls[],
                                       MPI_Datatype recvtype, MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallv(Start{}, "MPI_Neighbor_alltoallv", sendbuf, sendcounts, sdispls, sendtype,
                   recvbuf, recvcounts, rdispls, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Neighbor_alltoallv);

extern "C" int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                                        const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                        const int recvcounts[], const int rdispls[],
                                        MPI_Datatype recvtype, MPI_Comm comm,
                                        MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallv(Start::nonblocking(request), "MPI_Ineighbor_alltoallv", sendbuf, sendcounts,
                   sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Ineighbor_alltoallv);

extern "C" int PMPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[],
                                            const int sdispls[], MPI_Datatype sendtype,
                                            void* recvbuf, const int recvcounts[],
                                            const int rdispls[], MPI_Datatype recvtype,
                                            MPI_Comm comm, MPI_Info, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallv(Start::persistent(request), "MPI_Neighbor_alltoallv_init", sendbuf, sendcounts,
                   sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}
WEFT_MPI_ALIAS(MPI_Neighbor_alltoallv_init);

extern "C" int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                                       const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                       void* recvbuf, const int recvcounts[],
                                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                       MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallw(Start{}, "MPI_Neighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes,
                   recvbuf, recvcounts, rdispls, recvtypes, comm);
}
WEFT_MPI_ALIAS(MPI_Neighbor_alltoallw);

extern "C" int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                        void* recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                        MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallw(Start::nonblocking(request), "MPI_Ineighbor_alltoallw", sendbuf, sendcounts,
                   sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}
WEFT_MPI_ALIAS(MPI_Ineighbor_alltoallw);

extern "C" int PMPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                            const MPI_Aint sdispls[],
                                            const MPI_Datatype sendtypes[], void* recvbuf,
                                            const int recvcounts[], const MPI_Aint rdispls[],
                                            const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info,
                                            MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return alltoallw(Start::persistent(request), "MPI_Neighbor_alltoallw_init", sendbuf, sendcounts,
                   sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}
WEFT_MPI_ALIAS(MPI_Neighbor_alltoallw_init);
