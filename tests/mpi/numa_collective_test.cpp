// The NUMA-aware collectives (docs/mpi-collectives.md, "Across NUMA nodes") on synthetic and XML
// topologies of several NUMA nodes: the algorithm the job chose (counted by the staged path) and
// the data, for Bcast, Reduce, Allreduce and Allgather(v): uneven ranks per node, ranks of a node
// not consecutive in the communicator, derived datatypes, MPI_IN_PLACE and sizes around the
// fragment size. Every job runs in one process: the staged path is for ranks sharing memory.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "coll/numa_staging.h"
#include "collective_testing.h"
#include "mpi_test_util.h"

namespace weft::mpi::testing {
namespace {

using collective::numa::Collective;
using collective::numa::staged_calls;
using Settings = std::vector<std::pair<std::string, std::string>>;

// The seed's constants, so that the model's choice does not depend on a cache of this machine.
const std::pair<std::string, std::string> kSeedConstants = {
    "mpi.coll_numa_constants", "local=1,remote=2,link=0.5,notify=50,atomic=10"};

Settings on(const std::string& topology, const std::string& mode) {
  return {{"topology", topology}, {"mpi.coll_numa", mode}, kSeedConstants};
}

const std::string kTwoNodes = "synthetic:pack:2 [numa] core:2 pu:1";
const std::string kFourNodes = "synthetic:pack:4 [numa] core:1 pu:1";
std::string two_rails_xml() {
  return std::string("xml:") + WEFT_TEST_TOPOLOGIES "/nic-two-rails.xml";
}

struct Counts {
  std::uint64_t bcast = staged_calls(Collective::bcast);
  std::uint64_t reduce = staged_calls(Collective::reduce);
  std::uint64_t allreduce = staged_calls(Collective::allreduce);
  std::uint64_t allgather = staged_calls(Collective::allgather);
  Counts since(const Counts& before) const {
    Counts d = *this;
    d.bcast -= before.bcast;
    d.reduce -= before.reduce;
    d.allreduce -= before.allreduce;
    d.allgather -= before.allgather;
    return d;
  }
};

// Runs body(rank, size) in a job of `ranks` ranks on one virtual processor per core of
// `topology` (so that every node has a kernel thread and ranks sit on every node).
void run(int ranks, int vps, Settings settings, const std::function<void(int, int)>& body) {
  if (::weft::testing::test_processes() > 1) GTEST_SKIP() << "in one process only";
  const int status = ::weft::testing::run_ranks(
      ranks, vps, [&](int rank) { body(rank, ranks); }, std::move(settings));
  EXPECT_EQ(status, 0);
}

// Every collective once on `comm` with `bytes` of ints per member (rounded down), the results
// checked.
void every_collective(MPI_Comm comm, std::size_t bytes) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(int));
  const int count = static_cast<int>(n);
  for (int root : {0, size - 1}) {
    std::vector<int> data(n, -1);
    if (rank == root) {
      for (std::size_t i = 0; i < n; ++i) data[i] = value(root, i);
    }
    ASSERT_EQ(MPI_Bcast(data.data(), count, MPI_INT, root, comm), MPI_SUCCESS);
    expect_elements(
        data, [&](std::size_t i) { return value(root, i); },
        "bcast from " + std::to_string(root) + " at rank " + std::to_string(rank));

    std::vector<int> in(n), out(n, -1);
    for (std::size_t i = 0; i < n; ++i) in[i] = value(rank, i);
    ASSERT_EQ(MPI_Reduce(in.data(), out.data(), count, MPI_INT, MPI_SUM, root, comm), MPI_SUCCESS);
    if (rank == root) {
      expect_elements(
          out,
          [&](std::size_t i) {
            int sum = 0;
            for (int r = 0; r < size; ++r) sum += value(r, i);
            return sum;
          },
          "reduce");
    }
  }
  std::vector<int> in(n), out(n, -1);
  for (std::size_t i = 0; i < n; ++i) in[i] = value(rank, i);
  ASSERT_EQ(MPI_Allreduce(in.data(), out.data(), count, MPI_INT, MPI_MAX, comm), MPI_SUCCESS);
  expect_elements(
      out,
      [&](std::size_t i) {
        int best = value(0, i);
        for (int r = 1; r < size; ++r) best = std::max(best, value(r, i));
        return best;
      },
      "allreduce at rank " + std::to_string(rank));

