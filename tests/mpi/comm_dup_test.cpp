// Duplication with hints and without blocking: MPI_Comm_idup keeps its place among the caller's
// collectives (a blocking collective issued while it is pending does not meet it), the hints
// weft knows travel with MPI_Comm_dup and are replaced by MPI_Comm_dup_with_info, and
// MPI_Comm_get_info returns what was set, and only that. Also MPI_Comm_split_type's hardware
// types on a synthetic machine of two packages, each a NUMA node of two cores.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mpi_test_util.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/topology.h"

namespace {

using weft::testing::run_ranks;

std::string hint(MPI_Comm comm, const char* key) {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Comm_get_info(comm, &info);
  char value[MPI_MAX_INFO_VAL];
  int flag = 0;
  MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, value, &flag);
  MPI_Info_free(&info);
  return flag ? std::string(value) : std::string("<unset>");
}

TEST(CommDup, IdupKeepsItsPlaceAmongCollectives) {
  EXPECT_EQ(
      run_ranks(6, 2,
                [](int rank) {
                  MPI_Comm dups[3];
                  MPI_Request requests[3];
                  int sums[2] = {0, 0};
                  // Two idups around a blocking allreduce on the same parent, then one
                  // with hints: every member issues them in this order.
                  ASSERT_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &dups[0], &requests[0]), MPI_SUCCESS);
                  MPI_Allreduce(&rank, &sums[0], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
                  ASSERT_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &dups[1], &requests[1]), MPI_SUCCESS);
                  MPI_Info info = MPI_INFO_NULL;
                  MPI_Info_create(&info);
                  MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
                  ASSERT_EQ(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &dups[2], &requests[2]),
                            MPI_SUCCESS);
                  MPI_Info_free(&info);
                  MPI_Waitall(3, requests, MPI_STATUSES_IGNORE);
                  EXPECT_EQ(sums[0], 15);
                  for (MPI_Comm dup : dups) {
                    int result = -1;
                    MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
                    EXPECT_EQ(result, MPI_CONGRUENT);
                    int sum = 0;
                    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup);
                    EXPECT_EQ(sum, 15);
                  }
                  EXPECT_EQ(hint(dups[2], "mpi_assert_no_any_tag"), "true");
                  EXPECT_EQ(hint(dups[0], "mpi_assert_no_any_tag"), "<unset>");
                  for (MPI_Comm& dup : dups) MPI_Comm_free(&dup);
                }),
      0);
}

// MPICH's threads/comm/idup_nb: a member issues nonblocking collectives on a communicator while
// its MPI_Comm_idup of it is pending, and another member makes the same calls only afterwards.
// Rank 1 starts once rank 0 has issued all of them, so rank 0's later calls are on the table
// before rank 1's duplication meets; the duplication still meets as the blocking call it is, in
// its own place, then a blocking call after them all.
TEST(CommDup, IdupMeetsInItsPlaceAfterLaterNonblockingCalls) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int rank) {
                        MPI_Comm parent = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &parent);
                        int go = 0;
                        if (rank == 1) {
                          MPI_Recv(&go, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        }
                        constexpr int kCalls = 10;
                        MPI_Request requests[kCalls];
                        MPI_Comm dup = MPI_COMM_NULL;
                        ASSERT_EQ(MPI_Comm_idup(parent, &dup, &requests[0]), MPI_SUCCESS);
                        // Enough calls after it that some share a call number modulo any
                        // small ring size with the idup.
                        for (int i = 1; i < kCalls - 1; ++i) MPI_Ibarrier(parent, &requests[i]);
                        int sum = -1;
                        MPI_Iallreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, parent,
                                       &requests[kCalls - 1]);
                        if (rank == 0) MPI_Send(&go, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
                        EXPECT_EQ(MPI_Waitall(kCalls, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
                        EXPECT_EQ(sum, 1);
                        int result = -1;
                        MPI_Comm_compare(parent, dup, &result);
                        EXPECT_EQ(result, MPI_CONGRUENT);
                        sum = -1;
                        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup);
                        EXPECT_EQ(sum, 1);
                        sum = -1;
                        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, parent);
                        EXPECT_EQ(sum, 1);
                        MPI_Comm_free(&dup);
                        MPI_Comm_free(&parent);
                      }),
            0);
}

TEST(CommDup, HintsAreSetKeptByDupAndReplacedByDupWithInfo) {
  EXPECT_EQ(run_ranks(3, 2,
                      [](int) {
                        MPI_Comm comm = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
                        MPI_Info info = MPI_INFO_NULL;
                        MPI_Info_create(&info);
                        MPI_Info_set(info, "mpi_assert_no_any_source", "true");
                        MPI_Info_set(info, "mpi_assert_exact_length", "maybe");  // not a boolean
                        MPI_Info_set(info, "weft_unknown_key", "1");
                        ASSERT_EQ(MPI_Comm_set_info(comm, info), MPI_SUCCESS);
                        EXPECT_EQ(hint(comm, "mpi_assert_no_any_source"), "true");
                        EXPECT_EQ(hint(comm, "mpi_assert_exact_length"), "<unset>");
                        EXPECT_EQ(hint(comm, "weft_unknown_key"), "<unset>");
                        // A later set replaces the value of the same key.
                        MPI_Info_set(info, "mpi_assert_no_any_source", "false");
                        MPI_Comm_set_info(comm, info);
                        EXPECT_EQ(hint(comm, "mpi_assert_no_any_source"), "false");
                        MPI_Info_free(&info);

                        MPI_Comm dup = MPI_COMM_NULL;
                        MPI_Comm_dup(comm, &dup);
                        EXPECT_EQ(hint(dup, "mpi_assert_no_any_source"), "false");
                        MPI_Comm_free(&dup);

                        MPI_Info other = MPI_INFO_NULL;
                        MPI_Info_create(&other);
                        MPI_Info_set(other, "mpi_assert_allow_overtaking", "true");
                        ASSERT_EQ(MPI_Comm_dup_with_info(comm, other, &dup), MPI_SUCCESS);
                        EXPECT_EQ(hint(dup, "mpi_assert_allow_overtaking"), "true");
                        EXPECT_EQ(hint(dup, "mpi_assert_no_any_source"), "<unset>");
                        MPI_Info_free(&other);
                        MPI_Comm_free(&dup);
                        MPI_Comm_free(&comm);
                      }),
            0);
}

