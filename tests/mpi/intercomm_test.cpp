// Intercommunicators: MPI_Intercomm_create between two halves of the world (groups of equal and
// unequal sizes, leaders other than rank 0), what each side sees of the other (sizes, groups,
// MPI_Comm_test_inter), point-to-point to remote ranks, MPI_Intercomm_merge's order, dup, compare
// and free, and MPI_Comm_create_group, which only the group's members call.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "mpi_test_util.h"

namespace {

using weft::testing::errors_return;
using weft::testing::run_ranks;

// The world ranks of a group, in group order.
std::vector<int> world_ranks_of(MPI_Group group) {
  MPI_Group world = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int size = 0;
  MPI_Group_size(group, &size);
  std::vector<int> ranks(static_cast<std::size_t>(size));
  std::vector<int> out(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) ranks[i] = i;
  MPI_Group_translate_ranks(group, size, ranks.data(), world, out.data());
  MPI_Group_free(&world);
  return out;
}

// World ranks below `cut` form group A, the others group B; each group is ordered by descending
// world rank, so that comm ranks differ from world ranks.
struct Halves {
  int cut;
  bool in_a(int world_rank) const { return world_rank < cut; }
  std::vector<int> group(bool a, int size) const {
    std::vector<int> members;
    for (int r = size - 1; r >= 0; --r) {
      if (in_a(r) == a) members.push_back(r);
    }
    return members;
  }
};

// The caller's local communicator of its half, and the intercommunicator between the halves, with
// leaders at local rank `leader` (modulo the group's size) and MPI_COMM_WORLD as peer.
void make_intercomm(const Halves& halves, int rank, int size, int leader, MPI_Comm* local,
                    MPI_Comm* inter) {
  const bool a = halves.in_a(rank);
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, a ? 0 : 1, size - rank, local), MPI_SUCCESS);
  const std::vector<int> mine = halves.group(a, size);
  const std::vector<int> theirs = halves.group(!a, size);
  const int local_leader = leader % static_cast<int>(mine.size());
  const int remote_leader = theirs[static_cast<std::size_t>(leader) % theirs.size()];
  ASSERT_EQ(MPI_Intercomm_create(*local, local_leader, MPI_COMM_WORLD, remote_leader, 42, inter),
            MPI_SUCCESS);
}

struct Shape {
  int ranks;
  int cut;
  int leader;
};

void PrintTo(const Shape& shape, std::ostream* out) {
  *out << shape.ranks << " ranks, cut " << shape.cut << ", leader " << shape.leader;
}

class Intercomm : public ::testing::TestWithParam<Shape> {};

