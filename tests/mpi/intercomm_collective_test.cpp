// Collectives on intercommunicators: one group's data reaches the other (roots MPI_ROOT and
// MPI_PROC_NULL in the root's group), blocking, nonblocking and persistent, between halves of
// the world of equal and unequal sizes; Scan is refused.
#include <gtest/gtest.h>

#include <numeric>
#include <ostream>
#include <string>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

struct Shape {
  int ranks;
  int cut;  // world ranks below it are group A
};

void PrintTo(const Shape& shape, std::ostream* out) {
  *out << shape.ranks << " ranks, cut " << shape.cut;
}

// What a rank knows about its intercommunicator: its group, its local rank and both sizes, and
// the world ranks of the remote group by remote rank.
struct Side {
  MPI_Comm inter = MPI_COMM_NULL;
  MPI_Comm local = MPI_COMM_NULL;
  bool a = false;
  int me = -1;
  int size = 0;
  int remote_size = 0;
  std::vector<int> remote;  // remote rank -> world rank

  ~Side() {
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
  }
};

// Groups in world rank order; leaders are local rank 0.
void make_side(const Shape& shape, int rank, Side& side) {
  side.a = rank < shape.cut;
  MPI_Comm_split(MPI_COMM_WORLD, side.a ? 0 : 1, rank, &side.local);
  ASSERT_EQ(
      MPI_Intercomm_create(side.local, 0, MPI_COMM_WORLD, side.a ? shape.cut : 0, 17, &side.inter),
      MPI_SUCCESS);
  MPI_Comm_rank(side.inter, &side.me);
  MPI_Comm_size(side.inter, &side.size);
  MPI_Comm_remote_size(side.inter, &side.remote_size);
  for (int r = 0; r < side.remote_size; ++r) side.remote.push_back(side.a ? shape.cut + r : r);
}

// A value only world rank `rank` sends in slot `i`.
int value(int rank, int i) {
  return rank * 100 + i;
}

class InterColl : public ::testing::TestWithParam<Shape> {};

TEST_P(InterColl, BarrierBcastAndReduceFromEitherGroup) {
  const Shape shape = GetParam();
  EXPECT_EQ(
      run_ranks(shape.ranks, 2,
                [shape](int rank) {
                  Side side;
                  make_side(shape, rank, side);
                  EXPECT_EQ(MPI_Barrier(side.inter), MPI_SUCCESS);
                  // Each group roots once, at its last local rank.
                  for (const bool a_roots : {true, false}) {
                    const bool rooting = side.a == a_roots;
                    const int root_local = (a_roots ? shape.cut : shape.ranks - shape.cut) - 1;
                    const int root_world = a_roots ? root_local : shape.cut + root_local;
                    int root = root_local;
                    if (rooting) root = side.me == root_local ? MPI_ROOT : MPI_PROC_NULL;
                    std::vector<int> data(5, -1);
                    if (root == MPI_ROOT) {
                      for (int i = 0; i < 5; ++i) data[i] = value(rank, i);
                    }
                    ASSERT_EQ(MPI_Bcast(data.data(), 5, MPI_INT, root, side.inter), MPI_SUCCESS);
                    for (int i = 0; i < 5; ++i) {
                      EXPECT_EQ(data[i], rooting && root != MPI_ROOT ? -1 : value(root_world, i));
                    }
                    // Reduce: the root gets the sum over the other group.
                    std::vector<int> in(3);
                    std::vector<int> out(3, -1);
                    for (int i = 0; i < 3; ++i) in[i] = value(rank, i);
                    ASSERT_EQ(
                        MPI_Reduce(in.data(), out.data(), 3, MPI_INT, MPI_SUM, root, side.inter),
                        MPI_SUCCESS);
                    if (root == MPI_ROOT) {
                      for (int i = 0; i < 3; ++i) {
                        int expected = 0;
                        for (int w : side.remote) expected += value(w, i);
                        EXPECT_EQ(out[i], expected);
                      }
                    }
                  }
                }),
      0);
}

