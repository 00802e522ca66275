// Kernel threads that a rank starts (std::thread, pthread_create) belong to that rank for MPI:
// MPI_THREAD_MULTIPLE with point-to-point, waits and collectives from several threads of a rank
// at once, threads started by those threads, and a join that leaves the rank's core to the other
// ranks.
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <thread>
#include <vector>

#include "mpi_test_util.h"
#include "weft/this_thread.h"

namespace {

using weft::testing::run_test_job;

constexpr int kThreads = 4;

// Runs body(t) in kThreads kernel threads started by the calling rank, and joins them.
template <class Body>
void in_threads(Body body) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&body, t] { body(t); });
  for (std::thread& thread : threads) thread.join();
}

int init_multiple() {
  int provided = -1;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  return provided;
}

class RankThreads : public ::testing::TestWithParam<int> {};  // virtual processors

TEST_P(RankThreads, ActForTheirRankWithMultiple) {
  EXPECT_EQ(run_test_job(3, GetParam(),
                         [](int rank) {
                           EXPECT_EQ(init_multiple(), MPI_THREAD_MULTIPLE);
                           in_threads([rank](int) {
                             EXPECT_FALSE(weft::this_thread::is_weft_thread());
                             EXPECT_EQ(weft::this_thread::rank(), rank);
                             int me = -1, level = -1, main_thread = 1;
                             MPI_Comm_rank(MPI_COMM_WORLD, &me);
                             MPI_Query_thread(&level);
                             MPI_Is_thread_main(&main_thread);
                             EXPECT_EQ(me, rank);
                             EXPECT_EQ(level, MPI_THREAD_MULTIPLE);
                             EXPECT_FALSE(main_thread);
                           });
                           MPI_Finalize();
                           return 0;
                         }),
            0);
}

TEST_P(RankThreads, ExchangeMessagesConcurrently) {
  EXPECT_EQ(run_test_job(3, GetParam(),
                         [](int rank) {
                           init_multiple();
                           int size = 0;
                           MPI_Comm_size(MPI_COMM_WORLD, &size);
                           in_threads([rank, size](int t) {
                             // Each thread a ring of its own tag, many rounds.
                             for (int round = 0; round < 50; ++round) {
                               const int sent = rank * 1000 + t * 100 + round % 100;
                               int got = -1;
                               const int from = (rank + size - 1) % size;
                               MPI_Sendrecv(&sent, 1, MPI_INT, (rank + 1) % size, t, &got, 1,
                                            MPI_INT, from, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                               EXPECT_EQ(got, from * 1000 + t * 100 + round % 100);
                             }
                           });
                           MPI_Finalize();
                           return 0;
                         }),
            0);
}

TEST_P(RankThreads, WaitFromSeveralThreadsOfOneRank) {
  EXPECT_EQ(run_test_job(2, GetParam(),
                         [](int rank) {
                           init_multiple();
                           int values[kThreads] = {};
                           if (rank == 1) {
                             MPI_Request requests[kThreads];
                             for (int t = 0; t < kThreads; ++t) {
                               MPI_Irecv(&values[t], 1, MPI_INT, 0, t, MPI_COMM_WORLD,
                                         &requests[t]);
                             }
                             MPI_Barrier(MPI_COMM_WORLD);
                             // Every thread waits for its own request of the rank's main thread.
                             in_threads([&](int t) {
                               MPI_Status status;
                               MPI_Wait(&requests[t], &status);
                               EXPECT_EQ(status.MPI_TAG, t);
                               EXPECT_EQ(values[t], 7 * t);
                             });
                           } else {
                             MPI_Barrier(MPI_COMM_WORLD);
                             // Sent last tag first: each waiting thread gets its message in turn.
                             for (int t = kThreads - 1; t >= 0; --t) {
                               values[t] = 7 * t;
                               MPI_Send(&values[t], 1, MPI_INT, 1, t, MPI_COMM_WORLD);
                             }
                           }
                           MPI_Finalize();
                           return 0;
                         }),
            0);
}

TEST_P(RankThreads, CollectivesOnACommunicatorPerThread) {
  EXPECT_EQ(run_test_job(4, GetParam(),
                         [](int rank) {
                           init_multiple();
                           MPI_Comm comms[kThreads];
                           for (MPI_Comm& comm : comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
                           in_threads([&](int t) {
                             for (int round = 0; round < 20; ++round) {
                               int sum = 0;
                               const int mine = rank + t + round;
                               MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comms[t]);
                               EXPECT_EQ(sum, 0 + 1 + 2 + 3 + 4 * (t + round));
                               int root_value = rank == t % 4 ? 100 * t + round : -1;
                               MPI_Bcast(&root_value, 1, MPI_INT, t % 4, comms[t]);
                               EXPECT_EQ(root_value, 100 * t + round);
                               MPI_Request request;
                               MPI_Ibarrier(comms[t], &request);
                               MPI_Wait(&request, MPI_STATUS_IGNORE);
                             }
                           });
                           for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);
                           MPI_Finalize();
                           return 0;
                         }),
            0);
}

void* receive_from_next(void* context) {
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int got = -1;
  MPI_Recv(&got, 1, MPI_INT, (rank + 1) % size, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  *static_cast<int*>(context) = got;
  return nullptr;
}

// The rank joins a thread that waits for a rank of the same core (one virtual processor): the
// join must leave the core to that rank. And a thread's own threads belong to the rank too.
TEST_P(RankThreads, JoinLeavesTheCoreToOtherRanks) {
  EXPECT_EQ(run_test_job(2, GetParam(),
                         [](int rank) {
                           init_multiple();
                           int got = -1;
                           std::thread outer([&got] {
                             pthread_t inner;
                             ASSERT_EQ(pthread_create(&inner, nullptr, &receive_from_next, &got),
                                       0);
                             pthread_join(inner, nullptr);
                           });
                           if (rank == 0) {
                             // Rank 0 joins before rank 1 has sent: rank 1 must run meanwhile.
                             outer.join();
                             const int value = 10;
                             MPI_Send(&value, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
                           } else {
                             const int value = 11;
                             MPI_Send(&value, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
                             outer.join();
                           }
                           EXPECT_EQ(got, 10 + (rank + 1) % 2);
                           MPI_Finalize();
                           return 0;
                         }),
            0);
}

INSTANTIATE_TEST_SUITE_P(VirtualProcessors, RankThreads, ::testing::Values(1, 2));

TEST(RankThreadsOutsideRanks, ThreadsOfNoRankStayWithout) {
  int seen = 0;
  std::thread([&seen] { seen = weft::this_thread::rank(); }).join();
  EXPECT_EQ(seen, -1);
}

}  // namespace