TEST_P(Intercomm, EachSideSeesTheOtherAndTalksToIt) {
  const Shape shape = GetParam();
  EXPECT_EQ(run_ranks(shape.ranks, 2,
                      [shape](int rank) {
                        const Halves halves{shape.cut};
                        MPI_Comm local = MPI_COMM_NULL;
                        MPI_Comm inter = MPI_COMM_NULL;
                        make_intercomm(halves, rank, shape.ranks, shape.leader, &local, &inter);
                        const bool a = halves.in_a(rank);
                        const std::vector<int> mine = halves.group(a, shape.ranks);
                        const std::vector<int> theirs = halves.group(!a, shape.ranks);
                        int flag = 0;
                        int size = 0;
                        int remote_size = 0;
                        int me = -1;
                        MPI_Comm_test_inter(inter, &flag);
                        EXPECT_EQ(flag, 1);
                        MPI_Comm_test_inter(local, &flag);
                        EXPECT_EQ(flag, 0);
                        MPI_Comm_size(inter, &size);
                        MPI_Comm_remote_size(inter, &remote_size);
                        MPI_Comm_rank(inter, &me);
                        EXPECT_EQ(size, static_cast<int>(mine.size()));
                        EXPECT_EQ(remote_size, static_cast<int>(theirs.size()));
                        ASSERT_GE(me, 0);
                        EXPECT_EQ(mine[me], rank);
                        MPI_Group group = MPI_GROUP_NULL;
                        MPI_Comm_group(inter, &group);
                        EXPECT_EQ(world_ranks_of(group), mine);
                        MPI_Group_free(&group);
                        MPI_Comm_remote_group(inter, &group);
                        EXPECT_EQ(world_ranks_of(group), theirs);
                        MPI_Group_free(&group);

                        // Every member sends its world rank to every remote rank, and receives one
                        // from each, first by name, then from any source.
                        std::vector<MPI_Request> sends(theirs.size());
                        for (int r = 0; r < remote_size; ++r) {
                          MPI_Isend(&rank, 1, MPI_INT, r, 5, inter, &sends[r]);
                        }
                        for (int r = remote_size - 1; r >= 0; --r) {
                          int got = -1;
                          MPI_Status status;
                          ASSERT_EQ(MPI_Recv(&got, 1, MPI_INT, r, 5, inter, &status), MPI_SUCCESS);
                          EXPECT_EQ(got, theirs[r]);
                          EXPECT_EQ(status.MPI_SOURCE, r);
                        }
                        MPI_Waitall(remote_size, sends.data(), MPI_STATUSES_IGNORE);
                        for (int r = 0; r < remote_size; ++r) {
                          MPI_Send(&rank, 1, MPI_INT, r, 6, inter);
                        }
                        std::vector<int> seen(theirs.size(), 0);
                        for (int k = 0; k < remote_size; ++k) {
                          int got = -1;
                          MPI_Status status;
                          ASSERT_EQ(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 6, inter, &status),
                                    MPI_SUCCESS);
                          ASSERT_GE(status.MPI_SOURCE, 0);
                          ASSERT_LT(status.MPI_SOURCE, remote_size);
                          EXPECT_EQ(got, theirs[status.MPI_SOURCE]);
                          ++seen[status.MPI_SOURCE];
                        }
                        EXPECT_EQ(seen, std::vector<int>(theirs.size(), 1));
                        EXPECT_EQ(MPI_Comm_free(&inter), MPI_SUCCESS);
                        EXPECT_EQ(inter, MPI_COMM_NULL);
                        MPI_Comm_free(&local);
                      }),
            0);
}

TEST_P(Intercomm, MergeOrdersTheGroupsByHighThenByGroup) {
  const Shape shape = GetParam();
  EXPECT_EQ(run_ranks(shape.ranks, 2,
                      [shape](int rank) {
                        const Halves halves{shape.cut};
                        MPI_Comm local = MPI_COMM_NULL;
                        MPI_Comm inter = MPI_COMM_NULL;
                        make_intercomm(halves, rank, shape.ranks, shape.leader, &local, &inter);
                        const bool a = halves.in_a(rank);
                        const std::vector<int> group_a = halves.group(true, shape.ranks);
                        const std::vector<int> group_b = halves.group(false, shape.ranks);
                        auto concat = [](std::vector<int> x, const std::vector<int>& y) {
                          x.insert(x.end(), y.begin(), y.end());
                          return x;
                        };
                        // The group passing high = 0 comes first. When both pass the same,
                        // MPI leaves the order to the implementation; weft puts first the group
                        // whose rank 0 has the lower world rank: A's (cut - 1, B's is size - 1).
                        struct Case {
                          int high_a;
                          int high_b;
                          std::vector<int> expected;
                        };
                        const std::vector<Case> cases = {
                            {1, 0, concat(group_b, group_a)},
                            {0, 1, concat(group_a, group_b)},
                            {0, 0, concat(group_a, group_b)},
                            {1, 1, concat(group_a, group_b)},
                        };
                        for (const Case& c : cases) {
                          MPI_Comm merged = MPI_COMM_NULL;
                          ASSERT_EQ(MPI_Intercomm_merge(inter, a ? c.high_a : c.high_b, &merged),
                                    MPI_SUCCESS);
                          int flag = 1;
                          MPI_Comm_test_inter(merged, &flag);
                          EXPECT_EQ(flag, 0);
                          MPI_Group group = MPI_GROUP_NULL;
                          MPI_Comm_group(merged, &group);
                          EXPECT_EQ(world_ranks_of(group), c.expected);
                          MPI_Group_free(&group);
                          int sum = 0;
                          MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
                          EXPECT_EQ(sum, shape.ranks * (shape.ranks - 1) / 2);
                          MPI_Comm_free(&merged);
                        }
                        MPI_Comm_free(&inter);
                        MPI_Comm_free(&local);
                      }),
            0);
}

