#include <gtest/gtest.h>

#include <string>

#include "weft/bootstrap.h"
#include "weft/error.h"

namespace weft {
namespace {

std::string error_of(int world_size, int processes) {
  try {
    RankLayout layout(world_size, processes);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(RankLayout, RemainderGoesToTheFirstProcesses) {
  const RankLayout layout(8, 3);
  EXPECT_EQ(layout.world_size(), 8);
  EXPECT_EQ(layout.processes(), 3);
  EXPECT_EQ(layout.first_rank(0), 0);
  EXPECT_EQ(layout.ranks_of(0), 3);
  EXPECT_EQ(layout.first_rank(1), 3);
  EXPECT_EQ(layout.ranks_of(1), 3);
  EXPECT_EQ(layout.first_rank(2), 6);
  EXPECT_EQ(layout.ranks_of(2), 2);
  const int owners[] = {0, 0, 0, 1, 1, 1, 2, 2};
  for (int rank = 0; rank < 8; ++rank) EXPECT_EQ(layout.process_of(rank), owners[rank]) << rank;
}

// Every rank belongs to exactly the process whose block holds it, blocks are contiguous and their
// sizes differ by at most one, larger ones first.
TEST(RankLayout, BlocksCoverTheWorld) {
  for (int world = 1; world <= 40; ++world) {
    for (int processes = 1; processes <= world; ++processes) {
      const RankLayout layout(world, processes);
      int next = 0;
      for (int process = 0; process < processes; ++process) {
        ASSERT_EQ(layout.first_rank(process), next) << world << "/" << processes;
        const int size = layout.ranks_of(process);
        ASSERT_TRUE(size == world / processes || size == world / processes + 1);
        if (process > 0) {
          ASSERT_LE(size, layout.ranks_of(process - 1));
        }
        for (int rank = next; rank < next + size; ++rank) {
          ASSERT_EQ(layout.process_of(rank), process) << world << "/" << processes << " " << rank;
        }
        next += size;
      }
      ASSERT_EQ(next, world);
    }
  }
}

TEST(RankLayout, OneProcessHoldsEverything) {
  const RankLayout layout(5, 1);
  EXPECT_EQ(layout.first_rank(0), 0);
  EXPECT_EQ(layout.ranks_of(0), 5);
  EXPECT_EQ(layout.process_of(4), 0);
}

TEST(RankLayout, RefusesImpossibleLayouts) {
  EXPECT_NE(error_of(2, 3).find("3 processes for 2 ranks; expected 1 to 2 processes"),
            std::string::npos)
      << error_of(2, 3);
  EXPECT_NE(error_of(4, 0).find("0 processes for 4 ranks"), std::string::npos);
  EXPECT_NE(error_of(0, 1), "");
  const RankLayout layout(4, 2);
  EXPECT_THROW(layout.first_rank(2), Error);
  EXPECT_THROW(layout.ranks_of(-1), Error);
  EXPECT_THROW(layout.process_of(4), Error);
  EXPECT_THROW(layout.process_of(-1), Error);
}

}  // namespace
}  // namespace weft
