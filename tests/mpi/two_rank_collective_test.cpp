// Communicators of two ranks of one process meet through their two slots alone
// (Meeting::phase_as): each member writes its own line, the second member does the small work for
// both, and the phase counts grow from call to call with no reset. Many consecutive calls of
// every small collective, with values, roots and operations changing from call to call and
// collectives of different shapes back to back, on one core (the members take turns) and on two.
#include <atomic>
#include <vector>

#include "collective_testing.h"

namespace weft::mpi::testing {
namespace {

class TwoRanks : public ::testing::TestWithParam<Shape> {};

constexpr int kRounds = 300;

// A distinct 64-bit value for what rank r contributes at round k.
long long contribution(int r, int k) {
  return static_cast<long long>(k) * 7919 + r * 104729 + 1;
}

// Not commutative: a reduction that swapped its two inputs gives another value.
void affine(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<long long*>(in);
  auto* b = static_cast<long long*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] * 3 + b[i];
}

// Every round runs each small collective once, its root and values changing with the round; the
// barrier's check counts the arrivals of both members, `arrived` having counted `before` rounds.
void small_collectives(MPI_Comm comm, std::atomic<int>& arrived, int before, MPI_Op affine_op) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int other = 1 - rank;
  for (int k = 0; k < kRounds; ++k) {
    const int root = (k / 3) % 2;
    const long long mine = contribution(rank, k);
    const long long sum = contribution(0, k) + contribution(1, k);

    arrived.fetch_add(1, std::memory_order_relaxed);
    MPI_Barrier(comm);
    EXPECT_GE(arrived.load(std::memory_order_relaxed), 2 * (before + k + 1)) << "round " << k;

    long long got = -1;
    EXPECT_EQ(MPI_Allreduce(&mine, &got, 1, MPI_LONG_LONG, MPI_SUM, comm), MPI_SUCCESS);
    EXPECT_EQ(got, sum) << "Allreduce, round " << k;

    got = -1;
    EXPECT_EQ(MPI_Allreduce(&mine, &got, 1, MPI_LONG_LONG, affine_op, comm), MPI_SUCCESS);
    EXPECT_EQ(got, contribution(0, k) * 3 + contribution(1, k))
        << "Allreduce in rank order, round " << k;

    long long in_place = mine;
    EXPECT_EQ(MPI_Allreduce(MPI_IN_PLACE, &in_place, 1, MPI_LONG_LONG, MPI_MAX, comm), MPI_SUCCESS);
    EXPECT_EQ(in_place, contribution(1, k)) << "Allreduce in place, round " << k;

    got = -1;
    EXPECT_EQ(MPI_Reduce(&mine, &got, 1, MPI_LONG_LONG, MPI_SUM, root, comm), MPI_SUCCESS);
    // A non-root's receive buffer is not written.
    EXPECT_EQ(got, rank == root ? sum : -1) << "Reduce to " << root << ", round " << k;

    long long data = rank == root ? contribution(root, k) : -1;
    EXPECT_EQ(MPI_Bcast(&data, 1, MPI_LONG_LONG, root, comm), MPI_SUCCESS);
    EXPECT_EQ(data, contribution(root, k)) << "Bcast from " << root << ", round " << k;

    long long both[2] = {-1, -1};
    EXPECT_EQ(MPI_Allgather(&mine, 1, MPI_LONG_LONG, both, 1, MPI_LONG_LONG, comm), MPI_SUCCESS);
    EXPECT_EQ(both[rank], mine) << "Allgather, round " << k;
    EXPECT_EQ(both[other], contribution(other, k)) << "Allgather, round " << k;

    // 1 KiB for each member, as bench/run mpi's Alltoall.
    std::vector<long long> send(256), recv(256, -1);
    for (int i = 0; i < 256; ++i) send[i] = mine * 1000 + i;
    EXPECT_EQ(MPI_Alltoall(send.data(), 128, MPI_LONG_LONG, recv.data(), 128, MPI_LONG_LONG, comm),
              MPI_SUCCESS);
    expect_elements(
        recv,
        [&](std::size_t i) {
          return contribution(static_cast<int>(i / 128), k) * 1000 + rank * 128 +
                 static_cast<long long>(i % 128);
        },
        "Alltoall, round " + std::to_string(k));
  }
}

TEST_P(TwoRanks, SmallCollectivesBackToBack) {
  weft::testing::Shared<std::atomic<int>> arrived(0);
  run_ranks(GetParam(), [&](int, int) {
    MPI_Op affine_op = MPI_OP_NULL;
    ASSERT_EQ(MPI_Op_create(affine, 0, &affine_op), MPI_SUCCESS);
    small_collectives(MPI_COMM_WORLD, *arrived, 0, affine_op);
    MPI_Op_free(&affine_op);
  });
}

// Two communicators of two members each out of four ranks, used alternately with the world of
// four: each pair's meetings serve calls of members that are not world ranks 0 and 1.
TEST(TwoRanksOfFour, PairsOfAWiderWorld) {
  weft::testing::Shared<std::atomic<int>> arrived_0(0);
  weft::testing::Shared<std::atomic<int>> arrived_1(0);
  run_ranks({4, 2}, [&](int rank, int) {
    MPI_Op affine_op = MPI_OP_NULL;
    ASSERT_EQ(MPI_Op_create(affine, 0, &affine_op), MPI_SUCCESS);
    // Ranks 0 and 3 pair up, 1 and 2: key order makes 3 the pair's rank 0.
    const int pair = rank == 0 || rank == 3 ? 0 : 1;
    MPI_Comm comm = MPI_COMM_NULL;
    ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, pair, -rank, &comm), MPI_SUCCESS);
    std::atomic<int>& arrived = pair == 0 ? *arrived_0 : *arrived_1;
    small_collectives(comm, arrived, 0, affine_op);
    long long total = 0;
    const long long one = 1;
    ASSERT_EQ(MPI_Allreduce(&one, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(total, 4);
    small_collectives(comm, arrived, kRounds, affine_op);
    MPI_Comm_free(&comm);
    MPI_Op_free(&affine_op);
  });
}

// Both members on one core (they take turns at every wait) and on two.
INSTANTIATE_TEST_SUITE_P(Shapes, TwoRanks, ::testing::Values(Shape{2, 1}, Shape{2, 2}), shape_name);

}  // namespace
}  // namespace weft::mpi::testing
