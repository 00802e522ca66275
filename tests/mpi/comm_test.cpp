// Communicator management: split (many colors and keys, 1 to 64 ranks on two cores), nested
// splits, dup, split_type, create, free, compare, names, and that traffic on a new communicator
// never matches that of its parent. Membership is checked through MPI_Comm_group against world
// ranks, and each new communicator carries a ring of messages to show that it works.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

// The world ranks of comm's members, in comm rank order.
std::vector<int> world_ranks_of(MPI_Comm comm) {
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Group world = MPI_GROUP_NULL;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int size = 0;
  MPI_Group_size(group, &size);
  std::vector<int> ranks(static_cast<std::size_t>(size));
  std::vector<int> out(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) ranks[i] = i;
  MPI_Group_translate_ranks(group, size, ranks.data(), world, out.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  return out;
}

// Each member sends its world rank to the next member and checks what the previous one sent.
void check_ring(MPI_Comm comm, const std::vector<int>& expected_members) {
  int rank = -1;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &mine);
  int received = -1;
  ASSERT_EQ(MPI_Sendrecv(&mine, 1, MPI_INT, (rank + 1) % size, 7, &received, 1, MPI_INT,
                         (rank + size - 1) % size, 7, comm, MPI_STATUS_IGNORE),
            MPI_SUCCESS);
  EXPECT_EQ(received, expected_members[(rank + size - 1) % size]);
}

// The members a split makes for `color`: parent ranks with that color, by key then parent rank.
std::vector<int> expected_split(int size, int color, int (*color_of)(int), int (*key_of)(int)) {
  std::vector<int> members;
  for (int r = 0; r < size; ++r) {
    if (color_of(r) == color) members.push_back(r);
  }
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return key_of(a) < key_of(b); });
  return members;
}

int color_of(int r) {
  return r % 5 == 4 ? MPI_UNDEFINED : r % 3;
}
int key_of(int r) {
  return (r * 7) % 4;  // many ties, broken by parent rank
}

class Split : public ::testing::TestWithParam<int> {};

TEST_P(Split, ManyColorsAndKeys) {
  const int n = GetParam();
  EXPECT_EQ(run_ranks(n, 2,
                      [n](int rank) {
                        MPI_Comm comm = MPI_COMM_NULL;
                        ASSERT_EQ(
                            MPI_Comm_split(MPI_COMM_WORLD, color_of(rank), key_of(rank), &comm),
                            MPI_SUCCESS);
                        if (color_of(rank) == MPI_UNDEFINED) {
                          EXPECT_EQ(comm, MPI_COMM_NULL);
                          return;
                        }
                        ASSERT_NE(comm, MPI_COMM_NULL);
                        const std::vector<int> expected =
                            expected_split(n, color_of(rank), color_of, key_of);
                        EXPECT_EQ(world_ranks_of(comm), expected);
                        int new_rank = -1;
                        MPI_Comm_rank(comm, &new_rank);
                        EXPECT_EQ(expected[new_rank], rank);
                        check_ring(comm, expected);
                        EXPECT_EQ(MPI_Comm_free(&comm), MPI_SUCCESS);
                        EXPECT_EQ(comm, MPI_COMM_NULL);
                      }),
            0);
}

INSTANTIATE_TEST_SUITE_P(Ranks, Split, ::testing::Values(1, 2, 3, 7, 16, 33, 64));

TEST(Comm, NestedSplitsAndDups) {
  constexpr int kRanks = 24;
  EXPECT_EQ(run_ranks(kRanks, 2,
                      [](int rank) {
                        // Halves, then thirds of each half reversed, then a dup of that.
                        MPI_Comm half = MPI_COMM_NULL;
                        MPI_Comm_split(MPI_COMM_WORLD, rank / (kRanks / 2), rank, &half);
                        int half_rank = -1;
                        MPI_Comm_rank(half, &half_rank);
                        MPI_Comm third = MPI_COMM_NULL;
                        MPI_Comm_split(half, half_rank % 3, -half_rank, &third);
                        MPI_Comm dup = MPI_COMM_NULL;
                        ASSERT_EQ(MPI_Comm_dup(third, &dup), MPI_SUCCESS);

                        std::vector<int> expected;
                        const int base = (rank / (kRanks / 2)) * (kRanks / 2);
                        for (int h = kRanks / 2 - 1; h >= 0; --h) {
                          if (h % 3 == half_rank % 3) expected.push_back(base + h);
                        }
                        EXPECT_EQ(world_ranks_of(third), expected);
                        EXPECT_EQ(world_ranks_of(dup), expected);
                        int result = -1;
                        MPI_Comm_compare(third, dup, &result);
                        EXPECT_EQ(result, MPI_CONGRUENT);
                        check_ring(dup, expected);
                        check_ring(third, expected);
                        for (MPI_Comm* c : {&dup, &third, &half}) {
                          EXPECT_EQ(MPI_Comm_free(c), MPI_SUCCESS);
                        }
                      }),
            0);
}

