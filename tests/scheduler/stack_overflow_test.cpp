#include <gtest/gtest.h>

#include <cstring>

#include "fiber.h"
#include "park.h"
#include "test_config.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::config_with;

// Recurses with a frame the optimiser cannot drop until the stack is exhausted.
__attribute__((noinline)) int recurse(int depth) {
  volatile char frame[1024];
  std::memset(const_cast<char*>(frame), depth, sizeof(frame));
  return depth > 1'000'000 ? frame[0] : recurse(depth + 1) + frame[depth % sizeof(frame)];
}

TEST(StackOverflowDeathTest, GuardPageHitNamesTheThreadAndTheKey) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Scheduler scheduler(
            config_with({{"topology", "synthetic:pack:1 core:1 pu:1"}, {"stack.mpi_task", "64K"}}));
        ThreadAttr attr;
        attr.type = ThreadType::mpi_task;
        attr.rank = 5;
        spawn(attr, [] { recurse(0); }).join();
      },
      "stack overflow in thread [0-9]+ \\(type mpi_task, rank 5\\).*64 KiB stack is "
      "exhausted \\(guard page hit\\); raise stack.mpi_task.*WEFT_STACK_MPI_TASK");
}

TEST(StackOverflowDeathTest, CanaryStacksReportOverflowToo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Without guard pages, stacks come from slabs with a canary at their low end; an overflow that
  // ran over it is reported at the thread's next switch.
  EXPECT_DEATH(
      {
        Scheduler scheduler(
            config_with({{"topology", "synthetic:pack:1 core:1 pu:1"}, {"stack.guard", "false"}}));
        spawn([] {
          std::memset(detail::current_fiber()->stack.base, 0xab, 64);
          this_thread::sleep_for(std::chrono::milliseconds(1));
        }).join();
      },
      "stack overflow in thread [0-9]+ \\(type user\\).*canary overwritten");
}

}  // namespace
}  // namespace weft
