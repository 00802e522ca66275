// Groups: the set algebra on groups made directly (no job needed: group calls are local), then
// what needs ranks: MPI_Comm_group, MPI_Group_rank and the error classes.
#include "group/group.h"

#include <gtest/gtest.h>

#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

// A group of these world ranks, freed at the end of the test.
class Groups : public ::testing::Test {
 protected:
  MPI_Group make(std::vector<int> world_ranks) {
    MPI_Group g = weft::mpi::make_group(std::move(world_ranks));
    owned_.push_back(g);
    return g;
  }
  MPI_Group keep(MPI_Group g) {
    owned_.push_back(g);
    return g;
  }
  void TearDown() override {
    for (MPI_Group& g : owned_) EXPECT_EQ(MPI_Group_free(&g), MPI_SUCCESS);
  }

 private:
  std::vector<MPI_Group> owned_;
};

std::vector<int> members(MPI_Group g) {
  return g->members;
}

TEST_F(Groups, SizeAndEmpty) {
  int size = -1;
  EXPECT_EQ(MPI_Group_size(make({4, 2, 9}), &size), MPI_SUCCESS);
  EXPECT_EQ(size, 3);
  EXPECT_EQ(MPI_Group_size(MPI_GROUP_EMPTY, &size), MPI_SUCCESS);
  EXPECT_EQ(size, 0);
  EXPECT_EQ(weft::mpi::make_group({}), MPI_GROUP_EMPTY);
}

TEST_F(Groups, RankOutsideAnyRankIsUndefined) {
  int rank = 0;
  EXPECT_EQ(MPI_Group_rank(make({0, 1}), &rank), MPI_SUCCESS);
  EXPECT_EQ(rank, MPI_UNDEFINED);
}

TEST_F(Groups, InclKeepsTheGivenOrderAndExclTheGroupOrder) {
  const MPI_Group g = make({10, 11, 12, 13, 14});
  const int picked[] = {3, 0, 4};
  MPI_Group incl = MPI_GROUP_NULL;
  MPI_Group excl = MPI_GROUP_NULL;
  ASSERT_EQ(MPI_Group_incl(g, 3, picked, &incl), MPI_SUCCESS);
  ASSERT_EQ(MPI_Group_excl(g, 3, picked, &excl), MPI_SUCCESS);
  EXPECT_EQ(members(keep(incl)), (std::vector<int>{13, 10, 14}));
  EXPECT_EQ(members(keep(excl)), (std::vector<int>{11, 12}));

  MPI_Group none = MPI_GROUP_NULL;
  ASSERT_EQ(MPI_Group_incl(g, 0, nullptr, &none), MPI_SUCCESS);
  EXPECT_EQ(none, MPI_GROUP_EMPTY);
  const int all[] = {0, 1, 2, 3, 4};
  ASSERT_EQ(MPI_Group_excl(g, 5, all, &none), MPI_SUCCESS);
  EXPECT_EQ(none, MPI_GROUP_EMPTY);
}

TEST_F(Groups, RangesExpandForwardAndBackward) {
  std::vector<int> world(10);
  for (int i = 0; i < 10; ++i) world[i] = 100 + i;
  const MPI_Group g = make(world);
  int ranges[][3] = {{0, 6, 3}, {9, 7, -1}, {1, 1, 5}};
  MPI_Group incl = MPI_GROUP_NULL;
  MPI_Group excl = MPI_GROUP_NULL;
  ASSERT_EQ(MPI_Group_range_incl(g, 3, ranges, &incl), MPI_SUCCESS);
  ASSERT_EQ(MPI_Group_range_excl(g, 3, ranges, &excl), MPI_SUCCESS);
  EXPECT_EQ(members(keep(incl)), (std::vector<int>{100, 103, 106, 109, 108, 107, 101}));
  EXPECT_EQ(members(keep(excl)), (std::vector<int>{102, 104, 105}));
}

