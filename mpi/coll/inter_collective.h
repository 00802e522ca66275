// Collectives on intercommunicators (MPI-4.1 6.2.2): one group's data goes to the other. Built as
// MPICH builds them, from point-to-point messages: across the groups in the intercommunicator's
// collective context, inside a group in the collective context of the side's hidden
// intracommunicator (comm/intercomm.h), all under the intercommunicator's call tag. They therefore
// work inside a process and between processes alike, and their nonblocking and persistent forms
// are the same exchange run by spanning::run.
//
// Each entry point is called by the intracommunicator entry of the same name once it has seen an
// intercommunicator (check_comm done); it checks the rest of the arguments as an intercommunicator
// needs them (roots MPI_ROOT / MPI_PROC_NULL / a remote rank, counts per remote rank, no
// MPI_IN_PLACE) and runs the call.
#pragma once

#include <string_view>

#include "coll/collective.h"
#include "mpi.h"

namespace weft::mpi::intercoll {

using collective::Start;

int barrier(const Start& start, std::string_view function, MPI_Comm comm);
int bcast(const Start& start, std::string_view function, void* buffer, int count, MPI_Datatype type,
          int root, MPI_Comm comm);
int reduce(const Start& start, std::string_view function, const void* sendbuf, void* recvbuf,
           int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
int allreduce(const Start& start, std::string_view function, const void* sendbuf, void* recvbuf,
              int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
// Gather, Gatherv: recvcounts and displs null for Gather (recvcount for every remote rank).
int gather(const Start& start, std::string_view function, const void* sendbuf, int sendcount,
           MPI_Datatype sendtype, void* recvbuf, int recvcount, const int* recvcounts,
           const int* displs, MPI_Datatype recvtype, int root, MPI_Comm comm);
// Scatter, Scatterv: sendcounts and displs null for Scatter.
int scatter(const Start& start, std::string_view function, const void* sendbuf, int sendcount,
            const int* sendcounts, const int* displs, MPI_Datatype sendtype, void* recvbuf,
            int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
// Allgather, Allgatherv: recvcounts and displs null for Allgather.
int allgather(const Start& start, std::string_view function, const void* sendbuf, int sendcount,
              MPI_Datatype sendtype, void* recvbuf, int recvcount, const int* recvcounts,
              const int* displs, MPI_Datatype recvtype, MPI_Comm comm);
// Alltoall, Alltoallv, Alltoallw: one block per remote rank on each side.
int alltoall(const Start& start, std::string_view function, const collective::Blocks& send,
             const collective::Blocks& recv, MPI_Comm comm);
// Reduce_scatter_block (recvcounts null) and Reduce_scatter.
int reduce_scatter(const Start& start, std::string_view function, const void* sendbuf,
                   void* recvbuf, int recvcount, const int* recvcounts, MPI_Datatype type,
                   MPI_Op op, MPI_Comm comm);
// Scan, Exscan and the like: not defined on intercommunicators (MPI_ERR_COMM).
int refuse(std::string_view function, MPI_Comm comm);

}  // namespace weft::mpi::intercoll
