#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_config.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::two_vps;

std::atomic<int> destroyed{0};

void count_destroy(void* data) {
  destroyed.fetch_add(*static_cast<int*>(data));
}

TEST(LocalData, FollowsTheUserThreadAndIsDestroyedWhenItEnds) {
  destroyed = 0;
  Scheduler scheduler(two_vps());
  std::atomic<int> wrong{0};
  std::vector<int> values(16);
  std::vector<Thread> threads;
  for (int i = 0; i < 16; ++i) {
    values[static_cast<std::size_t>(i)] = i + 1;
    threads.push_back(spawn([&, i] {
      if (this_thread::local_data() != nullptr) ++wrong;  // a recycled thread starts empty
      this_thread::set_local_data(&values[static_cast<std::size_t>(i)], &count_destroy);
      // Yields and sleeps let the thread resume on the other virtual processor.
      for (int round = 0; round < 50; ++round) {
        this_thread::yield();
        if (round % 10 == 0) this_thread::sleep_for(std::chrono::microseconds(100));
        if (this_thread::local_data() != &values[static_cast<std::size_t>(i)]) ++wrong;
      }
    }));
  }
  for (Thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(destroyed.load(), 16 * 17 / 2);
}

TEST(LocalData, OutsideWeftBelongsToTheKernelThread) {
  destroyed = 0;
  int value = 5;
  std::thread other([&] {
    EXPECT_EQ(this_thread::local_data(), nullptr);
    this_thread::set_local_data(&value, &count_destroy);
    EXPECT_EQ(this_thread::local_data(), &value);
  });
  other.join();
  EXPECT_EQ(this_thread::local_data(), nullptr);
  EXPECT_EQ(destroyed.load(), 5);
}

}  // namespace
}  // namespace weft
