// Collectives between processes, which run in two levels (a meeting inside each process, then
// one head per process over the transport), checked against values computed here: on the world
// and on a communicator whose processes interleave in rank order, with uneven groups, every root,
// varying counts, MPI_IN_PLACE, a non-commutative operation, and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "mpi.h"
#include "mpi_test_util.h"
#include "process_job.h"

namespace {

using weft::testing::run_processes;

struct Shape {
  int processes;
  int ranks;
};

class Hierarchy : public ::testing::TestWithParam<Shape> {
 protected:
  // Runs body(comm) in every rank, on the world and on a communicator that orders the ranks
  // evens first, which interleaves the processes' blocks of world ranks.
  void each_comm(const std::function<void(MPI_Comm comm)>& body) {
    const Shape shape = GetParam();
    EXPECT_EQ(0, run_processes(shape.processes, shape.ranks, 2, [&](int rank) {
                weft::testing::errors_return();
                body(MPI_COMM_WORLD);
                MPI_Comm interleaved;
                ASSERT_EQ(MPI_SUCCESS,
                          MPI_Comm_split(MPI_COMM_WORLD, 0, (rank % 2) * shape.ranks + rank,
                                         &interleaved));
                MPI_Comm_set_errhandler(interleaved, MPI_ERRORS_RETURN);
                body(interleaved);
                MPI_Comm_free(&interleaved);
              }));
  }
};

int value(int rank, std::size_t i) {
  return rank * 1000 + static_cast<int>(i % 997);
}

std::vector<int> values(int rank, std::size_t count) {
  std::vector<int> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = value(rank, i);
  return v;
}

struct Where {
  int rank;
  int size;
};

Where where(MPI_Comm comm) {
  Where w{};
  MPI_Comm_rank(comm, &w.rank);
  MPI_Comm_size(comm, &w.size);
  return w;
}

// Member r's block size in the v forms: 0 to 3 elements, some empty.
int varying(int r) {
  return (r * 5 + 1) % 4;
}

std::vector<int> displacements(const std::vector<int>& counts) {
  // A one-element gap after every block: nothing may be written there.
  std::vector<int> displs(counts.size());
  int at = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displs[r] = at;
    at += counts[r] + 1;
  }
  return displs;
}

TEST_P(Hierarchy, BcastFromEveryRoot) {
  each_comm([](MPI_Comm comm) {
    const Where w = where(comm);
    for (std::size_t count : {std::size_t{3}, std::size_t{70000}}) {
      for (int root = 0; root < w.size; ++root) {
        std::vector<int> data = w.rank == root ? values(root, count) : std::vector<int>(count, -1);
        ASSERT_EQ(MPI_SUCCESS,
                  MPI_Bcast(data.data(), static_cast<int>(count), MPI_INT, root, comm));
        ASSERT_EQ(values(root, count), data) << "root " << root << ", count " << count;
      }
    }
  });
}

TEST_P(Hierarchy, ReduceAndAllreduceSum) {
  each_comm([](MPI_Comm comm) {
    const Where w = where(comm);
    for (std::size_t count : {std::size_t{2}, std::size_t{20000}}) {
      std::vector<int> expected(count, 0);
      for (int r = 0; r < w.size; ++r) {
        for (std::size_t i = 0; i < count; ++i) expected[i] += value(r, i);
      }
      const int n = static_cast<int>(count);
      const std::vector<int> mine = values(w.rank, count);
      for (int root = 0; root < w.size; ++root) {
        std::vector<int> out(count, -1);
        ASSERT_EQ(MPI_SUCCESS,
                  MPI_Reduce(mine.data(), out.data(), n, MPI_INT, MPI_SUM, root, comm));
        if (w.rank == root) {
          ASSERT_EQ(expected, out) << "root " << root;
        }
      }
      std::vector<int> out(count, -1);
      ASSERT_EQ(MPI_SUCCESS, MPI_Allreduce(mine.data(), out.data(), n, MPI_INT, MPI_SUM, comm));
      EXPECT_EQ(expected, out);
      std::vector<int> in_place = mine;
      ASSERT_EQ(MPI_SUCCESS,
                MPI_Allreduce(MPI_IN_PLACE, in_place.data(), n, MPI_INT, MPI_SUM, comm));
      EXPECT_EQ(expected, in_place);
    }
  });
}

// 2x2 matrices modulo a prime: their product does not commute, so the result shows the order.
constexpr std::int64_t kPrime = 1000003;
using Matrix = std::array<std::int64_t, 4>;

