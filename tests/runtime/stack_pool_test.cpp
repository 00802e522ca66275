#include "weft/stack_pool.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace weft {
namespace {

TEST(StackPool, GuardedStackHasAGuardPageBelowIt) {
  StackPool pool(StackPoolOptions{});
  Stack stack = pool.acquire(64 * 1024, 0);
  ASSERT_NE(stack.guard, nullptr);
  EXPECT_EQ(static_cast<char*>(stack.guard) + ::sysconf(_SC_PAGESIZE),
            static_cast<char*>(stack.base));
  EXPECT_EQ(stack.size, 64u * 1024);
  EXPECT_TRUE(stack.in_guard(stack.guard));
  EXPECT_FALSE(stack.in_guard(stack.base));
  EXPECT_TRUE(stack.contains(static_cast<char*>(stack.top()) - 1));
  EXPECT_FALSE(stack.contains(stack.top()));
  // The whole usable range is writable.
  std::memset(stack.base, 1, stack.size);
  EXPECT_EQ(pool.in_use(), 1u);
  EXPECT_EQ(pool.guarded_in_use(), 1u);
  pool.release(stack);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(StackPool, SizesAreRoundedToPagesAndStacksReused) {
  StackPool pool(StackPoolOptions{});
  Stack a = pool.acquire(10'000, 0);
  EXPECT_EQ(a.size % ::sysconf(_SC_PAGESIZE), 0u);
  EXPECT_GE(a.size, 10'000u);
  void* base = a.base;
  pool.release(a);
  Stack b = pool.acquire(10'000, 0);
  EXPECT_EQ(b.base, base) << "a released stack is reused without a new mapping";
  Stack other_node = pool.acquire(10'000, 1);
  EXPECT_NE(other_node.base, base);
  pool.release(b);
  pool.release(other_node);
}

// Guard regions, and the mprotect'ed guard pages of kernels without them.
class GuardKinds : public ::testing::TestWithParam<bool> {};

INSTANTIATE_TEST_SUITE_P(StackPool, GuardKinds, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "GuardRegions" : "Mprotect";
                         });

TEST_P(GuardKinds, BeyondTheGuardBudgetStacksCarryACanary) {
  StackPoolOptions options;
  options.guard_regions = GetParam();
  options.max_guarded = 2;
  StackPool pool(options);
  std::vector<Stack> stacks;
  for (int i = 0; i < 5; ++i) stacks.push_back(pool.acquire(32 * 1024, 0));
  EXPECT_NE(stacks[0].guard, nullptr);
  EXPECT_NE(stacks[1].guard, nullptr);
  for (int i = 2; i < 5; ++i) {
    EXPECT_EQ(stacks[i].guard, nullptr);
    EXPECT_TRUE(stacks[i].canary_intact());
  }
  EXPECT_EQ(pool.guarded_in_use(), 2u);
  std::memset(stacks[3].base, 0, 8);
  EXPECT_FALSE(stacks[3].canary_intact());
  for (const Stack& s : stacks) pool.release(s);
  // Released canary stacks come back with their canary rearmed.
  Stack again = pool.acquire(32 * 1024, 0);
  EXPECT_TRUE(again.canary_intact());
  pool.release(again);
}

TEST_P(GuardKinds, GuardPageFaultsAndSurvivesReuse) {
  StackPoolOptions options;
  options.guard_regions = GetParam();
  options.cached_per_class = 1;
  StackPool pool(options);
  std::vector<Stack> stacks;
  for (int i = 0; i < 3; ++i) stacks.push_back(pool.acquire(32 * 1024, 0));
  for (const Stack& s : stacks) {
    ASSERT_NE(s.guard, nullptr);
    std::memset(s.base, 1, s.size);
  }
  EXPECT_DEATH(*static_cast<volatile char*>(stacks[1].guard) = 1, "");
  // Past the cache, a stack is unmapped (mprotect) or its pages given back (guard regions).
  for (const Stack& s : stacks) pool.release(s);
  Stack again = pool.acquire(32 * 1024, 0);
  ASSERT_NE(again.guard, nullptr);
  EXPECT_DEATH(*(static_cast<volatile char*>(again.base) - 1) = 1, "");
  std::memset(again.base, 2, again.size);
  pool.release(again);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(StackPool, DerivedGuardBudgetFitsTheMappingLimit) {
  StackPool pool(StackPoolOptions{});
  if (pool.guard_kind() == GuardKind::kInsideMapping) {
    EXPECT_EQ(pool.max_guarded(), std::numeric_limits<std::size_t>::max())
        << "guard regions cost no mapping: every stack gets one";
  }
  // mprotect'ed guard pages cost two mappings each: their number stays within the limit.
  StackPoolOptions without_regions;
  without_regions.guard_regions = false;
  StackPool mprotect_pool(without_regions);
  EXPECT_EQ(mprotect_pool.guard_kind(), GuardKind::kOwnMapping);
  long max_maps = 65530;
  if (FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
    if (std::fscanf(f, "%ld", &max_maps) != 1) max_maps = 65530;
    std::fclose(f);
  }
  EXPECT_GT(mprotect_pool.max_guarded(), 0u);
  EXPECT_LT(mprotect_pool.max_guarded() * 2, static_cast<std::size_t>(max_maps));
}

std::size_t count_mappings() {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  std::size_t lines = 0;
  for (int c; (c = std::fgetc(maps)) != EOF;) lines += c == '\n';
  std::fclose(maps);
  return lines;
}

// With guard regions (Linux 6.13) thousands of guarded stacks take a few slabs, one mapping each,
// and the guard page still faults.
TEST(StackPool, GuardRegionsCostNoMappingPerStack) {
  StackPool pool(StackPoolOptions{});
  if (pool.guard_kind() != GuardKind::kInsideMapping) {
    GTEST_SKIP() << "this kernel has no guard regions (madvise MADV_GUARD_INSTALL, Linux 6.13): "
                    "guard pages are mprotect'ed, two mappings per stack";
  }
  const std::size_t before = count_mappings();
  constexpr int kStacks = 4000;
  std::vector<Stack> stacks;
  for (int i = 0; i < kStacks; ++i) {
    stacks.push_back(pool.acquire(16 * 1024, 0));
    ASSERT_NE(stacks.back().guard, nullptr);
  }
  const std::size_t added = count_mappings() - before;
  EXPECT_LE(added, 16u) << kStacks << " guarded stacks added " << added << " mappings";
  EXPECT_EQ(pool.guarded_in_use(), static_cast<std::size_t>(kStacks));
  // Stacks do not overlap their neighbours or their guards.
  for (int i = 1; i < kStacks; ++i) {
    EXPECT_FALSE(stacks[i].contains(stacks[i - 1].guard));
    EXPECT_FALSE(stacks[i - 1].contains(stacks[i].guard));
  }
  std::memset(stacks[7].base, 1, stacks[7].size);
  EXPECT_DEATH(*static_cast<volatile char*>(stacks[7].guard) = 1, "");
  EXPECT_DEATH(*(static_cast<volatile char*>(stacks[7].base) - 1) = 1, "");
  for (const Stack& s : stacks) pool.release(s);
  EXPECT_EQ(pool.guarded_in_use(), 0u);
  // A stack handed out again keeps its guard (MADV_DONTNEED leaves guard regions in place).
  Stack again = pool.acquire(16 * 1024, 0);
  EXPECT_DEATH(*static_cast<volatile char*>(again.guard) = 1, "");
  pool.release(again);
}

TEST(StackPool, NoGuardPagesWhenDisabled) {
  StackPoolOptions options;
  options.guard_pages = false;
  StackPool pool(options);
  Stack stack = pool.acquire(16 * 1024, 0);
  EXPECT_EQ(stack.guard, nullptr);
  EXPECT_TRUE(stack.canary_intact());
  pool.release(stack);
}

TEST(StackPool, MemoryIsCommittedLazily) {
  StackPool pool(StackPoolOptions{});
  Stack stack = pool.acquire(64 * 1024 * 1024, 0);
  // mincore reports which pages are resident: an untouched large stack has (almost) none.
  const std::size_t page = ::sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> resident(stack.size / page);
  ASSERT_EQ(::mincore(stack.base, stack.size, resident.data()), 0);
  std::size_t count = 0;
  for (unsigned char r : resident) count += r & 1;
  EXPECT_LT(count, 16u);
  pool.release(stack);
}

}  // namespace
}  // namespace weft
