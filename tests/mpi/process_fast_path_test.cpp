// The edges of the request-free paths between processes (docs/mpi-processes.md): a blocking
// send of a small contiguous message that UCX takes at once (send_now), and a blocking receive of
// a predefined type through the engine's slot when nothing is queued (Engine::receive_now). Each
// must keep MPI's matching order, wildcards, truncation and MPI_THREAD_MULTIPLE as the general
// path does.
#include <gtest/gtest.h>

#include <array>
#include <thread>
#include <vector>

#include "mpi.h"
#include "mpi_test_util.h"
#include "process_job.h"

namespace {

using weft::testing::run_processes;

// A wildcard receive posted before a blocking receive from a remote rank takes the first message:
// the blocking one may not use the slot ahead of it. Rank 1 sends once rank 0 has posted the
// wildcard receive, and rank 0's process has one core that only polls UCX itself (io.mode=poll):
// the messages are taken in rank 0's blocking receive, after it chose where to wait.
TEST(ProcessFastPath, WildcardPostedBeforeTakesTheFirstMessage) {
  EXPECT_EQ(0, run_processes(2, 2, 1,
                             [](int rank) {
                               const int go = 1;
                               if (rank == 1) {
                                 int ready = 0;
                                 MPI_Recv(&ready, 1, MPI_INT, 0, 1, MPI_COMM_WORLD,
                                          MPI_STATUS_IGNORE);
                                 for (int value : {1, 2})
                                   MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
                                 return;
                               }
                               int first = -1, second = -1;
                               MPI_Request request;
                               MPI_Irecv(&first, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                         MPI_COMM_WORLD, &request);
                               MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
                               MPI_Status status;
                               MPI_Recv(&second, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &status);
                               MPI_Wait(&request, MPI_STATUS_IGNORE);
                               EXPECT_EQ(1, first);
                               EXPECT_EQ(2, second);
                               EXPECT_EQ(1, status.MPI_SOURCE);
                               EXPECT_EQ(7, status.MPI_TAG);
                             },
                             {{"io.mode", "poll"}}));
}

// A blocking wildcard receive (the slot's) sees remote senders and a sender of its own process.
TEST(ProcessFastPath, WildcardBlockingReceiveSeesBothProcesses) {
  EXPECT_EQ(0, run_processes(2, 4, 2, [](int rank) {
              int size = 0;
              MPI_Comm_size(MPI_COMM_WORLD, &size);
              if (rank != 0) {
                const int value = rank * 10;
                MPI_Send(&value, 1, MPI_INT, 0, rank, MPI_COMM_WORLD);
                return;
              }
              std::vector<int> seen(static_cast<std::size_t>(size), 0);
              for (int i = 1; i < size; ++i) {
                int value = -1;
                MPI_Status status;
                MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
                ASSERT_GT(status.MPI_SOURCE, 0);
                ASSERT_LT(status.MPI_SOURCE, size);
                EXPECT_EQ(status.MPI_SOURCE, status.MPI_TAG);
                EXPECT_EQ(status.MPI_SOURCE * 10, value);
                ++seen[static_cast<std::size_t>(status.MPI_SOURCE)];
              }
              for (int r = 1; r < size; ++r) EXPECT_EQ(1, seen[static_cast<std::size_t>(r)]);
            }));
}

// While rank 0 waits in a blocking receive from one rank, a message of another rank arrives: it
// is queued, not taken by the pending receive, and the next receive finds it.
TEST(ProcessFastPath, OtherMessageArrivesWhileAReceiveWaits) {
  EXPECT_EQ(0, run_processes(2, 4, 2, [](int rank) {
              // The rank that speaks second waits for the first one's word, so the first message
              // reaches rank 0 while its receive for the second is pending (or before it).
              int first = -1, second = -1;
              for (int r = 1; r < 4 && second < 0; ++r) {
                if (first < 0) {
                  first = r;
                } else {
                  second = r;
                }
              }
              if (rank == first) {
                const int value = 100;
                MPI_Send(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
                MPI_Send(&value, 1, MPI_INT, second, 9, MPI_COMM_WORLD);
              } else if (rank == second) {
                int go = 0;
                MPI_Recv(&go, 1, MPI_INT, first, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                const int value = 200;
                MPI_Send(&value, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
              } else if (rank == 0) {
                int from_second = -1, from_first = -1;
                MPI_Status status;
                MPI_Recv(&from_second, 1, MPI_INT, second, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
                EXPECT_EQ(200, from_second);
                EXPECT_EQ(2, status.MPI_TAG);
                MPI_Recv(&from_first, 1, MPI_INT, first, 1, MPI_COMM_WORLD, &status);
                EXPECT_EQ(100, from_first);
                EXPECT_EQ(first, status.MPI_SOURCE);
              }
            }));
}

// A small message into a smaller buffer: what fits, MPI_ERR_TRUNCATE, and a status that says
// who sent it and how much came.
TEST(ProcessFastPath, SmallTruncationIsReported) {
  EXPECT_EQ(0, run_processes(2, 2, 2, [](int rank) {
              weft::testing::errors_return();
              const std::array<int, 4> out{11, 12, 13, 14};
              if (rank == 1) {
                MPI_Send(out.data(), 4, MPI_INT, 0, 3, MPI_COMM_WORLD);
                return;
              }
              std::array<int, 2> in{-1, -1};
              MPI_Status status;
              status.MPI_ERROR = 12345;
              EXPECT_EQ(MPI_ERR_TRUNCATE,
                        MPI_Recv(in.data(), 2, MPI_INT, 1, 3, MPI_COMM_WORLD, &status));
              EXPECT_EQ(11, in[0]);
              EXPECT_EQ(12, in[1]);
              EXPECT_EQ(1, status.MPI_SOURCE);
              EXPECT_EQ(3, status.MPI_TAG);
              EXPECT_EQ(12345, status.MPI_ERROR);  // a single-completion call leaves it
              int count = -1;
              MPI_Get_count(&status, MPI_INT, &count);
              EXPECT_EQ(2, count);
            }));
}

// Several threads of a rank send small messages to a rank of the other process at once, each
// with its own tag; several threads there receive them by tag. Each thread's messages come in
// the order it sent them, and none is lost or doubled.
TEST(ProcessFastPath, ThreadsSendAndReceiveAtOnce) {
  static constexpr int kThreads = 4;
  static constexpr int kMessages = 200;
  EXPECT_EQ(0, weft::testing::run_processes_job(2, weft::testing::job_config(2, 2), [](int rank) {
              int provided = -1;
              MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
              EXPECT_EQ(MPI_THREAD_MULTIPLE, provided);
              std::vector<std::thread> threads;
              for (int t = 0; t < kThreads; ++t) {
                threads.emplace_back([rank, t] {
                  for (int i = 0; i < kMessages; ++i) {
                    if (rank == 1) {
                      const std::array<int, 2> out{t, i};
                      MPI_Send(out.data(), 2, MPI_INT, 0, t, MPI_COMM_WORLD);
                    } else {
                      std::array<int, 2> in{-1, -1};
                      MPI_Status status;
                      MPI_Recv(in.data(), 2, MPI_INT, 1, t, MPI_COMM_WORLD, &status);
                      EXPECT_EQ(t, in[0]);
                      EXPECT_EQ(i, in[1]);
                      EXPECT_EQ(t, status.MPI_TAG);
                    }
                  }
                });
              }
              for (std::thread& thread : threads) thread.join();
              MPI_Finalize();
              return 0;
            }));
}

// Sends of every small size up to what UCX takes at once and past it, twice each: every byte
// arrives.
TEST(ProcessFastPath, SmallSizesArriveWhole) {
  EXPECT_EQ(0, run_processes(2, 2, 2, [](int rank) {
              for (int bytes = 0; bytes <= 80; bytes += 4) {
                std::vector<unsigned char> out(static_cast<std::size_t>(bytes));
                for (int i = 0; i < bytes; ++i)
                  out[static_cast<std::size_t>(i)] = static_cast<unsigned char>(bytes + i);
                if (rank == 1) {
                  MPI_Send(out.data(), bytes, MPI_BYTE, 0, bytes, MPI_COMM_WORLD);
                  MPI_Send(out.data(), bytes, MPI_BYTE, 0, bytes, MPI_COMM_WORLD);
                  continue;
                }
                for (int round = 0; round < 2; ++round) {
                  std::vector<unsigned char> in(static_cast<std::size_t>(bytes) + 8, 0xee);
                  MPI_Status status;
                  MPI_Recv(in.data(), bytes + 8, MPI_BYTE, 1, bytes, MPI_COMM_WORLD, &status);
                  int count = -1;
                  MPI_Get_count(&status, MPI_BYTE, &count);
                  ASSERT_EQ(bytes, count);
                  in.resize(static_cast<std::size_t>(bytes));
                  EXPECT_EQ(out, in) << bytes << " bytes, round " << round;
                }
              }
            }));
}

}  // namespace
