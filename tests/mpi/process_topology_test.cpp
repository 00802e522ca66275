// Process topologies and neighbourhood collectives (MPI-4.1 8): Cartesian grids (queries,
// shifts, sub-grids, the reordering by where ranks run), graphs and distributed graphs (their
// edges as each member sees them, repeated edges and their neighbourhood collectives, weights),
// a topology's life with its communicator, and the errors of the topology calls. The
// neighbourhood collectives on grids are in neighbor_collective_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

#include "mpi_test_util.h"
#include "topo/dims.h"
#include "topo/grid_placement.h"
#include "topo/topology_comm.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

std::vector<int> dims_of(int nnodes, std::vector<int> dims) {
  EXPECT_EQ(MPI_Dims_create(nnodes, static_cast<int>(dims.size()), dims.data()), MPI_SUCCESS);
  return dims;
}

TEST(Dims, BalancedNonIncreasingAndKeepingGivenExtents) {
  ASSERT_EQ(
      run_ranks(1, 1,
                [](int) {
                  EXPECT_EQ(dims_of(6, {0, 0}), (std::vector<int>{3, 2}));
                  EXPECT_EQ(dims_of(7, {0, 0}), (std::vector<int>{7, 1}));
                  EXPECT_EQ(dims_of(6, {0, 3, 0}), (std::vector<int>{2, 3, 1}));
                  EXPECT_EQ(dims_of(1000000000, {0, 0, 0}), (std::vector<int>{1000, 1000, 1000}));
                  EXPECT_EQ(dims_of(12, {2, 6}), (std::vector<int>{2, 6}));
                  EXPECT_EQ(MPI_Dims_create(1, 0, nullptr), MPI_SUCCESS);
                  errors_return();
                  std::vector<int> dims{0, 5};
                  EXPECT_EQ(MPI_Dims_create(7, 2, dims.data()), MPI_ERR_DIMS);
                  dims = {-1, 0};
                  EXPECT_EQ(MPI_Dims_create(4, 2, dims.data()), MPI_ERR_DIMS);
                  EXPECT_EQ(MPI_Dims_create(4, -1, dims.data()), MPI_ERR_DIMS);
                  dims = {2, 3};
                  EXPECT_EQ(MPI_Dims_create(12, 2, dims.data()), MPI_ERR_DIMS);
                }),
      0);
}

// MPICH's tie rule: the least spread, then the largest smallest extent, and so on inwards.
TEST(Dims, TiesBrokenAsMpichBreaksThem) {
  EXPECT_EQ(weft::mpi::balanced_dims(5040, 3), (std::vector<int>{21, 16, 15}));
  EXPECT_EQ(weft::mpi::balanced_dims(5616, 4), (std::vector<int>{13, 9, 8, 6}));
  EXPECT_EQ(weft::mpi::balanced_dims(1800, 4), (std::vector<int>{9, 8, 5, 5}));
  EXPECT_EQ(weft::mpi::balanced_dims(98784, 5), (std::vector<int>{14, 14, 9, 8, 7}));
}

// Two processes of eight members on a 2x8 grid: each process gets a 2x4 box, not a row, and
// within it each NUMA node a 2x2 box.
TEST(GridPlacement, EachProcessAndNodeGetsACompactBox) {
  std::vector<weft::mpi::RankLocation> where(16);
  for (int r = 0; r < 16; ++r) where[r] = {r / 8, (r / 4) % 2, r % 4};
  const std::vector<int> placed = weft::mpi::place_in_grid({2, 8}, where);
  std::vector<int> sorted = placed;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> all(16);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted, all);
  for (int r = 0; r < 16; ++r) {
    const int column = placed[r] % 8;
    EXPECT_EQ(column / 4, r / 8) << "member " << r;  // its process's half of the columns
    EXPECT_EQ((column / 2) % 2, (r / 4) % 2) << "member " << r;  // its node's quarter
  }
}

