// The matching engine through the MPI calls: order, wildcards, truncation, eager against
// rendezvous, synchronous sends, probes, cancellation, threads of one rank.
#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <vector>

#include "mpi_test_util.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;
using weft::testing::Shared;
using weft::testing::test_processes;

// With an eager limit of 64 bytes, 16 ints go eagerly and 1024 ints by rendezvous.
// Within a process and between processes alike: 16 ints go eager, 1024 by rendezvous.
const std::vector<std::pair<std::string, std::string>> kSmallEager = {
    {"mpi.eager_limit", "64"}, {"mpi.remote_eager_limit", "64"}};
constexpr int kEagerInts = 16;
constexpr int kRendezvousInts = 1024;

// Waits until `flag` is set by another rank, letting the core run the others meanwhile.
void await(const std::atomic<bool>& flag) {
  while (!flag.load()) weft::this_thread::yield();
}

class Matching : public ::testing::TestWithParam<int> {};  // the parameter: virtual processors

TEST_P(Matching, OrderIsKeptPerSenderAndTagAcrossEagerAndRendezvous) {
  for (bool pre_post : {false, true}) {
    Shared<std::atomic<bool>> posted(false);
    Shared<std::atomic<bool>> sent(false);
    constexpr int kMessages = 40;
    EXPECT_EQ(run_ranks(
                  2, GetParam(),
                  [&](int rank) {
                    std::vector<std::vector<int>> data(kMessages);
                    std::vector<MPI_Request> requests(kMessages);
                    for (int i = 0; i < kMessages; ++i) {
                      data[i].assign(i % 3 == 0 ? kRendezvousInts : kEagerInts, rank == 0 ? i : -1);
                    }
                    if (rank == 0) {
                      if (pre_post) await(*posted);
                      for (int i = 0; i < kMessages; ++i) {
                        MPI_Isend(data[i].data(), static_cast<int>(data[i].size()), MPI_INT, 1, 7,
                                  MPI_COMM_WORLD, &requests[i]);
                      }
                      *sent = true;
                    } else {
                      // Receives as large as any message: only order decides what matches.
                      for (auto& d : data) d.assign(kRendezvousInts, -1);
                      if (!pre_post) await(*sent);  // every message is unexpected
                      for (int i = 0; i < kMessages; ++i) {
                        MPI_Irecv(data[i].data(), kRendezvousInts, MPI_INT, 0, 7, MPI_COMM_WORLD,
                                  &requests[i]);
                      }
                      *posted = true;
                    }
                    std::vector<MPI_Status> statuses(kMessages);
                    MPI_Waitall(kMessages, requests.data(), statuses.data());
                    if (rank == 1) {
                      for (int i = 0; i < kMessages; ++i) {
                        int count = 0;
                        MPI_Get_count(&statuses[i], MPI_INT, &count);
                        EXPECT_EQ(count, i % 3 == 0 ? kRendezvousInts : kEagerInts) << i;
                        EXPECT_EQ(data[i][0], i);
                        EXPECT_EQ(data[i][count - 1], i);
                      }
                    }
                  },
                  kSmallEager),
              0);
  }
}

TEST_P(Matching, UnexpectedMessagesAreReceivedInArrivalOrder) {
  Shared<std::atomic<bool>> sent(false);
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [&](int rank) {
                        constexpr int kMessages = 30;
                        if (rank == 0) {
                          for (int i = 0; i < kMessages; ++i) {
                            MPI_Send(&i, 1, MPI_INT, 1, i % 2, MPI_COMM_WORLD);
                          }
                          *sent = true;
                        } else {
                          await(*sent);  // every message is unexpected now
                          int last_of_tag[2] = {-1, -1};
                          for (int i = 0; i < kMessages; ++i) {
                            int value = -1;
                            MPI_Status status;
                            MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                     MPI_COMM_WORLD, &status);
                            EXPECT_EQ(value, i);  // arrival order, across tags
                            EXPECT_EQ(status.MPI_TAG, i % 2);
                            EXPECT_GT(value, last_of_tag[status.MPI_TAG]);
                            last_of_tag[status.MPI_TAG] = value;
                          }
                        }
                      }),
            0);
}

