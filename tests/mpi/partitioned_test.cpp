// Partitioned communication (MPI-4.1 4): partitions of one layout arrive in a receive of
// another, in every round, marked ready in any order and by several threads of a rank.
#include <gtest/gtest.h>

#include <vector>

#include "mpi_test_util.h"
#include "weft/thread.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

constexpr int kTotal = 128;

int value(int index, int round) {
  return index * 7 + round;
}

// The receiver's side of `rounds` rounds of kTotal ints in `partitions` partitions: every
// partition is seen arrived, then the request completes, with the data of its round.
void receive_rounds(int rounds, int partitions, int source) {
  std::vector<int> data(kTotal, -1);
  MPI_Request request;
  ASSERT_EQ(MPI_Precv_init(data.data(), partitions, kTotal / partitions, MPI_INT, source, 5,
                           MPI_COMM_WORLD, MPI_INFO_NULL, &request),
            MPI_SUCCESS);
  for (int round = 0; round < rounds; ++round) {
    MPI_Start(&request);
    for (int p = partitions - 1; p >= 0; --p) {
      int flag = 0;
      while (flag == 0) MPI_Parrived(request, p, &flag);
      for (int i = p * (kTotal / partitions); i < (p + 1) * (kTotal / partitions); ++i) {
        ASSERT_EQ(data[i], value(i, round)) << "partition " << p << " round " << round;
      }
    }
    MPI_Status status;
    ASSERT_EQ(MPI_Wait(&request, &status), MPI_SUCCESS);
    EXPECT_EQ(status.MPI_SOURCE, source);
    EXPECT_EQ(status.MPI_TAG, 5);
    int count = 0;
    MPI_Get_count(&status, MPI_INT, &count);
    EXPECT_EQ(count, kTotal);
    std::fill(data.begin(), data.end(), -1);
  }
  MPI_Request_free(&request);
  EXPECT_EQ(request, MPI_REQUEST_NULL);
}

TEST(Partitioned, PartitionsOfOneLayoutArriveInAnotherEveryRound) {
  constexpr int kRounds = 3, kSendPartitions = 16, kRecvPartitions = 4;
  EXPECT_EQ(run_ranks(2, 2,
                      [&](int rank) {
                        errors_return();
                        if (rank == 1) {
                          receive_rounds(kRounds, kRecvPartitions, 0);
                          return;
                        }
                        std::vector<int> data(kTotal);
                        MPI_Request request;
                        constexpr int kPer = kTotal / kSendPartitions;
                        ASSERT_EQ(MPI_Psend_init(data.data(), kSendPartitions, kPer, MPI_INT, 1, 5,
                                                 MPI_COMM_WORLD, MPI_INFO_NULL, &request),
                                  MPI_SUCCESS);
                        for (int round = 0; round < kRounds; ++round) {
                          MPI_Start(&request);
                          // Last partition first, then the rest as a range and a list.
                          for (int i = 0; i < kTotal; ++i) data[i] = value(i, round);
                          EXPECT_EQ(MPI_Pready(kSendPartitions - 1, request), MPI_SUCCESS);
                          EXPECT_EQ(MPI_Pready_range(0, 7, request), MPI_SUCCESS);
                          const int rest[] = {14, 8, 10, 9, 11, 13, 12};
                          EXPECT_EQ(MPI_Pready_list(7, rest, request), MPI_SUCCESS);
                          int flag = 0;
                          while (flag == 0) MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
                        }
                        MPI_Request_free(&request);
                      }),
            0);
}

TEST(Partitioned, ThreadsOfTheSendingRankMarkTheirPartitionsReady) {
  constexpr int kThreads = 4, kPartitions = 32;
  EXPECT_EQ(run_ranks(2, 2,
                      [&](int rank) {
                        errors_return();
                        if (rank == 1) {
                          receive_rounds(2, 8, 0);
                          return;
                        }
                        std::vector<int> data(kTotal);
                        MPI_Request request;
                        MPI_Psend_init(data.data(), kPartitions, kTotal / kPartitions, MPI_INT, 1,
                                       5, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
                        for (int round = 0; round < 2; ++round) {
                          MPI_Start(&request);
                          std::vector<weft::Thread> threads;
                          for (int t = 0; t < kThreads; ++t) {
                            weft::ThreadAttr attr;
                            attr.rank = rank;
                            // Thread t fills and readies partitions t, t + 4, ...
                            threads.push_back(weft::spawn(attr, [&, t] {
                              for (int p = t; p < kPartitions; p += kThreads) {
                                for (int i = p * 4; i < p * 4 + 4; ++i) data[i] = value(i, round);
                                EXPECT_EQ(MPI_Pready(p, request), MPI_SUCCESS);
                              }
                            }));
                          }
                          for (weft::Thread& thread : threads) thread.join();
                          EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
                        }
                        MPI_Request_free(&request);
                      }),
            0);
}

TEST(Partitioned, MisuseIsRefusedWithItsClass) {
  EXPECT_EQ(
      run_ranks(1, 1,
                [&](int) {
                  errors_return();
                  int a[4] = {1, 2, 3, 4}, b[4] = {};
                  MPI_Request send, recv;
                  MPI_Psend_init(a, 2, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &send);
                  MPI_Precv_init(b, 4, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &recv);
                  EXPECT_EQ(MPI_Precv_init(b, 4, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD,
                                           MPI_INFO_NULL, &recv),
                            MPI_ERR_RANK);
                  EXPECT_EQ(MPI_Pready(0, send), MPI_ERR_REQUEST);  // not started
                  MPI_Start(&send);
                  MPI_Start(&recv);
                  EXPECT_EQ(MPI_Pready(2, send), MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Pready(0, recv), MPI_ERR_REQUEST);
                  int flag = 0;
                  EXPECT_EQ(MPI_Parrived(send, 0, &flag), MPI_ERR_REQUEST);
                  EXPECT_EQ(MPI_Pready(1, send), MPI_SUCCESS);
                  EXPECT_EQ(MPI_Pready(1, send), MPI_ERR_ARG);  // twice in a round
                  EXPECT_EQ(MPI_Parrived(recv, 1, &flag), MPI_SUCCESS);
                  EXPECT_EQ(flag, 0);  // partition 1 of the receive is send partition 0
                  EXPECT_EQ(MPI_Pready(0, send), MPI_SUCCESS);
                  MPI_Request both[] = {send, recv};
                  EXPECT_EQ(MPI_Waitall(2, both, MPI_STATUSES_IGNORE), MPI_SUCCESS);
                  EXPECT_EQ(b[3], 4);
                  MPI_Request_free(&both[0]);
                  MPI_Request_free(&both[1]);
                }),
      0);
}

}  // namespace
