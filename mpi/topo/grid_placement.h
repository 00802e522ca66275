// Where a reordering MPI_Cart_create puts each member in its grid (MPI-4.1 8.5.1, `reorder`).
//
// Messages are cheapest between ranks of one core, then of one NUMA node, then of one process,
// and dearest between processes. Members are sorted by where they run: process, NUMA node, core,
// then old rank. The grid is then cut in two along its longest dimension (the first of the
// longest on a tie), the first part of the sorted members getting the first half, recursively
// down to single cells. So every run of consecutive members in that order, and in particular the
// members of one core, of one NUMA node and of one process, gets a box of the grid as compact as
// the cuts allow, and most grid neighbours end on the same core, node or process. With every
// member on its own core of one node this still packs consecutive cores into compact boxes.
#pragma once

#include <vector>

namespace weft::mpi {

// Where a member runs; members compare by process, then NUMA node, then core.
struct RankLocation {
  int process = 0;
  int numa = 0;
  int core = 0;
};

// The grid rank of each of `locations.size()` members (old rank -> new rank) in a grid of
// extents `dims`, whose cells number exactly the members.
std::vector<int> place_in_grid(const std::vector<int>& dims,
                               const std::vector<RankLocation>& locations);

}  // namespace weft::mpi
