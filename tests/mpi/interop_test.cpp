// Handle and status conversions between C and Fortran (MPI-4.1 19.3.4, 19.3.5): predefined
// handles at fixed integers, the program's objects given integers on conversion and taken back,
// invalid integers converting to null handles, ranks converting at once, and statuses kept whole
// through every pair of forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

#include "interop/handle_kinds.h"
#include "interop/handle_table.h"
#include "mpi_test_util.h"

namespace {

using weft::mpi::interop::HandleSlots;
using weft::testing::run_ranks;

TEST(HandleConversion, PredefinedHandlesHaveFixedIntegersAndNullIsZero) {
  // The integers mpif.h gives these names: their position in their kind's list.
  EXPECT_EQ(MPI_Comm_c2f(MPI_COMM_WORLD), 1);
  EXPECT_EQ(MPI_Comm_c2f(MPI_COMM_SELF), 2);
  EXPECT_EQ(MPI_Comm_f2c(1), MPI_COMM_WORLD);
  EXPECT_EQ(MPI_Comm_f2c(2), MPI_COMM_SELF);
  EXPECT_EQ(MPI_Type_c2f(MPI_CHAR), 1);
  EXPECT_EQ(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE_PRECISION)), MPI_DOUBLE_PRECISION);
  EXPECT_EQ(MPI_Type_c2f(MPI_LONG_LONG_INT), MPI_Type_c2f(MPI_LONG_LONG));  // one object
  EXPECT_EQ(MPI_Op_f2c(MPI_Op_c2f(MPI_MINLOC)), MPI_MINLOC);
  EXPECT_EQ(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)), MPI_GROUP_EMPTY);
  EXPECT_EQ(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)), MPI_MESSAGE_NO_PROC);
  EXPECT_EQ(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)), MPI_ERRORS_RETURN);
  EXPECT_NE(MPI_Errhandler_c2f(MPI_ERRORS_RETURN), MPI_Errhandler_c2f(MPI_ERRORS_ARE_FATAL));
  EXPECT_EQ(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_ENV)), MPI_INFO_ENV);

  EXPECT_EQ(MPI_Comm_c2f(MPI_COMM_NULL), 0);
  EXPECT_EQ(MPI_Group_c2f(MPI_GROUP_NULL), 0);
  EXPECT_EQ(MPI_Type_c2f(MPI_DATATYPE_NULL), 0);
  EXPECT_EQ(MPI_Op_c2f(MPI_OP_NULL), 0);
  EXPECT_EQ(MPI_Request_c2f(MPI_REQUEST_NULL), 0);
  EXPECT_EQ(MPI_Message_c2f(MPI_MESSAGE_NULL), 0);
  EXPECT_EQ(MPI_Errhandler_c2f(MPI_ERRHANDLER_NULL), 0);
  EXPECT_EQ(MPI_Info_c2f(MPI_INFO_NULL), 0);
  EXPECT_EQ(MPI_Win_c2f(MPI_WIN_NULL), 0);
  EXPECT_EQ(MPI_Session_c2f(MPI_SESSION_NULL), 0);
}

TEST(HandleConversion, IntegersThatNameNothingGiveNullHandles) {
  for (MPI_Fint bad : {0, -1, -1000, 1 << 30, 2147483647, 999999}) {
    EXPECT_EQ(MPI_Comm_f2c(bad), MPI_COMM_NULL) << bad;
    EXPECT_EQ(MPI_Type_f2c(bad), MPI_DATATYPE_NULL) << bad;
    EXPECT_EQ(MPI_Request_f2c(bad), MPI_REQUEST_NULL) << bad;
    EXPECT_EQ(MPI_Win_f2c(bad), MPI_WIN_NULL) << bad;
    EXPECT_EQ(MPI_Session_f2c(bad), MPI_SESSION_NULL) << bad;
  }
}