// A reordering 4x4 grid of 16 ranks, four to a core, two cores to a NUMA node: the ranks of
// each core, node and process get a compact box of the grid (sides at most twice apart), where
// the row-major identity would give each core a 1x4 row.
TEST(Cart, ReorderGivesEachCoreNodeAndProcessACompactBox) {
  ASSERT_EQ(run_ranks(16, 4,
                      [](int rank) {
                        int dims[2] = {4, 4};
                        int periods[2] = {1, 1};
                        MPI_Comm cart = MPI_COMM_NULL;
                        ASSERT_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart),
                                  MPI_SUCCESS);
                        int coords[2] = {-1, -1};
                        int new_rank = -1;
                        MPI_Comm_rank(cart, &new_rank);
                        MPI_Cart_coords(cart, new_rank, 2, coords);
                        const weft::mpi::RankLocation here = weft::mpi::my_location();
                        int mine[5] = {here.process, here.numa, here.core, coords[0], coords[1]};
                        std::vector<int> all(80);
                        MPI_Allgather(mine, 5, MPI_INT, all.data(), 5, MPI_INT, MPI_COMM_WORLD);
                        // Groups by the first `depth` location fields: process; process and node;
                        // all three.
                        for (int depth = 1; depth <= 3; ++depth) {
                          int lo[2] = {4, 4}, hi[2] = {-1, -1}, members = 0;
                          for (int r = 0; r < 16; ++r) {
                            if (!std::equal(all.begin() + 5 * r, all.begin() + 5 * r + depth, mine))
                              continue;
                            ++members;
                            for (int d = 0; d < 2; ++d) {
                              lo[d] = std::min(lo[d], all[5 * r + 3 + d]);
                              hi[d] = std::max(hi[d], all[5 * r + 3 + d]);
                            }
                          }
                          const int a = hi[0] - lo[0] + 1, b = hi[1] - lo[1] + 1;
                          EXPECT_EQ(a * b, members) << "rank " << rank << " depth " << depth;
                          EXPECT_LE(std::max(a, b), 2 * std::min(a, b))
                              << "rank " << rank << " depth " << depth;
                        }
                        // Without reorder, the identity.
                        MPI_Comm plain = MPI_COMM_NULL;
                        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &plain);
                        int plain_rank = -1;
                        MPI_Comm_rank(plain, &plain_rank);
                        EXPECT_EQ(plain_rank, rank);
                        MPI_Comm_free(&plain);
                        MPI_Comm_free(&cart);
                      },
                      {{"topology", "synthetic:pack:1 numa:2 core:2 pu:1"}}),
            0);
}

TEST(Cart, QueriesShiftsAndRanksOutsideTheGrid) {
  ASSERT_EQ(
      run_ranks(
          7, 2,
          [](int rank) {
            // 3 x 2, periodic in the second dimension only: rank 6 is left out.
            int dims[2] = {3, 2};
            int periods[2] = {0, 1};
            MPI_Comm cart = MPI_COMM_NULL;
            ASSERT_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart), MPI_SUCCESS);
            if (rank == 6) {
              EXPECT_EQ(cart, MPI_COMM_NULL);
              return;
            }
            ASSERT_NE(cart, MPI_COMM_NULL);
            int status = -1;
            MPI_Topo_test(cart, &status);
            EXPECT_EQ(status, MPI_CART);
            int ndims = -1;
            MPI_Cartdim_get(cart, &ndims);
            EXPECT_EQ(ndims, 2);
            int got_dims[2], got_periods[2], coords[2];
            MPI_Cart_get(cart, 2, got_dims, got_periods, coords);
            EXPECT_EQ(got_dims[0], 3);
            EXPECT_EQ(got_dims[1], 2);
            EXPECT_EQ(got_periods[0], 0);
            EXPECT_EQ(got_periods[1], 1);
            EXPECT_EQ(coords[0], rank / 2);
            EXPECT_EQ(coords[1], rank % 2);
            int back = -1;
            MPI_Cart_rank(cart, coords, &back);
            EXPECT_EQ(back, rank);
            int wrapped[2] = {coords[0], coords[1] + 4};
            MPI_Cart_rank(cart, wrapped, &back);
            EXPECT_EQ(back, rank);
            int source = -5, dest = -5;
            MPI_Cart_shift(cart, 0, 1, &source, &dest);
            EXPECT_EQ(source, rank < 2 ? MPI_PROC_NULL : rank - 2);
            EXPECT_EQ(dest, rank >= 4 ? MPI_PROC_NULL : rank + 2);
            MPI_Cart_shift(cart, 1, 3, &source, &dest);
            EXPECT_EQ(source, rank ^ 1);
            EXPECT_EQ(dest, rank ^ 1);
            errors_return();
            MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
            int outside[2] = {3, 0};
            EXPECT_EQ(MPI_Cart_rank(cart, outside, &back), MPI_ERR_ARG);
            EXPECT_EQ(MPI_Cart_coords(cart, 6, 2, coords), MPI_ERR_RANK);
            EXPECT_EQ(MPI_Cart_shift(cart, 2, 1, &source, &dest), MPI_ERR_DIMS);
            int nnodes = 0, nedges = 0;
            EXPECT_EQ(MPI_Graphdims_get(cart, &nnodes, &nedges), MPI_ERR_TOPOLOGY);
            int in = 0, out = 0, weighted = 0;
            EXPECT_EQ(MPI_Dist_graph_neighbors_count(cart, &in, &out, &weighted), MPI_ERR_TOPOLOGY);
            int block[4] = {0, 0, 0, 0};
            EXPECT_EQ(MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, block, 1, MPI_INT, cart),
                      MPI_ERR_BUFFER);
            EXPECT_EQ(MPI_Neighbor_alltoall(block, -1, MPI_INT, block, 1, MPI_INT, cart),
                      MPI_ERR_COUNT);
            MPI_Comm_free(&cart);
          }),
      0);
}