TEST_P(Matching, AnySourceAndAnyTagSeeEverySender) {
  constexpr int kRanks = 9;
  EXPECT_EQ(run_ranks(kRanks, GetParam(),
                      [&](int rank) {
                        if (rank != 0) {
                          const int value = rank * 100;
                          MPI_Send(&value, 1, MPI_INT, 0, rank, MPI_COMM_WORLD);
                          return;
                        }
                        std::vector<int> seen(kRanks, 0);
                        for (int i = 1; i < kRanks; ++i) {
                          int value = 0;
                          MPI_Status status;
                          MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                   &status);
                          EXPECT_EQ(status.MPI_TAG, status.MPI_SOURCE);
                          EXPECT_EQ(value, status.MPI_SOURCE * 100);
                          ++seen[status.MPI_SOURCE];
                        }
                        for (int r = 1; r < kRanks; ++r) EXPECT_EQ(seen[r], 1) << r;
                      }),
            0);
}

TEST_P(Matching, SpecificSourceAndTagSkipOtherMessages) {
  EXPECT_EQ(run_ranks(3, GetParam(),
                      [&](int rank) {
                        if (rank != 0) {
                          for (int tag = 0; tag < 3; ++tag) {
                            const int value = rank * 10 + tag;
                            MPI_Send(&value, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
                          }
                          return;
                        }
                        // Reverse order of sources and tags: each receive skips earlier ones.
                        for (int source = 2; source >= 1; --source) {
                          for (int tag = 2; tag >= 0; --tag) {
                            int value = -1;
                            MPI_Recv(&value, 1, MPI_INT, source, tag, MPI_COMM_WORLD,
                                     MPI_STATUS_IGNORE);
                            EXPECT_EQ(value, source * 10 + tag);
                          }
                        }
                      }),
            0);
}

TEST_P(Matching, TruncationCopiesWhatFitsAndReportsTheError) {
  for (int ints : {kEagerInts, kRendezvousInts}) {
    EXPECT_EQ(run_ranks(
                  2, GetParam(),
                  [&](int rank) {
                    errors_return();
                    std::vector<int> data(static_cast<std::size_t>(ints));
                    std::iota(data.begin(), data.end(), 0);
                    if (rank == 0) {
                      EXPECT_EQ(MPI_Send(data.data(), ints, MPI_INT, 1, 0, MPI_COMM_WORLD),
                                MPI_SUCCESS);
                      return;
                    }
                    std::vector<int> small(5, -1);
                    // A single-completion call leaves MPI_ERROR as it was (MPI-4.1 3.2.5).
                    MPI_Status status;
                    status.MPI_ERROR = MPI_ERR_DIMS;
                    EXPECT_EQ(MPI_Recv(small.data(), 4, MPI_INT, 0, 0, MPI_COMM_WORLD, &status),
                              MPI_ERR_TRUNCATE);
                    EXPECT_EQ(status.MPI_ERROR, MPI_ERR_DIMS);
                    EXPECT_EQ(small, (std::vector<int>{0, 1, 2, 3, -1}));
                    int count = 0;
                    MPI_Get_count(&status, MPI_INT, &count);
                    EXPECT_EQ(count, 4);
                  },
                  kSmallEager),
              0);
  }
}

// On one virtual processor the sender runs only once the receiver waits inside MPI_Recv, so the
// receive is posted first (the engine's slot; small data travels inside it, larger data goes
// straight to the buffer); on two, either may come first.
TEST_P(Matching, ReceivesPostedFirstGetTheDataAndTheTruncation) {
  for (int ints : {3, 1000}) {
    Shared<std::atomic<int>> receiving(0);
    EXPECT_EQ(run_ranks(2, GetParam(),
                        [&](int rank) {
                          errors_return();
                          std::vector<int> data(static_cast<std::size_t>(ints));
                          std::iota(data.begin(), data.end(), 4);
                          if (rank == 0) {
                            while (receiving->load() < 1) weft::this_thread::yield();
                            MPI_Send(data.data(), ints, MPI_INT, 1, 2, MPI_COMM_WORLD);
                            while (receiving->load() < 2) weft::this_thread::yield();
                            MPI_Send(data.data(), ints, MPI_INT, 1, 3, MPI_COMM_WORLD);
                            return;
                          }
                          std::vector<int> in(data.size(), 0);
                          MPI_Status status;
                          *receiving = 1;
                          EXPECT_EQ(MPI_Recv(in.data(), ints, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                                             MPI_COMM_WORLD, &status),
                                    MPI_SUCCESS);
                          EXPECT_EQ(status.MPI_SOURCE, 0);
                          EXPECT_EQ(status.MPI_TAG, 2);
                          EXPECT_EQ(in, data);
                          std::fill(in.begin(), in.end(), 0);
                          *receiving = 2;
                          status.MPI_ERROR = MPI_ERR_DIMS;
                          EXPECT_EQ(MPI_Recv(in.data(), 2, MPI_INT, 0, 3, MPI_COMM_WORLD, &status),
                                    MPI_ERR_TRUNCATE);
                          EXPECT_EQ(status.MPI_ERROR, MPI_ERR_DIMS);
                          int count = 0;
                          MPI_Get_count(&status, MPI_INT, &count);
                          EXPECT_EQ(count, 2);
                          EXPECT_EQ(in[0], 4);
                          EXPECT_EQ(in[1], 5);
                          EXPECT_EQ(in[2], 0);
                        }),
              0);
  }
}

TEST_P(Matching, EagerSendsCompleteAtOnceAndRendezvousSendsWaitForTheReceive) {
  // Between processes the rendezvous is UCX's: the receiver reads the sender's buffer once the
  // receive matches, so the same holds.
  Shared<std::atomic<bool>> tested(false);
  EXPECT_EQ(
      run_ranks(
          2, GetParam(),
          [&](int rank) {
            std::vector<int> small(kEagerInts, 1), large(kRendezvousInts, 2);
            if (rank == 0) {
              MPI_Request eager, rendezvous;
              int flag = 0;
              MPI_Isend(small.data(), kEagerInts, MPI_INT, 1, 0, MPI_COMM_WORLD, &eager);
              if (weft::testing::test_processes() == 1) {
                MPI_Test(&eager, &flag, MPI_STATUS_IGNORE);
                EXPECT_TRUE(flag);
                EXPECT_EQ(eager, MPI_REQUEST_NULL);
              } else {
                // UCX may hold the data a moment (while the endpoints connect, which takes the
                // peer's progress), so the send completes soon rather than at once; but it
                // completes with no receive posted (rank 1 posts one only after `tested`): a
                // rendezvous would wait here for ever.
                MPI_Wait(&eager, MPI_STATUS_IGNORE);
              }
              MPI_Isend(large.data(), kRendezvousInts, MPI_INT, 1, 1, MPI_COMM_WORLD, &rendezvous);
              MPI_Test(&rendezvous, &flag, MPI_STATUS_IGNORE);
              EXPECT_FALSE(flag);
              // The sender's buffer is the payload: changing it before the match changes
              // what arrives (this is what single copy means).
              large[0] = 3;
              *tested = true;
              MPI_Wait(&rendezvous, MPI_STATUS_IGNORE);
            } else {
              await(*tested);
              std::vector<int> in(kRendezvousInts, 0);
              MPI_Recv(in.data(), kRendezvousInts, MPI_INT, 0, 1, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE);
              EXPECT_EQ(in[0], 3);
              EXPECT_EQ(in[1], 2);
              MPI_Recv(in.data(), kEagerInts, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
              EXPECT_EQ(in[0], 1);
            }
          },
          kSmallEager),
      0);
}

TEST_P(Matching, SynchronousSendCompletesOnlyAfterTheMatch) {
  Shared<std::atomic<bool>> tested(false);
  Shared<std::atomic<bool>> received(false);
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [&](int rank) {
                        int value = 5;
                        if (rank == 0) {
                          MPI_Request request;
                          int flag = 1;
                          MPI_Issend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
                          for (int i = 0; i < 10; ++i) {
                            MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
                            EXPECT_FALSE(flag);
                          }
                          *tested = true;
                          MPI_Wait(&request, MPI_STATUS_IGNORE);
                          EXPECT_TRUE(received->load());
                        } else {
                          await(*tested);
                          int in = 0;
                          *received = true;
                          MPI_Recv(&in, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                          EXPECT_EQ(in, 5);
                        }
                      }),
            0);
}

TEST_P(Matching, ProbesSeeMessagesAndMatchedProbesTakeThem) {
  Shared<std::atomic<bool>> probed_empty(false);
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [&](int rank) {
                        if (rank == 0) {
                          await(*probed_empty);
                          const int one[1] = {1};
                          const int two[2] = {2, 2};
                          MPI_Send(one, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
                          MPI_Send(two, 2, MPI_INT, 1, 2, MPI_COMM_WORLD);
                          return;
                        }
                        int flag = 1;
                        MPI_Message message = MPI_MESSAGE_NULL;
                        MPI_Status status;
                        MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
                        EXPECT_FALSE(flag);
                        MPI_Improbe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &message, &status);
                        EXPECT_FALSE(flag);
                        *probed_empty = true;
                        MPI_Probe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &status);
                        int count = 0;
                        MPI_Get_count(&status, MPI_INT, &count);
                        EXPECT_EQ(status.MPI_SOURCE, 0);
                        EXPECT_EQ(status.MPI_TAG, 2);
                        EXPECT_EQ(count, 2);
                        MPI_Mprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &message, &status);
                        EXPECT_EQ(status.MPI_TAG, 1);
                        // A matched message is gone from the queue: the next probe sees tag 2.
                        MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
                        EXPECT_TRUE(flag);
                        EXPECT_EQ(status.MPI_TAG, 2);
                        int in[2] = {0, 0};
                        MPI_Mrecv(in, 1, MPI_INT, &message, &status);
                        EXPECT_EQ(message, MPI_MESSAGE_NULL);
                        EXPECT_EQ(in[0], 1);
                        MPI_Improbe(0, 2, MPI_COMM_WORLD, &flag, &message, MPI_STATUS_IGNORE);
                        EXPECT_TRUE(flag);
                        MPI_Request request;
                        MPI_Imrecv(in, 2, MPI_INT, &message, &request);
                        MPI_Wait(&request, &status);
                        EXPECT_EQ(in[1], 2);
                        // MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, received as nothing.
                        MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &message, &status);
                        EXPECT_EQ(message, MPI_MESSAGE_NO_PROC);
                        MPI_Mrecv(in, 2, MPI_INT, &message, &status);
                        EXPECT_EQ(status.MPI_SOURCE, MPI_PROC_NULL);
                        EXPECT_EQ(status.MPI_TAG, MPI_ANY_TAG);
                      }),
            0);
}