Matrix times(const Matrix& a, const Matrix& b) {
  return {(a[0] * b[0] + a[1] * b[2]) % kPrime, (a[0] * b[1] + a[1] * b[3]) % kPrime,
          (a[2] * b[0] + a[3] * b[2]) % kPrime, (a[2] * b[1] + a[3] * b[3]) % kPrime};
}

Matrix matrix_of(int rank, std::size_t i) {
  return {rank + 2, static_cast<std::int64_t>(i % 7) + 1, rank % 3, 1};
}

void multiply(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<Matrix*>(in);
  auto* b = static_cast<Matrix*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = times(a[i], b[i]);
}

TEST_P(Hierarchy, NonCommutativeReductionsKeepRankOrder) {
  each_comm([](MPI_Comm comm) {
    const Where w = where(comm);
    MPI_Datatype matrix;
    MPI_Type_contiguous(4, MPI_INT64_T, &matrix);
    MPI_Type_commit(&matrix);
    MPI_Op op;
    MPI_Op_create(&multiply, 0, &op);
    constexpr std::size_t kCount = 5;
    std::vector<Matrix> mine(kCount);
    for (std::size_t i = 0; i < kCount; ++i) mine[i] = matrix_of(w.rank, i);
    auto product = [&](int from, int to) {
      std::vector<Matrix> p(kCount, Matrix{1, 0, 0, 1});
      for (int r = from; r < to; ++r) {
        for (std::size_t i = 0; i < kCount; ++i) p[i] = times(p[i], matrix_of(r, i));
      }
      return p;
    };
    const int n = static_cast<int>(kCount);
    std::vector<Matrix> out(kCount);
    ASSERT_EQ(MPI_SUCCESS, MPI_Allreduce(mine.data(), out.data(), n, matrix, op, comm));
    EXPECT_EQ(product(0, w.size), out);
    const int root = w.size - 1;
    ASSERT_EQ(MPI_SUCCESS, MPI_Reduce(mine.data(), out.data(), n, matrix, op, root, comm));
    if (w.rank == root) {
      EXPECT_EQ(product(0, w.size), out);
    }
    ASSERT_EQ(MPI_SUCCESS, MPI_Scan(mine.data(), out.data(), n, matrix, op, comm));
    EXPECT_EQ(product(0, w.rank + 1), out);
    MPI_Op_free(&op);
    MPI_Type_free(&matrix);
  });
}

TEST_P(Hierarchy, GatherAndScatterAtEveryRoot) {
  each_comm([](MPI_Comm comm) {
    const Where w = where(comm);
    constexpr int kBlock = 3;
    for (int root = 0; root < w.size; ++root) {
      const bool at_root = w.rank == root;
      const std::vector<int> mine = values(w.rank, kBlock);
      std::vector<int> all(at_root ? static_cast<std::size_t>(kBlock * w.size) : 0, -1);
      ASSERT_EQ(MPI_SUCCESS,
                MPI_Gather(mine.data(), kBlock, MPI_INT, all.data(), kBlock, MPI_INT, root, comm));
      std::vector<int> everyone;
      for (int r = 0; r < w.size; ++r) {
        for (int v : values(r, kBlock)) everyone.push_back(v);
      }
      if (at_root) {
        ASSERT_EQ(everyone, all) << "gather at " << root;
      }

      std::vector<int> block(kBlock, -1);
      const std::vector<int> source = at_root ? everyone : std::vector<int>{};
      ASSERT_EQ(MPI_SUCCESS, MPI_Scatter(source.data(), kBlock, MPI_INT, block.data(), kBlock,
                                         MPI_INT, root, comm));
      ASSERT_EQ(mine, block) << "scatter from " << root;

      // The v forms with gaps, and in place at the root.
      std::vector<int> counts(static_cast<std::size_t>(w.size));
      for (int r = 0; r < w.size; ++r) counts[r] = varying(r);
      const std::vector<int> displs = displacements(counts);
      const int extent = displs.back() + counts.back() + 1;
      std::vector<int> gathered(at_root ? static_cast<std::size_t>(extent) : 0, -1);
      std::vector<int> expected(gathered.size(), -1);
      for (int r = 0; at_root && r < w.size; ++r) {
        for (int i = 0; i < counts[r]; ++i) expected[displs[r] + i] = value(r, i);
      }
      if (at_root) {
        for (int i = 0; i < counts[root]; ++i) gathered[displs[root] + i] = value(root, i);
      }
      ASSERT_EQ(MPI_SUCCESS,
                MPI_Gatherv(at_root ? MPI_IN_PLACE : mine.data(), varying(w.rank), MPI_INT,
                            gathered.data(), counts.data(), displs.data(), MPI_INT, root, comm));
      if (at_root) {
        ASSERT_EQ(expected, gathered) << "gatherv at " << root;
      }

      std::vector<int> part(kBlock, -1);
      ASSERT_EQ(MPI_SUCCESS, MPI_Scatterv(expected.data(), counts.data(), displs.data(), MPI_INT,
                                          at_root ? MPI_IN_PLACE : part.data(), varying(w.rank),
                                          MPI_INT, root, comm));
      if (!at_root) {
        for (int i = 0; i < kBlock; ++i) {
          ASSERT_EQ(i < varying(w.rank) ? value(w.rank, i) : -1, part[i]) << "scatterv " << root;
        }
      }
    }
  });
}

