// Argument errors: each check raises its class on the communicator's handler; the default
// handler ends the job with a message that names the call, the rank and what was expected.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::exit_with;
using weft::testing::job_config;
using weft::testing::run_ranks;

TEST(Errors, EachCheckedArgumentRaisesItsClass) {
  EXPECT_EQ(
      run_ranks(
          2, 2,
          [](int rank) {
            errors_return();
            if (rank != 0) return;
            int v = 0;
            MPI_Request request;
            MPI_Status status;
            EXPECT_EQ(MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_NULL), MPI_ERR_COMM);
            EXPECT_EQ(MPI_Send(&v, -1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
            EXPECT_EQ(MPI_Send(&v, 1, MPI_DATATYPE_NULL, 1, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
            EXPECT_EQ(MPI_Send(nullptr, 1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
            EXPECT_EQ(MPI_Send(&v, 1, MPI_INT, 17, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
            EXPECT_EQ(MPI_Send(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
            EXPECT_EQ(MPI_Send(&v, 1, MPI_INT, 1, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
            EXPECT_EQ(MPI_Send(&v, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
            EXPECT_EQ(MPI_Send(&v, 1, MPI_INT, 1, (1 << 30), MPI_COMM_WORLD), MPI_ERR_TAG);
            EXPECT_EQ(MPI_Recv(&v, 1, MPI_INT, 5, 0, MPI_COMM_WORLD, &status), MPI_ERR_RANK);
            EXPECT_EQ(MPI_Recv(&v, 1, MPI_INT, 0, -7, MPI_COMM_WORLD, &status), MPI_ERR_TAG);
            EXPECT_EQ(MPI_Irecv(&v, -2, MPI_INT, 0, 0, MPI_COMM_WORLD, &request), MPI_ERR_COUNT);
            EXPECT_EQ(MPI_Isend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, nullptr), MPI_ERR_ARG);
            EXPECT_EQ(MPI_Wait(nullptr, &status), MPI_ERR_REQUEST);
            EXPECT_EQ(MPI_Waitall(-1, &request, MPI_STATUSES_IGNORE), MPI_ERR_COUNT);
            EXPECT_EQ(MPI_Waitall(2, nullptr, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
            EXPECT_EQ(MPI_Probe(3, 0, MPI_COMM_WORLD, &status), MPI_ERR_RANK);
            EXPECT_EQ(MPI_Comm_size(MPI_COMM_NULL, &v), MPI_ERR_COMM);
            EXPECT_EQ(MPI_Bsend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
            std::vector<char> buffer(64);
            EXPECT_EQ(MPI_Buffer_attach(buffer.data(), 64), MPI_SUCCESS);
            EXPECT_EQ(MPI_Buffer_attach(buffer.data(), 64), MPI_ERR_BUFFER);
            // 64 bytes hold no message at all: MPI_BSEND_OVERHEAD is 128.
            EXPECT_EQ(MPI_Bsend(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
            void* detached = nullptr;
            int size = 0;
            EXPECT_EQ(MPI_Buffer_detach(&detached, &size), MPI_SUCCESS);
            EXPECT_EQ(size, 64);
            // A request that is not persistent cannot be started.
            MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &request);
            EXPECT_EQ(MPI_Start(&request), MPI_ERR_REQUEST);
            MPI_Wait(&request, MPI_STATUS_IGNORE);
            MPI_Request null_request = MPI_REQUEST_NULL;
            EXPECT_EQ(MPI_Request_free(&null_request), MPI_ERR_REQUEST);
            EXPECT_EQ(MPI_Cancel(&null_request), MPI_ERR_REQUEST);
            MPI_Errhandler fatal = MPI_ERRORS_ARE_FATAL;
            EXPECT_EQ(MPI_Errhandler_free(&fatal), MPI_ERR_ARG);
          }),
      0);
}

TEST(Errors, AnUncommittedDatatypeIsRefused) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        errors_return();
                        MPI_Datatype pair;
                        MPI_Type_contiguous(2, MPI_INT, &pair);
                        int v[2] = {0, 0};
                        EXPECT_EQ(MPI_Send(v, 1, pair, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
                        MPI_Type_commit(&pair);
                        MPI_Request request;
                        EXPECT_EQ(MPI_Isend(v, 1, pair, 0, 0, MPI_COMM_WORLD, &request),
                                  MPI_SUCCESS);
                        EXPECT_EQ(MPI_Recv(v, 1, pair, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                                  MPI_SUCCESS);
                        MPI_Wait(&request, MPI_STATUS_IGNORE);
                        MPI_Type_free(&pair);
                      }),
            0);
}

std::atomic<int> handled_class{0};
std::atomic<MPI_Comm> handled_comm{MPI_COMM_NULL};

void record_error(MPI_Comm* comm, int* code, ...) {
  handled_class = *code;
  handled_comm = *comm;
}

TEST(Errors, UserHandlersAreCalledWithTheClass) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        MPI_Errhandler handler;
                        MPI_Comm_create_errhandler(&record_error, &handler);
                        MPI_Comm_set_errhandler(MPI_COMM_SELF, handler);
                        MPI_Errhandler current = MPI_ERRHANDLER_NULL;
                        MPI_Comm_get_errhandler(MPI_COMM_SELF, &current);
                        EXPECT_EQ(current, handler);
                        int v = 0;
                        EXPECT_EQ(MPI_Send(&v, 1, MPI_INT, 3, 0, MPI_COMM_SELF), MPI_ERR_RANK);
                        EXPECT_EQ(handled_class.load(), MPI_ERR_RANK);
                        EXPECT_EQ(handled_comm.load(), MPI_COMM_SELF);
                        MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER);
                        EXPECT_EQ(handled_class.load(), MPI_ERR_OTHER);
                        // MPI_COMM_WORLD keeps its own (fatal) handler.
                        MPI_Comm_get_errhandler(MPI_COMM_WORLD, &current);
                        EXPECT_EQ(current, MPI_ERRORS_ARE_FATAL);
                        MPI_Errhandler_free(&handler);
                        EXPECT_EQ(handler, MPI_ERRHANDLER_NULL);
                      }),
            0);
}

TEST(Errors, ErrorStringsAndClasses) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  EXPECT_EQ(MPI_Error_string(MPI_ERR_RANK, text, &length), MPI_SUCCESS);
  EXPECT_STREQ(text, "MPI_ERR_RANK: invalid rank");
  EXPECT_EQ(length, static_cast<int>(std::string(text).size()));
  int error_class = -1;
  EXPECT_EQ(MPI_Error_class(MPI_ERR_TRUNCATE, &error_class), MPI_SUCCESS);
  EXPECT_EQ(error_class, MPI_ERR_TRUNCATE);
  EXPECT_EQ(MPI_Error_class(12345, &error_class), MPI_ERR_ARG);
}

class ErrorsDeath : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(ErrorsDeath, TheDefaultHandlerEndsTheJobWithAClearMessage) {
  EXPECT_EXIT(exit_with(run_ranks(8, 2,
                                  [](int rank) {
                                    int v = 0;
                                    if (rank == 1) MPI_Send(&v, 1, MPI_INT, 17, 0, MPI_COMM_WORLD);
                                  })),
              ::testing::ExitedWithCode(1),
              "weft: MPI_Send \\(rank 1\\): MPI_ERR_RANK: dest = 17, expected 0\\.\\.7 "
              "\\(MPI_COMM_WORLD has 8 ranks\\) or MPI_PROC_NULL");
}

TEST_F(ErrorsDeath, TruncationIsFatalByDefault) {
  EXPECT_EXIT(exit_with(run_ranks(2, 1,
                                  [](int rank) {
                                    int v[2] = {1, 2};
                                    if (rank == 0) MPI_Send(v, 2, MPI_INT, 1, 9, MPI_COMM_WORLD);
                                    if (rank == 1) {
                                      MPI_Recv(v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD,
                                               MPI_STATUS_IGNORE);
                                    }
                                  })),
              ::testing::ExitedWithCode(1),
              "MPI_Recv \\(rank 1\\): MPI_ERR_TRUNCATE: the message from rank 0 with tag 9 is "
              "larger than the receive buffer");
}

TEST_F(ErrorsDeath, MpiBeforeInitOrAfterFinalizeIsFatal) {
  EXPECT_EXIT(weft::mpi::run_job(job_config(2, 1),
                                 [](int) {
                                   int size = 0;
                                   MPI_Comm_size(MPI_COMM_WORLD, &size);
                                   return 0;
                                 }),
              ::testing::ExitedWithCode(1),
              "weft: MPI_Comm_size \\(rank [01]\\): called before MPI_Init or MPI_Init_thread");
  EXPECT_EXIT(weft::mpi::run_job(job_config(1, 1),
                                 [](int) {
                                   MPI_Init(nullptr, nullptr);
                                   MPI_Finalize();
                                   int v = 0;
                                   MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
                                   return 0;
                                 }),
              ::testing::ExitedWithCode(1),
              "weft: MPI_Send \\(rank 0\\): called after MPI_Finalize");
  int v = 0;
  EXPECT_EXIT(MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), ::testing::ExitedWithCode(1),
              "weft: MPI_Send called outside an MPI job");
}

TEST_F(ErrorsDeath, AbortEndsTheJobWithItsCode) {
  EXPECT_EXIT(exit_with(run_ranks(4, 2,
                                  [](int rank) {
                                    if (rank == 2) MPI_Abort(MPI_COMM_WORLD, 3);
                                    int v = 0;
                                    // The others wait for a message that never comes.
                                    MPI_Recv(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD,
                                             MPI_STATUS_IGNORE);
                                  })),
              ::testing::ExitedWithCode(3),
              "weft: MPI_Abort called by rank 2 on MPI_COMM_WORLD with code 3");
  // A code of 0 (or one whose low byte is 0) still says failure.
  EXPECT_EXIT(exit_with(run_ranks(2, 1,
                                  [](int rank) {
                                    if (rank == 0) MPI_Abort(MPI_COMM_SELF, 256);
                                  })),
              ::testing::ExitedWithCode(1),
              "weft: MPI_Abort called by rank 0 on MPI_COMM_SELF with code 256");
}

}  // namespace