// A send is cancelled while its message waits unmatched at the receiver, in this process or
// another (asked through the transport): a rendezvous send, and an eager, persistent or buffered
// one too, though the send itself had completed (MPICH's pt2pt/scancel, scancel_unmatch).
TEST_P(Matching, CancelledReceivesAndUnmatchedSendsAreCancelled) {
  Shared<std::atomic<bool>> cancelled(false);
  EXPECT_EQ(run_ranks(
                2, GetParam(),
                [&](int rank) {
                  std::vector<int> large(kRendezvousInts, 7);
                  int flag = 0;
                  MPI_Status status;
                  if (rank == 0) {
                    MPI_Request recv, rendezvous, eager;
                    MPI_Irecv(large.data(), 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &recv);
                    MPI_Cancel(&recv);
                    MPI_Wait(&recv, &status);
                    MPI_Test_cancelled(&status, &flag);
                    EXPECT_TRUE(flag);
                    MPI_Isend(large.data(), kRendezvousInts, MPI_INT, 1, 0, MPI_COMM_WORLD,
                              &rendezvous);
                    MPI_Cancel(&rendezvous);
                    MPI_Wait(&rendezvous, &status);
                    MPI_Test_cancelled(&status, &flag);
                    EXPECT_TRUE(flag);
                    MPI_Isend(large.data(), 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &eager);
                    MPI_Cancel(&eager);
                    MPI_Wait(&eager, &status);
                    MPI_Test_cancelled(&status, &flag);
                    EXPECT_TRUE(flag);
                    {
                      // The message rank 1 gets: a persistent eager send, not cancelled.
                      MPI_Request persistent;
                      MPI_Send_init(large.data(), 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &persistent);
                      MPI_Start(&persistent);
                      MPI_Cancel(&persistent);
                      MPI_Wait(&persistent, &status);
                      MPI_Test_cancelled(&status, &flag);
                      EXPECT_TRUE(flag);
                      MPI_Start(&persistent);
                      MPI_Wait(&persistent, &status);
                      MPI_Test_cancelled(&status, &flag);
                      EXPECT_FALSE(flag);
                      MPI_Request_free(&persistent);
                      // A buffered send's copy is withdrawn too, and its space freed.
                      std::vector<char> attached(64 + MPI_BSEND_OVERHEAD);
                      MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
                      MPI_Request buffered;
                      MPI_Ibsend(large.data(), 4, MPI_INT, 1, 0, MPI_COMM_WORLD, &buffered);
                      MPI_Cancel(&buffered);
                      MPI_Wait(&buffered, &status);
                      MPI_Test_cancelled(&status, &flag);
                      EXPECT_TRUE(flag);
                      void* detached = nullptr;
                      int detached_size = 0;
                      MPI_Buffer_detach(&detached, &detached_size);  // waits for none now
                    }
                    *cancelled = true;
                  } else {
                    std::vector<int> in(kRendezvousInts, 0);
                    int count = 0;
                    await(*cancelled);
                    // Only the persistent send's second message is left: a cancelled one never
                    // arrives.
                    MPI_Recv(in.data(), kRendezvousInts, MPI_INT, 0, 0, MPI_COMM_WORLD, &status);
                    MPI_Get_count(&status, MPI_INT, &count);
                    EXPECT_EQ(count, 1);
                    MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                    EXPECT_FALSE(flag);
                  }
                },
                kSmallEager),
            0);
}

