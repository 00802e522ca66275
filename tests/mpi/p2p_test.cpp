// Point-to-point over whole jobs: every rank count from 1 to 64 on one and two virtual
// processors, eager and rendezvous sizes, every send mode.
#include <gtest/gtest.h>

#include <atomic>
#include <tuple>
#include <vector>

#include "mpi_test_util.h"
#include "weft/this_thread.h"

namespace {

using weft::testing::run_ranks;
using weft::testing::Shared;

// (ranks, virtual processors)
class Ring : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(Ring, EveryRankExchangesWithBothNeighbours) {
  const auto [ranks, vps] = GetParam();
  Shared<std::atomic<int>> checked(0);
  const int status = run_ranks(ranks, vps, [&, ranks = ranks](int rank) {
    int size = 0, me = -1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    EXPECT_EQ(size, ranks);
    EXPECT_EQ(me, rank);
    const int right = (rank + 1) % size;
    const int left = (rank + size - 1) % size;
    // 1 int goes eagerly, 20 000 by rendezvous (default eager limit 8 KiB).
    for (int ints : {1, 20000}) {
      std::vector<int> out(static_cast<std::size_t>(ints), rank), in(out.size(), -1);
      MPI_Status status;
      MPI_Sendrecv(out.data(), ints, MPI_INT, right, ints, in.data(), ints, MPI_INT, left, ints,
                   MPI_COMM_WORLD, &status);
      EXPECT_EQ(status.MPI_SOURCE, left);
      EXPECT_EQ(in.front(), left);
      EXPECT_EQ(in.back(), left);
      // The other way round with nonblocking calls.
      MPI_Request requests[2];
      MPI_Irecv(in.data(), ints, MPI_INT, right, 0, MPI_COMM_WORLD, &requests[0]);
      MPI_Isend(out.data(), ints, MPI_INT, left, 0, MPI_COMM_WORLD, &requests[1]);
      MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
      EXPECT_EQ(in.back(), right);
    }
    checked->fetch_add(1);
  });
  EXPECT_EQ(status, 0);
  if (!IsSkipped()) {
    EXPECT_EQ(checked->load(), ranks);
  }
}

INSTANTIATE_TEST_SUITE_P(Jobs, Ring,
                         ::testing::Combine(::testing::Values(1, 2, 3, 8, 17, 64),
                                            ::testing::Values(1, 2)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks" +
                                  std::to_string(std::get<1>(info.param)) + "vps";
                         });

TEST(P2p, EverySendModeReachesItsReceiver) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int rank) {
                        constexpr int kInts = 5000;
                        std::vector<int> data(kInts);
                        if (rank == 0) {
                          std::vector<char> attached(kInts * sizeof(int) + MPI_BSEND_OVERHEAD);
                          MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
                          for (int mode = 0; mode < 4; ++mode) {
                            data.assign(kInts, mode);
                            switch (mode) {
                              case 0:
                                MPI_Send(data.data(), kInts, MPI_INT, 1, mode, MPI_COMM_WORLD);
                                break;
                              case 1:
                                MPI_Ssend(data.data(), kInts, MPI_INT, 1, mode, MPI_COMM_WORLD);
                                break;
                              case 2:
                                MPI_Rsend(data.data(), kInts, MPI_INT, 1, mode, MPI_COMM_WORLD);
                                break;
                              default:
                                MPI_Bsend(data.data(), kInts, MPI_INT, 1, mode, MPI_COMM_WORLD);
                                // The copy is taken: the buffer may change at once.
                                data.assign(kInts, -1);
                            }
                          }
                          void* detached = nullptr;
                          int size = 0;
                          MPI_Buffer_detach(&detached, &size);
                          EXPECT_EQ(detached, attached.data());
                        } else {
                          for (int mode = 0; mode < 4; ++mode) {
                            MPI_Recv(data.data(), kInts, MPI_INT, 0, mode, MPI_COMM_WORLD,
                                     MPI_STATUS_IGNORE);
                            EXPECT_EQ(data.front(), mode);
                            EXPECT_EQ(data.back(), mode);
                          }
                        }
                      }),
            0);
}

TEST(P2p, SendrecvReplaceSwapsBuffersAlongARing) {
  EXPECT_EQ(run_ranks(5, 2,
                      [](int rank) {
                        for (int ints : {3, 10000}) {
                          std::vector<int> data(static_cast<std::size_t>(ints), rank);
                          MPI_Status status;
                          MPI_Sendrecv_replace(data.data(), ints, MPI_INT, (rank + 1) % 5, 0,
                                               (rank + 4) % 5, 0, MPI_COMM_WORLD, &status);
                          EXPECT_EQ(data.front(), (rank + 4) % 5);
                          EXPECT_EQ(data.back(), (rank + 4) % 5);
                          EXPECT_EQ(status.MPI_SOURCE, (rank + 4) % 5);
                        }
                      }),
            0);
}

// In one process, the job's status is its first rank's non-zero status; spread over processes,
// the status of the failed process of lowest index, which is that process's first (rank 2's in
// every layout of 4 ranks: ranks 2 and 3 share a process, or rank 2's comes first).
TEST(P2p, RunJobReturnsTheFirstNonZeroRankStatus) {
  const int status = weft::testing::run_test_job(4, 2, [](int rank) {
    MPI_Init(nullptr, nullptr);
    MPI_Finalize();
    return rank >= 2 ? rank * 10 : 0;
  });
  EXPECT_EQ(status, 20);
}

// A rank may leave while others still receive the eager messages it sent.
TEST(P2p, EagerMessagesOutliveTheirFinalizedSender) {
  Shared<std::atomic<bool>> sender_done(false);
  EXPECT_EQ(run_ranks(2, 1,
                      [&](int rank) {
                        if (rank == 0) {
                          for (int i = 0; i < 50; ++i) {
                            MPI_Send(&i, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
                          }
                          *sender_done = true;
                          return;
                        }
                        while (!sender_done->load()) weft::this_thread::yield();
                        for (int i = 0; i < 50; ++i) {
                          int value = -1;
                          MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                          EXPECT_EQ(value, i);
                        }
                      }),
            0);
}

}  // namespace
