// Generalized requests (MPI_Grequest_start / _complete) in every waiting and testing call, their
// query, free and cancel callbacks, and the status setters their query functions use.
#include <gtest/gtest.h>

#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

// What one generalized request's callbacks saw and report.
struct Operation {
  int queries = 0;
  int frees = 0;
  int cancels = 0;
  int cancel_complete = -1;  // the `complete` argument of the last cancel_fn
  int query_error = MPI_SUCCESS;
  bool cancelled = false;
  int elements = 3;  // MPI_INTs it says it transferred
};

int query(void* extra_state, MPI_Status* status) {
  Operation& op = *static_cast<Operation*>(extra_state);
  ++op.queries;
  MPI_Status_set_source(status, 7);
  MPI_Status_set_tag(status, 42);
  MPI_Status_set_elements(status, MPI_INT, op.elements);
  MPI_Status_set_cancelled(status, op.cancelled);
  return op.query_error;
}

int free_op(void* extra_state) {
  ++static_cast<Operation*>(extra_state)->frees;
  return MPI_SUCCESS;
}

int cancel(void* extra_state, int complete) {
  Operation& op = *static_cast<Operation*>(extra_state);
  ++op.cancels;
  op.cancel_complete = complete;
  if (!complete) op.cancelled = true;
  return MPI_SUCCESS;
}

MPI_Request start(Operation& op) {
  MPI_Request request = MPI_REQUEST_NULL;
  EXPECT_EQ(MPI_Grequest_start(query, free_op, cancel, &op, &request), MPI_SUCCESS);
  return request;
}

TEST(GeneralizedRequest, WaitAndTestRunQueryThenFree) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        Operation op;
                        MPI_Request request = start(op);
                        int flag = -1;
                        MPI_Status status;
                        ASSERT_EQ(MPI_Test(&request, &flag, &status), MPI_SUCCESS);
                        EXPECT_EQ(flag, 0);
                        EXPECT_EQ(op.queries, 0);
                        ASSERT_EQ(MPI_Grequest_complete(request), MPI_SUCCESS);
                        ASSERT_EQ(MPI_Request_get_status(request, &flag, &status), MPI_SUCCESS);
                        EXPECT_EQ(flag, 1);
                        EXPECT_EQ(op.queries, 1);
                        EXPECT_EQ(op.frees, 0);
                        ASSERT_EQ(MPI_Wait(&request, &status), MPI_SUCCESS);
                        EXPECT_EQ(request, MPI_REQUEST_NULL);
                        EXPECT_EQ(op.queries, 2);
                        EXPECT_EQ(op.frees, 1);
                        int value = -1;
                        MPI_Status_get_source(&status, &value);
                        EXPECT_EQ(value, 7);
                        MPI_Status_get_tag(&status, &value);
                        EXPECT_EQ(value, 42);
                        int count = -1;
                        MPI_Get_count(&status, MPI_INT, &count);
                        EXPECT_EQ(count, 3);
                        MPI_Get_elements(&status, MPI_INT, &count);
                        EXPECT_EQ(count, 3);
                        MPI_Test_cancelled(&status, &flag);
                        EXPECT_EQ(flag, 0);
                      }),
            0);
}

TEST(GeneralizedRequest, AmongOtherRequestsInAnySomeAll) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int rank) {
                        Operation ops[3];
                        MPI_Request requests[4];
                        for (int i = 0; i < 3; ++i) requests[i] = start(ops[i]);
                        int received = -1;
                        const int peer = 1 - rank;
                        MPI_Irecv(&received, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &requests[3]);
                        int index = -1;
                        int flag = -1;
                        MPI_Testany(3, requests, &index, &flag, MPI_STATUS_IGNORE);
                        EXPECT_EQ(flag, 0);
                        MPI_Grequest_complete(requests[1]);
                        MPI_Status status;
                        ASSERT_EQ(MPI_Waitany(3, requests, &index, &status), MPI_SUCCESS);
                        EXPECT_EQ(index, 1);
                        EXPECT_EQ(status.MPI_TAG, 42);
                        EXPECT_EQ(ops[1].frees, 1);
                        MPI_Send(&rank, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
                        MPI_Grequest_complete(requests[2]);
                        int outcount = -1;
                        int indices[4];
                        MPI_Status statuses[4];
                        // The receive may not have arrived yet; the completed greq has.
                        ASSERT_EQ(MPI_Waitsome(4, requests, &outcount, indices, statuses),
                                  MPI_SUCCESS);
                        EXPECT_GE(outcount, 1);
                        MPI_Grequest_complete(requests[0]);
                        ASSERT_EQ(MPI_Waitall(4, requests, statuses), MPI_SUCCESS);
                        for (const Operation& op : ops) {
                          EXPECT_EQ(op.frees, 1);
                          EXPECT_GE(op.queries, 1);
                        }
                        EXPECT_EQ(received, peer);
                      }),
            0);
}

