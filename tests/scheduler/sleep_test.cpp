#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

#include "test_config.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::config_with;
using testing::two_vps;
using Clock = std::chrono::steady_clock;

TEST(Sleep, WakesInOrderAndNeverEarly) {
  // One core: the order of wake-ups is then the timer heap's alone, whatever the machine's load.
  Scheduler scheduler(config_with({{"topology", "synthetic:pack:1 core:1 pu:1"}}));
  std::mutex mutex;
  std::vector<Clock::time_point> woken;  // deadlines, in the order their sleepers woke
  std::atomic<int> early{0};
  std::vector<Thread> sleepers;
  // Spawned in scrambled order, sleeping 1..49 ms; sleep_for and sleep_until alternate.
  for (int i : {7, 1, 12, 4, 15, 0, 9, 3, 14, 6, 11, 2, 16, 5, 10, 8, 13}) {
    sleepers.push_back(spawn([&, i] {
      const auto duration = std::chrono::milliseconds(1 + 3 * i);
      const auto deadline = Clock::now() + duration;
      if (i % 2 == 0) {
        this_thread::sleep_for(duration);
      } else {
        this_thread::sleep_until(deadline);
      }
      if (Clock::now() < deadline) early.fetch_add(1);
      std::lock_guard lock(mutex);
      woken.push_back(deadline);
    }));
  }
  for (Thread& t : sleepers) t.join();
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(woken.size(), 17u);
  EXPECT_TRUE(std::is_sorted(woken.begin(), woken.end()));
}

TEST(Sleep, SleepingThreadsLeaveTheCoreToOthers) {
  Scheduler scheduler(config_with({{"topology", "synthetic:pack:1 core:1 pu:1"}}));
  std::atomic<bool> sleeper_done{false};
  std::atomic<long> work_during_sleep{0};
  Thread sleeper = spawn([&] {
    this_thread::sleep_for(std::chrono::milliseconds(20));
    sleeper_done.store(true);
  });
  Thread worker = spawn([&] {
    while (!sleeper_done.load()) {
      work_during_sleep.fetch_add(1);
      this_thread::yield();
    }
  });
  sleeper.join();
  worker.join();
  EXPECT_GT(work_during_sleep.load(), 0);
}

TEST(Sleep, ZeroAndPastDeadlinesReturn) {
  Scheduler scheduler(two_vps());
  spawn([] {
    this_thread::sleep_for(std::chrono::nanoseconds(0));
    this_thread::sleep_until(Clock::now() - std::chrono::seconds(1));
  }).join();
  SUCCEED();
}

TEST(Sleep, ThousandsOfSleepersOnOneCore) {
  Scheduler scheduler(config_with({{"topology", "synthetic:pack:1 core:1 pu:1"}}));
  std::atomic<int> woke{0};
  std::vector<Thread> sleepers;
  for (int i = 0; i < 3000; ++i) {
    sleepers.push_back(spawn([&, i] {
      this_thread::sleep_for(std::chrono::microseconds(100 + (i * 37) % 5000));
      woke.fetch_add(1);
    }));
  }
  for (Thread& t : sleepers) t.join();
  EXPECT_EQ(woke.load(), 3000);
}

}  // namespace
}  // namespace weft
