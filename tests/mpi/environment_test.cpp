// MPI's environment calls in ranks: initialisation state, thread levels, versions, clocks,
// communicator sizes and ranks.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

#include "mpi_test_util.h"
#include "weft/error.h"
#include "weft/thread.h"

namespace {

TEST(Environment, InitialisationStateAndThreadLevels) {
  EXPECT_EQ(weft::testing::run_test_job(
                3, 2,
                [](int rank) {
                  int flag = 1;
                  MPI_Initialized(&flag);
                  EXPECT_FALSE(flag);
                  int provided = -1;
                  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
                  EXPECT_EQ(provided, MPI_THREAD_MULTIPLE);
                  MPI_Initialized(&flag);
                  EXPECT_TRUE(flag);
                  MPI_Finalized(&flag);
                  EXPECT_FALSE(flag);
                  MPI_Is_thread_main(&flag);
                  EXPECT_TRUE(flag);
                  weft::ThreadAttr attr;
                  attr.rank = rank;
                  int helper_main = 1;
                  weft::spawn(attr, [&] { MPI_Is_thread_main(&helper_main); }).join();
                  EXPECT_FALSE(helper_main);
                  MPI_Finalize();
                  MPI_Finalized(&flag);
                  EXPECT_TRUE(flag);
                  MPI_Initialized(&flag);
                  EXPECT_TRUE(flag);  // stays true after MPI_Finalize
                  return 0;
                }),
            0);
}

TEST(Environment, SizesRanksNamesAndClocks) {
  weft::testing::Shared<std::atomic<int>> ranks_seen(0);
  EXPECT_EQ(weft::testing::run_ranks(6, 1,
                                     [&](int rank) {
                                       int size = 0, me = -1;
                                       MPI_Comm_size(MPI_COMM_WORLD, &size);
                                       MPI_Comm_rank(MPI_COMM_WORLD, &me);
                                       EXPECT_EQ(size, 6);
                                       EXPECT_EQ(me, rank);
                                       MPI_Comm_size(MPI_COMM_SELF, &size);
                                       MPI_Comm_rank(MPI_COMM_SELF, &me);
                                       EXPECT_EQ(size, 1);
                                       EXPECT_EQ(me, 0);
                                       int version = 0, subversion = 0;
                                       MPI_Get_version(&version, &subversion);
                                       EXPECT_EQ(version, 3);
                                       EXPECT_EQ(subversion, 1);
                                       char name[MPI_MAX_PROCESSOR_NAME];
                                       int length = 0;
                                       MPI_Get_processor_name(name, &length);
                                       EXPECT_GT(length, 0);
                                       EXPECT_EQ(length, static_cast<int>(std::strlen(name)));
                                       char library[MPI_MAX_LIBRARY_VERSION_STRING];
                                       MPI_Get_library_version(library, &length);
                                       EXPECT_NE(std::strstr(library, "weft"), nullptr);
                                       const double before = MPI_Wtime();
                                       EXPECT_LE(before, MPI_Wtime());
                                       EXPECT_GT(MPI_Wtick(), 0.0);
                                       EXPECT_EQ(MPI_Pcontrol(1), MPI_SUCCESS);
                                       ranks_seen->fetch_add(1);
                                     }),
            0);
  EXPECT_EQ(ranks_seen->load(), 6);
}

// Placement: more cores per rank than a NUMA node has cannot run.
TEST(Environment, AnImpossiblePlacementThrows) {
  EXPECT_THROW(
      weft::mpi::run_job(weft::testing::job_config(2, 2, {{"placement.cores_per_task", "3"}}),
                         [](int) { return 0; }),
      weft::Error);
}

}  // namespace
