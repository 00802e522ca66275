// A small MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce or MPI_Iallreduce between two members of one
// process goes through the communicator's PairNbc (mpi/coll/pair_nbc.h): the member that comes
// second does the work with the first's side, and a first member that only sends (Ibcast root,
// Ireduce non-root) copies its data and completes at its call. These tests order the two members'
// calls with point-to-point messages, so that each member comes first in turn.
#include <algorithm>
#include <atomic>
#include <vector>

#include "collective_testing.h"
#include "ring_testing.h"

namespace weft::mpi::testing {
namespace {

class PairNbc : public ::testing::TestWithParam<Shape> {};

// Issues an Ibcast (kind 0), Ireduce (1) or Iallreduce (2) of one long long through `call`'s `in`,
// `out` and `request`: the root broadcasts `datum`, each member adds `datum + rank`.
template <class Call>
void issue_small(Call& call, int kind, int root, int rank, long long datum) {
  call.in = datum + rank;
  switch (kind) {
    case 0:
      call.out = rank == root ? datum : -1;
      MPI_Ibcast(&call.out, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD, &call.request);
      break;
    case 1:
      MPI_Ireduce(&call.in, &call.out, 1, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD,
                  &call.request);
      break;
    default:
      MPI_Iallreduce(&call.in, &call.out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &call.request);
      break;
  }
}

// The Ibcast root and an Ireduce non-root are done when their call returns, before the other
// member has called: their buffers are reusable, MPI_Test says so at once and MPI_Request_free
// accepts the request (an active collective request it refuses, MPI-3.1 5.12).
TEST_P(PairNbc, ASenderCompletesAtItsCallBeforeTheOtherMemberCalls) {
  run_ranks(GetParam(), [](int rank, int) {
    weft::testing::errors_return();
    long long data = rank == 0 ? value(1) : -1;
    long long input = value(2) + rank;
    long long sum = -1;
    MPI_Request bcast = MPI_REQUEST_NULL;
    MPI_Request reduce = MPI_REQUEST_NULL;
    if (rank == 0) {
      ASSERT_EQ(MPI_Ibcast(&data, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD, &bcast), MPI_SUCCESS);
      int flag = 0;
      EXPECT_EQ(MPI_Test(&bcast, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
      EXPECT_EQ(flag, 1) << "the Ibcast root waited for the reader";
      EXPECT_EQ(bcast, MPI_REQUEST_NULL);
      data = -1;
      ASSERT_EQ(MPI_Ireduce(&input, nullptr, 1, MPI_LONG_LONG, MPI_SUM, 1, MPI_COMM_WORLD, &reduce),
                MPI_SUCCESS);
      input = -1;
      EXPECT_EQ(MPI_Request_free(&reduce), MPI_SUCCESS) << "the Ireduce non-root is not done";
      EXPECT_EQ(reduce, MPI_REQUEST_NULL);
      go(1, 1);
      return;
    }
    wait_go(0, 1);
    ASSERT_EQ(MPI_Ibcast(&data, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD, &bcast), MPI_SUCCESS);
    ASSERT_EQ(MPI_Ireduce(&input, &sum, 1, MPI_LONG_LONG, MPI_SUM, 1, MPI_COMM_WORLD, &reduce),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Wait(&bcast, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(MPI_Wait(&reduce, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(data, value(1));
    EXPECT_EQ(sum, 2 * value(2) + 1);
  });
}

// A member that comes first and receives is completed by the other member's call: MPI_Test says
// no until then, yes after, with the data; its request cannot be freed or cancelled meanwhile.
TEST_P(PairNbc, AReaderPolledWithTestCompletesWhenTheOtherMemberCalls) {
  run_ranks(GetParam(), [](int rank, int) {
    weft::testing::errors_return();
    long long data = rank == 1 ? value(3) : -1;
    long long input = rank + 1;
    long long sum = -1;
    MPI_Request requests[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (rank == 0) {
      ASSERT_EQ(MPI_Ibcast(&data, 1, MPI_LONG_LONG, 1, MPI_COMM_WORLD, &requests[0]), MPI_SUCCESS);
      ASSERT_EQ(
          MPI_Iallreduce(&input, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &requests[1]),
          MPI_SUCCESS);
      ASSERT_EQ(MPI_Ibarrier(MPI_COMM_WORLD, &requests[2]), MPI_SUCCESS);
      for (int i = 0; i < 100; ++i) {
        int flag = 1;
        MPI_Testall(3, requests, &flag, MPI_STATUSES_IGNORE);
        EXPECT_EQ(flag, 0) << "complete before the other member called";
        int index = 0;
        MPI_Testany(3, requests, &index, &flag, MPI_STATUS_IGNORE);
        EXPECT_EQ(flag, 0);
      }
      EXPECT_EQ(MPI_Request_free(&requests[0]), MPI_ERR_REQUEST);
      EXPECT_EQ(MPI_Cancel(&requests[1]), MPI_ERR_REQUEST);
      go(1, 2);
      int flag = 0;
      while (flag == 0) MPI_Testall(3, requests, &flag, MPI_STATUSES_IGNORE);
      EXPECT_EQ(data, value(3));
      EXPECT_EQ(sum, 3);
      return;
    }
    wait_go(0, 2);
    MPI_Ibcast(&data, 1, MPI_LONG_LONG, 1, MPI_COMM_WORLD, &requests[0]);
    MPI_Iallreduce(&input, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &requests[1]);
    MPI_Ibarrier(MPI_COMM_WORLD, &requests[2]);
    EXPECT_EQ(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(sum, 3);
  });
}

// Nonblocking calls of this path, of the instances' (a large Ibcast) and blocking ones of the pair
// ring and of meetings, interleaved, one member ahead up to its first blocking call; completed in
// reverse order. Each call's result is its own: calls match in issue
// order whatever path each takes.
TEST_P(PairNbc, InterleavedWithOtherCollectivesMatchInIssueOrder) {
  run_ranks(GetParam(), [](int rank, int) {
    constexpr int kCalls = 200;
    constexpr int kLarge = 100;  // ints: past the pair ring's payload
    struct Call {
      long long in = 0;
      long long out = -1;
      std::vector<int> large;
      MPI_Request request = MPI_REQUEST_NULL;
    };
    std::vector<Call> calls(kCalls);
    auto issue = [&](int i) {
      Call& c = calls[static_cast<std::size_t>(i)];
      const int root = (i / 7) % 2;
      if (i % 7 < 3) return issue_small(c, i % 7, root, rank, value(i));
      switch (i % 7) {
        case 3:
          MPI_Ibarrier(MPI_COMM_WORLD, &c.request);
          break;
        case 4:
          c.large.assign(kLarge, rank == root ? i : -1);
          MPI_Ibcast(c.large.data(), kLarge, MPI_INT, root, MPI_COMM_WORLD, &c.request);
          break;
        case 5:
          c.out = rank == root ? value(i) : -1;
          MPI_Bcast(&c.out, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD);
          break;
        default:
          c.large.assign(kLarge, rank == root ? i : -1);
          MPI_Bcast(c.large.data(), kLarge, MPI_INT, root, MPI_COMM_WORLD);
          break;
      }
    };
    // Member 0 alone first, up to its first blocking call (which waits for member 1).
    issue_member0_first(rank, 5, kCalls, 3, issue);
    for (int i = kCalls - 1; i >= 0; --i) {
      Call& c = calls[static_cast<std::size_t>(i)];
      ASSERT_EQ(MPI_Wait(&c.request, MPI_STATUS_IGNORE), MPI_SUCCESS) << "call " << i;
      const int root = (i / 7) % 2;
      const long long sum = 2 * value(i) + 1;
      switch (i % 7) {
        case 0:
        case 5:
          EXPECT_EQ(c.out, value(i)) << "call " << i;
          break;
        case 1:
          if (rank == root) {
            EXPECT_EQ(c.out, sum) << "call " << i;
          }
          break;
        case 2:
          EXPECT_EQ(c.out, sum) << "call " << i;
          break;
        case 4:
        case 6:
          EXPECT_EQ(c.large, std::vector<int>(kLarge, i)) << "call " << i;
          break;
        default:
          break;
      }
    }
  });
}

// More calls ahead than the member keeps eager copies of: the later ones keep the caller's buffer
// and complete when the other member comes.
TEST_P(PairNbc, ARootFarAheadKeepsItsLaterBuffers) {
  run_ranks(GetParam(), [](int rank, int) {
    constexpr int kCalls = 150;
    std::vector<long long> data(kCalls, -1);
    std::vector<MPI_Request> requests(kCalls, MPI_REQUEST_NULL);
    if (rank == 0) {
      for (int i = 0; i < kCalls; ++i) {
        data[static_cast<std::size_t>(i)] = value(i);
        MPI_Ibcast(&data[static_cast<std::size_t>(i)], 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD,
                   &requests[static_cast<std::size_t>(i)]);
      }
      go(1, 4);
    } else {
      wait_go(0, 4);
      for (int i = 0; i < kCalls; ++i) {
        MPI_Ibcast(&data[static_cast<std::size_t>(i)], 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD,
                   &requests[static_cast<std::size_t>(i)]);
      }
    }
    ASSERT_EQ(MPI_Waitall(kCalls, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < kCalls; ++i) EXPECT_EQ(data[static_cast<std::size_t>(i)], value(i)) << i;
  });
}

// A strided type (two ints, a one-int gap, extent 3): the gaps keep their value, whichever member
// comes first.
TEST_P(PairNbc, IbcastOfANonContiguousTypeLeavesTheGaps) {
  run_ranks(GetParam(), [](int rank, int) {
    MPI_Datatype vector = MPI_DATATYPE_NULL;
    MPI_Datatype strided = MPI_DATATYPE_NULL;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vector);
    MPI_Type_create_resized(vector, 0, 3 * sizeof(int), &strided);
    MPI_Type_commit(&strided);
    MPI_Type_free(&vector);
    for (int first = 0; first < 2; ++first) {
      const int root = 1 - first;  // the first member receives, then sends
      for (int turn = 0; turn < 2; ++turn) {
        const int root_of_call = turn == 0 ? root : first;
        int buffer[9];
        for (int k = 0; k < 9; ++k) buffer[k] = rank == root_of_call ? 100 * turn + k : -1;
        if (rank != first) wait_go(first, 5);
        MPI_Request request = MPI_REQUEST_NULL;
        // Freed at once: the request keeps the type alive.
        MPI_Datatype type = MPI_DATATYPE_NULL;
        MPI_Type_dup(strided, &type);
        MPI_Ibcast(buffer, 3, type, root_of_call, MPI_COMM_WORLD, &request);
        MPI_Type_free(&type);
        if (rank == first) go(1 - first, 5);
        ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int k = 0; k < 9; ++k) {
          const bool gap = k % 3 == 1;
          const int want = rank == root_of_call || !gap ? 100 * turn + k : -1;
          EXPECT_EQ(buffer[k], want) << "element " << k << ", first " << first << ", turn " << turn;
        }
      }
    }
    MPI_Type_free(&strided);
  });
}

// Takes the left operand: not commutative, so a reduction out of rank order shows.
void take_left(void* in, void* inout, int* len, MPI_Datatype*) {
  std::copy_n(static_cast<const int*>(in), *len, static_cast<int*>(inout));
}

// MPI_IN_PLACE at a Reduce root and at both members of an Allreduce, with a rank-ordered
// operation and sums, whichever member comes first.
TEST_P(PairNbc, InPlaceReductionsInRankOrder) {
  run_ranks(GetParam(), [](int rank, int) {
    MPI_Op left = MPI_OP_NULL;
    MPI_Op_create(take_left, 0, &left);
    for (int first = 0; first < 2; ++first) {
      for (int root = 0; root < 2; ++root) {
        if (rank != first) wait_go(first, 6);
        int reduce[3] = {10 * rank, 10 * rank + 1, 10 * rank + 2};
        int all[3] = {10 * rank, 10 * rank + 1, 10 * rank + 2};
        int sum[2] = {rank + 1, 2 * rank};
        MPI_Request requests[3];
        MPI_Ireduce(rank == root ? MPI_IN_PLACE : reduce, rank == root ? reduce : nullptr, 3,
                    MPI_INT, left, root, MPI_COMM_WORLD, &requests[0]);
        MPI_Iallreduce(MPI_IN_PLACE, all, 3, MPI_INT, left, MPI_COMM_WORLD, &requests[1]);
        MPI_Iallreduce(MPI_IN_PLACE, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[2]);
        if (rank == first) go(1 - first, 6);
        ASSERT_EQ(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        const int rank0[3] = {0, 1, 2};
        for (int k = 0; k < 3; ++k) {
          if (rank == root) {
            EXPECT_EQ(reduce[k], rank0[k]) << "first " << first;
          }
          EXPECT_EQ(all[k], rank0[k]) << "first " << first << ", root " << root;
        }
        EXPECT_EQ(sum[0], 3);
        EXPECT_EQ(sum[1], 2);
      }
    }
    MPI_Op_free(&left);
  });
}

// Both members run unordered, each in bursts of its own lengths (1 to 100 calls, then it waits for
// the burst): either member comes first to a call, leads of more than a ring of sides (64) spill,
// eager sides (Ibcast roots, Ireduce non-roots) and waiting ones mix. Each call's result is its
// own.
TEST_P(PairNbc, MembersInBurstsOfTheirOwnLengthsMatchInIssueOrder) {
  run_ranks(GetParam(), [](int rank, int) {
    constexpr int kCalls = 3000;
    struct Call {
      long long in = 0;
      long long out = -1;
      MPI_Request request = MPI_REQUEST_NULL;
    };
    std::vector<Call> calls(kCalls);
    unsigned seed = 12345u + 777u * static_cast<unsigned>(rank);
    int begin = 0;
    while (begin < kCalls) {
      seed = seed * 1103515245u + 12345u;
      const int end = std::min(kCalls, begin + 1 + static_cast<int>((seed >> 16) % 100));
      for (int i = begin; i < end; ++i) {
        Call& c = calls[static_cast<std::size_t>(i)];
        issue_small(c, i % 3, (i / 5) % 2, rank, value(i));
      }
      for (int i = begin; i < end; ++i) {
        Call& c = calls[static_cast<std::size_t>(i)];
        ASSERT_EQ(MPI_Wait(&c.request, MPI_STATUS_IGNORE), MPI_SUCCESS) << "call " << i;
        const int root = (i / 5) % 2;
        if (i % 3 == 0) {
          ASSERT_EQ(c.out, value(i)) << "call " << i;
        } else if (i % 3 == 2 || rank == root) {
          ASSERT_EQ(c.out, 2 * value(i) + 1) << "call " << i;
        }
      }
      begin = end;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, PairNbc, ::testing::Values(Shape{2, 1}, Shape{2, 2}),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return std::to_string(info.param.vps) + "vps";
                         });

class PairNbcDeath : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// Two nonblocking calls of one number and different kinds.
TEST_F(PairNbcDeath, CallsOfDifferentKindsEndTheJob) {
  EXPECT_EXIT(weft::testing::exit_with(weft::testing::run_ranks(
                  2, 1,
                  [](int rank) {
                    int v = 1;
                    int out = 0;
                    MPI_Request request = MPI_REQUEST_NULL;
                    if (rank == 0) {
                      MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
                    } else {
                      MPI_Iallreduce(&v, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request);
                    }
                    MPI_Wait(&request, MPI_STATUS_IGNORE);
                  })),
              ::testing::ExitedWithCode(1),
              "collective calls out of order: rank [01]'s collective call #0 on a communicator is "
              "MPI_I(bcast|allreduce) where another member's is MPI_I(bcast|allreduce)");
}

}  // namespace
}  // namespace weft::mpi::testing
