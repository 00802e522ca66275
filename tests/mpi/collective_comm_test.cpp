// Collectives as programs use them: many calls back to back (each one's meeting must be the same
// call in every member, and no member may leave while another reads its buffers), on
// MPI_COMM_SELF, and on split communicators interleaved with MPI_COMM_WORLD.
#include <algorithm>

#include "collective_testing.h"

namespace weft::mpi::testing {
namespace {

class CollectiveComm : public ::testing::TestWithParam<Shape> {};

TEST_P(CollectiveComm, ManyCollectivesBackToBack) {
  run_ranks(GetParam(), [](int rank, int size) {
    // Every rank goes through every round even after a wrong result (leaving early would hang
    // the others), and reports only its first wrong one.
    std::string first_wrong;
    auto expect = [&](bool ok, int round, const char* what) {
      if (!ok && first_wrong.empty())
        first_wrong.append(what).append(" in round ").append(std::to_string(round));
    };
    for (int round = 0; round < 200; ++round) {
      // A fresh stack buffer per call, overwritten right after: a member that left while another
      // still read its buffer would show up as a wrong sum.
      int contribution = rank + round;
      int sum = -1;
      MPI_Allreduce(&contribution, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      contribution = -1000000;
      expect(sum == size * (size - 1) / 2 + size * round, round, "Allreduce");

      const int root = round % size;
      int token = rank == root ? round * 3 : -1;
      MPI_Bcast(&token, 1, MPI_INT, root, MPI_COMM_WORLD);
      expect(token == round * 3, round, "Bcast");

      int alone = -1;
      MPI_Allreduce(&contribution, &alone, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
      expect(alone == -1000000, round, "Allreduce on MPI_COMM_SELF");

      if (round % 7 == 0) MPI_Barrier(MPI_COMM_WORLD);

      int prefix = -1;
      int one = 1;
      MPI_Scan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      expect(prefix == rank + 1, round, "Scan");
    }
    EXPECT_EQ(first_wrong, "") << "rank " << rank;
  });
}

TEST_P(CollectiveComm, SelfIsEachRankAlone) {
  run_ranks(GetParam(), [](int rank, int) {
    int data[2] = {rank, rank + 1};
    int gathered[2] = {-1, -1};
    MPI_Gather(data, 2, MPI_INT, gathered, 2, MPI_INT, 0, MPI_COMM_SELF);
    EXPECT_EQ(gathered[0], rank);
    EXPECT_EQ(gathered[1], rank + 1);
    MPI_Allreduce(MPI_IN_PLACE, data, 2, MPI_INT, MPI_MAX, MPI_COMM_SELF);
    EXPECT_EQ(data[1], rank + 1);
    MPI_Bcast(data, 2, MPI_INT, 0, MPI_COMM_SELF);
    int exclusive = -5;
    MPI_Exscan(data, &exclusive, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    EXPECT_EQ(exclusive, -5);
    MPI_Barrier(MPI_COMM_SELF);
  });
}

TEST_P(CollectiveComm, SplitCommunicatorsInterleavedWithWorld) {
  run_ranks(GetParam(), [](int rank, int size) {
    // Three colours; within each, ranks in reverse order of their world rank.
    const int color = rank % 3;
    MPI_Comm part = MPI_COMM_NULL;
    EXPECT_EQ(MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &part), MPI_SUCCESS);
    int part_size = 0;
    int part_rank = -1;
    MPI_Comm_size(part, &part_size);
    MPI_Comm_rank(part, &part_rank);
    // The members of this colour, by part rank: world ranks color, color + 3, ... reversed.
    std::vector<int> members;
    for (int r = color; r < size; r += 3) members.insert(members.begin(), r);
    EXPECT_EQ(part_size, static_cast<int>(members.size()));
    // Checked without leaving: a rank that left would hang the others' next collective.
    EXPECT_EQ(part_rank,
              static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin()));

    for (int round = 0; round < 30; ++round) {
      int world_sum = -1;
      MPI_Allreduce(&rank, &world_sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_EQ(world_sum, size * (size - 1) / 2);

      int part_sum = -1;
      MPI_Allreduce(&rank, &part_sum, 1, MPI_INT, MPI_SUM, part);
      int want = 0;
      for (int r : members) want += r;
      EXPECT_EQ(part_sum, want);

      std::vector<int> order(part_size, -1);
      MPI_Allgather(&rank, 1, MPI_INT, order.data(), 1, MPI_INT, part);
      expect_elements(
          order, [&](std::size_t i) { return members[i]; }, "Allgather on a part");

      int token = part_rank == 0 ? rank * 10 + round : -1;
      MPI_Bcast(&token, 1, MPI_INT, 0, part);
      EXPECT_EQ(token, members[0] * 10 + round);

      int prefix = -1;
      MPI_Scan(&rank, &prefix, 1, MPI_INT, MPI_SUM, part);
      int want_prefix = 0;
      for (int i = 0; i <= part_rank; ++i) want_prefix += members[i];
      EXPECT_EQ(prefix, want_prefix);
    }
    MPI_Comm_free(&part);
  });
}

INSTANTIATE_TEST_SUITE_P(Shapes, CollectiveComm, ::testing::ValuesIn(kShapes), shape_name);

}  // namespace
}  // namespace weft::mpi::testing
