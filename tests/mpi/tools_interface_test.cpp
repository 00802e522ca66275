// The tools interface (MPI-4.1 15): weft's configuration keys as control variables, its
// counters as performance variables, before MPI_Init and after MPI_Finalize.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_test_util.h"
#include "weft/config.h"

namespace {

using weft::testing::run_ranks;
using weft::testing::run_test_job;

int cvar_index(const char* name) {
  int index = -1;
  EXPECT_EQ(MPI_T_cvar_get_index(name, &index), MPI_SUCCESS) << name;
  return index;
}

TEST(Tools, ControlVariablesAreTheConfigurationKeys) {
  EXPECT_EQ(
      run_test_job(
          1, 1,
          [](int) {
            int provided = -1;
            // Before MPI_Init, nested.
            EXPECT_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
            EXPECT_EQ(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
            EXPECT_EQ(provided, MPI_THREAD_MULTIPLE);
            int num = 0;
            MPI_T_cvar_get_num(&num);
            EXPECT_EQ(num, static_cast<int>(weft::Config().entries().size()));

            MPI_T_cvar_handle handle;
            int count = 0;
            EXPECT_EQ(
                MPI_T_cvar_handle_alloc(cvar_index("mpi.eager_limit"), nullptr, &handle, &count),
                MPI_SUCCESS);
            EXPECT_EQ(count, 1);
            unsigned long long eager = 0;
            EXPECT_EQ(MPI_T_cvar_read(handle, &eager), MPI_SUCCESS);
            EXPECT_EQ(eager, 16u * 1024);  // the job's --set below
            EXPECT_EQ(MPI_T_cvar_write(handle, &eager), MPI_T_ERR_CVAR_SET_NEVER);
            MPI_T_cvar_handle_free(&handle);
            EXPECT_EQ(handle, MPI_T_CVAR_HANDLE_NULL);

            char name[64];
            int name_len = sizeof name, verbosity, bind, scope;
            MPI_Datatype type;
            MPI_T_enum enumtype;
            const int tasks = cvar_index("placement.tasks");
            MPI_T_cvar_get_info(tasks, name, &name_len, &verbosity, &type, &enumtype, nullptr,
                                nullptr, &bind, &scope);
            EXPECT_STREQ(name, "placement.tasks");
            EXPECT_EQ(name_len, static_cast<int>(std::strlen("placement.tasks")) + 1);
            EXPECT_EQ(type, MPI_INT);
            EXPECT_EQ(scope, MPI_T_SCOPE_CONSTANT);
            int items = 0;
            MPI_T_enum_get_info(enumtype, &items, nullptr, nullptr);
            EXPECT_EQ(items, 3);
            int item_value = -1;
            char item[16];
            int item_len = sizeof item;
            MPI_T_enum_get_item(enumtype, 2, &item_value, item, &item_len);
            EXPECT_STREQ(item, "compact");
            // A truncated copy keeps its terminator and reports the whole length.
            name_len = 4;
            MPI_T_cvar_get_info(tasks, name, &name_len, nullptr, nullptr, nullptr, nullptr, nullptr,
                                nullptr, nullptr);
            EXPECT_STREQ(name, "pla");
            EXPECT_EQ(name_len, 16);

            // The one key a job can change: every wait's spin ceiling.
            const int spin = cvar_index("scheduler.spin_us");
            MPI_T_cvar_get_info(spin, nullptr, nullptr, nullptr, &type, nullptr, nullptr, nullptr,
                                nullptr, &scope);
            EXPECT_EQ(scope, MPI_T_SCOPE_LOCAL);
            MPI_T_cvar_handle_alloc(spin, nullptr, &handle, &count);
            int us = 7;
            EXPECT_EQ(MPI_T_cvar_write(handle, &us), MPI_SUCCESS);
            us = 0;
            MPI_T_cvar_read(handle, &us);
            EXPECT_EQ(us, 7);
            us = -1;
            EXPECT_EQ(MPI_T_cvar_write(handle, &us), MPI_T_ERR_INVALID);
            MPI_T_cvar_handle_free(&handle);

            int category = -1, cvars = 0;
            EXPECT_EQ(MPI_T_category_get_index("mpi", &category), MPI_SUCCESS);
            MPI_T_category_get_info(category, nullptr, nullptr, nullptr, nullptr, &cvars, nullptr,
                                    nullptr);
            std::vector<int> indices(static_cast<std::size_t>(cvars));
            MPI_T_category_get_cvars(category, cvars, indices.data());
            EXPECT_NE(std::find(indices.begin(), indices.end(), cvar_index("mpi.eager_limit")),
                      indices.end());
            EXPECT_EQ(MPI_T_cvar_get_index("no.such.key", &category), MPI_T_ERR_INVALID_NAME);

            MPI_Init(nullptr, nullptr);
            MPI_Finalize();
            EXPECT_EQ(MPI_T_finalize(), MPI_SUCCESS);
            EXPECT_EQ(MPI_T_cvar_get_num(&num), MPI_SUCCESS);  // still once inside
            EXPECT_EQ(MPI_T_finalize(), MPI_SUCCESS);
            EXPECT_EQ(MPI_T_cvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
            EXPECT_EQ(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
            // After MPI_Finalize it starts again.
            EXPECT_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
            EXPECT_EQ(MPI_T_finalize(), MPI_SUCCESS);
            return ::testing::Test::HasFailure() ? 1 : 0;
          },
          {{"mpi.eager_limit", "16K"}}),
      0);
}

MPI_T_pvar_handle pvar(MPI_T_pvar_session session, const char* name, int var_class) {
  int index = -1;
  EXPECT_EQ(MPI_T_pvar_get_index(name, var_class, &index), MPI_SUCCESS) << name;
  MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
  int count = 0;
  EXPECT_EQ(MPI_T_pvar_handle_alloc(session, index, nullptr, &handle, &count), MPI_SUCCESS);
  EXPECT_EQ(count, 1);
  return handle;
}

unsigned long long read(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  unsigned long long value = ~0ull;
  EXPECT_EQ(MPI_T_pvar_read(session, handle, &value), MPI_SUCCESS);
  return value;
}

TEST(Tools, PerformanceVariablesCountMessagesAndTheUnexpectedQueue) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int rank) {
                        int provided;
                        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
                        MPI_T_pvar_session session;
                        ASSERT_EQ(MPI_T_pvar_session_create(&session), MPI_SUCCESS);
                        MPI_T_pvar_handle sent =
                            pvar(session, "mpi_messages_sent", MPI_T_PVAR_CLASS_COUNTER);
                        MPI_T_pvar_handle received =
                            pvar(session, "mpi_messages_received", MPI_T_PVAR_CLASS_COUNTER);
                        MPI_T_pvar_handle unexpected =
                            pvar(session, "mpi_unexpected_queue_length", MPI_T_PVAR_CLASS_LEVEL);
                        // From here on only the messages below count: the barrier's own (between
                        // processes) have all come and gone when it returns.
                        MPI_Barrier(MPI_COMM_WORLD);
                        EXPECT_EQ(MPI_T_pvar_reset(session, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
                        int data[3] = {};
                        if (rank == 0) {
                          MPI_Recv(nullptr, 0, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                          // (Rank 1's go may have arrived before this rank's reset: not counted.)
                          for (int i = 0; i < 3; ++i) {
                            MPI_Send(&data[i], 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
                          }
                          MPI_Ssend(data, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
                          EXPECT_EQ(read(session, sent), 4u);
                          unsigned long long value = 0;
                          EXPECT_EQ(MPI_T_pvar_readreset(session, sent, &value), MPI_SUCCESS);
                          EXPECT_EQ(value, 4u);
                          EXPECT_EQ(read(session, sent), 0u);
                          value = 10;
                          EXPECT_EQ(MPI_T_pvar_write(session, sent, &value), MPI_SUCCESS);
                          EXPECT_EQ(read(session, sent), 10u);
                        } else {
                          MPI_Send(nullptr, 0, MPI_INT, 0, 0, MPI_COMM_WORLD);
                          // The three of tag 1 are queued, in order, before the one of tag 2.
                          MPI_Recv(data, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                          EXPECT_EQ(read(session, unexpected), 3u);
                          for (int i = 0; i < 3; ++i) {
                            MPI_Recv(data, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                          }
                          EXPECT_EQ(read(session, unexpected), 0u);
                          EXPECT_EQ(read(session, received), 4u);
                          EXPECT_EQ(read(session, sent), 1u);
                        }
                        EXPECT_EQ(MPI_T_pvar_start(session, sent), MPI_T_ERR_PVAR_NO_STARTSTOP);
                        EXPECT_EQ(MPI_T_pvar_reset(session, unexpected), MPI_T_ERR_PVAR_NO_WRITE);
                        EXPECT_EQ(MPI_T_pvar_reset(session, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
                        EXPECT_EQ(read(session, received), 0u);
                        MPI_T_pvar_handle_free(session, &sent);
                        EXPECT_EQ(sent, MPI_T_PVAR_HANDLE_NULL);
                        MPI_T_pvar_session_free(&session);
                        EXPECT_EQ(session, MPI_T_PVAR_SESSION_NULL);
                        MPI_T_finalize();
                      }),
            0);
}

}  // namespace