TEST(HandleSlots, IntegersAreTakenBackAndReusedOldestFirst) {
  int predefined_object = 0;
  void* const predefined[] = {&predefined_object};
  HandleSlots slots(predefined);
  int objects[4];
  MPI_Fint a = slots.integer(&objects[0]);
  MPI_Fint b = slots.integer(&objects[1]);
  EXPECT_EQ(a, 2);  // after the predefined one
  EXPECT_EQ(b, 3);
  EXPECT_EQ(slots.object(a), &objects[0]);
  EXPECT_EQ(slots.object(1), &predefined_object);

  slots.take_back(a);
  slots.take_back(b);
  EXPECT_EQ(slots.object(a), nullptr);
  EXPECT_EQ(slots.object(b), nullptr);
  slots.take_back(1);  // predefined: kept
  EXPECT_EQ(slots.object(1), &predefined_object);
  slots.take_back(a);  // already taken back: nothing happens
  EXPECT_EQ(slots.live(), 1u);

  EXPECT_EQ(slots.integer(&objects[2]), a);  // the oldest freed integer first
  EXPECT_EQ(slots.integer(&objects[3]), b);
  EXPECT_EQ(slots.integer(&objects[0]), 4);  // a new integer: it was taken back
  EXPECT_EQ(slots.object(a), &objects[2]);
}

// A communicator's object is shared by its members in a process: each rank converts it and frees
// it; the integer names it until the last of them frees it.
TEST(HandleSlots, ASharedObjectKeepsItsIntegerUntilItsLastHolderFreesIt) {
  HandleSlots slots({});
  int shared = 0;
  MPI_Fint first = slots.integer(&shared);
  EXPECT_EQ(slots.integer(&shared), first);  // a second rank: the same integer
  slots.take_back(first);                    // the first rank frees it
  EXPECT_EQ(slots.object(first), &shared);   // the second still holds it
  slots.take_back(first);
  EXPECT_EQ(slots.object(first), nullptr);
}

TEST(HandleSlots, ThreadsGiveOutAndTakeBackAtOnce) {
  HandleSlots slots({});
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  std::vector<std::vector<char>> objects(kThreads, std::vector<char>(64));
  int shared = 0;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        char* object = &objects[t][round % 64];
        MPI_Fint handle = slots.integer(object);
        MPI_Fint shared_handle = slots.integer(&shared);
        // Other threads give out and take back their own integers meanwhile, never these.
        if (slots.object(handle) != object || slots.object(shared_handle) != &shared) ++wrong;
        slots.take_back(handle);
        slots.take_back(shared_handle);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(slots.live(), 0u);
}

TEST(HandleConversion, RanksConvertTheirObjectsAtOnce) {
  EXPECT_EQ(
      run_ranks(
          4, 2,
          [](int rank) {
            MPI_Comm dup;
            MPI_Comm_dup(MPI_COMM_WORLD, &dup);
            MPI_Fint fdup = MPI_Comm_c2f(dup);
            EXPECT_GT(fdup, 2);
            EXPECT_EQ(MPI_Comm_f2c(fdup), dup);

            MPI_Datatype pair;
            MPI_Type_contiguous(2, MPI_INT, &pair);
            MPI_Type_commit(&pair);
            MPI_Fint fpair = MPI_Type_c2f(pair);
            EXPECT_EQ(MPI_Type_f2c(fpair), pair);

            // A ring through Fortran integers of every handle involved.
            int size = 0;
            MPI_Comm_size(MPI_Comm_f2c(fdup), &size);
            int out[2] = {rank, -rank}, in[2] = {-1, -1};
            MPI_Request requests[2];
            MPI_Irecv(in, 1, MPI_Type_f2c(fpair), (rank + size - 1) % size, 5, MPI_Comm_f2c(fdup),
                      &requests[0]);
            MPI_Isend(out, 1, MPI_Type_f2c(fpair), (rank + 1) % size, 5, MPI_Comm_f2c(fdup),
                      &requests[1]);
            MPI_Fint frequests[2] = {MPI_Request_c2f(requests[0]), MPI_Request_c2f(requests[1])};
            EXPECT_NE(frequests[0], frequests[1]);
            for (MPI_Fint f : frequests) {
              MPI_Request request = MPI_Request_f2c(f);
              MPI_Wait(&request, MPI_STATUS_IGNORE);
              EXPECT_EQ(request, MPI_REQUEST_NULL);
              weft_mpi_request_fortran_free(f);
              EXPECT_EQ(MPI_Request_f2c(f), MPI_REQUEST_NULL);
            }
            int from = (rank + size - 1) % size;
            EXPECT_EQ(in[0], from);
            EXPECT_EQ(in[1], -from);

            MPI_Type_free(&pair);
            weft_mpi_datatype_fortran_free(fpair);
            EXPECT_EQ(MPI_Type_f2c(fpair), MPI_DATATYPE_NULL);
            MPI_Comm_free(&dup);
            weft_mpi_comm_fortran_free(fdup);
            // The ranks of this process shared the object: its integer is taken back when the
            // last of them has freed it.
            MPI_Barrier(MPI_COMM_WORLD);
            EXPECT_EQ(MPI_Comm_f2c(fdup), MPI_COMM_NULL);
          }),
      0);
}

