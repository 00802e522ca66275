// The OpenMP bridge's cache of task blocks (omp_bridge/task.h): a thread's surplus of freed blocks
// reaches another thread's cache through the process's depot, a batch at a time.
#include <gtest/gtest.h>

#include <new>
#include <set>
#include <vector>

#include "omp_bridge/task.h"

namespace weft::omp {
namespace {

constexpr int kClass = 1;  // 512-byte blocks, LLVM's small tasks

void* new_block() {
  return ::operator new(TaskBlockCache::block_size(kClass),
                        std::align_val_t(TaskBlockCache::kAlign));
}

// A thread that runs its teammates' tasks frees more blocks than it makes; their creator, whose
// cache ran out, gets them back instead of going to the heap.
TEST(OmpTaskBlockCache, SurplusReachesAnotherThreadsCache) {
  TaskBlockCache runner;
  TaskBlockCache creator;
  std::set<void*> freed;
  for (int i = 0; i < TaskBlockCache::kDepth + TaskBlockCache::kBatch; ++i) {
    void* block = new_block();
    freed.insert(block);
    runner.keep(block, kClass);
  }
  // One batch left the runner's full class for the depot, from which the creator takes it whole.
  std::vector<void*> taken;
  for (int i = 0; i < TaskBlockCache::kBatch; ++i) {
    void* block = creator.take(kClass);
    ASSERT_NE(block, nullptr) << "block " << i << " of the batch";
    EXPECT_EQ(freed.count(block), 1U) << "a block the runner did not free";
    taken.push_back(block);
  }
  EXPECT_EQ(std::set<void*>(taken.begin(), taken.end()).size(), taken.size());
  // The runner kept the rest.
  for (int i = 0; i < TaskBlockCache::kDepth; ++i) EXPECT_NE(runner.take(kClass), nullptr);
  for (void* block : taken) creator.keep(block, kClass);
}

// A cache whose class is empty, with an empty depot, has nothing to give: the caller goes to the
// heap.
TEST(OmpTaskBlockCache, EmptyClassGivesNothing) {
  TaskBlockCache cache;
  EXPECT_EQ(cache.take(TaskBlockCache::kClasses - 1), nullptr);
  void* block = new_block();
  cache.keep(block, kClass);
  EXPECT_EQ(cache.take(kClass), block);
  ::operator delete(block, std::align_val_t(TaskBlockCache::kAlign));
}

}  // namespace
}  // namespace weft::omp