TEST_P(InterColl, AllreduceAllgatherAndAlltoallSeeTheRemoteGroup) {
  const Shape shape = GetParam();
  EXPECT_EQ(
      run_ranks(
          shape.ranks, 2,
          [shape](int rank) {
            Side side;
            make_side(shape, rank, side);
            const int m = side.remote_size;
            // Allreduce with a non-commutative check: MPI_MAX of world ranks and a sum.
            int in[2] = {rank, rank};
            int out[2] = {-1, -1};
            ASSERT_EQ(MPI_Allreduce(in, out, 1, MPI_INT, MPI_MAX, side.inter), MPI_SUCCESS);
            EXPECT_EQ(out[0], side.remote.back());
            ASSERT_EQ(MPI_Allreduce(&in[1], &out[1], 1, MPI_INT, MPI_SUM, side.inter), MPI_SUCCESS);
            EXPECT_EQ(out[1], std::accumulate(side.remote.begin(), side.remote.end(), 0));
            // Allgather: two values per remote rank.
            int mine[2] = {value(rank, 0), value(rank, 1)};
            std::vector<int> all(2 * static_cast<std::size_t>(m), -1);
            ASSERT_EQ(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, side.inter),
                      MPI_SUCCESS);
            for (int r = 0; r < m; ++r) {
              EXPECT_EQ(all[2 * r], value(side.remote[r], 0));
              EXPECT_EQ(all[2 * r + 1], value(side.remote[r], 1));
            }
            // Allgatherv: remote rank r sends r + 1 values; they land in reverse order.
            std::vector<int> counts(static_cast<std::size_t>(m));
            std::vector<int> displs(static_cast<std::size_t>(m));
            int total = 0;
            for (int r = m - 1; r >= 0; --r) {
              counts[r] = r + 1;
              displs[r] = total;
              total += r + 1;
            }
            std::vector<int> send(static_cast<std::size_t>(side.me) + 1);
            for (int i = 0; i <= side.me; ++i) send[i] = value(rank, i);
            std::vector<int> gathered(static_cast<std::size_t>(total), -1);
            ASSERT_EQ(MPI_Allgatherv(send.data(), side.me + 1, MPI_INT, gathered.data(),
                                     counts.data(), displs.data(), MPI_INT, side.inter),
                      MPI_SUCCESS);
            for (int r = 0; r < m; ++r) {
              for (int i = 0; i <= r; ++i) {
                EXPECT_EQ(gathered[displs[r] + i], value(side.remote[r], i));
              }
            }
            // Alltoall: the block for remote rank r names both ends.
            std::vector<int> blocks(static_cast<std::size_t>(m));
            std::vector<int> got(static_cast<std::size_t>(m), -1);
            for (int r = 0; r < m; ++r) blocks[r] = rank * 1000 + side.remote[r];
            ASSERT_EQ(MPI_Alltoall(blocks.data(), 1, MPI_INT, got.data(), 1, MPI_INT, side.inter),
                      MPI_SUCCESS);
            for (int r = 0; r < m; ++r) EXPECT_EQ(got[r], side.remote[r] * 1000 + rank);
            // Alltoallv with the blocks reversed in the receive buffer.
            std::vector<int> ones(static_cast<std::size_t>(m), 1);
            std::vector<int> forward(static_cast<std::size_t>(m));
            std::vector<int> backward(static_cast<std::size_t>(m));
            for (int r = 0; r < m; ++r) {
              forward[r] = r;
              backward[r] = m - 1 - r;
            }
            std::fill(got.begin(), got.end(), -1);
            ASSERT_EQ(MPI_Alltoallv(blocks.data(), ones.data(), forward.data(), MPI_INT, got.data(),
                                    ones.data(), backward.data(), MPI_INT, side.inter),
                      MPI_SUCCESS);
            for (int r = 0; r < m; ++r) {
              EXPECT_EQ(got[m - 1 - r], side.remote[r] * 1000 + rank);
            }
          }),
      0);
}

TEST_P(InterColl, GatherScatterAndReduceScatter) {
  const Shape shape = GetParam();
  EXPECT_EQ(
      run_ranks(
          shape.ranks, 2,
          [shape](int rank) {
            Side side;
            make_side(shape, rank, side);
            const int m = side.remote_size;
            // Group A's rank 0 roots the gathers and scatters; B sends and receives.
            const int root = side.a ? (side.me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
            int mine = value(rank, 7);
            std::vector<int> all(static_cast<std::size_t>(m), -1);
            ASSERT_EQ(MPI_Gather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, root, side.inter),
                      MPI_SUCCESS);
            if (root == MPI_ROOT) {
              for (int r = 0; r < m; ++r) EXPECT_EQ(all[r], value(side.remote[r], 7));
            }
            std::vector<int> to_send(static_cast<std::size_t>(m));
            for (int r = 0; r < m; ++r) to_send[r] = value(rank, r);
            int received = -1;
            ASSERT_EQ(
                MPI_Scatter(to_send.data(), 1, MPI_INT, &received, 1, MPI_INT, root, side.inter),
                MPI_SUCCESS);
            if (!side.a) {
              EXPECT_EQ(received, value(0, side.me));
            }
            // Gatherv and Scatterv in reverse order in the root's buffer.
            std::vector<int> ones(static_cast<std::size_t>(m), 1);
            std::vector<int> backward(static_cast<std::size_t>(m));
            for (int r = 0; r < m; ++r) backward[r] = m - 1 - r;
            std::fill(all.begin(), all.end(), -1);
            ASSERT_EQ(MPI_Gatherv(&mine, 1, MPI_INT, all.data(), ones.data(), backward.data(),
                                  MPI_INT, root, side.inter),
                      MPI_SUCCESS);
            if (root == MPI_ROOT) {
              for (int r = 0; r < m; ++r) {
                EXPECT_EQ(all[m - 1 - r], value(side.remote[r], 7));
              }
            }
            received = -1;
            ASSERT_EQ(MPI_Scatterv(to_send.data(), ones.data(), backward.data(), MPI_INT, &received,
                                   1, MPI_INT, root, side.inter),
                      MPI_SUCCESS);
            if (!side.a) {
              EXPECT_EQ(received, value(0, side.size - 1 - side.me));
            }
            // Reduce_scatter_block: each group's vectors have 2 * (its size) elements,
            // and the two groups' totals must agree, so only equal halves run it.
            if (side.size == m) {
              std::vector<int> vec(2 * static_cast<std::size_t>(side.size));
              for (std::size_t i = 0; i < vec.size(); ++i) {
                vec[i] = rank + static_cast<int>(i);
              }
              int part[2] = {-1, -1};
              ASSERT_EQ(MPI_Reduce_scatter_block(vec.data(), part, 2, MPI_INT, MPI_SUM, side.inter),
                        MPI_SUCCESS);
              const int base = std::accumulate(side.remote.begin(), side.remote.end(), 0);
              EXPECT_EQ(part[0], base + m * (2 * side.me));
              EXPECT_EQ(part[1], base + m * (2 * side.me + 1));
              std::vector<int> counts(static_cast<std::size_t>(side.size), 2);
              part[0] = part[1] = -1;
              ASSERT_EQ(
                  MPI_Reduce_scatter(vec.data(), part, counts.data(), MPI_INT, MPI_SUM, side.inter),
                  MPI_SUCCESS);
              EXPECT_EQ(part[0], base + m * (2 * side.me));
              EXPECT_EQ(part[1], base + m * (2 * side.me + 1));
            }
          }),
      0);
}

