// The point-to-point exchanges behind the intercommunicator collectives (inter_collective.h): each
// runs the caller's part of one call under the call's tag and returns an MPI error class. Roots
// are as the program passed them (MPI_ROOT, MPI_PROC_NULL or a remote rank); blocks are indexed by
// remote rank.
#pragma once

#include <vector>

#include "coll/collective.h"
#include "mpi.h"

namespace weft::mpi::intercoll::steps {

int barrier(MPI_Comm comm, int tag);
int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, int tag);
int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, int tag);
// Every member gets the reduction of the remote group's inputs.
int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm, int tag);
// The root receives block r from remote rank r; the others send theirs.
int gather(const collective::Block& send, const collective::Blocks& recv, int root, MPI_Comm comm,
           int tag);
int scatter(const collective::Blocks& send, const collective::Block& recv, int root, MPI_Comm comm,
            int tag);
// Block r of `send` goes to remote rank r, block r of `recv` comes from it.
int alltoall(const collective::Blocks& send, const collective::Blocks& recv, MPI_Comm comm,
             int tag);
// The remote group's reduction of sum(counts) elements, member r of the caller's group getting
// counts[r] of them.
int reduce_scatter(const void* sendbuf, void* recvbuf, const std::vector<int>& counts,
                   MPI_Datatype type, MPI_Op op, MPI_Comm comm, int tag);

}  // namespace weft::mpi::intercoll::steps