TEST_F(Groups, SetOperationsFollowGroupOneOrder) {
  const MPI_Group a = make({5, 1, 7, 3});
  const MPI_Group b = make({3, 8, 5, 0});
  MPI_Group u = MPI_GROUP_NULL;
  MPI_Group i = MPI_GROUP_NULL;
  MPI_Group d = MPI_GROUP_NULL;
  ASSERT_EQ(MPI_Group_union(a, b, &u), MPI_SUCCESS);
  ASSERT_EQ(MPI_Group_intersection(a, b, &i), MPI_SUCCESS);
  ASSERT_EQ(MPI_Group_difference(a, b, &d), MPI_SUCCESS);
  EXPECT_EQ(members(keep(u)), (std::vector<int>{5, 1, 7, 3, 8, 0}));
  EXPECT_EQ(members(keep(i)), (std::vector<int>{5, 3}));
  EXPECT_EQ(members(keep(d)), (std::vector<int>{1, 7}));

  MPI_Group e = MPI_GROUP_NULL;
  ASSERT_EQ(MPI_Group_difference(a, a, &e), MPI_SUCCESS);
  EXPECT_EQ(e, MPI_GROUP_EMPTY);
  ASSERT_EQ(MPI_Group_intersection(a, MPI_GROUP_EMPTY, &e), MPI_SUCCESS);
  EXPECT_EQ(e, MPI_GROUP_EMPTY);
  ASSERT_EQ(MPI_Group_union(MPI_GROUP_EMPTY, b, &e), MPI_SUCCESS);
  EXPECT_EQ(members(keep(e)), members(b));
}

TEST_F(Groups, TranslateRanks) {
  const MPI_Group a = make({5, 1, 7, 3});
  const MPI_Group b = make({3, 8, 5});
  const int from[] = {0, 1, 2, 3, MPI_PROC_NULL};
  int to[5] = {};
  ASSERT_EQ(MPI_Group_translate_ranks(a, 5, from, b, to), MPI_SUCCESS);
  EXPECT_EQ(std::vector<int>(to, to + 5),
            (std::vector<int>{2, MPI_UNDEFINED, MPI_UNDEFINED, 0, MPI_PROC_NULL}));
}

TEST_F(Groups, Compare) {
  const MPI_Group a = make({1, 2, 3});
  int result = -1;
  ASSERT_EQ(MPI_Group_compare(a, a, &result), MPI_SUCCESS);
  EXPECT_EQ(result, MPI_IDENT);
  ASSERT_EQ(MPI_Group_compare(a, make({1, 2, 3}), &result), MPI_SUCCESS);
  EXPECT_EQ(result, MPI_IDENT);
  ASSERT_EQ(MPI_Group_compare(a, make({3, 1, 2}), &result), MPI_SUCCESS);
  EXPECT_EQ(result, MPI_SIMILAR);
  ASSERT_EQ(MPI_Group_compare(a, make({1, 2, 4}), &result), MPI_SUCCESS);
  EXPECT_EQ(result, MPI_UNEQUAL);
  ASSERT_EQ(MPI_Group_compare(a, make({1, 2}), &result), MPI_SUCCESS);
  EXPECT_EQ(result, MPI_UNEQUAL);
  ASSERT_EQ(MPI_Group_compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, &result), MPI_SUCCESS);
  EXPECT_EQ(result, MPI_IDENT);
}

TEST(Group, FreeingEmptyResetsTheHandleOnly) {
  MPI_Group g = MPI_GROUP_EMPTY;
  EXPECT_EQ(MPI_Group_free(&g), MPI_SUCCESS);
  EXPECT_EQ(g, MPI_GROUP_NULL);
  int size = -1;
  EXPECT_EQ(MPI_Group_size(MPI_GROUP_EMPTY, &size), MPI_SUCCESS);
  EXPECT_EQ(size, 0);
}

