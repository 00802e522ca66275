// Sessions (MPI-4.1 11.3): a library starts and ends MPI on its own, as often as it wants, with
// or without the program's MPI_Init.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::run_test_job;

// What a library does: a session, a communicator over the world's process set, a sum.
void library_sum(int rank, const char* tag) {
  MPI_Session session = MPI_SESSION_NULL;
  ASSERT_EQ(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session), MPI_SUCCESS);
  MPI_Group group;
  ASSERT_EQ(MPI_Group_from_session_pset(session, "mpi://WORLD", &group), MPI_SUCCESS);
  MPI_Comm comm;
  ASSERT_EQ(MPI_Comm_create_from_group(group, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm),
            MPI_SUCCESS);
  MPI_Group_free(&group);
  int size = 0, me = -1, sum = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &me);
  EXPECT_EQ(me, rank);
  MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, comm);
  EXPECT_EQ(sum, size * (size - 1) / 2);
  MPI_Errhandler handler;
  MPI_Comm_get_errhandler(comm, &handler);
  EXPECT_EQ(handler, MPI_ERRORS_RETURN);
  MPI_Comm_free(&comm);
  ASSERT_EQ(MPI_Session_finalize(&session), MPI_SUCCESS);
  EXPECT_EQ(session, MPI_SESSION_NULL);
}

TEST(Session, ALibraryStartsMpiAgainAndAgainBesideTheWorldModel) {
  EXPECT_EQ(run_test_job(3, 2,
                         [](int rank) {
                           int flag = 1;
                           library_sum(rank, "first");
                           library_sum(rank, "second");
                           MPI_Initialized(&flag);
                           EXPECT_EQ(flag, 0);  // sessions are not the world model
                           MPI_Init(nullptr, nullptr);
                           library_sum(rank, "inside");
                           MPI_Finalize();
                           MPI_Finalized(&flag);
                           EXPECT_EQ(flag, 1);
                           library_sum(rank, "after");
                           return ::testing::Test::HasFailure() ? 1 : 0;
                         }),
            0);
}

// The code each session's handler saw last: the ranks of a job in one process run at once.
std::mutex handled_lock;
std::map<MPI_Session, int> handled_codes;
void on_error(MPI_Session* session, int* code, ...) {
  std::lock_guard lock(handled_lock);
  handled_codes[*session] = *code;
}
int handled_code(MPI_Session session) {
  std::lock_guard lock(handled_lock);
  return handled_codes[session];
}

TEST(Session, ProcessSetsInfoAndErrorHandlers) {
  EXPECT_EQ(run_test_job(
                2, 2,
                [](int rank) {
                  MPI_Session session;
                  MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
                  int n = 0;
                  MPI_Session_get_num_psets(session, MPI_INFO_NULL, &n);
                  EXPECT_EQ(n, 2);
                  for (int i = 0; i < n; ++i) {
                    int len = 0;
                    MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, &len, nullptr);
                    std::string name(static_cast<std::size_t>(len), '\0');
                    MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, &len, name.data());
                    EXPECT_EQ(static_cast<int>(std::strlen(name.c_str())) + 1, len);
                    MPI_Info info;
                    EXPECT_EQ(MPI_Session_get_pset_info(session, name.c_str(), &info), MPI_SUCCESS);
                    char size[16] = {};
                    int flag = 0;
                    MPI_Info_get(info, "mpi_size", 15, size, &flag);
                    EXPECT_EQ(std::string(size), i == 0 ? "2" : "1");
                    MPI_Info_free(&info);
                  }
                  MPI_Group self;
                  EXPECT_EQ(MPI_Group_from_session_pset(session, "mpi://self", &self), MPI_SUCCESS);
                  MPI_Comm comm;
                  MPI_Comm_create_from_group(self, "self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
                  int size = 0;
                  MPI_Comm_size(comm, &size);
                  EXPECT_EQ(size, 1);
                  MPI_Comm_free(&comm);
                  MPI_Group_free(&self);

                  MPI_Info info;
                  MPI_Session_get_info(session, &info);
                  char level[64] = {};
                  int flag = 0;
                  MPI_Info_get(info, "thread_level", 63, level, &flag);
                  EXPECT_STREQ(level, "MPI_THREAD_MULTIPLE");
                  MPI_Info_free(&info);

                  MPI_Group group;
                  EXPECT_EQ(MPI_Group_from_session_pset(session, "mpi://nowhere", &group),
                            MPI_ERR_ARG);
                  MPI_Errhandler handler;
                  MPI_Session_create_errhandler(on_error, &handler);
                  MPI_Session_set_errhandler(session, handler);
                  MPI_Errhandler got;
                  MPI_Session_get_errhandler(session, &got);
                  EXPECT_EQ(got, handler);
                  MPI_Session_call_errhandler(session, MPI_ERR_OTHER);
                  EXPECT_EQ(handled_code(session), MPI_ERR_OTHER);
                  MPI_Group_from_session_pset(session, "mpi://nowhere", &group);
                  EXPECT_EQ(handled_code(session), MPI_ERR_ARG);
                  MPI_Session_set_errhandler(session, MPI_ERRORS_RETURN);
                  MPI_Errhandler_free(&handler);
                  MPI_Session_finalize(&session);
                  (void)rank;
                  return ::testing::Test::HasFailure() ? 1 : 0;
                }),
            0);
}