TEST(Comm, RepeatedDupAndFree) {
  EXPECT_EQ(run_ranks(16, 2,
                      [](int) {
                        for (int i = 0; i < 50; ++i) {
                          MPI_Comm dup = MPI_COMM_NULL;
                          ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
                          int size = 0;
                          MPI_Comm_size(dup, &size);
                          EXPECT_EQ(size, 16);
                          ASSERT_EQ(MPI_Comm_free(&dup), MPI_SUCCESS);
                        }
                      }),
            0);
}

TEST(Comm, SelfDupAndSplit) {
  EXPECT_EQ(run_ranks(4, 2,
                      [](int rank) {
                        MPI_Comm dup = MPI_COMM_NULL;
                        ASSERT_EQ(MPI_Comm_dup(MPI_COMM_SELF, &dup), MPI_SUCCESS);
                        EXPECT_EQ(world_ranks_of(dup), std::vector<int>{rank});
                        MPI_Comm split = MPI_COMM_NULL;
                        ASSERT_EQ(MPI_Comm_split(MPI_COMM_SELF, 3, 0, &split), MPI_SUCCESS);
                        EXPECT_EQ(world_ranks_of(split), std::vector<int>{rank});
                        int result = -1;
                        MPI_Comm_compare(dup, MPI_COMM_SELF, &result);
                        EXPECT_EQ(result, MPI_CONGRUENT);
                        MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_SELF, &result);
                        EXPECT_EQ(result, MPI_IDENT);
                        MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &result);
                        EXPECT_EQ(result, MPI_UNEQUAL);
                        MPI_Comm_free(&dup);
                        MPI_Comm_free(&split);
                      }),
            0);
}

TEST(Comm, Compare) {
  EXPECT_EQ(run_ranks(6, 2,
                      [](int rank) {
                        MPI_Comm dup = MPI_COMM_NULL;
                        MPI_Comm reversed = MPI_COMM_NULL;
                        MPI_Comm half = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
                        MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &reversed);
                        MPI_Comm_split(MPI_COMM_WORLD, rank / 3, rank, &half);
                        int result = -1;
                        MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &result);
                        EXPECT_EQ(result, MPI_IDENT);
                        MPI_Comm_compare(dup, dup, &result);
                        EXPECT_EQ(result, MPI_IDENT);
                        MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
                        EXPECT_EQ(result, MPI_CONGRUENT);
                        MPI_Comm_compare(MPI_COMM_WORLD, reversed, &result);
                        EXPECT_EQ(result, MPI_SIMILAR);
                        MPI_Comm_compare(MPI_COMM_WORLD, half, &result);
                        EXPECT_EQ(result, MPI_UNEQUAL);
                        for (MPI_Comm* c : {&dup, &reversed, &half}) MPI_Comm_free(c);
                      }),
            0);
}

TEST(Comm, WorldOfOneIsCongruentToSelf) {
  EXPECT_EQ(run_ranks(1, 1,
                      [](int) {
                        int result = -1;
                        MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &result);
                        EXPECT_EQ(result, MPI_CONGRUENT);
                      }),
            0);
}

TEST(Comm, SplitTypeSharedKeepsEveryone) {
  EXPECT_EQ(
      run_ranks(8, 2,
                [](int rank) {
                  MPI_Comm shared = MPI_COMM_NULL;
                  ASSERT_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank,
                                                MPI_INFO_NULL, &shared),
                            MPI_SUCCESS);
                  EXPECT_EQ(world_ranks_of(shared), (std::vector<int>{7, 6, 5, 4, 3, 2, 1, 0}));
                  MPI_Comm none = MPI_COMM_SELF;
                  const int type = rank % 2 == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED;
                  ASSERT_EQ(MPI_Comm_split_type(shared, type, 0, MPI_INFO_NULL, &none),
                            MPI_SUCCESS);
                  if (rank % 2 == 0) {
                    EXPECT_EQ(none, MPI_COMM_NULL);
                  } else {
                    EXPECT_EQ(world_ranks_of(none), (std::vector<int>{7, 5, 3, 1}));
                    MPI_Comm_free(&none);
                  }
                  MPI_Comm_free(&shared);
                }),
      0);
}