TEST(HandleConversion, MatchedMessageThroughItsInteger) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int rank) {
                        int value = rank == 0 ? 42 : 0;
                        if (rank == 0) {
                          MPI_Send(&value, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
                          return;
                        }
                        MPI_Message message;
                        MPI_Status status;
                        MPI_Mprobe(0, 9, MPI_COMM_WORLD, &message, &status);
                        MPI_Fint fmessage = MPI_Message_c2f(message);
                        EXPECT_GT(fmessage, 1);  // not MPI_MESSAGE_NO_PROC's
                        message = MPI_Message_f2c(fmessage);
                        MPI_Mrecv(&value, 1, MPI_INT, &message, MPI_STATUS_IGNORE);
                        EXPECT_EQ(value, 42);
                        EXPECT_EQ(message, MPI_MESSAGE_NULL);
                        weft_mpi_message_fortran_free(fmessage);
                      }),
            0);
}

TEST(StatusConversion, EveryFormKeepsTheWholeStatus) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        double out[3] = {1, 2, 3}, in[8];
                        MPI_Status status;
                        MPI_Sendrecv(out, 3, MPI_DOUBLE, 0, 17, in, 8, MPI_DOUBLE, 0, 17,
                                     MPI_COMM_SELF, &status);
                        MPI_Fint f[MPI_F_STATUS_SIZE];
                        ASSERT_EQ(MPI_Status_c2f(&status, f), MPI_SUCCESS);
                        EXPECT_EQ(f[MPI_F_SOURCE], 0);
                        EXPECT_EQ(f[MPI_F_TAG], 17);
                        EXPECT_EQ(f[MPI_F_ERROR], status.MPI_ERROR);

                        MPI_F08_status f08;
                        ASSERT_EQ(MPI_Status_f2f08(f, &f08), MPI_SUCCESS);
                        EXPECT_EQ(f08.MPI_TAG, 17);
                        MPI_Fint f_again[MPI_F_STATUS_SIZE];
                        ASSERT_EQ(MPI_Status_f082f(&f08, f_again), MPI_SUCCESS);
                        EXPECT_TRUE(std::equal(f, f + MPI_F_STATUS_SIZE, f_again));

                        MPI_Status back;
                        ASSERT_EQ(MPI_Status_f082c(&f08, &back), MPI_SUCCESS);
                        int count = -1, cancelled = -1;
                        MPI_Get_count(&back, MPI_DOUBLE, &count);
                        EXPECT_EQ(count, 3);
                        MPI_Test_cancelled(&back, &cancelled);
                        EXPECT_EQ(cancelled, 0);
                        EXPECT_EQ(back.MPI_SOURCE, 0);

                        MPI_Status_set_cancelled(&status, 1);
                        MPI_Status_set_elements(&status, MPI_BYTE, 1 << 20);
                        MPI_Status_c2f08(&status, &f08);
                        MPI_Status_f082f(&f08, f);
                        ASSERT_EQ(MPI_Status_f2c(f, &back), MPI_SUCCESS);
                        MPI_Test_cancelled(&back, &cancelled);
                        EXPECT_EQ(cancelled, 1);
                        MPI_Get_count(&back, MPI_BYTE, &count);
                        EXPECT_EQ(count, 1 << 20);
                      }),
            0);
}

TEST(StatusConversion, IgnoreStatusesAreRefused) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        weft::testing::errors_return();
                        MPI_Status status{};
                        MPI_Fint f[MPI_F_STATUS_SIZE] = {};
                        MPI_F08_status f08{};
                        EXPECT_EQ(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Status_c2f(&status, MPI_F_STATUS_IGNORE), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &status), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Status_f2c(MPI_F_STATUSES_IGNORE, &status), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Status_f082c(MPI_F08_STATUS_IGNORE, &status), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Status_c2f08(&status, MPI_F08_STATUSES_IGNORE), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Status_f2f08(f, &f08), MPI_SUCCESS);
                      }),
            0);
}

}  // namespace