// Libraries in several threads of each rank make communicators from process sets and from
// groups of their own (a subset of the world) at once, each under its own string tag, while the
// main thread runs collectives on MPI_COMM_WORLD: nothing crosses (MPICH's threads/init/
// mult_session).
TEST(Session, ThreadsCreateCommunicatorsFromGroupsConcurrently) {
  EXPECT_EQ(
      run_test_job(4, 2,
                   [](int rank) {
                     int provided = 0;
                     MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
                     std::vector<std::thread> libraries;
                     for (int t = 0; t < 3; ++t) {
                       libraries.emplace_back([rank, t] {
                         MPI_Session session;
                         ASSERT_EQ(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session),
                                   MPI_SUCCESS);
                         MPI_Group world;
                         MPI_Group_from_session_pset(session, "mpi://WORLD", &world);
                         // Thread 0 takes the world, thread 1 the even ranks or the odd ones,
                         // thread 2 the ranks in reverse order.
                         MPI_Group group = world;
                         if (t == 1) {
                           const int parity[2][2] = {{0, 2}, {1, 3}};
                           MPI_Group_incl(world, 2, parity[rank % 2], &group);
                         } else if (t == 2) {
                           const int reverse[4] = {3, 2, 1, 0};
                           MPI_Group_incl(world, 4, reverse, &group);
                         }
                         const std::string tag = "library " + std::to_string(t);
                         MPI_Comm comm = MPI_COMM_NULL;
                         ASSERT_EQ(MPI_Comm_create_from_group(group, tag.c_str(), MPI_INFO_NULL,
                                                              MPI_ERRORS_RETURN, &comm),
                                   MPI_SUCCESS)
                             << tag;
                         int size = 0, me = -1;
                         MPI_Comm_size(comm, &size);
                         MPI_Comm_rank(comm, &me);
                         EXPECT_EQ(size, t == 1 ? 2 : 4) << tag;
                         EXPECT_EQ(me, t == 1 ? rank / 2 : t == 2 ? 3 - rank : rank) << tag;
                         for (int round = 0; round < 20; ++round) {
                           int sum = 0;
                           const int mine = rank + 10 * t;
                           MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm);
                           const int want = t == 1 ? (rank % 2 == 0 ? 2 : 4) + 20 * t : 6 + 40 * t;
                           EXPECT_EQ(sum, want) << tag;
                         }
                         MPI_Comm_free(&comm);
                         if (group != world) MPI_Group_free(&group);
                         MPI_Group_free(&world);
                         EXPECT_EQ(MPI_Session_finalize(&session), MPI_SUCCESS);
                       });
                     }
                     for (int round = 0; round < 20; ++round) {
                       int sum = 0;
                       MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
                       EXPECT_EQ(sum, 6);
                     }
                     for (std::thread& library : libraries) library.join();
                     MPI_Finalize();
                     return ::testing::Test::HasFailure() ? 1 : 0;
                   }),
      0);
}

}  // namespace
