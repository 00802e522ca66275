// Duplication with hints and without blocking: MPI_Comm_idup keeps its place among the caller's
// collectives (a blocking collective issued while it is pending does not meet it), the hints
// weft knows travel with MPI_Comm_dup and are replaced by MPI_Comm_dup_with_info, and
// MPI_Comm_get_info returns what was set, and only that.
#include <gtest/gtest.h>

#include <string>

#include "mpi_test_util.h"

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

}  // namespace
