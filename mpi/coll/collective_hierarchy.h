// The reductions of collective_spanning.h in two levels (collective_hierarchy.cpp), for the
// entry points there that also keep the linear algorithm for the one case the two levels cannot
// serve.
#pragma once

#include <cstddef>

#include "mpi.h"

namespace weft::mpi::spanning {

// Whether folding each group first, then the groups in order, gives the rank order a
// non-commutative operation requires: groups of consecutive ranks, or a commutative `op`.
bool reducible_in_groups(MPI_Comm comm, MPI_Op op);

// Reduces every member's `input` into `output` at `root`; requires reducible_in_groups.
int reduce_in_groups(const void* input, void* output, std::size_t count, MPI_Datatype type,
                     MPI_Op op, int root, MPI_Comm comm, int tag);
// Every member gets the reduction in `output`; requires reducible_in_groups.
int allreduce_in_groups(const void* input, void* output, std::size_t count, MPI_Datatype type,
                        MPI_Op op, MPI_Comm comm, int tag);

}  // namespace weft::mpi::spanning