  // In place: the result replaces the input.
  std::vector<int> inout(n);
  for (std::size_t i = 0; i < n; ++i) inout[i] = value(rank, i);
  ASSERT_EQ(MPI_Allreduce(MPI_IN_PLACE, inout.data(), count, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
  expect_elements(
      inout,
      [&](std::size_t i) {
        int sum = 0;
        for (int r = 0; r < size; ++r) sum += value(r, i);
        return sum;
      },
      "allreduce in place");

  const std::size_t block = std::max<std::size_t>(1, n / static_cast<std::size_t>(size));
  std::vector<int> mine(block), all(block * static_cast<std::size_t>(size), -1);
  for (std::size_t i = 0; i < block; ++i) mine[i] = value(rank, i);
  ASSERT_EQ(MPI_Allgather(mine.data(), static_cast<int>(block), MPI_INT, all.data(),
                          static_cast<int>(block), MPI_INT, comm),
            MPI_SUCCESS);
  expect_elements(
      all, [&](std::size_t i) { return value(static_cast<int>(i / block), i % block); },
      "allgather at rank " + std::to_string(rank));
  // In place: each member's block already sits in its receive buffer.
  std::vector<int> gathered(block * static_cast<std::size_t>(size), -1);
  std::copy(mine.begin(), mine.end(), gathered.begin() + static_cast<std::ptrdiff_t>(block * rank));
  ASSERT_EQ(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered.data(),
                          static_cast<int>(block), MPI_INT, comm),
            MPI_SUCCESS);
  expect_elements(
      gathered, [&](std::size_t i) { return value(static_cast<int>(i / block), i % block); },
      "allgather in place");
}

TEST(NumaCollectives, OneNodeStaysFlat) {
  const Counts before;
  // The default test machine: one package, one node, two cores.
  run(8, 2, {{"mpi.coll_numa", "auto"}, kSeedConstants},
      [](int, int) { every_collective(MPI_COMM_WORLD, 1 << 20); });
  const Counts d = Counts().since(before);
  EXPECT_EQ(d.bcast + d.reduce + d.allreduce + d.allgather, 0u);
}

TEST(NumaCollectives, StagedEvenWhenForcedOnOneNodeIsFlat) {
  const Counts before;
  run(4, 2, {{"mpi.coll_numa", "staged"}, kSeedConstants},
      [](int, int) { every_collective(MPI_COMM_WORLD, 64 * 1024); });
  const Counts d = Counts().since(before);
  EXPECT_EQ(d.bcast + d.reduce + d.allreduce + d.allgather, 0u);
}

TEST(NumaCollectives, TheModelStagesManyReadersPerNode) {
  // 16 ranks on 2 nodes, 8 each: with the seed's constants 8 remote readers saturate the link
  // under flat (numa_copy_test), so 1 MiB goes staged; 32 KiB per member of Allgather too.
  const Counts before;
  run(16, 4, on(kTwoNodes, "auto"), [](int, int) { every_collective(MPI_COMM_WORLD, 1 << 20); });
  const Counts d = Counts().since(before);
  EXPECT_EQ(d.bcast, 2u);
  EXPECT_EQ(d.reduce, 2u);
  EXPECT_EQ(d.allreduce, 2u);
  EXPECT_EQ(d.allgather, 2u);
}

TEST(NumaCollectives, TheModelKeepsFewReadersFlat) {
  // One rank per node: a second copy buys nothing.
  const Counts before;
  run(2, 4, on(kTwoNodes, "auto"), [](int, int) { every_collective(MPI_COMM_WORLD, 1 << 20); });
  const Counts d = Counts().since(before);
  EXPECT_EQ(d.bcast, 0u);
  EXPECT_EQ(d.allgather, 0u);
}

TEST(NumaCollectives, FlatModeNeverStages) {
  const Counts before;
  run(16, 4, on(kTwoNodes, "flat"), [](int, int) { every_collective(MPI_COMM_WORLD, 1 << 20); });
  const Counts d = Counts().since(before);
  EXPECT_EQ(d.bcast + d.reduce + d.allreduce + d.allgather, 0u);
}

// Sizes around the fragment (4 KiB for these sizes), including less than one int per member.
const std::vector<std::size_t> kSizes = {4, 4092, 4096, 4100, 3 * 4096 + 4, 20000, 262148};

TEST(NumaCollectives, StagedDataAcrossTwoAndFourNodesWithUnevenRanks) {
  struct Job {
    std::string topology;
    int ranks;
    int vps;
  };
  // 5 ranks on 4 cores of 2 nodes: 3 + 2; 7 on 4 nodes of a core each: 2 + 2 + 2 + 1.
  for (const Job& job : {Job{kTwoNodes, 5, 4}, Job{kFourNodes, 7, 4}, Job{kFourNodes, 12, 4}}) {
    SCOPED_TRACE(job.topology + ", " + std::to_string(job.ranks) + " ranks");
    const Counts before;
    run(job.ranks, job.vps, on(job.topology, "staged"), [](int, int) {
      for (std::size_t bytes : kSizes) every_collective(MPI_COMM_WORLD, bytes);
    });
    const Counts d = Counts().since(before);
    EXPECT_EQ(d.bcast, 2 * kSizes.size());
    EXPECT_EQ(d.reduce, 2 * kSizes.size());
    EXPECT_EQ(d.allreduce, 2 * kSizes.size());
    EXPECT_EQ(d.allgather, 2 * kSizes.size());
  }
}

TEST(NumaCollectives, XmlTopology) {
  const Counts before;
  run(6, 4, on(two_rails_xml(), "staged"), [](int, int) {
    for (std::size_t bytes : {std::size_t{4096}, std::size_t{100000}}) {
      every_collective(MPI_COMM_WORLD, bytes);
    }
  });
  const Counts d = Counts().since(before);
  EXPECT_EQ(d.bcast, 4u);
  EXPECT_EQ(d.allgather, 4u);
  // The model on the same machine: 8 ranks per node stage 1 MiB, one per node does not.
  const Counts model_before;
  run(16, 4, on(two_rails_xml(), "auto"),
      [](int, int) { every_collective(MPI_COMM_WORLD, 1 << 20); });
  EXPECT_EQ(Counts().since(model_before).bcast, 2u);
  const Counts few_before;
  run(2, 4, on(two_rails_xml(), "auto"),
      [](int, int) { every_collective(MPI_COMM_WORLD, 1 << 20); });
  EXPECT_EQ(Counts().since(few_before).bcast, 0u);
}

// A communicator whose ranks alternate between the nodes (world ranks 0..7 on node 0, 8..15 on
// node 1, comm rank 2k from node 0 and 2k + 1 from node 1).
MPI_Comm interleaved(int rank, int size) {
  const int half = size / 2;
  const int key = rank < half ? 2 * rank : 2 * (rank - half) + 1;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, 0, key, &comm);
  return comm;
}