TEST(Comm, CreateFromAGroup) {
  EXPECT_EQ(run_ranks(9, 2,
                      [](int rank) {
                        MPI_Group world = MPI_GROUP_NULL;
                        MPI_Comm_group(MPI_COMM_WORLD, &world);
                        // Multiples of 3, last first: world ranks 6, 3, 0.
                        int ranges[][3] = {{6, 0, -3}};
                        MPI_Group group = MPI_GROUP_NULL;
                        MPI_Group_range_incl(world, 1, ranges, &group);
                        MPI_Comm comm = MPI_COMM_SELF;
                        ASSERT_EQ(MPI_Comm_create(MPI_COMM_WORLD, group, &comm), MPI_SUCCESS);
                        // The group may go: the communicator does not refer to it.
                        MPI_Group_free(&group);
                        if (rank % 3 != 0) {
                          EXPECT_EQ(comm, MPI_COMM_NULL);
                        } else {
                          const std::vector<int> expected{6, 3, 0};
                          EXPECT_EQ(world_ranks_of(comm), expected);
                          check_ring(comm, expected);
                          MPI_Comm_free(&comm);
                        }
                        MPI_Comm empty = MPI_COMM_SELF;
                        ASSERT_EQ(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &empty),
                                  MPI_SUCCESS);
                        EXPECT_EQ(empty, MPI_COMM_NULL);
                        MPI_Group_free(&world);
                      }),
            0);
}

// MPI-2.2: each member may pass a different group, the groups disjoint; each group becomes its
// own communicator, and a member outside the group it passed gets none.
TEST(Comm, CreateFromDisjointGroups) {
  EXPECT_EQ(run_ranks(9, 2,
                      [](int rank) {
                        MPI_Group world = MPI_GROUP_NULL;
                        MPI_Comm_group(MPI_COMM_WORLD, &world);
                        // Residues 0 and 1 modulo 3 form two groups, in descending order; the
                        // ranks of residue 2 pass an empty group.
                        std::vector<int> members;
                        for (int r = 8; r >= 0; --r) {
                          if (rank % 3 != 2 && r % 3 == rank % 3) members.push_back(r);
                        }
                        MPI_Group group = MPI_GROUP_NULL;
                        MPI_Group_incl(world, static_cast<int>(members.size()), members.data(),
                                       &group);
                        MPI_Comm comm = MPI_COMM_SELF;
                        ASSERT_EQ(MPI_Comm_create(MPI_COMM_WORLD, group, &comm), MPI_SUCCESS);
                        MPI_Group_free(&group);
                        if (members.empty()) {
                          EXPECT_EQ(comm, MPI_COMM_NULL);
                        } else {
                          ASSERT_NE(comm, MPI_COMM_NULL);
                          EXPECT_EQ(world_ranks_of(comm), members);
                          check_ring(comm, members);
                          MPI_Comm_free(&comm);
                        }
                        MPI_Group_free(&world);
                      }),
            0);
}

TEST(Comm, NamesAreLocalWithDefaults) {
  EXPECT_EQ(run_ranks(3, 2,
                      [](int rank) {
                        char name[MPI_MAX_OBJECT_NAME];
                        int length = -1;
                        MPI_Comm_get_name(MPI_COMM_WORLD, name, &length);
                        EXPECT_STREQ(name, "MPI_COMM_WORLD");
                        EXPECT_EQ(length, 14);
                        MPI_Comm_get_name(MPI_COMM_SELF, name, &length);
                        EXPECT_STREQ(name, "MPI_COMM_SELF");
                        MPI_Comm dup = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
                        MPI_Comm_get_name(dup, name, &length);
                        EXPECT_STREQ(name, "");
                        EXPECT_EQ(length, 0);
                        const std::string mine = "dup of rank " + std::to_string(rank);
                        MPI_Comm_set_name(dup, mine.c_str());
                        MPI_Comm_get_name(dup, name, &length);
                        EXPECT_EQ(std::string(name), mine);
                        const std::string long_name(300, 'n');
                        MPI_Comm_set_name(MPI_COMM_WORLD, long_name.c_str());
                        MPI_Comm_get_name(MPI_COMM_WORLD, name, &length);
                        EXPECT_EQ(length, MPI_MAX_OBJECT_NAME - 1);
                        EXPECT_EQ(std::string(name), long_name.substr(0, MPI_MAX_OBJECT_NAME - 1));
                        int flag = 1;
                        EXPECT_EQ(MPI_Comm_test_inter(dup, &flag), MPI_SUCCESS);
                        EXPECT_EQ(flag, 0);
                        MPI_Comm_free(&dup);
                      }),
            0);
}

// The same source, tag and payload size on the parent and on its dup: each receive gets the
// message of its own communicator, whatever the order they were sent in.
TEST(Comm, TrafficOfADupNeverMatchesTheParent) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int rank) {
                        MPI_Comm dup = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
                        if (rank == 0) {
                          const int on_world = 1;
                          const int on_dup = 2;
                          MPI_Request requests[2];
                          MPI_Isend(&on_world, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &requests[0]);
                          MPI_Isend(&on_dup, 1, MPI_INT, 1, 5, dup, &requests[1]);
                          MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
                        } else {
                          int value = 0;
                          MPI_Status status;
                          MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &status);
                          EXPECT_EQ(value, 2);
                          MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                   &status);
                          EXPECT_EQ(value, 1);
                        }
                        MPI_Comm_free(&dup);
                      }),
            0);
}

