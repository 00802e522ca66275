// MPI_Dims_create's choice of a balanced grid (MPI-4.1 8.5.2).
#pragma once

#include <vector>

namespace weft::mpi {

// The `free_dims` extents whose product is `nodes`, in non-increasing order, as close to each
// other as possible: the largest minus the smallest is the least of all such factorizations,
// and ties are broken as MPICH breaks them: the largest smallest extent, then the least spread
// of the extents before it, then the largest of their smallest, and so on. The least spread is
// found by a depth-first search over non-increasing factorizations, cut where even the most
// balanced rest cannot beat the best found. Requires nodes >= 1 and free_dims >= 1.
std::vector<int> balanced_dims(int nodes, int free_dims);

}  // namespace weft::mpi