TEST_P(Matching, ProcNullAndSelfAndEmptyMessages) {
  EXPECT_EQ(run_ranks(1, GetParam(),
                      [&](int) {
                        int value = 9;
                        MPI_Status status;
                        EXPECT_EQ(MPI_Send(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD),
                                  MPI_SUCCESS);
                        MPI_Recv(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &status);
                        EXPECT_EQ(status.MPI_SOURCE, MPI_PROC_NULL);
                        EXPECT_EQ(status.MPI_TAG, MPI_ANY_TAG);
                        int count = -1;
                        MPI_Get_count(&status, MPI_INT, &count);
                        EXPECT_EQ(count, 0);
                        EXPECT_EQ(value, 9);
                        // To itself, through both communicators, with an empty message between.
                        MPI_Send(&value, 1, MPI_INT, 0, 3, MPI_COMM_SELF);
                        MPI_Send(nullptr, 0, MPI_INT, 0, 3, MPI_COMM_WORLD);
                        int in = 0;
                        MPI_Recv(nullptr, 0, MPI_INT, 0, 3, MPI_COMM_WORLD, &status);
                        MPI_Get_count(&status, MPI_INT, &count);
                        EXPECT_EQ(count, 0);
                        MPI_Recv(&in, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &status);
                        EXPECT_EQ(in, 9);
                        EXPECT_EQ(status.MPI_SOURCE, 0);
                        int out = 4;
                        MPI_Sendrecv(&out, 1, MPI_INT, 0, 1, &in, 1, MPI_INT, 0, 1, MPI_COMM_WORLD,
                                     &status);
                        EXPECT_EQ(in, 4);
                      }),
            0);
}

