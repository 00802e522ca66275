// Every form of MPI_Wait and MPI_Test, request status and freeing, persistent requests.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "mpi_test_util.h"
#include "weft/this_thread.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;
using weft::testing::Shared;

void await(const std::atomic<int>& value, int at_least) {
  while (value.load() < at_least) weft::this_thread::yield();
}

class Wait : public ::testing::TestWithParam<int> {};  // virtual processors

TEST_P(Wait, WaitAndTestOnSingleRequests) {
  Shared<std::atomic<int>> step(0);
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [&](int rank) {
                        int value = 0;
                        if (rank == 0) {
                          await(*step, 1);
                          value = 11;
                          MPI_Send(&value, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
                          return;
                        }
                        MPI_Request request;
                        MPI_Irecv(&value, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, &request);
                        int flag = 1;
                        MPI_Status status;
                        MPI_Test(&request, &flag, &status);
                        EXPECT_FALSE(flag);
                        MPI_Request_get_status(request, &flag, &status);
                        EXPECT_FALSE(flag);
                        *step = 1;
                        do {
                          MPI_Request_get_status(request, &flag, &status);
                        } while (!flag);
                        EXPECT_NE(request, MPI_REQUEST_NULL);  // get_status does not free
                        EXPECT_EQ(status.MPI_TAG, 4);
                        MPI_Wait(&request, &status);
                        EXPECT_EQ(request, MPI_REQUEST_NULL);
                        EXPECT_EQ(value, 11);
                        EXPECT_EQ(status.MPI_SOURCE, 0);
                        // A null request: an empty status at once.
                        MPI_Wait(&request, &status);
                        EXPECT_EQ(status.MPI_SOURCE, MPI_ANY_SOURCE);
                        EXPECT_EQ(status.MPI_TAG, MPI_ANY_TAG);
                        MPI_Test(&request, &flag, &status);
                        EXPECT_TRUE(flag);
                      }),
            0);
}

TEST_P(Wait, AnySomeAndAllForms) {
  constexpr int kRequests = 6;
  Shared<std::atomic<int>> released(0);
  EXPECT_EQ(
      run_ranks(
          2, GetParam(),
          [&](int rank) {
            std::vector<int> values(kRequests, -1);
            if (rank == 0) {
              // Releases the messages one by one, in reverse order of index.
              for (int i = kRequests - 1; i >= 0; --i) {
                await(*released, kRequests - i);
                values[i] = i;
                MPI_Send(&values[i], 1, MPI_INT, 1, i, MPI_COMM_WORLD);
              }
              return;
            }
            std::vector<MPI_Request> requests(kRequests);
            for (int i = 0; i < kRequests; ++i) {
              MPI_Irecv(&values[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD, &requests[i]);
            }
            int index = -1, flag = 1, outcount = -1;
            std::vector<int> indices(kRequests);
            std::vector<MPI_Status> statuses(kRequests);
            MPI_Testany(kRequests, requests.data(), &index, &flag, MPI_STATUS_IGNORE);
            EXPECT_FALSE(flag);
            EXPECT_EQ(index, MPI_UNDEFINED);
            MPI_Testsome(kRequests, requests.data(), &outcount, indices.data(), statuses.data());
            EXPECT_EQ(outcount, 0);
            MPI_Testall(kRequests, requests.data(), &flag, MPI_STATUSES_IGNORE);
            EXPECT_FALSE(flag);
            *released = 1;  // index 5
            MPI_Status status;
            MPI_Waitany(kRequests, requests.data(), &index, &status);
            EXPECT_EQ(index, 5);
            EXPECT_EQ(status.MPI_TAG, 5);
            EXPECT_EQ(requests[5], MPI_REQUEST_NULL);
            *released = 2;  // index 4
            MPI_Waitsome(kRequests, requests.data(), &outcount, indices.data(), statuses.data());
            EXPECT_EQ(outcount, 1);
            EXPECT_EQ(indices[0], 4);
            EXPECT_EQ(statuses[0].MPI_TAG, 4);
            *released = 3;  // index 3
            do {
              MPI_Testany(kRequests, requests.data(), &index, &flag, &status);
            } while (!flag);
            EXPECT_EQ(index, 3);
            *released = 4;  // index 2
            do {
              MPI_Testsome(kRequests, requests.data(), &outcount, indices.data(), statuses.data());
            } while (outcount == 0);
            EXPECT_EQ(indices[0], 2);
            *released = kRequests;
            MPI_Waitall(kRequests, requests.data(), statuses.data());
            EXPECT_EQ(statuses[0].MPI_TAG, 0);
            EXPECT_EQ(statuses[5].MPI_SOURCE, MPI_ANY_SOURCE);  // null: empty
            for (int i = 0; i < kRequests; ++i) EXPECT_EQ(values[i], i);
            // Only null requests left.
            MPI_Waitany(kRequests, requests.data(), &index, MPI_STATUS_IGNORE);
            EXPECT_EQ(index, MPI_UNDEFINED);
            MPI_Waitsome(kRequests, requests.data(), &outcount, indices.data(),
                         MPI_STATUSES_IGNORE);
            EXPECT_EQ(outcount, MPI_UNDEFINED);
            MPI_Testall(kRequests, requests.data(), &flag, MPI_STATUSES_IGNORE);
            EXPECT_TRUE(flag);
          }),
      0);
}

TEST_P(Wait, WaitallReportsErrorsInStatuses) {
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [&](int rank) {
                        errors_return();
                        int values[3] = {1, 2, 3};
                        if (rank == 0) {
                          MPI_Send(values, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
                          MPI_Send(values, 3, MPI_INT, 1, 1, MPI_COMM_WORLD);
                          return;
                        }
                        int in[3] = {0, 0, 0};
                        MPI_Request requests[2];
                        MPI_Irecv(&in[0], 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &requests[0]);
                        MPI_Irecv(&in[1], 2, MPI_INT, 0, 1, MPI_COMM_WORLD, &requests[1]);
                        MPI_Status statuses[2];
                        EXPECT_EQ(MPI_Waitall(2, requests, statuses), MPI_ERR_IN_STATUS);
                        EXPECT_EQ(statuses[0].MPI_ERROR, MPI_SUCCESS);
                        EXPECT_EQ(statuses[1].MPI_ERROR, MPI_ERR_TRUNCATE);
                        EXPECT_EQ(in[1], 1);
                        EXPECT_EQ(in[2], 2);
                      }),
            0);
}

