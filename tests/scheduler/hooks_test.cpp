#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "test_config.h"
#include "weft/error.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::two_vps;

TEST(Hooks, IdleHookRunsWhenACoreHasNothingToDo) {
  Scheduler scheduler(two_vps());
  std::atomic<int> calls{0};
  const auto id = scheduler.add_idle_hook([&] {
    calls.fetch_add(1);
    return false;
  });
  // A sleeping thread leaves its core idle; the idle loop runs the hook before sleeping.
  spawn([] { this_thread::sleep_for(std::chrono::milliseconds(5)); }).join();
  scheduler.remove_hook(id);
  EXPECT_GT(calls.load(), 0);
  const int after = calls.load();
  spawn([] { this_thread::sleep_for(std::chrono::milliseconds(5)); }).join();
  EXPECT_EQ(calls.load(), after) << "a removed hook must not run";
}

TEST(Hooks, SwitchHookRunsAtContextSwitches) {
  Scheduler scheduler(two_vps());
  std::atomic<int> calls{0};
  const auto id = scheduler.add_switch_hook([&] { calls.fetch_add(1); });
  ThreadAttr attr;
  attr.placement = Placement::pinned(0);
  // Both yielders are queued before either runs, so each yield is a switch.
  spawn(attr, [&] {
    Thread a = spawn(attr, [] {
      for (int i = 0; i < 100; ++i) this_thread::yield();
    });
    Thread b = spawn(attr, [] {
      for (int i = 0; i < 100; ++i) this_thread::yield();
    });
    a.join();
    b.join();
  }).join();
  scheduler.remove_hook(id);
  EXPECT_GE(calls.load(), 100);
}

TEST(Hooks, TimerHookRunsPeriodicallyEvenWhenIdle) {
  Scheduler scheduler(two_vps());
  std::atomic<int> calls{0};
  const auto id =
      scheduler.add_timer_hook(std::chrono::milliseconds(1), [&] { calls.fetch_add(1); });
  // Nothing runs: the sleeping processors wake for the hook's due times.
  while (calls.load() < 5) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  scheduler.remove_hook(id);
  EXPECT_GE(calls.load(), 5);
  EXPECT_THROW(scheduler.add_timer_hook(std::chrono::nanoseconds(0), [] {}), Error);
  EXPECT_THROW(scheduler.remove_hook(id), Error);
}

TEST(Hooks, RemoveWaitsForARunningHook) {
  Scheduler scheduler(two_vps());
  std::atomic<bool> entered{false};
  std::atomic<bool> proceed{false};
  std::atomic<bool> finished{false};
  // The first call stays inside the hook until the test lets it go.
  const auto id = scheduler.add_idle_hook([&] {
    if (!entered.exchange(true)) {
      while (!proceed.load()) std::this_thread::yield();
      finished.store(true);
    }
    return false;
  });
  while (!entered.load()) std::this_thread::yield();
  std::atomic<bool> removed{false};
  std::thread remover([&] {
    scheduler.remove_hook(id);
    removed.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(removed.load()) << "remove_hook returned while the hook was running";
  proceed.store(true);
  remover.join();
  EXPECT_TRUE(removed.load());
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace weft
