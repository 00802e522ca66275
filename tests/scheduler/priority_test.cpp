#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "test_config.h"
#include "weft/detail/wait_list.h"
#include "weft/error.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::config_with;

Config one_vp() {
  return config_with(
      {{"topology", "synthetic:pack:1 core:1 pu:1"}, {"scheduler.starvation_limit", "8"}});
}

ThreadAttr at(int priority, Placement placement = Placement::pinned(0)) {
  ThreadAttr attr;
  attr.priority = priority;
  attr.placement = placement;
  return attr;
}

// Spawns threads of the given priorities while the core is busy, then lets them run and returns
// the priorities in the order the threads ran.
std::vector<int> run_order(const std::vector<int>& priorities, Placement placement) {
  std::vector<int> order;
  Thread blocker = spawn(at(kMaxPriority, Placement::pinned(0)), [&] {
    std::vector<Thread> threads;
    for (int p : priorities) {
      threads.push_back(spawn(at(p, placement), [&order, p] { order.push_back(p); }));
    }
    // Parks the blocker: the queued threads now compete for the core.
    for (Thread& t : threads) t.join();
  });
  blocker.join();
  return order;
}

TEST(Priority, HigherPriorityRunsFirst) {
  Scheduler scheduler(one_vp());
  EXPECT_EQ(run_order({1, 5, 3, 7, 0, 6}, Placement::pinned(0)),
            (std::vector<int>{7, 6, 5, 3, 1, 0}));
  EXPECT_EQ(run_order({2, 4, 1}, Placement::free()), (std::vector<int>{4, 2, 1}));
  EXPECT_EQ(run_order({3, 6, 0}, Placement::numa(0)), (std::vector<int>{6, 3, 0}));
}

