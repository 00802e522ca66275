// The neighbourhood collectives (MPI-4.1 8.6-8.8) on Cartesian grids: periodic dimensions of size
// 1 and 2 and MPI_PROC_NULL neighbours, alltoallw's byte displacements, the nonblocking and
// persistent forms, large blocks with several calls in flight beside the program's own messages,
// and the large-count forms whose array lengths come from the topology. Graph and distributed
// graph neighbourhoods are in process_topology_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::run_ranks;

// Each member sends block i = 100 * rank + i; block 2d of the receive buffer comes from the
// negative neighbour's block 2d + 1 and block 2d + 1 from the positive one's block 2d, also when
// both neighbours are one rank (a periodic dimension of 2) or the caller itself (of 1). A
// neighbour MPI_PROC_NULL leaves its block as it was.
void check_cart_alltoall(MPI_Comm cart, int ndims, const std::vector<int>& received) {
  int rank = -1;
  MPI_Comm_rank(cart, &rank);
  for (int d = 0; d < ndims; ++d) {
    int negative = 0, positive = 0;
    MPI_Cart_shift(cart, d, 1, &negative, &positive);
    EXPECT_EQ(received[2 * d], negative == MPI_PROC_NULL ? -1 : 100 * negative + 2 * d + 1)
        << "rank " << rank << " dimension " << d;
    EXPECT_EQ(received[2 * d + 1], positive == MPI_PROC_NULL ? -1 : 100 * positive + 2 * d)
        << "rank " << rank << " dimension " << d;
  }
}

TEST(Neighbor, CartesianAlltoallWithSmallPeriodicAndOpenDimensions) {
  ASSERT_EQ(run_ranks(6, 2,
                      [](int) {
                        int dims[3] = {3, 2, 1};
                        int periods[3] = {0, 1, 1};
                        MPI_Comm cart = MPI_COMM_NULL;
                        MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 1, &cart);
                        int rank = -1;
                        MPI_Comm_rank(cart, &rank);
                        std::vector<int> sent(6), received(6, -1);
                        for (int i = 0; i < 6; ++i) sent[i] = 100 * rank + i;
                        ASSERT_EQ(MPI_Neighbor_alltoall(sent.data(), 1, MPI_INT, received.data(), 1,
                                                        MPI_INT, cart),
                                  MPI_SUCCESS);
                        check_cart_alltoall(cart, 3, received);
                        // The same through alltoallw, blocks in reverse order in memory.
                        std::vector<int> counts(6, 1);
                        std::vector<MPI_Aint> displs(6);
                        std::vector<MPI_Datatype> types(6, MPI_INT);
                        for (int i = 0; i < 6; ++i) displs[i] = (5 - i) * sizeof(int);
                        std::vector<int> reversed(6), back(6, -1);
                        for (int i = 0; i < 6; ++i) reversed[5 - i] = sent[i];
                        ASSERT_EQ(
                            MPI_Neighbor_alltoallw(reversed.data(), counts.data(), displs.data(),
                                                   types.data(), back.data(), counts.data(),
                                                   displs.data(), types.data(), cart),
                            MPI_SUCCESS);
                        std::reverse(back.begin(), back.end());
                        check_cart_alltoall(cart, 3, back);
                        MPI_Comm_free(&cart);
                      }),
            0);
}

// Nonblocking and persistent forms against the blocking one on a periodic ring, with new data at
// every start of the persistent request.
TEST(Neighbor, NonblockingAndPersistentFormsCompleteThroughRequests) {
  ASSERT_EQ(run_ranks(5, 2,
                      [](int) {
                        int dims[1] = {5};
                        int periods[1] = {1};
                        MPI_Comm ring = MPI_COMM_NULL;
                        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
                        int rank = -1, left = -1, right = -1;
                        MPI_Comm_rank(ring, &rank);
                        MPI_Cart_shift(ring, 0, 1, &left, &right);
                        int sent[2] = {rank, -rank};
                        int received[2] = {-9, -9};
                        MPI_Request request = MPI_REQUEST_NULL;
                        ASSERT_EQ(MPI_Ineighbor_alltoall(sent, 1, MPI_INT, received, 1, MPI_INT,
                                                         ring, &request),
                                  MPI_SUCCESS);
                        ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
                        EXPECT_EQ(received[0], -left);
                        EXPECT_EQ(received[1], right);
                        int value = 0;
                        int gathered[2] = {-9, -9};
                        ASSERT_EQ(
                            MPI_Neighbor_allgather_init(&value, 1, MPI_INT, gathered, 1, MPI_INT,
                                                        ring, MPI_INFO_NULL, &request),
                            MPI_SUCCESS);
                        for (int round = 0; round < 3; ++round) {
                          value = 1000 * round + rank;
                          MPI_Start(&request);
                          MPI_Wait(&request, MPI_STATUS_IGNORE);
                          EXPECT_EQ(gathered[0], 1000 * round + left);
                          EXPECT_EQ(gathered[1], 1000 * round + right);
                        }
                        MPI_Request_free(&request);
                        const int counts[2] = {1, 1}, displs[2] = {1, 0};
                        int gatheredv[2] = {-9, -9};
                        ASSERT_EQ(MPI_Ineighbor_allgatherv(&rank, 1, MPI_INT, gatheredv, counts,
                                                           displs, MPI_INT, ring, &request),
                                  MPI_SUCCESS);
                        MPI_Wait(&request, MPI_STATUS_IGNORE);
                        EXPECT_EQ(gatheredv[1], left);
                        EXPECT_EQ(gatheredv[0], right);
                        MPI_Comm_free(&ring);
                      }),
            0);
}

