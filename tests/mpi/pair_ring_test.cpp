// A small Bcast or Reduce between two members of one process goes through the communicator's
// pair ring (mpi/coll/pair_ring.h): the sending member (Bcast root, Reduce non-root) copies its
// payload into a slot and returns without waiting for the other. These tests hold the receiving
// member back until the sender has made more calls than the ring has slots, so that the sender
// must return early, reuse its buffer at once, and wait only for slots not yet consumed.
#include <atomic>
#include <cstring>

#include "collective_testing.h"
#include "weft/this_thread.h"

namespace weft::mpi::testing {
namespace {

// The ring's slots: calls the sender makes before it needs the reader to free one.
constexpr int kSlots = 8;
// More than that: the sender then waits for the reader to free slots.
constexpr int kAhead = 20;
// How many times the reader yields, at most, waiting for the sender to get kAhead calls ahead
// before it starts anyway (a count of yields, not a time: under a meeting the sender never gets
// ahead and the expectation below fails instead of hanging).
constexpr long kPatience = 2'000'000;

long long value(int k) {
  return 1000003LL * k + 17;
}

// Waits for `done` to reach `target`, yielding; false if it never did within kPatience yields.
bool wait_for(const std::atomic<int>& done, int target) {
  for (long i = 0; i < kPatience; ++i) {
    if (done.load(std::memory_order_acquire) >= target) return true;
    weft::this_thread::yield();
  }
  return false;
}

class PairRing : public ::testing::TestWithParam<Shape> {};

TEST_P(PairRing, BcastRootRunsAhead) {
  weft::testing::Shared<std::atomic<int>> sent(0);
  run_ranks(GetParam(), [&](int rank, int) {
    const int root = 1;
    if (rank == root) {
      for (int k = 0; k < kAhead; ++k) {
        long long data = value(k);
        ASSERT_EQ(MPI_Bcast(&data, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD), MPI_SUCCESS);
        data = -1;  // reusable at return: the other member must still get value(k)
        // The first kSlots calls return before the other member reads anything.
        sent->store(k + 1, std::memory_order_release);
      }
      return;
    }
    // The root gets ahead as far as the ring lets it: its first kSlots calls return first.
    EXPECT_TRUE(wait_for(*sent, kSlots)) << "the Bcast root waited for the other member";
    for (int k = 0; k < kAhead; ++k) {
      long long data = -1;
      ASSERT_EQ(MPI_Bcast(&data, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(data, value(k)) << "call " << k;
    }
  });
}

TEST_P(PairRing, ReduceSenderRunsAheadOfAnInPlaceRoot) {
  weft::testing::Shared<std::atomic<int>> sent(0);
  run_ranks(GetParam(), [&](int rank, int) {
    const int root = 0;
    if (rank != root) {
      for (int k = 0; k < kAhead; ++k) {
        long long mine[3] = {value(k), 2 * value(k), -value(k)};
        ASSERT_EQ(MPI_Reduce(mine, nullptr, 3, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD),
                  MPI_SUCCESS);
        std::memset(mine, 0, sizeof mine);
        sent->store(k + 1, std::memory_order_release);
      }
      return;
    }
    EXPECT_TRUE(wait_for(*sent, kSlots)) << "the Reduce non-root waited for the root";
    for (int k = 0; k < kAhead; ++k) {
      long long acc[3] = {k, k, k};
      ASSERT_EQ(MPI_Reduce(MPI_IN_PLACE, acc, 3, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD),
                MPI_SUCCESS);
      EXPECT_EQ(acc[0], k + value(k)) << "call " << k;
      EXPECT_EQ(acc[1], k + 2 * value(k)) << "call " << k;
      EXPECT_EQ(acc[2], k - value(k)) << "call " << k;
    }
  });
}

// Calls of the ring, of the meetings and nonblocking ones interleaved: their numbers stay in step.
TEST_P(PairRing, MixedWithMeetingsAndNonblockingCalls) {
  run_ranks(GetParam(), [&](int rank, int) {
    for (int k = 0; k < 50; ++k) {
      long long data = rank == 0 ? value(k) : -1;
      ASSERT_EQ(MPI_Bcast(&data, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(data, value(k));
      MPI_Request request = MPI_REQUEST_NULL;
      long long sum = -1;
      const long long one = rank + k;
      ASSERT_EQ(MPI_Iallreduce(&one, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &request),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
      EXPECT_EQ(sum, 2 * k + 1);
      long long large[64] = {};  // 512 B: above the ring's payload, so a meeting
      large[63] = rank;
      long long out[64] = {};
      ASSERT_EQ(MPI_Allreduce(large, out, 64, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(out[63], 1);
      ASSERT_EQ(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD),
                MPI_SUCCESS);
      EXPECT_EQ(sum, 2 * k + 1);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, PairRing, ::testing::Values(Shape{2, 1}, Shape{2, 2}), shape_name);

}  // namespace
}  // namespace weft::mpi::testing
