// Point-to-point between processes: the same matching semantics as inside one, through UCX.
// Each test forks its processes (process_job.h); checks run inside the ranks, and a failed one
// fails its process.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "mpi.h"
#include "mpi_test_util.h"
#include "process_job.h"

namespace {

using weft::testing::run_processes;

std::vector<int> pattern(std::size_t count, int seed) {
  std::vector<int> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = seed * 7919 + static_cast<int>(i);
  return values;
}

class Sizes : public ::testing::TestWithParam<std::size_t> {};

// Eager (small) and rendezvous (large) messages both ways between ranks of two processes.
TEST_P(Sizes, PingPongBetweenProcesses) {
  const std::size_t count = GetParam();
  EXPECT_EQ(
      0, run_processes(2, 2, 2, [count](int rank) {
        const int peer = 1 - rank;
        for (int round = 0; round < 3; ++round) {
          if (rank == 0) {
            std::vector<int> out = pattern(count, round);
            MPI_Send(out.data(), static_cast<int>(count), MPI_INT, peer, round, MPI_COMM_WORLD);
            std::vector<int> back(count, -1);
            MPI_Status status;
            MPI_Recv(back.data(), static_cast<int>(count), MPI_INT, peer, round, MPI_COMM_WORLD,
                     &status);
            EXPECT_EQ(pattern(count, round + 100), back);
            int received = -1;
            MPI_Get_count(&status, MPI_INT, &received);
            EXPECT_EQ(static_cast<int>(count), received);
          } else {
            std::vector<int> in(count, -1);
            MPI_Recv(in.data(), static_cast<int>(count), MPI_INT, peer, round, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            EXPECT_EQ(pattern(count, round), in);
            std::vector<int> out = pattern(count, round + 100);
            MPI_Send(out.data(), static_cast<int>(count), MPI_INT, peer, round, MPI_COMM_WORLD);
          }
        }
      }));
}

INSTANTIATE_TEST_SUITE_P(Processes, Sizes, ::testing::Values(0, 1, 6, 100, 4096, 65536, 1 << 20));

// Rank 0 receives with MPI_ANY_SOURCE from every other rank, local and remote alike.
TEST(Processes, AnySourceSeesLocalAndRemoteSenders) {
  static constexpr int kRanks = 8;
  static constexpr int kMessages = 20;
  EXPECT_EQ(0, run_processes(2, kRanks, 2, [](int rank) {
              if (rank != 0) {
                for (int i = 0; i < kMessages; ++i) {
                  const int value = rank * 1000 + i;
                  MPI_Send(&value, 1, MPI_INT, 0, i % 3, MPI_COMM_WORLD);
                }
                return;
              }
              std::vector<int> next(kRanks, 0);
              for (int i = 0; i < (kRanks - 1) * kMessages; ++i) {
                int value = -1;
                MPI_Status status;
                MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
                const int source = status.MPI_SOURCE;
                ASSERT_GT(source, 0);
                ASSERT_LT(source, kRanks);
                // Non-overtaking: each sender's messages come in the order it sent them.
                EXPECT_EQ(source * 1000 + next[source], value);
                EXPECT_EQ(next[source] % 3, status.MPI_TAG);
                ++next[source];
              }
              for (int r = 1; r < kRanks; ++r) EXPECT_EQ(kMessages, next[r]);
            }));
}

// Eager and rendezvous messages of one sender, same tag, arrive in sending order.
TEST(Processes, MixedSizesDoNotOvertake) {
  EXPECT_EQ(0, run_processes(2, 2, 2, [](int rank) {
              constexpr int kMessages = 40;
              auto size_of = [](int i) -> std::size_t { return i % 4 == 0 ? 100000 : 3; };
              if (rank == 1) {
                std::vector<MPI_Request> requests;
                std::vector<std::vector<int>> buffers;
                buffers.reserve(kMessages);
                for (int i = 0; i < kMessages; ++i) {
                  buffers.push_back(pattern(size_of(i), i));
                  requests.emplace_back();
                  MPI_Isend(buffers.back().data(), static_cast<int>(size_of(i)), MPI_INT, 0, 5,
                            MPI_COMM_WORLD, &requests.back());
                }
                MPI_Waitall(kMessages, requests.data(), MPI_STATUSES_IGNORE);
                return;
              }
              for (int i = 0; i < kMessages; ++i) {
                std::vector<int> in(100000, -1);
                MPI_Status status;
                MPI_Recv(in.data(), 100000, MPI_INT, 1, 5, MPI_COMM_WORLD, &status);
                int count = 0;
                MPI_Get_count(&status, MPI_INT, &count);
                ASSERT_EQ(static_cast<int>(size_of(i)), count) << "message " << i;
                in.resize(static_cast<std::size_t>(count));
                EXPECT_EQ(pattern(size_of(i), i), in) << "message " << i;
              }
            }));
}

// A synchronous send completes only once its receive has matched.
TEST(Processes, SsendWaitsForTheMatchingReceive) {
  EXPECT_EQ(0, run_processes(2, 2, 2, [](int rank) {
              for (std::size_t count : {std::size_t{0}, std::size_t{2}, std::size_t{50000}}) {
                std::vector<int> data = pattern(count, 3);
                if (rank == 0) {
                  MPI_Request request;
                  MPI_Issend(data.data(), static_cast<int>(count), MPI_INT, 1, 1, MPI_COMM_WORLD,
                             &request);
                  for (int i = 0; i < 200; ++i) {
                    int done = 1;
                    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
                    // Rank 1 posts its receive only after the go message below.
                    ASSERT_EQ(0, done) << count << " ints";
                  }
                  const int go = 1;
                  MPI_Send(&go, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
                  MPI_Wait(&request, MPI_STATUS_IGNORE);
                } else {
                  int go = 0;
                  MPI_Recv(&go, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                  std::vector<int> in(count, -1);
                  MPI_Status status;
                  MPI_Recv(in.data(), static_cast<int>(count), MPI_INT, 0, 1, MPI_COMM_WORLD,
                           &status);
                  EXPECT_EQ(data, in);
                  int received = -1;
                  MPI_Get_count(&status, MPI_INT, &received);
                  EXPECT_EQ(static_cast<int>(count), received);
                }
              }
            }));
}

// Probe, Iprobe and Mprobe see a remote message before it is received.
TEST(Processes, ProbesSeeRemoteMessages) {
  EXPECT_EQ(0, run_processes(2, 2, 2, [](int rank) {
              if (rank == 1) {
                for (int count : {5, 70000}) {
                  std::vector<int> out = pattern(static_cast<std::size_t>(count), count);
                  MPI_Send(out.data(), count, MPI_INT, 0, count, MPI_COMM_WORLD);
                  MPI_Send(out.data(), count, MPI_INT, 0, count, MPI_COMM_WORLD);
                }
                return;
              }
              for (int count : {5, 70000}) {
                MPI_Status status;
                MPI_Probe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
                int probed = 0;
                MPI_Get_count(&status, MPI_INT, &probed);
                EXPECT_EQ(count, probed);
                EXPECT_EQ(count, status.MPI_TAG);
                std::vector<int> in(static_cast<std::size_t>(probed));
                MPI_Recv(in.data(), probed, MPI_INT, 1, status.MPI_TAG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                EXPECT_EQ(pattern(static_cast<std::size_t>(count), count), in);

                MPI_Message message;
                MPI_Mprobe(1, count, MPI_COMM_WORLD, &message, &status);
                MPI_Get_count(&status, MPI_INT, &probed);
                EXPECT_EQ(count, probed);
                std::vector<int> again(static_cast<std::size_t>(probed));
                MPI_Mrecv(again.data(), probed, MPI_INT, &message, MPI_STATUS_IGNORE);
                EXPECT_EQ(pattern(static_cast<std::size_t>(count), count), again);
              }
              int flag = 1;
              MPI_Iprobe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
              EXPECT_EQ(0, flag);
            }));
}

// A remote message larger than the receive buffer: what fits, and MPI_ERR_TRUNCATE.
TEST(Processes, TruncationIsReported) {
  EXPECT_EQ(0, run_processes(2, 2, 2, [](int rank) {
              weft::testing::errors_return();
              for (int count : {10, 60000}) {
                std::vector<int> out = pattern(static_cast<std::size_t>(count), 1);
                if (rank == 1) {
                  MPI_Send(out.data(), count, MPI_INT, 0, 0, MPI_COMM_WORLD);
                  continue;
                }
                std::vector<int> in(static_cast<std::size_t>(count / 2), -1);
                MPI_Status status;
                EXPECT_EQ(MPI_ERR_TRUNCATE,
                          MPI_Recv(in.data(), count / 2, MPI_INT, 1, 0, MPI_COMM_WORLD, &status));
                EXPECT_TRUE(std::equal(in.begin(), in.end(), out.begin()));
              }
            }));
}

// Non-contiguous datatypes on both sides, eager and rendezvous.
TEST(Processes, DerivedDatatypesTravel) {
  EXPECT_EQ(0, run_processes(2, 2, 2, [](int rank) {
              for (int blocks : {3, 20000}) {
                MPI_Datatype every_other;
                MPI_Type_vector(blocks, 1, 2, MPI_INT, &every_other);
                MPI_Type_commit(&every_other);
                std::vector<int> strided(static_cast<std::size_t>(2 * blocks), -1);
                if (rank == 1) {
                  for (int i = 0; i < blocks; ++i) strided[2 * static_cast<std::size_t>(i)] = i;
                  MPI_Send(strided.data(), 1, every_other, 0, 0, MPI_COMM_WORLD);
                } else {
                  MPI_Recv(strided.data(), 1, every_other, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                  for (int i = 0; i < blocks; ++i) {
                    ASSERT_EQ(i, strided[2 * static_cast<std::size_t>(i)]);
                    ASSERT_EQ(-1, strided[2 * static_cast<std::size_t>(i) + 1]);
                  }
                }
                MPI_Type_free(&every_other);
              }
            }));
}

// A receive posted for a remote sender that never sends can be cancelled.
TEST(Processes, ReceiveFromRemoteRankCanBeCancelled) {
  EXPECT_EQ(0, run_processes(2, 2, 2, [](int rank) {
              if (rank != 0) return;
              int value = 0;
              MPI_Request request;
              MPI_Irecv(&value, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, &request);
              MPI_Cancel(&request);
              MPI_Status status;
              MPI_Wait(&request, &status);
              int cancelled = 0;
              MPI_Test_cancelled(&status, &cancelled);
              EXPECT_EQ(1, cancelled);
            }));
}

// Sixteen ranks in four processes on two cores pass a token around a ring several times.
TEST(Processes, OversubscribedRingAcrossFourProcesses) {
  static constexpr int kRanks = 16;
  EXPECT_EQ(0, run_processes(4, kRanks, 2, [](int rank) {
              const int next = (rank + 1) % kRanks;
              const int previous = (rank + kRanks - 1) % kRanks;
              for (int lap = 0; lap < 5; ++lap) {
                int token = 0;
                if (rank == 0) {
                  token = lap;
                  MPI_Send(&token, 1, MPI_INT, next, lap, MPI_COMM_WORLD);
                  MPI_Recv(&token, 1, MPI_INT, previous, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                  EXPECT_EQ(lap + kRanks - 1, token);
                } else {
                  MPI_Recv(&token, 1, MPI_INT, previous, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                  ++token;
                  MPI_Send(&token, 1, MPI_INT, next, lap, MPI_COMM_WORLD);
                }
              }
              std::vector<int> mine(1000, rank), theirs(1000, -1);
              MPI_Sendrecv(mine.data(), 1000, MPI_INT, next, 7, theirs.data(), 1000, MPI_INT,
                           previous, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
              EXPECT_EQ(std::vector<int>(1000, previous), theirs);
            }));
}

// A failed check inside a rank of a child process fails the job: the harness can fail.
TEST(Processes, AFailingRankFailsItsProcess) {
  EXPECT_NE(0, run_processes(2, 2, 2, [](int rank) {
              if (rank == 1) std::_Exit(3);
            }));
}

}  // namespace