TEST_P(Matching, ThreadsOfOneRankReceiveConcurrently) {
  constexpr int kPerThread = 200;
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [&](int rank) {
                        if (rank == 0) {
                          for (int i = 0; i < 2 * kPerThread; ++i) {
                            MPI_Send(&i, 1, MPI_INT, 1, i % 2, MPI_COMM_WORLD);
                          }
                          return;
                        }
                        int provided = 0;
                        MPI_Query_thread(&provided);
                        EXPECT_EQ(provided, MPI_THREAD_MULTIPLE);
                        std::vector<int> last(2, -1);
                        auto receiver = [&](int tag) {
                          for (int i = 0; i < kPerThread; ++i) {
                            int value = -1;
                            MPI_Recv(&value, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                            EXPECT_EQ(value % 2, tag);
                            EXPECT_GT(value, last[tag]);
                            last[tag] = value;
                          }
                        };
                        weft::ThreadAttr attr;
                        attr.rank = rank;
                        weft::Thread helper = weft::spawn(attr, [&] { receiver(1); });
                        receiver(0);
                        helper.join();
                      }),
            0);
}

INSTANTIATE_TEST_SUITE_P(VirtualProcessors, Matching, ::testing::Values(1, 2),
                         [](const auto& info) { return std::to_string(info.param) + "vps"; });

}  // namespace
