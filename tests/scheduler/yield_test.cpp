// this_thread::yield between threads pinned to one processor: the fast path (VirtualProcessor::
// prepare_yield, weft/detail/yield.h's inline finish_yield) must give what the general path gives.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "test_config.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::config_with;

Config one_vp() {
  return config_with({{"topology", "synthetic:pack:1 core:1 pu:1"}, {"scheduler.vps", "1"}});
}

ThreadAttr pinned() {
  ThreadAttr attr;
  attr.placement = Placement::pinned(0);
  return attr;
}

// Each yield of the first thread resumes it after one turn of each other thread queued on its
// processor, at its level: what yield returns. The other threads keep yielding until told to
// stop, so that every yield of the first switches.
TEST(ThreadYield, ReturnsTheTurnsOtherThreadsHad) {
  Scheduler scheduler(one_vp());
  std::vector<std::uint64_t> alone, with_one, with_two;
  spawn(pinned(), [&] {
    for (int i = 0; i < 40; ++i) alone.push_back(this_thread::yield());
    for (int others = 1; others <= 2; ++others) {
      std::atomic<bool> stop{false};
      std::vector<Thread> partners;
      for (int p = 0; p < others; ++p) {
        partners.push_back(spawn(pinned(), [&] {
          while (!stop.load(std::memory_order_relaxed)) this_thread::yield();
        }));
      }
      // The first yield lets the partners start; the next ones are round trips among them all.
      this_thread::yield();
      for (int i = 0; i < 40; ++i) {
        (others == 1 ? with_one : with_two).push_back(this_thread::yield());
      }
      stop.store(true, std::memory_order_relaxed);
      for (Thread& t : partners) t.join();
    }
  }).join();
  EXPECT_EQ(alone, std::vector<std::uint64_t>(40, 0));
  EXPECT_EQ(with_one, std::vector<std::uint64_t>(40, 1));
  EXPECT_EQ(with_two, std::vector<std::uint64_t>(40, 2));
}

// Two threads yielding to each other keep their processor busy (no idle loop, no other processor
// to expire its timers): the yields themselves must look at the timers. A sleeper on that
// processor wakes, or the test hangs.
TEST(ThreadYield, SleeperWakesWhileThreadsYieldToEachOther) {
  Scheduler scheduler(one_vp());
  std::atomic<bool> woke{false};
  std::atomic<long> yields{0};
  Thread sleeper = spawn(pinned(), [&] {
    this_thread::sleep_for(std::chrono::milliseconds(2));
    woke.store(true);
  });
  std::vector<Thread> yielders;
  for (int i = 0; i < 2; ++i) {
    yielders.push_back(spawn(pinned(), [&] {
      while (!woke.load()) {
        this_thread::yield();
        yields.fetch_add(1, std::memory_order_relaxed);
      }
    }));
  }
  sleeper.join();
  for (Thread& t : yielders) t.join();
  EXPECT_TRUE(woke.load());
  EXPECT_GT(yields.load(), 0);
}

// A switch hook runs at every yield, the fast path's included.
TEST(ThreadYield, SwitchHookRunsAtEveryYield) {
  Scheduler scheduler(one_vp());
  std::atomic<long> hook_calls{0};
  const auto id = scheduler.add_switch_hook([&] { hook_calls.fetch_add(1); });
  long before = 0;
  long after = 0;
  spawn(pinned(), [&] {
    std::atomic<bool> stop{false};
    Thread partner = spawn(pinned(), [&] {
      while (!stop.load(std::memory_order_relaxed)) this_thread::yield();
    });
    this_thread::yield();
    before = hook_calls.load();
    for (int i = 0; i < 100; ++i) this_thread::yield();
    after = hook_calls.load();
    stop.store(true, std::memory_order_relaxed);
    partner.join();
  }).join();
  scheduler.remove_hook(id);
  // 100 yields of this thread, 100 of its partner's in between.
  EXPECT_EQ(after - before, 200);
}

}  // namespace
}  // namespace weft