TEST_P(Intercomm, DupIsCongruentAndItsTrafficStaysApart) {
  const Shape shape = GetParam();
  EXPECT_EQ(run_ranks(shape.ranks, 2,
                      [shape](int rank) {
                        const Halves halves{shape.cut};
                        MPI_Comm local = MPI_COMM_NULL;
                        MPI_Comm inter = MPI_COMM_NULL;
                        make_intercomm(halves, rank, shape.ranks, shape.leader, &local, &inter);
                        MPI_Comm dup = MPI_COMM_NULL;
                        ASSERT_EQ(MPI_Comm_dup(inter, &dup), MPI_SUCCESS);
                        int result = -1;
                        MPI_Comm_compare(inter, dup, &result);
                        EXPECT_EQ(result, MPI_CONGRUENT);
                        MPI_Comm_compare(inter, inter, &result);
                        EXPECT_EQ(result, MPI_IDENT);
                        MPI_Comm_compare(inter, local, &result);
                        EXPECT_EQ(result, MPI_UNEQUAL);
                        int flag = 0;
                        MPI_Comm_test_inter(dup, &flag);
                        EXPECT_EQ(flag, 1);
                        // Remote rank 0 of each side: a message on the parent and one on the
                        // dup, same tag; the receives, in the other order, each get their own.
                        int me = -1;
                        MPI_Comm_rank(inter, &me);
                        if (me == 0) {
                          const int on_parent = 1;
                          const int on_dup = 2;
                          MPI_Request requests[2];
                          MPI_Isend(&on_parent, 1, MPI_INT, 0, 9, inter, &requests[0]);
                          MPI_Isend(&on_dup, 1, MPI_INT, 0, 9, dup, &requests[1]);
                          int got_dup = 0;
                          int got_parent = 0;
                          MPI_Recv(&got_dup, 1, MPI_INT, 0, 9, dup, MPI_STATUS_IGNORE);
                          MPI_Recv(&got_parent, 1, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE);
                          EXPECT_EQ(got_dup, 2);
                          EXPECT_EQ(got_parent, 1);
                          MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
                        }
                        MPI_Comm_free(&dup);
                        MPI_Comm_free(&inter);
                        MPI_Comm_free(&local);
                      }),
            0);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Intercomm,
                         ::testing::Values(Shape{2, 1, 0}, Shape{3, 1, 0}, Shape{5, 2, 1},
                                           Shape{8, 4, 3}, Shape{9, 7, 2}),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return std::to_string(info.param.ranks) + "ranks_cut" +
                                  std::to_string(info.param.cut) + "_leader" +
                                  std::to_string(info.param.leader);
                         });

TEST(Intercomm, CreateFromSelfAndWithADupAsPeer) {
  EXPECT_EQ(run_ranks(2, 2,
                      [](int rank) {
                        MPI_Comm peer = MPI_COMM_NULL;
                        MPI_Comm_dup(MPI_COMM_WORLD, &peer);
                        MPI_Comm inter = MPI_COMM_NULL;
                        ASSERT_EQ(MPI_Intercomm_create(MPI_COMM_SELF, 0, peer, 1 - rank, 0, &inter),
                                  MPI_SUCCESS);
                        int remote_size = 0;
                        MPI_Comm_remote_size(inter, &remote_size);
                        EXPECT_EQ(remote_size, 1);
                        int got = -1;
                        MPI_Sendrecv(&rank, 1, MPI_INT, 0, 1, &got, 1, MPI_INT, 0, 1, inter,
                                     MPI_STATUS_IGNORE);
                        EXPECT_EQ(got, 1 - rank);
                        MPI_Comm merged = MPI_COMM_NULL;
                        MPI_Intercomm_merge(inter, rank, &merged);
                        int merged_rank = -1;
                        MPI_Comm_rank(merged, &merged_rank);
                        EXPECT_EQ(merged_rank, rank);
                        MPI_Comm_free(&merged);
                        MPI_Comm_free(&inter);
                        MPI_Comm_free(&peer);
                      }),
            0);
}

