// What the collective tests share: job shapes (ranks on one or two virtual processors of a
// two-core synthetic machine, so that dozens of ranks oversubscribe it) and array checks that
// report the first wrong element once instead of once per element.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "mpi_test_util.h"

namespace weft::mpi::testing {

struct Shape {
  int ranks;
  int vps;
};

inline std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::to_string(info.param.ranks) + "ranks_" + std::to_string(info.param.vps) + "vps";
}

// One rank, a few odd sizes, and 64 ranks oversubscribing two cores.
inline const std::vector<Shape> kShapes = {{1, 1}, {2, 2}, {3, 1}, {7, 2}, {64, 2}};

// Runs body(rank, size) in every rank of a job of `shape`, between MPI_Init and MPI_Finalize.
inline void run_ranks(const Shape& shape, const std::function<void(int rank, int size)>& body) {
  const int status = weft::testing::run_ranks(
      shape.ranks, shape.vps, [&body, &shape](int rank) { body(rank, shape.ranks); });
  EXPECT_EQ(status, 0);
}

// Expects got[i] == expected(i) for every i; reports the first difference, naming `what`.
template <class T, class Expected>
void expect_elements(const std::vector<T>& got, Expected&& expected, const std::string& what) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    const T want = expected(i);
    if (!(got[i] == want)) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", expected " << want;
      return;
    }
  }
}

// Orders two members' calls with zero-byte messages: `to` goes on once the caller's calls before
// go() are made.
inline void go(int to, int tag) {
  MPI_Send(nullptr, 0, MPI_INT, to, tag, MPI_COMM_WORLD);
}
inline void wait_go(int from, int tag) {
  MPI_Recv(nullptr, 0, MPI_INT, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

// Calls issue(i) for i in [0, count) on both members of a pair, member 0 making the first `alone`
// before member 1 makes any (its first blocking call then waits for member 1).
template <class Issue>
void issue_member0_first(int rank, int alone, int count, int tag, Issue&& issue) {
  if (rank == 0) {
    for (int i = 0; i < alone; ++i) issue(i);
    go(1, tag);
  } else {
    wait_go(0, tag);
  }
  for (int i = rank == 0 ? alone : 0; i < count; ++i) issue(i);
}

// A distinct value for element i of what rank r contributes.
inline int value(int r, std::size_t i) {
  return r * 1000 + static_cast<int>(i % 1000);
}

}  // namespace weft::mpi::testing