TEST(Group, CommGroupAndRankInEveryRank) {
  EXPECT_EQ(run_ranks(6, 2,
                      [](int rank) {
                        MPI_Group world = MPI_GROUP_NULL;
                        ASSERT_EQ(MPI_Comm_group(MPI_COMM_WORLD, &world), MPI_SUCCESS);
                        int size = 0;
                        int group_rank = -1;
                        MPI_Group_size(world, &size);
                        MPI_Group_rank(world, &group_rank);
                        EXPECT_EQ(size, 6);
                        EXPECT_EQ(group_rank, rank);

                        // Reversed: rank r is 5 - r; the odd ranks are not in `odd_out`.
                        int reversed_ranges[][3] = {{5, 0, -1}};
                        MPI_Group reversed = MPI_GROUP_NULL;
                        MPI_Group_range_incl(world, 1, reversed_ranges, &reversed);
                        MPI_Group_rank(reversed, &group_rank);
                        EXPECT_EQ(group_rank, 5 - rank);
                        int odd_ranges[][3] = {{1, 5, 2}};
                        MPI_Group odd_out = MPI_GROUP_NULL;
                        MPI_Group_range_excl(world, 1, odd_ranges, &odd_out);
                        MPI_Group_rank(odd_out, &group_rank);
                        EXPECT_EQ(group_rank, rank % 2 == 1 ? MPI_UNDEFINED : rank / 2);

                        MPI_Group self = MPI_GROUP_NULL;
                        ASSERT_EQ(MPI_Comm_group(MPI_COMM_SELF, &self), MPI_SUCCESS);
                        int translated = -1;
                        const int zero = 0;
                        MPI_Group_translate_ranks(self, 1, &zero, world, &translated);
                        EXPECT_EQ(translated, rank);

                        for (MPI_Group* g : {&world, &reversed, &odd_out, &self}) {
                          EXPECT_EQ(MPI_Group_free(g), MPI_SUCCESS);
                          EXPECT_EQ(*g, MPI_GROUP_NULL);
                        }
                      }),
            0);
}

TEST(Group, ErrorsReturnTheirClass) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        errors_return();
                        MPI_Group world = MPI_GROUP_NULL;
                        MPI_Comm_group(MPI_COMM_WORLD, &world);
                        MPI_Group out = MPI_GROUP_NULL;
                        int size = 0;
                        EXPECT_EQ(MPI_Group_size(MPI_GROUP_NULL, &size), MPI_ERR_GROUP);
                        EXPECT_EQ(MPI_Group_size(world, nullptr), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Group_union(world, MPI_GROUP_NULL, &out), MPI_ERR_GROUP);
                        const int bad[] = {1};
                        EXPECT_EQ(MPI_Group_incl(world, 1, bad, &out), MPI_ERR_RANK);
                        const int twice[] = {0, 0};
                        EXPECT_EQ(MPI_Group_incl(world, 2, twice, &out), MPI_ERR_RANK);
                        EXPECT_EQ(MPI_Group_excl(world, 1, bad, &out), MPI_ERR_RANK);
                        EXPECT_EQ(MPI_Group_incl(world, -1, bad, &out), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Group_incl(world, 1, nullptr, &out), MPI_ERR_ARG);
                        int zero_stride[][3] = {{0, 0, 0}};
                        EXPECT_EQ(MPI_Group_range_incl(world, 1, zero_stride, &out), MPI_ERR_ARG);
                        int wrong_way[][3] = {{0, 0, 1}, {0, 1, -1}};
                        EXPECT_EQ(MPI_Group_range_incl(world, 2, wrong_way, &out), MPI_ERR_ARG);
                        int outside[][3] = {{0, 3, 1}};
                        EXPECT_EQ(MPI_Group_range_excl(world, 1, outside, &out), MPI_ERR_RANK);
                        int overlap[][3] = {{0, 0, 1}, {0, 0, 1}};
                        EXPECT_EQ(MPI_Group_range_incl(world, 2, overlap, &out), MPI_ERR_RANK);
                        int translated = 0;
                        EXPECT_EQ(MPI_Group_translate_ranks(world, 1, bad, world, &translated),
                                  MPI_ERR_RANK);
                        int result = 0;
                        EXPECT_EQ(MPI_Group_compare(world, world, nullptr), MPI_ERR_ARG);
                        EXPECT_EQ(MPI_Group_compare(MPI_GROUP_NULL, world, &result), MPI_ERR_GROUP);
                        MPI_Group null_group = MPI_GROUP_NULL;
                        EXPECT_EQ(MPI_Group_free(&null_group), MPI_ERR_GROUP);
                        EXPECT_EQ(MPI_Comm_group(MPI_COMM_NULL, &out), MPI_ERR_COMM);
                        EXPECT_EQ(out, MPI_GROUP_NULL);
                        MPI_Group_free(&world);
                      }),
            0);
}

}  // namespace