TEST(Comm, NewCommunicatorsInheritTheErrorHandler) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int rank) {
                        errors_return();
                        MPI_Comm dup = MPI_COMM_NULL;
                        MPI_Comm split = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
                        MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &split);
                        for (MPI_Comm c : {dup, split}) {
                          MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
                          MPI_Comm_get_errhandler(c, &handler);
                          EXPECT_EQ(handler, MPI_ERRORS_RETURN);
                          int v = 0;
                          EXPECT_EQ(MPI_Send(&v, 1, MPI_INT, 9, 0, c), MPI_ERR_RANK);
                        }
                        MPI_Comm_free(&dup);
                        MPI_Comm_free(&split);
                      }),
            0);
}

TEST(Comm, LocalErrorsReturnTheirClass) {
  EXPECT_EQ(
      run_ranks(1, 1,
                [](int) {
                  errors_return();
                  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
                  MPI_Comm out = MPI_COMM_SELF;
                  int result = 0;
                  char name[MPI_MAX_OBJECT_NAME];
                  EXPECT_EQ(MPI_Comm_dup(MPI_COMM_NULL, &out), MPI_ERR_COMM);
                  EXPECT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, nullptr), MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Comm_split(MPI_COMM_WORLD, -3, 0, &out), MPI_ERR_ARG);
                  EXPECT_EQ(out, MPI_COMM_NULL);
                  EXPECT_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, 77, 0, MPI_INFO_NULL, &out),
                            MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &out), MPI_ERR_GROUP);
                  MPI_Comm world = MPI_COMM_WORLD;
                  MPI_Comm self = MPI_COMM_SELF;
                  EXPECT_EQ(MPI_Comm_free(&world), MPI_ERR_COMM);
                  EXPECT_EQ(MPI_Comm_free(&self), MPI_ERR_COMM);
                  EXPECT_EQ(world, MPI_COMM_WORLD);
                  EXPECT_EQ(MPI_Comm_free(nullptr), MPI_ERR_ARG);
                  MPI_Comm null_comm = MPI_COMM_NULL;
                  EXPECT_EQ(MPI_Comm_free(&null_comm), MPI_ERR_COMM);
                  EXPECT_EQ(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &result), MPI_ERR_COMM);
                  EXPECT_EQ(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, nullptr), MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Comm_set_name(MPI_COMM_WORLD, nullptr), MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Comm_get_name(MPI_COMM_WORLD, nullptr, &result), MPI_ERR_ARG);
                  EXPECT_EQ(MPI_Comm_get_name(MPI_COMM_NULL, name, &result), MPI_ERR_COMM);
                  EXPECT_EQ(MPI_Comm_test_inter(MPI_COMM_WORLD, nullptr), MPI_ERR_ARG);
                }),
      0);
}

// A bad argument of one member fails the call in every member instead of leaving the others
// waiting for it.
TEST(Comm, OneMembersBadArgumentFailsEveryMember) {
  EXPECT_EQ(run_ranks(3, 2,
                      [](int rank) {
                        errors_return();
                        MPI_Comm out = MPI_COMM_SELF;
                        EXPECT_EQ(MPI_Comm_split(MPI_COMM_WORLD, rank == 1 ? -5 : 0, 0, &out),
                                  MPI_ERR_ARG);
                        EXPECT_EQ(out, MPI_COMM_NULL);

                        // Different groups in different members.
                        MPI_Group world = MPI_GROUP_NULL;
                        MPI_Comm_group(MPI_COMM_WORLD, &world);
                        MPI_Group mine = MPI_GROUP_NULL;
                        const int first = rank == 2 ? 1 : 0;
                        MPI_Group_incl(world, 1, &first, &mine);
                        out = MPI_COMM_SELF;
                        EXPECT_EQ(MPI_Comm_create(MPI_COMM_WORLD, mine, &out), MPI_ERR_GROUP);
                        EXPECT_EQ(out, MPI_COMM_NULL);
                        MPI_Group_free(&mine);

                        // A group with a rank outside the parent.
                        MPI_Comm pair = MPI_COMM_NULL;
                        MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : 1, 0, &pair);
                        EXPECT_EQ(MPI_Comm_create(pair, world, &out), MPI_ERR_GROUP);
                        MPI_Comm_free(&pair);
                        MPI_Group_free(&world);
                      }),
            0);
}

}  // namespace