TEST(Cart, SubGridsKeepTheChosenDimensions) {
  ASSERT_EQ(run_ranks(8, 2,
                      [](int rank) {
                        int dims[3] = {2, 2, 2};
                        int periods[3] = {1, 0, 1};
                        MPI_Comm cart = MPI_COMM_NULL;
                        MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
                        int remain[3] = {1, 0, 1};
                        MPI_Comm sub = MPI_COMM_NULL;
                        ASSERT_EQ(MPI_Cart_sub(cart, remain, &sub), MPI_SUCCESS);
                        int size = 0, sub_rank = -1, ndims = 0;
                        MPI_Comm_size(sub, &size);
                        MPI_Comm_rank(sub, &sub_rank);
                        MPI_Cartdim_get(sub, &ndims);
                        EXPECT_EQ(size, 4);
                        EXPECT_EQ(ndims, 2);
                        // Coordinates (x, y, z) -> sub-grid (x, z).
                        const int x = rank / 4, z = rank % 2;
                        EXPECT_EQ(sub_rank, x * 2 + z);
                        int got_dims[2], got_periods[2], coords[2];
                        MPI_Cart_get(sub, 2, got_dims, got_periods, coords);
                        EXPECT_EQ(got_periods[0], 1);
                        EXPECT_EQ(got_periods[1], 1);
                        // Members of one sub-grid share their y.
                        int y = (rank / 2) % 2, other_y = -1;
                        MPI_Allreduce(&y, &other_y, 1, MPI_INT, MPI_MAX, sub);
                        EXPECT_EQ(other_y, y);
                        int none[3] = {0, 0, 0};
                        MPI_Comm point = MPI_COMM_NULL;
                        ASSERT_EQ(MPI_Cart_sub(cart, none, &point), MPI_SUCCESS);
                        MPI_Comm_size(point, &size);
                        MPI_Cartdim_get(point, &ndims);
                        EXPECT_EQ(size, 1);
                        EXPECT_EQ(ndims, 0);
                        MPI_Comm_free(&point);
                        MPI_Comm_free(&sub);
                        MPI_Comm_free(&cart);
                      }),
            0);
}