TEST(CommCreateGroup, OnlyTheGroupCallsIt) {
  constexpr int kRanks = 7;
  EXPECT_EQ(
      run_ranks(kRanks, 2,
                [](int rank) {
                  // The multiples of 3 in descending order; the others go on with their own
                  // communicator made from the rest, concurrently, under another tag.
                  MPI_Group world = MPI_GROUP_NULL;
                  MPI_Comm_group(MPI_COMM_WORLD, &world);
                  std::vector<int> members;
                  for (int r = kRanks - 1; r >= 0; --r) {
                    if ((r % 3 == 0) == (rank % 3 == 0)) members.push_back(r);
                  }
                  MPI_Group group = MPI_GROUP_NULL;
                  MPI_Group_incl(world, static_cast<int>(members.size()), members.data(), &group);
                  MPI_Comm comm = MPI_COMM_NULL;
                  ASSERT_EQ(
                      MPI_Comm_create_group(MPI_COMM_WORLD, group, rank % 3 == 0 ? 11 : 12, &comm),
                      MPI_SUCCESS);
                  ASSERT_NE(comm, MPI_COMM_NULL);
                  int size = 0;
                  int me = -1;
                  MPI_Comm_size(comm, &size);
                  MPI_Comm_rank(comm, &me);
                  EXPECT_EQ(size, static_cast<int>(members.size()));
                  ASSERT_GE(me, 0);
                  EXPECT_EQ(members[me], rank);
                  int sum = 0;
                  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
                  int expected = 0;
                  for (int r : members) expected += r;
                  EXPECT_EQ(sum, expected);
                  MPI_Comm_free(&comm);
                  // A group without the caller: nothing to join, MPI_COMM_NULL.
                  MPI_Group others = MPI_GROUP_NULL;
                  MPI_Group_excl(world, 1, &rank, &others);
                  if (rank == 0) {
                    comm = MPI_COMM_SELF;
                    EXPECT_EQ(MPI_Comm_create_group(MPI_COMM_WORLD, others, 3, &comm), MPI_SUCCESS);
                    EXPECT_EQ(comm, MPI_COMM_NULL);
                  }
                  MPI_Group_free(&others);
                  MPI_Group_free(&group);
                  MPI_Group_free(&world);
                }),
      0);
}

TEST(Intercomm, ErrorsReturnTheirClass) {
  EXPECT_EQ(
      run_ranks(
          2, 2,
          [](int rank) {
            errors_return();
            MPI_Comm out = MPI_COMM_NULL;
            int size = 0;
            MPI_Group group = MPI_GROUP_NULL;
            EXPECT_EQ(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &out), MPI_ERR_COMM);
            EXPECT_EQ(MPI_Comm_remote_size(MPI_COMM_WORLD, &size), MPI_ERR_COMM);
            EXPECT_EQ(MPI_Comm_remote_group(MPI_COMM_WORLD, &group), MPI_ERR_COMM);
            EXPECT_EQ(MPI_Intercomm_create(MPI_COMM_WORLD, 5, MPI_COMM_WORLD, 0, 0, &out),
                      MPI_ERR_RANK);
            EXPECT_EQ(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, 0, -4, &out),
                      MPI_ERR_TAG);
            // Both groups are the whole world: every member is told so.
            EXPECT_EQ(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, 0, 0, &out),
                      MPI_ERR_GROUP);
            EXPECT_EQ(out, MPI_COMM_NULL);
            MPI_Comm inter = MPI_COMM_NULL;
            ASSERT_EQ(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, 1 - rank, 0, &inter),
                      MPI_SUCCESS);
            MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
            int value = 0;
            EXPECT_EQ(MPI_Send(&value, 1, MPI_INT, 1, 0, inter), MPI_ERR_RANK);
            EXPECT_EQ(MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, 0, 0, &out), MPI_ERR_COMM);
            EXPECT_EQ(MPI_Comm_create_group(inter, group, 0, &out), MPI_ERR_COMM);
            MPI_Comm_free(&inter);
          }),
      0);
}

}  // namespace