TEST(NumaCollectives, NodesOfNonConsecutiveRanks) {
  const Counts before;
  run(8, 4, on(kTwoNodes, "staged"), [](int rank, int size) {
    MPI_Comm comm = interleaved(rank, size);
    for (std::size_t bytes : {std::size_t{4100}, std::size_t{70000}}) every_collective(comm, bytes);
    MPI_Comm_free(&comm);
  });
  const Counts d = Counts().since(before);
  EXPECT_EQ(d.bcast, 4u);
  EXPECT_EQ(d.allreduce, 4u);  // MPI_MAX and MPI_SUM commute
}

// inout = in: keeps the left operand, so a reduction's result is the lowest rank's input. It
// does not commute: grouping nodes of non-consecutive ranks would give another rank's.
void keep_left(void* in, void* inout, int* len, MPI_Datatype*) {
  std::copy_n(static_cast<const int*>(in), *len, static_cast<int*>(inout));
}

void non_commutative(MPI_Comm comm, bool expect_staged) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Op op = MPI_OP_NULL;
  MPI_Op_create(keep_left, 0, &op);
  const int n = 30000;
  std::vector<int> in(n), out(n, -1);
  for (int i = 0; i < n; ++i)
    in[static_cast<std::size_t>(i)] = value(rank, static_cast<std::size_t>(i));
  const std::uint64_t before = staged_calls(Collective::allreduce);
  ASSERT_EQ(MPI_Allreduce(in.data(), out.data(), n, MPI_INT, op, comm), MPI_SUCCESS);
  MPI_Barrier(comm);
  const std::uint64_t staged = staged_calls(Collective::allreduce) - before;
  expect_elements(
      out, [](std::size_t i) { return value(0, i); }, "keep-left allreduce");
  if (rank == 0) {
    EXPECT_EQ(staged, expect_staged ? 1u : 0u);
  }
  MPI_Op_free(&op);
}