TEST_P(InterColl, NonblockingAndPersistentFormsInAnyOrderOfCompletion) {
  const Shape shape = GetParam();
  EXPECT_EQ(
      run_ranks(
          shape.ranks, 2,
          [shape](int rank) {
            Side side;
            make_side(shape, rank, side);
            const int root = side.a ? (side.me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
            int data = root == MPI_ROOT ? 4242 : -1;
            int sum = -1;
            MPI_Request requests[3];
            ASSERT_EQ(MPI_Ibcast(&data, 1, MPI_INT, root, side.inter, &requests[0]), MPI_SUCCESS);
            ASSERT_EQ(MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, side.inter, &requests[1]),
                      MPI_SUCCESS);
            ASSERT_EQ(MPI_Ibarrier(side.inter, &requests[2]), MPI_SUCCESS);
            MPI_Wait(&requests[2], MPI_STATUS_IGNORE);
            MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
            MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
            if (!side.a) {
              EXPECT_EQ(data, 4242);
            }
            EXPECT_EQ(sum, std::accumulate(side.remote.begin(), side.remote.end(), 0));
            // A persistent reduce started three times, to group A's rank 0.
            int in = rank;
            int out = -1;
            MPI_Request persistent = MPI_REQUEST_NULL;
            ASSERT_EQ(MPI_Reduce_init(&in, &out, 1, MPI_INT, MPI_SUM, root, side.inter,
                                      MPI_INFO_NULL, &persistent),
                      MPI_SUCCESS);
            for (int round = 0; round < 3; ++round) {
              in = rank + round;
              MPI_Start(&persistent);
              MPI_Wait(&persistent, MPI_STATUS_IGNORE);
              if (root == MPI_ROOT) {
                EXPECT_EQ(out, std::accumulate(side.remote.begin(), side.remote.end(), 0) +
                                   round * side.remote_size);
              }
            }
            MPI_Request_free(&persistent);
          }),
      0);
}

INSTANTIATE_TEST_SUITE_P(Shapes, InterColl,
                         ::testing::Values(Shape{2, 1}, Shape{3, 1}, Shape{4, 2}, Shape{7, 3},
                                           Shape{8, 4}),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return std::to_string(info.param.ranks) + "ranks_cut" +
                                  std::to_string(info.param.cut);
                         });

TEST(InterColl, ScanAndInPlaceAreRefused) {
  EXPECT_EQ(
      run_ranks(2, 2,
                [](int rank) {
                  errors_return();
                  Side side;
                  make_side(Shape{2, 1}, rank, side);
                  MPI_Comm_set_errhandler(side.inter, MPI_ERRORS_RETURN);
                  int in = 1;
                  int out = 0;
                  EXPECT_EQ(MPI_Scan(&in, &out, 1, MPI_INT, MPI_SUM, side.inter), MPI_ERR_COMM);
                  EXPECT_EQ(MPI_Exscan(&in, &out, 1, MPI_INT, MPI_SUM, side.inter), MPI_ERR_COMM);
                  EXPECT_EQ(MPI_Allreduce(MPI_IN_PLACE, &out, 1, MPI_INT, MPI_SUM, side.inter),
                            MPI_ERR_BUFFER);
                  EXPECT_EQ(MPI_Bcast(&in, 1, MPI_INT, 3, side.inter), MPI_ERR_ROOT);
                }),
      0);
}

}  // namespace
