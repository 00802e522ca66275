// Argument errors of the collectives under MPI_ERRORS_RETURN: each gives its class, a call
// refused before it started takes no meeting (the next collectives still match up), and
// mismatched type signatures give MPI_ERR_TRUNCATE where a receive would, to every member of a
// reduction.
#include "collective_testing.h"

namespace weft::mpi::testing {
namespace {

// Runs body on every rank of a 4-rank job, MPI_COMM_WORLD returning errors, then checks that
// collectives still work.
void run_returning_errors(int vps, const std::function<void(int rank, int size)>& body) {
  run_ranks({4, vps}, [&body](int rank, int size) {
    weft::testing::errors_return();
    body(rank, size);
    int sum = -1;
    EXPECT_EQ(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(sum, size * (size - 1) / 2) << "collectives after the errors";
  });
}

TEST(CollectiveError, RefusedArgumentsGiveTheirClass) {
  run_returning_errors(2, [](int rank, int size) {
    int data[4] = {1, 2, 3, 4};
    int out[4] = {};
    EXPECT_EQ(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_EQ(MPI_Bcast(data, 4, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_EQ(MPI_Bcast(data, 4, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_EQ(MPI_Bcast(data, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_EQ(MPI_Bcast(data, 4, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_EQ(MPI_Bcast(MPI_IN_PLACE, 4, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_EQ(MPI_Bcast(nullptr, 4, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_EQ(MPI_Allreduce(data, out, 4, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_EQ(MPI_Allreduce(data, out, 2, MPI_2INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_EQ(MPI_Allreduce(data, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
              MPI_ERR_BUFFER);
    EXPECT_EQ(MPI_Allreduce(data, data, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_EQ(MPI_Scan(data, out, 4, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);

    std::vector<int> counts(size, 1);
    std::vector<int> displs(size, 0);
    counts[size - 1] = -2;
    EXPECT_EQ(MPI_Alltoallv(data, counts.data(), displs.data(), MPI_INT, out, counts.data(),
                            displs.data(), MPI_INT, MPI_COMM_WORLD),
              MPI_ERR_COUNT);
    EXPECT_EQ(
        MPI_Allgatherv(data, 1, MPI_INT, out, nullptr, displs.data(), MPI_INT, MPI_COMM_WORLD),
        MPI_ERR_ARG);

    // Errors only some ranks make: the others do not call at all, which is fine because a
    // refused call never joins its meeting.
    if (rank != 0) {
      EXPECT_EQ(MPI_Reduce(MPI_IN_PLACE, out, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD),
                MPI_ERR_BUFFER);
      EXPECT_EQ(MPI_Scatter(data, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD),
                MPI_ERR_BUFFER);
      EXPECT_EQ(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD),
                MPI_ERR_BUFFER);
    } else {
      EXPECT_EQ(
          MPI_Gatherv(data, 1, MPI_INT, out, nullptr, displs.data(), MPI_INT, 0, MPI_COMM_WORLD),
          MPI_ERR_ARG);
      const std::vector<int> ones(size, 1);
      EXPECT_EQ(
          MPI_Gatherv(data, 1, MPI_INT, out, ones.data(), nullptr, MPI_INT, 0, MPI_COMM_WORLD),
          MPI_ERR_ARG);
    }
  });
}

TEST(CollectiveError, MismatchedSignaturesTruncate) {
  run_returning_errors(1, [](int rank, int size) {
    // Bcast: the root sends 4 ints, the others have room for 2; only receivers see it.
    int data[4] = {10, 11, 12, 13};
    int room[2] = {-1, -1};
    const int rc = rank == 0 ? MPI_Bcast(data, 4, MPI_INT, 0, MPI_COMM_WORLD)
                             : MPI_Bcast(room, 2, MPI_INT, 0, MPI_COMM_WORLD);
    EXPECT_EQ(rc, rank == 0 ? MPI_SUCCESS : MPI_ERR_TRUNCATE);

    // The same with blocks large enough that every reader copies its own.
    std::vector<int> large(20'000, 7);
    std::vector<int> half(10'000, -1);
    EXPECT_EQ(MPI_Bcast(rank == 0 ? large.data() : half.data(), rank == 0 ? 20'000 : 10'000,
                        MPI_INT, 0, MPI_COMM_WORLD),
              rank == 0 ? MPI_SUCCESS : MPI_ERR_TRUNCATE);
    if (rank != 0)
      expect_elements(
          half, [](std::size_t) { return 7; }, "truncated Bcast");

    // Gather: rank 1 sends 3 where the root takes 2 from each; the root reports it and the
    // blocks of the others are intact.
    std::vector<int> gathered(2 * size + 1, -1);
    int mine[3] = {value(rank, 0), value(rank, 1), value(rank, 2)};
    EXPECT_EQ(MPI_Gather(mine, rank == 1 ? 3 : 2, MPI_INT, gathered.data(), 2, MPI_INT, 0,
                         MPI_COMM_WORLD),
              rank == 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    if (rank == 0) {
      gathered.resize(2 * size);
      expect_elements(
          gathered, [](std::size_t i) { return value(int(i / 2), i % 2); },
          "Gather around a truncated block");
    }

    // Allgather: rank 3 sends 2 where everyone receives 1 per rank.
    std::vector<int> all(size, -1);
    EXPECT_EQ(
        MPI_Allgather(mine, rank == 3 ? 2 : 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD),
        MPI_ERR_TRUNCATE);
  });
}

// Counts differ, so no member can have a full result: every member is told.
TEST(CollectiveError, DisagreeingReductionCountsFailEveryMember) {
  run_returning_errors(1, [](int rank, int) {
    int mine[2] = {value(rank, 0), value(rank, 1)};
    int sum[2] = {-1, -1};
    EXPECT_EQ(MPI_Allreduce(mine, sum, rank == 2 ? 1 : 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
              MPI_ERR_TRUNCATE);
  });
}

}  // namespace
}  // namespace weft::mpi::testing