TEST(GeneralizedRequest, FreedBeforeCompleteFreesAtComplete) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        Operation pending;
                        MPI_Request request = start(pending);
                        ASSERT_EQ(MPI_Request_free(&request), MPI_SUCCESS);
                        EXPECT_EQ(request, MPI_REQUEST_NULL);
                        EXPECT_EQ(pending.frees, 0);
                        // The program kept its own handle copy to complete it.
                        Operation done;
                        MPI_Request other = start(done);
                        MPI_Request copy = other;
                        MPI_Grequest_complete(other);
                        MPI_Request_free(&copy);
                        EXPECT_EQ(done.frees, 1);
                        EXPECT_EQ(done.queries, 0);
                      }),
            0);
  // The pending one: completed after its free.
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        Operation op;
                        MPI_Request request = start(op);
                        MPI_Request handle = request;
                        MPI_Request_free(&request);
                        ASSERT_EQ(MPI_Grequest_complete(handle), MPI_SUCCESS);
                        EXPECT_EQ(op.frees, 1);
                        EXPECT_EQ(op.queries, 0);
                      }),
            0);
}

TEST(GeneralizedRequest, CancelAndFailingQuery) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        errors_return();
                        Operation op;
                        MPI_Request request = start(op);
                        ASSERT_EQ(MPI_Cancel(&request), MPI_SUCCESS);
                        EXPECT_EQ(op.cancels, 1);
                        EXPECT_EQ(op.cancel_complete, 0);
                        MPI_Grequest_complete(request);
                        MPI_Status status;
                        MPI_Wait(&request, &status);
                        int flag = 0;
                        MPI_Test_cancelled(&status, &flag);
                        EXPECT_EQ(flag, 1);

                        Operation failing;
                        failing.query_error = MPI_ERR_OTHER;
                        Operation fine;
                        MPI_Request requests[2] = {start(failing), start(fine)};
                        MPI_Grequest_complete(requests[0]);
                        MPI_Grequest_complete(requests[1]);
                        MPI_Status statuses[2];
                        EXPECT_EQ(MPI_Waitall(2, requests, statuses), MPI_ERR_IN_STATUS);
                        EXPECT_EQ(statuses[0].MPI_ERROR, MPI_ERR_OTHER);
                        EXPECT_EQ(statuses[1].MPI_ERROR, MPI_SUCCESS);
                        EXPECT_EQ(failing.frees, 1);
                        Operation single;
                        single.query_error = MPI_ERR_OTHER;
                        MPI_Request one = start(single);
                        MPI_Grequest_complete(one);
                        EXPECT_EQ(MPI_Wait(&one, MPI_STATUS_IGNORE), MPI_ERR_OTHER);
                        EXPECT_EQ(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST);
                      }),
            0);
}

TEST(StatusSetters, ElementsOfMixedTypes) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        // {int, double}: two basic elements per element.
                        const int lengths[2] = {1, 1};
                        const MPI_Aint displacements[2] = {0, 8};
                        const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
                        MPI_Datatype pair = MPI_DATATYPE_NULL;
                        MPI_Type_create_struct(2, lengths, displacements, types, &pair);
                        MPI_Type_commit(&pair);
                        MPI_Status status{};
                        for (int n : {0, 1, 2, 3, 4, 5}) {
                          ASSERT_EQ(MPI_Status_set_elements(&status, pair, n), MPI_SUCCESS);
                          int elements = -1;
                          MPI_Get_elements(&status, pair, &elements);
                          EXPECT_EQ(elements, n);
                          int count = -1;
                          MPI_Get_count(&status, pair, &count);
                          EXPECT_EQ(count, n % 2 == 0 ? n / 2 : MPI_UNDEFINED);
                        }
                        MPI_Count big = 0;
                        ASSERT_EQ(MPI_Status_set_elements_x(&status, MPI_CHAR, 5000000000LL),
                                  MPI_SUCCESS);
                        MPI_Get_elements_x(&status, MPI_CHAR, &big);
                        EXPECT_EQ(big, 5000000000LL);
                        MPI_Status_set_error(&status, MPI_ERR_TAG);
                        int error = 0;
                        MPI_Status_get_error(&status, &error);
                        EXPECT_EQ(error, MPI_ERR_TAG);
                        MPI_Type_free(&pair);
                      }),
            0);
}

}  // namespace
