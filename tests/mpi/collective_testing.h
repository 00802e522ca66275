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

// A distinct value for element i of what rank r contributes.
inline int value(int r, std::size_t i) {
  return r * 1000 + static_cast<int>(i % 1000);
}

}  // namespace weft::mpi::testing