// A ring with a repeated edge to the next member: its two messages match in edge order.
TEST(Neighbor, GraphWithRepeatedEdgesMatchesInEdgeOrder) {
  ASSERT_EQ(
      run_ranks(
          5, 2,
          [](int) {
            const int n = 5;
            // Node i: edges to i+1, i+1 again, i-1 (symmetric as multisets in each pair).
            std::vector<int> index, edges;
            for (int i = 0; i < n; ++i) {
              edges.insert(edges.end(),
                           {(i + 1) % n, (i + 1) % n, (i + n - 1) % n, (i + n - 1) % n});
              index.push_back(static_cast<int>(edges.size()));
            }
            MPI_Comm graph = MPI_COMM_NULL;
            ASSERT_EQ(MPI_Graph_create(MPI_COMM_WORLD, n, index.data(), edges.data(), 0, &graph),
                      MPI_SUCCESS);
            int rank = -1;
            MPI_Comm_rank(graph, &rank);
            int nnodes = 0, nedges = 0, count = 0;
            MPI_Graphdims_get(graph, &nnodes, &nedges);
            EXPECT_EQ(nnodes, n);
            EXPECT_EQ(nedges, 4 * n);
            MPI_Graph_neighbors_count(graph, rank, &count);
            EXPECT_EQ(count, 4);
            std::vector<int> neighbours(4);
            MPI_Graph_neighbors(graph, rank, 4, neighbours.data());
            EXPECT_EQ(neighbours,
                      std::vector<int>(edges.begin() + 4 * rank, edges.begin() + 4 * rank + 4));
            // Block i goes to neighbour i; the k-th message from a neighbour is the k-th
            // it sent us.
            std::vector<int> sent(4), received(4, -1);
            for (int i = 0; i < 4; ++i) sent[i] = 10 * rank + i;
            ASSERT_EQ(
                MPI_Neighbor_alltoall(sent.data(), 1, MPI_INT, received.data(), 1, MPI_INT, graph),
                MPI_SUCCESS);
            const int next = (rank + 1) % n, previous = (rank + n - 1) % n;
            // From next: its blocks to its previous (us): 2, 3. From previous: 0, 1.
            EXPECT_EQ(received, (std::vector<int>{10 * next + 2, 10 * next + 3, 10 * previous + 0,
                                                  10 * previous + 1}));
            std::vector<int> gathered(4, -1);
            MPI_Neighbor_allgather(&rank, 1, MPI_INT, gathered.data(), 1, MPI_INT, graph);
            EXPECT_EQ(gathered, neighbours);
            MPI_Comm dup = MPI_COMM_NULL;
            MPI_Comm_dup(graph, &dup);
            int status = -1;
            MPI_Topo_test(dup, &status);
            EXPECT_EQ(status, MPI_GRAPH);
            MPI_Comm split = MPI_COMM_NULL;
            MPI_Comm_split(graph, 0, rank, &split);
            MPI_Topo_test(split, &status);
            EXPECT_EQ(status, MPI_UNDEFINED);
            MPI_Comm_free(&split);
            MPI_Comm_free(&dup);
            MPI_Comm_free(&graph);
          }),
      0);
}

// Every member names the edges of another: member r names r+1 -> r+2 (weight r) and r+1 -> r+3
// (weight 2r). Each member then has in-edges from r-1 and r-2 and out-edges to r+1 and r+2.
TEST(DistGraph, EdgesGoToBothEndsWithTheirWeights) {
  ASSERT_EQ(
      run_ranks(
          6, 2,
          [](int rank) {
            const int n = 6;
            const int source = (rank + 1) % n;
            const int degree = 2;
            const int destinations[2] = {(rank + 2) % n, (rank + 3) % n};
            const int weights[2] = {rank, 2 * rank};
            MPI_Comm graph = MPI_COMM_NULL;
            ASSERT_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &source, &degree, destinations,
                                            weights, MPI_INFO_NULL, 0, &graph),
                      MPI_SUCCESS);
            int in = 0, out = 0, weighted = 0;
            MPI_Dist_graph_neighbors_count(graph, &in, &out, &weighted);
            EXPECT_EQ(in, 2);
            EXPECT_EQ(out, 2);
            EXPECT_EQ(weighted, 1);
            int sources[2], source_weights[2], dests[2], dest_weights[2];
            MPI_Dist_graph_neighbors(graph, 2, sources, source_weights, 2, dests, dest_weights);
            // In-edges listed by naming member: r-1 named by r-2, r-2 named by r-3.
            const int named_by_a = (rank + n - 3) % n;  // names r-2 -> r
            const int named_by_b = (rank + n - 2) % n;  // names r-1 -> r
            EXPECT_EQ(sources[0],
                      named_by_a < named_by_b ? (rank + n - 2) % n : (rank + n - 1) % n);
            EXPECT_EQ(source_weights[0], named_by_a < named_by_b ? 2 * named_by_a : named_by_b);
            EXPECT_EQ(dests[0], (rank + 1) % n);
            EXPECT_EQ(dest_weights[0], (rank + n - 1) % n);
            EXPECT_EQ(dests[1], (rank + 2) % n);
            EXPECT_EQ(dest_weights[1], 2 * ((rank + n - 1) % n));
            // Neighbor_alltoallv: block i to dests[i]; the receiver finds it under the
            // sender's position in its in-edges.
            int sent[2] = {100 * rank + dests[0], 100 * rank + dests[1]};
            int received[2] = {-1, -1};
            const int counts[2] = {1, 1}, displs[2] = {0, 1};
            ASSERT_EQ(MPI_Neighbor_alltoallv(sent, counts, displs, MPI_INT, received, counts,
                                             displs, MPI_INT, graph),
                      MPI_SUCCESS);
            for (int i = 0; i < 2; ++i) EXPECT_EQ(received[i], 100 * sources[i] + rank);
            MPI_Comm_free(&graph);
          }),
      0);
}