TEST_P(Hierarchy, AllgatherAndAlltoall) {
  each_comm([](MPI_Comm comm) {
    const Where w = where(comm);
    const auto size = static_cast<std::size_t>(w.size);
    for (int block : {2, 600}) {
      const auto b = static_cast<std::size_t>(block);
      std::vector<int> everyone;
      for (int r = 0; r < w.size; ++r) {
        for (int v : values(r, b)) everyone.push_back(v);
      }
      const std::vector<int> mine = values(w.rank, b);
      std::vector<int> all(size * b, -1);
      ASSERT_EQ(MPI_SUCCESS,
                MPI_Allgather(mine.data(), block, MPI_INT, all.data(), block, MPI_INT, comm));
      EXPECT_EQ(everyone, all);
      std::vector<int> in_place(size * b, -1);
      std::copy(mine.begin(), mine.end(), in_place.begin() + static_cast<long>(w.rank * b));
      ASSERT_EQ(MPI_SUCCESS, MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, in_place.data(),
                                           block, MPI_INT, comm));
      EXPECT_EQ(everyone, in_place);

      // Alltoall: rank s sends rank d the block values(s * 100 + d).
      std::vector<int> out;
      std::vector<int> expected;
      for (int d = 0; d < w.size; ++d) {
        for (int v : values(w.rank * 100 + d, b)) out.push_back(v);
        for (int v : values(d * 100 + w.rank, b)) expected.push_back(v);
      }
      std::vector<int> got(size * b, -1);
      ASSERT_EQ(MPI_SUCCESS,
                MPI_Alltoall(out.data(), block, MPI_INT, got.data(), block, MPI_INT, comm));
      EXPECT_EQ(expected, got);
      ASSERT_EQ(MPI_SUCCESS,
                MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out.data(), block, MPI_INT, comm));
      EXPECT_EQ(expected, out);
    }

    // Allgatherv and Alltoallv with varying counts and gaps.
    std::vector<int> counts(size);
    for (int r = 0; r < w.size; ++r) counts[r] = varying(r);
    const std::vector<int> displs = displacements(counts);
    const auto extent = static_cast<std::size_t>(displs.back() + counts.back() + 1);
    std::vector<int> expected(extent, -1);
    for (int r = 0; r < w.size; ++r) {
      for (int i = 0; i < counts[r]; ++i) expected[displs[r] + i] = value(r, i);
    }
    const std::vector<int> mine = values(w.rank, 3);
    std::vector<int> all(extent, -1);
    ASSERT_EQ(MPI_SUCCESS, MPI_Allgatherv(mine.data(), varying(w.rank), MPI_INT, all.data(),
                                          counts.data(), displs.data(), MPI_INT, comm));
    EXPECT_EQ(expected, all);

    // Alltoallv: rank s sends rank d varying(s + d) elements of values(s * 100 + d).
    std::vector<int> scounts(size), rcounts(size);
    for (int d = 0; d < w.size; ++d) {
      scounts[d] = varying(w.rank + d);
      rcounts[d] = varying(d + w.rank);
    }
    const std::vector<int> sdispls = displacements(scounts);
    const std::vector<int> rdispls = displacements(rcounts);
    std::vector<int> out(static_cast<std::size_t>(sdispls.back() + scounts.back() + 1), -1);
    std::vector<int> want(static_cast<std::size_t>(rdispls.back() + rcounts.back() + 1), -1);
    for (int d = 0; d < w.size; ++d) {
      for (int i = 0; i < scounts[d]; ++i) out[sdispls[d] + i] = value(w.rank * 100 + d, i);
      for (int i = 0; i < rcounts[d]; ++i) want[rdispls[d] + i] = value(d * 100 + w.rank, i);
    }
    std::vector<int> got(want.size(), -1);
    ASSERT_EQ(MPI_SUCCESS,
              MPI_Alltoallv(out.data(), scounts.data(), sdispls.data(), MPI_INT, got.data(),
                            rcounts.data(), rdispls.data(), MPI_INT, comm));
    EXPECT_EQ(want, got);
  });
}