// MPI-4.1 3.2.5: the calls that complete one operation leave the status's MPI_ERROR as the caller
// set it (MPICH's mt_mprobe tests check it); the multiple-completion calls write it, as MPICH's do
// (its part/multipart reads it after MPI_Waitall).
TEST_P(Wait, SuccessfulCompletionsLeaveMpiErrorAlone) {
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [&](int rank) {
                        int values[2] = {7, 8};
                        if (rank == 0) {
                          for (int tag = 0; tag < 5; ++tag) {
                            MPI_Send(values, 2, MPI_INT, 1, tag, MPI_COMM_WORLD);
                          }
                          return;
                        }
                        constexpr int kMark = MPI_ERR_TOPOLOGY;
                        int in[2] = {0, 0};
                        MPI_Status status;
                        status.MPI_ERROR = kMark;
                        MPI_Recv(in, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, &status);
                        EXPECT_EQ(status.MPI_ERROR, kMark);
                        MPI_Request request;
                        MPI_Irecv(in, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, &request);
                        MPI_Wait(&request, &status);
                        EXPECT_EQ(status.MPI_ERROR, kMark);
                        MPI_Message message;
                        MPI_Mprobe(0, 2, MPI_COMM_WORLD, &message, &status);
                        EXPECT_EQ(status.MPI_ERROR, kMark);
                        MPI_Mrecv(in, 2, MPI_INT, &message, &status);
                        EXPECT_EQ(status.MPI_ERROR, kMark);
                        EXPECT_EQ(status.MPI_TAG, 2);
                        MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &status);
                        EXPECT_EQ(status.MPI_ERROR, kMark);
                        EXPECT_EQ(status.MPI_SOURCE, MPI_PROC_NULL);
                        MPI_Request requests[2];
                        MPI_Irecv(in, 2, MPI_INT, 0, 3, MPI_COMM_WORLD, &requests[0]);
                        MPI_Irecv(in, 2, MPI_INT, 0, 4, MPI_COMM_WORLD, &requests[1]);
                        MPI_Status statuses[2];
                        statuses[0].MPI_ERROR = kMark;
                        statuses[1].MPI_ERROR = kMark;
                        EXPECT_EQ(MPI_Waitall(2, requests, statuses), MPI_SUCCESS);
                        EXPECT_EQ(statuses[0].MPI_ERROR, MPI_SUCCESS);
                        EXPECT_EQ(statuses[1].MPI_ERROR, MPI_SUCCESS);
                        EXPECT_EQ(statuses[1].MPI_TAG, 4);
                      }),
            0);
}