TEST(DistGraph, AdjacentUnweightedAndEmpty) {
  ASSERT_EQ(
      run_ranks(
          4, 2,
          [](int rank) {
            // Only even members send, to the next member; odd ones only receive.
            const bool sends = rank % 2 == 0;
            const int to = rank + 1, from = rank - 1;
            MPI_Comm graph = MPI_COMM_NULL;
            ASSERT_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, sends ? 0 : 1, &from,
                                                     MPI_UNWEIGHTED, sends ? 1 : 0, &to,
                                                     MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph),
                      MPI_SUCCESS);
            int in = -1, out = -1, weighted = -1;
            MPI_Dist_graph_neighbors_count(graph, &in, &out, &weighted);
            EXPECT_EQ(in, sends ? 0 : 1);
            EXPECT_EQ(out, sends ? 1 : 0);
            EXPECT_EQ(weighted, 0);
            int value = rank * 7, got = -1;
            MPI_Neighbor_allgather(&value, 1, MPI_INT, &got, 1, MPI_INT, graph);
            EXPECT_EQ(got, sends ? -1 : (rank - 1) * 7);
            MPI_Comm_free(&graph);
            errors_return();
            const int any = 0;
            EXPECT_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &any, nullptr, 0, &to,
                                                     MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph),
                      MPI_ERR_ARG);
            EXPECT_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &any, MPI_WEIGHTS_EMPTY, 0,
                                                     &to, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph),
                      MPI_ERR_ARG);
            const int bad = 4;
            EXPECT_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, MPI_UNWEIGHTED, 0,
                                                     &to, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph),
                      MPI_ERR_RANK);
          }),
      0);
}

TEST(Topology, ErrorsNameTheirClass) {
  ASSERT_EQ(
      run_ranks(
          4, 2,
          [](int) {
            errors_return();
            int dims[2] = {3, 2};
            int periods[2] = {0, 0};
            MPI_Comm comm = MPI_COMM_WORLD;
            EXPECT_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &comm), MPI_ERR_DIMS);
            EXPECT_EQ(comm, MPI_COMM_NULL);
            EXPECT_EQ(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &comm), MPI_ERR_DIMS);
            dims[0] = -2;
            EXPECT_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &comm), MPI_ERR_DIMS);
            int coords[2] = {0, 0}, rank = -1, status = -1;
            EXPECT_EQ(MPI_Cart_rank(MPI_COMM_WORLD, coords, &rank), MPI_ERR_TOPOLOGY);
            EXPECT_EQ(MPI_Topo_test(MPI_COMM_WORLD, &status), MPI_SUCCESS);
            EXPECT_EQ(status, MPI_UNDEFINED);
            int value = 0;
            EXPECT_EQ(
                MPI_Neighbor_allgather(&value, 1, MPI_INT, &value, 1, MPI_INT, MPI_COMM_WORLD),
                MPI_ERR_TOPOLOGY);
            const int index[2] = {1, 2}, edges[2] = {1, 5};
            EXPECT_EQ(MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &comm), MPI_ERR_ARG);
            EXPECT_EQ(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &comm), MPI_ERR_ARG);
            const int n = 1, degree = -1;
            EXPECT_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &n, &degree, &n, MPI_UNWEIGHTED,
                                            MPI_INFO_NULL, 0, &comm),
                      MPI_ERR_ARG);
          }),
      0);
}

// Topologies are for intracommunicators: an intercommunicator is refused by name.
TEST(Topology, IntercommunicatorsAreRefused) {
  ASSERT_EQ(
      run_ranks(4, 2,
                [](int rank) {
                  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
                  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
                  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 9, &inter);
                  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
                  int dims[1] = {2}, periods[1] = {0};
                  MPI_Comm cart = MPI_COMM_WORLD;
                  EXPECT_EQ(MPI_Cart_create(inter, 1, dims, periods, 0, &cart), MPI_ERR_COMM);
                  EXPECT_EQ(cart, MPI_COMM_NULL);
                  int status = 0;
                  EXPECT_EQ(MPI_Topo_test(inter, &status), MPI_SUCCESS);
                  EXPECT_EQ(status, MPI_UNDEFINED);
                  int value = 0;
                  EXPECT_EQ(MPI_Neighbor_allgather(&value, 1, MPI_INT, &value, 1, MPI_INT, inter),
                            MPI_ERR_COMM);
                  MPI_Comm_free(&inter);
                  MPI_Comm_free(&half);
                }),
      0);
}

}  // namespace