// The caller's NUMA node and core, by operating-system index.
std::vector<int> place() {
  const weft::Scheduler* scheduler = weft::Scheduler::current();
  const int vp = weft::this_thread::vp();
  const weft::Topology& topology = scheduler->topology();
  return {topology.numa_os_index(scheduler->vp_numa(vp)),
          topology.core(scheduler->vp_core(vp)).os_index};
}

// Every member of `comm` shares the caller's resource `level` (0 NUMA node, 1 core), and comm
// holds every such member of MPI_COMM_WORLD.
void expect_exactly_the_sharers(MPI_Comm comm, int level) {
  const std::vector<int> mine = place();
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  std::vector<int> world(2 * static_cast<std::size_t>(world_size));
  MPI_Allgather(mine.data(), 2, MPI_INT, world.data(), 2, MPI_INT, MPI_COMM_WORLD);
  int sharers = 0;
  for (int r = 0; r < world_size; ++r) sharers += world[2 * r + level] == mine[level] ? 1 : 0;
  int size = 0;
  MPI_Comm_size(comm, &size);
  EXPECT_EQ(size, sharers);
  std::vector<int> members(2 * static_cast<std::size_t>(size));
  MPI_Allgather(mine.data(), 2, MPI_INT, members.data(), 2, MPI_INT, comm);
  for (int r = 0; r < size; ++r) EXPECT_EQ(members[2 * r + level], mine[level]);
}

// How many different resources of `level` (0 NUMA node, 1 core) the members of comm sit on.
int distinct(MPI_Comm comm, int level) {
  const std::vector<int> mine = place();
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<int> all(2 * static_cast<std::size_t>(size));
  MPI_Allgather(mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, comm);
  std::vector<int> seen;
  for (int r = 0; r < size; ++r) {
    if (std::find(seen.begin(), seen.end(), all[2 * r + level]) == seen.end()) {
      seen.push_back(all[2 * r + level]);
    }
  }
  return static_cast<int>(seen.size());
}

TEST(CommSplitType, HardwareLevels) {
  EXPECT_EQ(
      run_ranks(
          8, 4,
          [](int) {
            MPI_Info info = MPI_INFO_NULL;
            MPI_Info_create(&info);
            MPI_Comm comm = MPI_COMM_NULL;
            const char* names[] = {"NUMANode", "core"};
            for (int level = 0; level < 2; ++level) {
              MPI_Info_set(info, "mpi_hw_resource_type", names[level]);
              ASSERT_EQ(
                  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &comm),
                  MPI_SUCCESS);
              ASSERT_NE(comm, MPI_COMM_NULL);
              expect_exactly_the_sharers(comm, level);
              MPI_Comm_free(&comm);
            }
            MPI_Info_set(info, "mpi_hw_resource_type", "gpu");
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &comm);
            EXPECT_EQ(comm, MPI_COMM_NULL);
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &comm);
            EXPECT_EQ(comm, MPI_COMM_NULL);
            MPI_Info_free(&info);
            // Unguided: the widest level that splits the world strictly (spread over processes, the
            // ranks may all sit on one NUMA node), reported in the info; inside it, the next one,
            // or none.
            MPI_Info_create(&info);
            ASSERT_EQ(
                MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &comm),
                MPI_SUCCESS);
            const int level = distinct(MPI_COMM_WORLD, 0) > 1 ? 0 : 1;
            ASSERT_NE(comm, MPI_COMM_NULL);
            expect_exactly_the_sharers(comm, level);
            char value[MPI_MAX_INFO_VAL];
            int flag = 0;
            MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL - 1, value, &flag);
            EXPECT_EQ(flag, 1);
            EXPECT_EQ(std::string(value), level == 0 ? "NUMANode" : "Core");
            MPI_Comm inner = MPI_COMM_NULL;
            ASSERT_EQ(MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &inner),
                      MPI_SUCCESS);
            if (level == 0 && distinct(comm, 1) > 1) {
              ASSERT_NE(inner, MPI_COMM_NULL);
              expect_exactly_the_sharers(inner, 1);
              MPI_Comm_free(&inner);
            } else {
              EXPECT_EQ(inner, MPI_COMM_NULL);
            }
            MPI_Comm_free(&comm);
            MPI_Info_free(&info);
          },
          {{"topology", "synthetic:pack:2 [numa] core:2 pu:1"}}),
      0);
}

}  // namespace