TEST_P(Wait, FreedPendingRequestsStillComplete) {
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [&](int rank) {
                        std::vector<int> large(5000, rank);
                        if (rank == 0) {
                          // A rendezvous send freed before its receiver copies from it.
                          MPI_Request request;
                          MPI_Isend(large.data(), 5000, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
                          MPI_Request_free(&request);
                          EXPECT_EQ(request, MPI_REQUEST_NULL);
                          // Its completion is told by another message.
                          int done = 0;
                          MPI_Recv(&done, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                          EXPECT_EQ(done, 1);
                          return;
                        }
                        std::vector<int> in(5000, -1);
                        MPI_Recv(in.data(), 5000, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        EXPECT_EQ(in.back(), 0);
                        const int done = 1;
                        MPI_Send(&done, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
                      }),
            0);
}

TEST_P(Wait, PersistentRequestsRunManyTimes) {
  EXPECT_EQ(
      run_ranks(2, GetParam(),
                [&](int rank) {
                  constexpr int kRounds = 20;
                  std::vector<int> small(1), large(5000);
                  MPI_Request requests[2];
                  if (rank == 0) {
                    MPI_Send_init(small.data(), 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &requests[0]);
                    MPI_Ssend_init(large.data(), 5000, MPI_INT, 1, 1, MPI_COMM_WORLD, &requests[1]);
                  } else {
                    MPI_Recv_init(small.data(), 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &requests[0]);
                    MPI_Recv_init(large.data(), 5000, MPI_INT, 0, 1, MPI_COMM_WORLD, &requests[1]);
                  }
                  // Not started: waits return at once with an empty status.
                  MPI_Status status;
                  MPI_Wait(&requests[0], &status);
                  EXPECT_EQ(status.MPI_TAG, MPI_ANY_TAG);
                  for (int round = 0; round < kRounds; ++round) {
                    if (rank == 0) {
                      small[0] = round;
                      std::fill(large.begin(), large.end(), round);
                    }
                    if (round % 2 == 0) {
                      MPI_Startall(2, requests);
                    } else {
                      MPI_Start(&requests[0]);
                      MPI_Start(&requests[1]);
                    }
                    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
                    EXPECT_NE(requests[0], MPI_REQUEST_NULL);  // persistent: kept
                    if (rank == 1) {
                      EXPECT_EQ(small[0], round);
                      EXPECT_EQ(large.back(), round);
                    }
                  }
                  MPI_Request_free(&requests[0]);
                  MPI_Request_free(&requests[1]);
                  EXPECT_EQ(requests[0], MPI_REQUEST_NULL);
                }),
      0);
}

TEST_P(Wait, PersistentBufferedAndProcNullRequests) {
  EXPECT_EQ(run_ranks(2, GetParam(),
                      [&](int rank) {
                        int value = 0;
                        MPI_Request request;
                        if (rank == 0) {
                          std::vector<char> buffer(5 * (sizeof(int) + MPI_BSEND_OVERHEAD));
                          MPI_Buffer_attach(buffer.data(), static_cast<int>(buffer.size()));
                          MPI_Bsend_init(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &request);
                          for (value = 0; value < 5; ++value) {
                            MPI_Start(&request);
                            MPI_Wait(&request, MPI_STATUS_IGNORE);
                          }
                          MPI_Request_free(&request);
                          void* detached = nullptr;
                          int size = 0;
                          MPI_Buffer_detach(&detached, &size);
                          return;
                        }
                        for (int i = 0; i < 5; ++i) {
                          MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                          EXPECT_EQ(value, i);
                        }
                        MPI_Recv_init(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                                      &request);
                        MPI_Start(&request);
                        MPI_Status status;
                        MPI_Wait(&request, &status);
                        EXPECT_EQ(status.MPI_SOURCE, MPI_PROC_NULL);
                        MPI_Request_free(&request);
                      }),
            0);
}

INSTANTIATE_TEST_SUITE_P(VirtualProcessors, Wait, ::testing::Values(1, 2),
                         [](const auto& info) { return std::to_string(info.param) + "vps"; });

}  // namespace