TEST(Priority, FifoInsideOnePriority) {
  Scheduler scheduler(one_vp());
  std::vector<int> order;
  Thread blocker = spawn(at(kMaxPriority), [&] {
    std::vector<Thread> threads;
    for (int i = 0; i < 10; ++i)
      threads.push_back(spawn(at(3), [&order, i] { order.push_back(i); }));
    for (Thread& t : threads) t.join();
  });
  blocker.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(Priority, LowPriorityThreadIsNotStarved) {
  Scheduler scheduler(one_vp());
  std::atomic<bool> low_ran{false};
  std::atomic<long> high_yields_before{0};
  // Two high-priority threads always runnable: without aging the low one would never run and
  // this test would hang until its timeout.
  auto high = [&] {
    while (!low_ran.load()) {
      high_yields_before.fetch_add(1);
      this_thread::yield();
    }
  };
  // All three are queued by a thread of the core before any of them runs, so the count below
  // starts when the low thread is already waiting.
  Thread blocker = spawn(at(kMaxPriority), [&] {
    Thread a = spawn(at(kMaxPriority), high);
    Thread b = spawn(at(kMaxPriority), high);
    Thread low = spawn(at(kMinPriority), [&] { low_ran.store(true); });
    low.join();
    a.join();
    b.join();
  });
  blocker.join();
  EXPECT_TRUE(low_ran.load());
  // starvation_limit is 8: the low thread is passed over at most 8 rounds once queued.
  EXPECT_LE(high_yields_before.load(), 8 + 2);
}

TEST(Priority, EveryLevelIsServedUnderSaturation) {
  Scheduler scheduler(one_vp());
  std::atomic<bool> stop{false};
  std::atomic<int> ran[kPriorityLevels] = {};
  // One always-runnable thread per level, all queued before any runs.
  Thread blocker = spawn(at(kMaxPriority), [&] {
    std::vector<Thread> threads;
    for (int p = kMinPriority; p <= kMaxPriority; ++p) {
      threads.push_back(spawn(at(p), [&, p] {
        while (!stop.load()) {
          ran[p].fetch_add(1);
          this_thread::yield();
        }
      }));
    }
    Thread watcher = spawn(at(kMaxPriority), [&] {
      for (;;) {
        bool all = true;
        for (auto& r : ran) all = all && r.load() > 2;
        if (all) break;
        this_thread::yield();
      }
      stop.store(true);
    });
    watcher.join();
    for (Thread& t : threads) t.join();
  });
  blocker.join();
  for (int p = kMinPriority; p <= kMaxPriority; ++p) EXPECT_GT(ran[p].load(), 2) << "level " << p;
  // Still a priority scheduler: the top level ran more often than the bottom one.
  EXPECT_GT(ran[kMaxPriority].load(), ran[kMinPriority].load());
}

TEST(Priority, ChangingTheQueuedThreadsPriorityMovesIt) {
  Scheduler scheduler(one_vp());
  for (Placement placement : {Placement::pinned(0), Placement::free(), Placement::numa(0)}) {
    std::vector<char> order;
    Thread blocker = spawn(at(kMaxPriority), [&] {
      Thread a = spawn(at(2, placement), [&] { order.push_back('a'); });
      Thread b = spawn(at(2, placement), [&] { order.push_back('b'); });
      b.set_priority(6);
      a.join();
      b.join();
    });
    blocker.join();
    EXPECT_EQ(order, (std::vector<char>{'b', 'a'}));
  }
}

TEST(Priority, ThreadBoostsAndLowersItself) {
  Scheduler scheduler(one_vp());
  std::vector<int> seen;
  Thread t = spawn(at(2), [&] {
    seen.push_back(this_thread::priority());
    this_thread::set_priority(6);
    seen.push_back(this_thread::priority());
    this_thread::set_priority(2);
    seen.push_back(this_thread::priority());
  });
  t.join();
  EXPECT_EQ(seen, (std::vector<int>{2, 6, 2}));
  EXPECT_THROW(this_thread::set_priority(1), Error);
}

TEST(Priority, ProgressThreadBoostsWhileItHoldsWork) {
  Scheduler scheduler(config_with({{"topology", "synthetic:pack:1 core:1 pu:1"},
                                   {"priority.progress", "1"},
                                   {"priority.progress_boost", "6"}}));
  ThreadAttr attr;
  attr.type = ThreadType::progress;
  std::vector<int> seen;
  spawn(attr, [&] {
    seen.push_back(this_thread::priority());
    this_thread::set_boosted(true);
    seen.push_back(this_thread::priority());
    this_thread::set_boosted(false);
    seen.push_back(this_thread::priority());
    // A thread already above the boost level keeps its own priority when boosted.
    this_thread::set_priority(7);
    this_thread::set_boosted(true);
    seen.push_back(this_thread::priority());
  }).join();
  EXPECT_EQ(seen, (std::vector<int>{1, 6, 1, 7}));
  EXPECT_THROW(this_thread::set_boosted(true), Error);
}

TEST(Priority, BoostedThreadOvertakesQueuedOnes) {
  Scheduler scheduler(one_vp());
  std::vector<char> order;
  Thread blocker = spawn(at(kMaxPriority), [&] {
    Thread low = spawn(at(1), [&] { order.push_back('l'); });
    Thread mid = spawn(at(4), [&] { order.push_back('m'); });
    Thread progress = spawn(at(1), [&] {
      order.push_back('p');
      // A progress thread that finds work boosts itself: it now passes the middle thread.
      this_thread::set_priority(6);
      this_thread::yield();
      order.push_back('P');
    });
    progress.set_priority(5);
    low.join();
    mid.join();
    progress.join();
  });
  blocker.join();
  EXPECT_EQ(order, (std::vector<char>{'p', 'P', 'm', 'l'}));
}

// A thread woken from a wait runs at the next scheduling point, before threads that yielded:
// otherwise a rank whose message arrived would wait behind every computing rank's time slice.
TEST(Priority, WokenThreadRunsBeforeYieldedOnes) {
  Scheduler scheduler(one_vp());
  std::vector<char> order;
  detail::WaitList event;
  bool set = false;  // guarded by event.lock
  std::atomic<bool> stop{false};
  Thread blocker = spawn(at(kMaxPriority), [&] {
    auto computing = [&](char name) {
      return [&order, &stop, name] {
        while (!stop.load()) {
          order.push_back(name);
          this_thread::yield();
        }
      };
    };
    Thread waker = spawn(at(3), [&] {
      order.push_back('z');
      this_thread::yield();
      order.push_back('z');
      this_thread::yield();
      event.lock.lock();
      set = true;
      detail::WaiterChain woken = event.take_all();
      event.lock.unlock();
      woken.deliver();
      order.push_back('e');
      this_thread::yield();
    });
    Thread waiter = spawn(at(3), [&] {
      event.lock.lock();
      while (!set) {
        event.wait();
        event.lock.lock();
      }
      event.lock.unlock();
      order.push_back('W');
      stop.store(true);
    });
    Thread a = spawn(at(3), computing('a'));
    Thread b = spawn(at(3), computing('b'));
    waker.join();
    waiter.join();
    a.join();
    b.join();
  });
  blocker.join();
  // z; the waiter parks; a b; z; a b; the waker wakes the waiter, which runs next.
  ASSERT_GE(order.size(), 8u);
  EXPECT_EQ(std::string(order.begin(), order.begin() + 8), "zabzabeW");
}

// Threads that wake each other in turn and park (a ping-pong on one core) go ahead of yielded
// threads only a few times in a row: the yielded ones still get turns.
TEST(Priority, WakeUpsInTurnDoNotStarveYieldedThreads) {
  Scheduler scheduler(one_vp());
  constexpr int kRounds = 1000;
  detail::WaitList baton;
  int turn = 0;  // guarded by baton.lock
  std::atomic<bool> stop{false};
  std::atomic<bool> playing{false};
  std::atomic<long> turns_while_playing{0};
  Thread blocker = spawn(at(kMaxPriority), [&] {
    Thread yielding = spawn(at(3), [&] {
      while (!stop.load()) {
        if (playing.load()) turns_while_playing.fetch_add(1);
        this_thread::yield();
      }
    });
    auto player = [&](int me) {
      return [&, me] {
        playing.store(true);
        for (int i = 0; i < kRounds; ++i) {
          baton.lock.lock();
          while (turn != me) {
            baton.wait();
            baton.lock.lock();
          }
          turn = 1 - me;
          detail::WaiterChain woken = baton.take_all();
          baton.lock.unlock();
          woken.deliver();
        }
      };
    };
    Thread first = spawn(at(3), player(0));
    Thread second = spawn(at(3), player(1));
    first.join();
    second.join();
    stop.store(true);
    yielding.join();
  });
  blocker.join();
  // Each player wakes the other 1000 times; at most kWakeAheadLimit (4) wake-ups in a row go
  // ahead, so the yielding thread runs about once every 5 of them. Without that limit it would not
  // run at all until the players finish.
  EXPECT_GE(turns_while_playing.load(), 2 * kRounds / 10);
}

}  // namespace
}  // namespace weft
