// MPI_Isendrecv and MPI_Isendrecv_replace: a ring exchange through one request each, the
// receive's status at the wait, the send ordered with the rank's later sends, MPI_PROC_NULL.
#include <gtest/gtest.h>

#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::run_ranks;

TEST(Isendrecv, RingExchangeCompletesWithTheReceivesStatus) {
  EXPECT_EQ(run_ranks(4, 2,
                      [](int rank) {
                        const int size = 4;
                        const int right = (rank + 1) % size;
                        const int left = (rank + size - 1) % size;
                        std::vector<int> out(100, rank);
                        std::vector<int> in(100, -1);
                        MPI_Request request;
                        ASSERT_EQ(MPI_Isendrecv(out.data(), 100, MPI_INT, right, 7, in.data(), 100,
                                                MPI_INT, left, 7, MPI_COMM_WORLD, &request),
                                  MPI_SUCCESS);
                        // A later plain send to the same peer arrives after the Isendrecv's.
                        const int later = 1000 + rank;
                        MPI_Send(&later, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
                        MPI_Status status;
                        ASSERT_EQ(MPI_Wait(&request, &status), MPI_SUCCESS);
                        EXPECT_EQ(request, MPI_REQUEST_NULL);
                        EXPECT_EQ(in[0], left);
                        EXPECT_EQ(in[99], left);
                        EXPECT_EQ(status.MPI_SOURCE, left);
                        EXPECT_EQ(status.MPI_TAG, 7);
                        int count = -1;
                        MPI_Get_count(&status, MPI_INT, &count);
                        EXPECT_EQ(count, 100);
                        int received = -1;
                        MPI_Recv(&received, 1, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        EXPECT_EQ(received, 1000 + left);
                      }),
            0);
}

TEST(Isendrecv, ReplaceSendsTheOldContentsAndReceivesIntoTheSameBuffer) {
  EXPECT_EQ(run_ranks(3, 2,
                      [](int rank) {
                        const int right = (rank + 1) % 3;
                        const int left = (rank + 2) % 3;
                        std::vector<double> buf(5000, rank + 0.5);
                        MPI_Request request;
                        ASSERT_EQ(MPI_Isendrecv_replace(buf.data(), 5000, MPI_DOUBLE, right, 1,
                                                        left, 1, MPI_COMM_WORLD, &request),
                                  MPI_SUCCESS);
                        MPI_Status status;
                        ASSERT_EQ(MPI_Wait(&request, &status), MPI_SUCCESS);
                        EXPECT_EQ(buf[0], left + 0.5);
                        EXPECT_EQ(buf[4999], left + 0.5);
                        EXPECT_EQ(status.MPI_SOURCE, left);
                      }),
            0);
}

TEST(Isendrecv, ProcNullOnBothSidesCompletesWithTheProcNullStatus) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        int out = 5;
                        int in = -1;
                        MPI_Request request;
                        ASSERT_EQ(MPI_Isendrecv(&out, 1, MPI_INT, MPI_PROC_NULL, 0, &in, 1, MPI_INT,
                                                MPI_PROC_NULL, 0, MPI_COMM_WORLD, &request),
                                  MPI_SUCCESS);
                        MPI_Status status;
                        MPI_Wait(&request, &status);
                        EXPECT_EQ(status.MPI_SOURCE, MPI_PROC_NULL);
                        EXPECT_EQ(status.MPI_TAG, MPI_ANY_TAG);
                        EXPECT_EQ(in, -1);
                      }),
            0);
}

}  // namespace