TEST(NumaCollectives, NonCommutativeOperations) {
  run(8, 4, on(kTwoNodes, "staged"), [](int rank, int size) {
    non_commutative(MPI_COMM_WORLD, true);
    MPI_Comm comm = interleaved(rank, size);
    non_commutative(comm, false);
    MPI_Comm_free(&comm);
  });
}

TEST(NumaCollectives, DerivedDatatypes) {
  const Counts before;
  run(6, 4, on(kTwoNodes, "staged"), [](int rank, int size) {
    // Every other int of 2 n: 4 KiB of data in an 8 KiB span, on both sides of each copy.
    const int n = 5000;
    MPI_Datatype strided = MPI_DATATYPE_NULL;
    MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    std::vector<int> buffer(2 * n, -1);
    for (int i = 0; i < n; ++i) {
      if (rank == 1)
        buffer[2 * static_cast<std::size_t>(i)] = value(1, static_cast<std::size_t>(i));
    }
    ASSERT_EQ(MPI_Bcast(buffer.data(), 1, strided, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(buffer[2 * static_cast<std::size_t>(i)], value(1, static_cast<std::size_t>(i)));
      ASSERT_EQ(buffer[2 * static_cast<std::size_t>(i) + 1], -1) << "a gap was written";
    }
    // Allgatherv of contiguous ints into strided blocks of varying length.
    std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
    int at = 0;
    for (int r = 0; r < size; ++r) {
      counts[static_cast<std::size_t>(r)] = 1000 + 37 * r;
      displs[static_cast<std::size_t>(r)] = at;
      at += counts[static_cast<std::size_t>(r)];
    }
    MPI_Datatype pair = MPI_DATATYPE_NULL;  // an int followed by a gap of one int
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &pair);
    MPI_Type_commit(&pair);
    std::vector<int> mine(static_cast<std::size_t>(counts[static_cast<std::size_t>(rank)]));
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = value(rank, i);
    std::vector<int> all(2 * static_cast<std::size_t>(at), -1);
    ASSERT_EQ(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_INT, all.data(),
                             counts.data(), displs.data(), pair, MPI_COMM_WORLD),
              MPI_SUCCESS);
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < counts[static_cast<std::size_t>(r)]; ++i) {
        const std::size_t slot =
            2 * static_cast<std::size_t>(displs[static_cast<std::size_t>(r)] + i);
        ASSERT_EQ(all[slot], value(r, static_cast<std::size_t>(i))) << "block " << r;
        ASSERT_EQ(all[slot + 1], -1) << "a gap was written";
      }
    }
    // Reduce over the strided type: element i of the vector type is n ints.
    std::vector<int> in(2 * n, rank), out(2 * n, -1);
    ASSERT_EQ(MPI_Reduce(in.data(), out.data(), 1, strided, MPI_SUM, 0, MPI_COMM_WORLD),
              MPI_SUCCESS);
    if (rank == 0) {
      for (int i = 0; i < n; ++i) {
        ASSERT_EQ(out[2 * static_cast<std::size_t>(i)], size * (size - 1) / 2);
        ASSERT_EQ(out[2 * static_cast<std::size_t>(i) + 1], -1);
      }
    }
    MPI_Type_free(&pair);
    MPI_Type_free(&strided);
  });
  const Counts d = Counts().since(before);
  EXPECT_EQ(d.bcast, 1u);
  EXPECT_EQ(d.allgather, 1u);
  EXPECT_EQ(d.reduce, 1u);
}

TEST(NumaCollectives, TruncationIsReportedOnTheStagedPath) {
  run(4, 4, on(kTwoNodes, "staged"), [](int rank, int) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    // The root sends 8192 ints; rank 3 (the other node) can hold 100.
    std::vector<int> data(8192, rank == 0 ? 7 : -1);
    const int count = rank == 3 ? 100 : 8192;
    const int rc = MPI_Bcast(data.data(), count, MPI_INT, 0, MPI_COMM_WORLD);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    EXPECT_EQ(error_class, rank == 3 ? MPI_ERR_TRUNCATE : MPI_SUCCESS) << "rank " << rank;
    EXPECT_EQ(data[99], 7);
    if (rank == 3) {
      EXPECT_EQ(data[100], -1) << "written past the receive count";
    }
  });
}

}  // namespace
}  // namespace weft::mpi::testing