// Blocks past the eager limit on 27 oversubscribed ranks of a periodic 3x3x3 torus: two
// nonblocking calls in flight at once, a blocking one between them, and point-to-point traffic of
// the program on the same communicator that none of them may take.
TEST(Neighbor, LargeBlocksSeveralCallsInFlight) {
  ASSERT_EQ(run_ranks(27, 2,
                      [](int) {
                        int dims[3] = {3, 3, 3};
                        int periods[3] = {1, 1, 1};
                        MPI_Comm torus = MPI_COMM_NULL;
                        MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 1, &torus);
                        int rank = -1;
                        MPI_Comm_rank(torus, &rank);
                        const int n = 40000;  // ints per block: 160 KB
                        std::vector<int> first(6 * n), second(6 * n), third(6 * n);
                        std::vector<int> got1(6 * n, -1), got2(6 * n, -1), got3(6 * n, -1);
                        for (int b = 0; b < 6; ++b) {
                          for (int i = 0; i < n; ++i) {
                            first[b * n + i] = rank * 1000 + b * 10 + i % 7;
                            second[b * n + i] = -(rank * 1000 + b * 10 + i % 5);
                            third[b * n + i] = rank * 7 + b;
                          }
                        }
                        int token = rank, received_token = -1;
                        int next = -1, previous = -1;
                        MPI_Cart_shift(torus, 2, 1, &previous, &next);
                        MPI_Request user[2];
                        MPI_Irecv(&received_token, 1, MPI_INT, previous, 5, torus, &user[0]);
                        MPI_Isend(&token, 1, MPI_INT, next, 5, torus, &user[1]);
                        MPI_Request requests[2];
                        ASSERT_EQ(MPI_Ineighbor_alltoall(first.data(), n, MPI_INT, got1.data(), n,
                                                         MPI_INT, torus, &requests[0]),
                                  MPI_SUCCESS);
                        ASSERT_EQ(MPI_Neighbor_alltoall(third.data(), n, MPI_INT, got3.data(), n,
                                                        MPI_INT, torus),
                                  MPI_SUCCESS);
                        ASSERT_EQ(MPI_Ineighbor_alltoall(second.data(), n, MPI_INT, got2.data(), n,
                                                         MPI_INT, torus, &requests[1]),
                                  MPI_SUCCESS);
                        ASSERT_EQ(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
                        MPI_Waitall(2, user, MPI_STATUSES_IGNORE);
                        EXPECT_EQ(received_token, previous);
                        for (int d = 0; d < 3; ++d) {
                          int negative = -1, positive = -1;
                          MPI_Cart_shift(torus, d, 1, &negative, &positive);
                          for (int side = 0; side < 2; ++side) {
                            const int from = side == 0 ? negative : positive;
                            const int block = 2 * d + side;
                            const int theirs = 2 * d + 1 - side;  // what `from` sent our way
                            for (int i = 0; i < n; i += 997) {
                              ASSERT_EQ(got1[block * n + i], from * 1000 + theirs * 10 + i % 7);
                              ASSERT_EQ(got2[block * n + i], -(from * 1000 + theirs * 10 + i % 5));
                              ASSERT_EQ(got3[block * n + i], from * 7 + theirs);
                            }
                          }
                        }
                        MPI_Comm_free(&torus);
                      }),
            0);
}

// The large-count form narrows arrays as long as the caller's in- and out-degree, which differ
// in a distributed graph: three in-edges, one out-edge.
TEST(Neighbor, LargeCountFormsTakeTheirLengthsFromTheTopology) {
  ASSERT_EQ(
      run_ranks(4, 2,
                [](int rank) {
                  // Everyone sends to member 0... except 0, which sends to 1.
                  const int to = rank == 0 ? 1 : 0;
                  std::vector<int> from;
                  for (int r = 0; r < 4; ++r) {
                    if (r != rank && (r == 0 ? 1 : 0) == rank) from.push_back(r);
                  }
                  MPI_Comm graph = MPI_COMM_NULL;
                  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(from.size()),
                                                 from.data(), MPI_UNWEIGHTED, 1, &to,
                                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
                  const MPI_Count one[1] = {2};
                  const MPI_Aint zero[1] = {0};
                  std::vector<MPI_Count> counts(from.size(), 2);
                  std::vector<MPI_Aint> displs(from.size());
                  for (std::size_t i = 0; i < from.size(); ++i) displs[i] = 2 * i;
                  const int sent[2] = {rank, 10 * rank};
                  std::vector<int> got(2 * from.size(), -1);
                  ASSERT_EQ(MPI_Neighbor_alltoallv_c(sent, one, zero, MPI_INT, got.data(),
                                                     counts.data(), displs.data(), MPI_INT, graph),
                            MPI_SUCCESS);
                  for (std::size_t i = 0; i < from.size(); ++i) {
                    EXPECT_EQ(got[2 * i], from[i]);
                    EXPECT_EQ(got[2 * i + 1], 10 * from[i]);
                  }
                  MPI_Comm_free(&graph);
                }),
      0);
}

}  // namespace
