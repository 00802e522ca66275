// A small Bcast or Reduce of 3 to 64 members of one process goes through the communicator's fan
// ring (mpi/coll/fan_ring.h): the members that send (the Bcast root, every Reduce non-root) copy
// their payload into a slot and return without waiting for the others. These tests hold the
// reading members back until the senders have made as many calls as the ring has slots, so that a
// sender must return early, reuse its buffer at once, and wait only for slots not yet read.
#include <atomic>
#include <cstring>

#include "collective_testing.h"
#include "ring_testing.h"
#include "weft/this_thread.h"

namespace weft::mpi::testing {
namespace {

class FanRing : public ::testing::TestWithParam<Shape> {};

TEST_P(FanRing, BcastRootRunsAhead) {
  weft::testing::Shared<std::atomic<int>> sent(0);
  run_ranks(GetParam(), [&](int rank, int size) {
    const int root = size - 2;
    if (rank == root) {
      for (int k = 0; k < kAhead; ++k) {
        long long data[2] = {value(k), -value(k)};
        ASSERT_EQ(MPI_Bcast(data, 2, MPI_LONG_LONG, root, MPI_COMM_WORLD), MPI_SUCCESS);
        std::memset(data, 0, sizeof data);  // reusable at return
        sent->store(k + 1, std::memory_order_release);
      }
      return;
    }
    EXPECT_TRUE(wait_for(*sent, kSlots)) << "the Bcast root waited for the other members";
    for (int k = 0; k < kAhead; ++k) {
      long long data[2] = {-1, -1};
      ASSERT_EQ(MPI_Bcast(data, 2, MPI_LONG_LONG, root, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(data[0], value(k)) << "call " << k << ", rank " << rank;
      EXPECT_EQ(data[1], -value(k)) << "call " << k << ", rank " << rank;
    }
  });
}

TEST_P(FanRing, ReduceSendersRunAheadOfAnInPlaceRoot) {
  weft::testing::Shared<std::atomic<int>> sent(0);
  run_ranks(GetParam(), [&](int rank, int size) {
    const int root = 1;
    if (rank != root) {
      for (int k = 0; k < kAhead; ++k) {
        long long mine[2] = {value(k) * rank, rank};
        ASSERT_EQ(MPI_Reduce(mine, nullptr, 2, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD),
                  MPI_SUCCESS);
        std::memset(mine, 0, sizeof mine);
        if (k < kSlots) sent->fetch_add(1, std::memory_order_acq_rel);
      }
      return;
    }
    EXPECT_TRUE(wait_for(*sent, (size - 1) * kSlots)) << "a Reduce non-root waited for the root";
    const long long ranks_sum = static_cast<long long>(size) * (size - 1) / 2;
    for (int k = 0; k < kAhead; ++k) {
      long long acc[2] = {value(k) * root, root};
      ASSERT_EQ(MPI_Reduce(MPI_IN_PLACE, acc, 2, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD),
                MPI_SUCCESS);
      EXPECT_EQ(acc[0], value(k) * ranks_sum) << "call " << k;
      EXPECT_EQ(acc[1], ranks_sum) << "call " << k;
    }
  });
}

// x op y for 2x2 integer matrices is x * y, which does not commute: the result shows the order in
// which the root combined the members' inputs (MPI-4.1 6.9.1: rank order). Unsigned: the entries
// of 64 factors pass 2^64 and wrap, which does not change the order they show.
using Entry = unsigned long long;
void matrix_product(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<Entry*>(in);
  auto* b = static_cast<Entry*>(inout);
  for (int i = 0; i < *len; ++i, a += 4, b += 4) {
    const Entry c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                        a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    std::memcpy(b, c, sizeof c);
  }
}

void matrix_of(int rank, int k, Entry m[4]) {
  m[0] = 1;
  m[1] = rank + k;
  m[2] = 0;
  m[3] = 2;
}

// Roots that move from call to call, a non-commutative operation, and calls of the meetings and
// nonblocking ones between: the call numbers stay in step and every result is the rank-order one.
TEST_P(FanRing, MovingRootsNonCommutativeAndMixedWithMeetings) {
  run_ranks(GetParam(), [&](int rank, int size) {
    MPI_Datatype matrix = MPI_DATATYPE_NULL;
    ASSERT_EQ(MPI_Type_contiguous(4, MPI_UNSIGNED_LONG_LONG, &matrix), MPI_SUCCESS);
    ASSERT_EQ(MPI_Type_commit(&matrix), MPI_SUCCESS);
    MPI_Op product = MPI_OP_NULL;
    ASSERT_EQ(MPI_Op_create(matrix_product, 0, &product), MPI_SUCCESS);
    for (int k = 0; k < 30; ++k) {
      const int root = k % size;
      long long data = rank == root ? value(k) : -1;
      ASSERT_EQ(MPI_Bcast(&data, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(data, value(k)) << "call " << k;

      Entry mine[4];
      matrix_of(rank, k, mine);
      Entry got[4] = {0, 0, 0, 0};
      const int reduce_root = (k * 7 + 1) % size;
      ASSERT_EQ(MPI_Reduce(mine, got, 1, matrix, product, reduce_root, MPI_COMM_WORLD),
                MPI_SUCCESS);
      if (rank == reduce_root) {
        Entry expected[4];
        matrix_of(size - 1, k, expected);
        for (int r = size - 2; r >= 0; --r) {
          Entry m[4];
          matrix_of(r, k, m);
          int one = 1;
          matrix_product(m, expected, &one, nullptr);
        }
        for (int i = 0; i < 4; ++i)
          EXPECT_EQ(got[i], expected[i]) << "call " << k << " [" << i << "]";
      }

      MPI_Request request = MPI_REQUEST_NULL;
      long long sum = -1;
      const long long one = rank + k;
      ASSERT_EQ(MPI_Iallreduce(&one, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &request),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
      EXPECT_EQ(sum,
                static_cast<long long>(size) * k + static_cast<long long>(size) * (size - 1) / 2);
      long long large[64] = {};  // 512 B: above the ring's payload, so a meeting
      large[63] = rank == root ? value(k) : 0;
      ASSERT_EQ(MPI_Bcast(large, 64, MPI_LONG_LONG, root, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(large[63], value(k));
      ASSERT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    }
    MPI_Op_free(&product);
    MPI_Type_free(&matrix);
  });
}

// A reader whose buffer is smaller than the root's data gets MPI_ERR_TRUNCATE, and a Reduce
// whose counts differ is reported by its root, as the meeting's path reports them; the job goes on.
TEST_P(FanRing, TruncationAndMismatchAreReported) {
  run_ranks(GetParam(), [&](int rank, int size) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long long data[2] = {value(rank), value(rank) + 1};
    int rc = MPI_Bcast(data, rank == size - 1 ? 1 : 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    EXPECT_EQ(error_class, rank == size - 1 ? MPI_ERR_TRUNCATE : MPI_SUCCESS);

    long long out[2] = {0, 0};
    rc = MPI_Reduce(data, out, rank == 2 ? 1 : 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &error_class);
    if (rank == 0) {
      EXPECT_NE(error_class, MPI_SUCCESS);
    }
    // The ring goes on after both.
    long long after = rank == 0 ? value(7) : 0;
    ASSERT_EQ(MPI_Bcast(&after, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(after, value(7));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  });
}

class FanRingDeath : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// A Reduce root waiting in the ring for a member that made a nonblocking call instead ends the
// job with the mismatch, as a meeting does, rather than waiting for the deadlock report.
TEST_F(FanRingDeath, ABlockingReduceMatchedWithANonblockingOneEndsTheJob) {
  EXPECT_EXIT(weft::testing::exit_with(weft::testing::run_ranks(
                  3, 1,
                  [](int rank) {
                    long long in = rank, out = 0;
                    MPI_Request request;
                    if (rank == 1) {
                      MPI_Ireduce(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD,
                                  &request);
                      MPI_Wait(&request, MPI_STATUS_IGNORE);
                    } else {
                      MPI_Reduce(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
                    }
                  })),
              ::testing::ExitedWithCode(1),
              "weft: collective calls out of order: rank 0's collective call #0 on a "
              "communicator is MPI_Reduce where another member's is MPI_Ireduce");
}

// 64 members: the ring's largest communicator.
INSTANTIATE_TEST_SUITE_P(Shapes, FanRing,
                         ::testing::Values(Shape{3, 1}, Shape{3, 2}, Shape{8, 1}, Shape{8, 2},
                                           Shape{64, 2}),
                         shape_name);

}  // namespace
}  // namespace weft::mpi::testing