TEST_P(Hierarchy, ReduceScatterAndBarrier) {
  each_comm([](MPI_Comm comm) {
    const Where w = where(comm);
    constexpr int kBlock = 4;
    const auto total = static_cast<std::size_t>(kBlock * w.size);
    const std::vector<int> mine = values(w.rank, total);
    std::vector<int> part(kBlock, -1);
    ASSERT_EQ(MPI_SUCCESS,
              MPI_Reduce_scatter_block(mine.data(), part.data(), kBlock, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < kBlock; ++i) {
      int sum = 0;
      for (int r = 0; r < w.size; ++r)
        sum += value(r, static_cast<std::size_t>(w.rank * kBlock + i));
      ASSERT_EQ(sum, part[i]);
    }
    // No member leaves a barrier before every member entered it: a synchronous send posted
    // after the barrier to the next rank, which receives it only before its own barrier, would
    // never complete if the barrier let ranks through early.
    for (int round = 0; round < 3; ++round) ASSERT_EQ(MPI_SUCCESS, MPI_Barrier(comm));
  });
}

// A member whose buffer is smaller than the data: MPI_ERR_TRUNCATE at that member, whether it is
// a head of its process or not, and the communicator still works afterwards.
TEST_P(Hierarchy, TruncationReachesTheMemberWithTheSmallBuffer) {
  each_comm([](MPI_Comm comm) {
    const Where w = where(comm);
    for (int small : {w.size - 1, 1}) {
      std::vector<int> data(8, -1);
      if (w.rank == 0) data = values(0, 8);
      const int count = w.rank == small ? 4 : 8;
      const int rc = MPI_Bcast(data.data(), count, MPI_INT, 0, comm);
      if (w.rank == small) {
        EXPECT_EQ(MPI_ERR_TRUNCATE, rc) << "rank " << small;
      }
      if (w.rank == 0) {
        EXPECT_EQ(MPI_SUCCESS, rc);
      }
    }
    const int root = w.size - 1;
    std::vector<int> all(static_cast<std::size_t>(w.size), -1);
    const std::vector<int> two = values(w.rank, 2);
    const int rc =
        MPI_Gather(two.data(), w.rank == root ? 1 : 2, MPI_INT, all.data(), 1, MPI_INT, root, comm);
    if (w.rank == root) {
      EXPECT_EQ(MPI_ERR_TRUNCATE, rc);
    }
    // Counts that disagree fail every member of an Allreduce, which writes nothing, whichever
    // way the heads combine (every head to every head, or a reduction then a tree beyond
    // 64 KiB), and fail a Reduce at its root; nobody waits for ever.
    for (std::size_t count : {std::size_t{2}, std::size_t{20000}}) {
      const std::vector<int> in(count, 1);
      std::vector<int> out(count, -1);
      const int n = static_cast<int>(w.rank == w.size - 1 ? count - 1 : count);
      EXPECT_EQ(MPI_ERR_TRUNCATE, MPI_Allreduce(in.data(), out.data(), n, MPI_INT, MPI_SUM, comm))
          << "count " << count;
      EXPECT_EQ(-1, out[0]);
      const int at_root = MPI_Reduce(in.data(), out.data(), n, MPI_INT, MPI_SUM, 0, comm);
      if (w.rank == 0) {
        EXPECT_EQ(MPI_ERR_TRUNCATE, at_root) << "count " << count;
      }
    }
    int sum = 0;
    ASSERT_EQ(MPI_SUCCESS, MPI_Allreduce(&w.rank, &sum, 1, MPI_INT, MPI_SUM, comm));
    EXPECT_EQ(w.size * (w.size - 1) / 2, sum);
  });
}

INSTANTIATE_TEST_SUITE_P(Processes, Hierarchy,
                         ::testing::Values(Shape{2, 7}, Shape{3, 7}, Shape{4, 9}),
                         [](const auto& info) {
                           return std::to_string(info.param.processes) + "processes_" +
                                  std::to_string(info.param.ranks) + "ranks";
                         });

}  // namespace
