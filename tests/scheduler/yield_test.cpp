// this_thread::yield between threads pinned to one processor: the fast path (VirtualProcessor::
// prepare_yield, weft/detail/yield.h's inline finish_yield) must give what the general path gives,
// and must not miss a rare condition that its processor's attention word or the housekeeping's
// budget carries (one test each, made while the threads already yield to each other).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "test_config.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"
#include "weft/trace_file.h"

namespace weft {
namespace {

using testing::config_with;

Config one_vp() {
  return config_with({{"topology", "synthetic:pack:1 core:1 pu:1"}, {"scheduler.vps", "1"}});
}

ThreadAttr pinned(int priority = 4) {
  ThreadAttr attr;
  attr.placement = Placement::pinned(0);
  attr.priority = priority;
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
  long during_sleep = 0;
  // The sleep starts once the yielders run: a test thread that the kernel held for the 2 ms
  // before it spawned them let the sleeper wake with no yield to look at its timer.
  Thread sleeper = spawn(pinned(), [&] {
    while (yields.load(std::memory_order_relaxed) == 0) this_thread::yield();
    const long before = yields.load(std::memory_order_relaxed);
    this_thread::sleep_for(std::chrono::milliseconds(2));
    during_sleep = yields.load(std::memory_order_relaxed) - before;
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
  // The processor stayed busy with the yields while the sleeper slept.
  EXPECT_GT(during_sleep, 0);
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

// The same with the hook added while the threads already yield to each other on the fast path:
// the fast path sees the hook through its processor's attention word (kSwitchHooks), which the
// hooks' watcher sets on every processor.
TEST(ThreadYield, SwitchHookAddedWhileThreadsYieldRunsAtEveryYield) {
  Scheduler scheduler(one_vp());
  std::atomic<long> hook_calls{0};
  std::atomic<bool> yielding{false};
  std::atomic<bool> added{false};
  long before = 0;
  long after = 0;
  Thread yielder = spawn(pinned(), [&] {
    std::atomic<bool> stop{false};
    Thread partner = spawn(pinned(), [&] {
      while (!stop.load(std::memory_order_relaxed)) this_thread::yield();
    });
    this_thread::yield();
    yielding.store(true);
    while (!added.load()) this_thread::yield();
    before = hook_calls.load();
    for (int i = 0; i < 100; ++i) this_thread::yield();
    after = hook_calls.load();
    stop.store(true, std::memory_order_relaxed);
    partner.join();
  });
  while (!yielding.load()) std::this_thread::yield();
  const auto id = scheduler.add_switch_hook([&] { hook_calls.fetch_add(1); });
  added.store(true);
  yielder.join();
  scheduler.remove_hook(id);
  EXPECT_EQ(after - before, 200);
}

// A queued thread whose priority drops while the others yield to each other leaves their level:
// its processor's next pick re-sorts the queue (the attention word's kReprioritize), so the
// yields of the threads above it no longer give it turns (fewer yields than the starvation limit,
// so aging does not either). Without the re-sort it would get the next turn of its old level.
TEST(ThreadYield, ThreadLoweredWhileQueuedGetsNoTurnFromYieldsAbove) {
  Scheduler scheduler(config_with({{"topology", "synthetic:pack:1 core:1 pu:1"},
                                   {"scheduler.vps", "1"},
                                   {"scheduler.starvation_limit", "1000"}}));
  std::atomic<long> lowered_turns{0};
  long before = -1;
  long after = -1;
  spawn(pinned(), [&] {
    std::atomic<bool> stop{false};
    Thread lowered = spawn(pinned(), [&] {
      while (!stop.load(std::memory_order_relaxed)) {
        lowered_turns.fetch_add(1);
        this_thread::yield();
      }
    });
    Thread partner = spawn(pinned(), [&] {
      while (!stop.load(std::memory_order_relaxed)) this_thread::yield();
    });
    for (int i = 0; i < 4; ++i) this_thread::yield();
    // `lowered` is queued now: this thread runs, its two partners wait for their turns.
    lowered.set_priority(3);
    before = lowered_turns.load();
    for (int i = 0; i < 20; ++i) this_thread::yield();
    after = lowered_turns.load();
    stop.store(true, std::memory_order_relaxed);
    partner.join();
    lowered.join();
  }).join();
  EXPECT_GT(before, 0);
  EXPECT_EQ(after, before);
}

// With the trace recording sched events, every yield is recorded, those of the fast path's
// conditions included: the processor's attention word has kTraceSched from its start, so the
// first yields, before any housekeeping, are recorded too.
TEST(ThreadYield, TraceRecordsEveryYieldSwitch) {
  const std::string file =
      ::testing::TempDir() + "/weft_yield_trace_" + std::to_string(::getpid()) + ".raw";
  constexpr int kYields = 8;
  {
    Scheduler scheduler(config_with({{"topology", "synthetic:pack:1 core:1 pu:1"},
                                     {"scheduler.vps", "1"},
                                     {"trace.file", file},
                                     {"trace.format", "raw"},
                                     {"trace.events", "sched"}}));
    spawn(pinned(), [&] {
      Thread a = spawn(pinned(), [] {
        for (int i = 0; i < kYields; ++i) this_thread::yield();
      });
      Thread b = spawn(pinned(), [] {
        for (int i = 0; i < kYields; ++i) this_thread::yield();
      });
      a.join();
      b.join();
    }).join();
    scheduler.shutdown();
  }
  const trace::ProcessTrace recorded = trace::read_raw(file);
  ::unlink(file.c_str());
  int yields = 0;
  for (const trace::Location& location : recorded.locations) {
    for (const trace::Event& e : location.events) {
      yields += e.kind == trace::EventKind::thread_switch &&
                e.category == static_cast<std::uint8_t>(trace::SwitchReason::yield);
    }
  }
  // Each yield of a and b but the last one of the two switches to the other.
  EXPECT_GE(yields, 2 * kYields - 1);
}

// While the housekeeping has nothing to keep its budget of picks is the quiet one (256); a
// timer armed on the processor cuts it back to 16 (VirtualProcessor::add_timer), so threads
// that only yield to each other still see the timer due within 16 picks. Three rounds: with a
// quiet budget left in place, each would pass only when its deadline fell near the budget's end.
TEST(ThreadYield, TimerArmedWhileThreadsYieldIsSeenWithinTheBudget) {
  Scheduler scheduler(one_vp());
  for (int round = 0; round < 3; ++round) {
    std::atomic<bool> woke{false};
    std::atomic<std::int64_t> deadline_ns{INT64_MAX};
    std::atomic<long> late_yields{0};
    spawn(pinned(), [&] {
      auto yielder = [&] {
        while (!woke.load()) {
          this_thread::yield();
          const std::int64_t now =
              std::chrono::steady_clock::now().time_since_epoch() / std::chrono::nanoseconds(1);
          if (now >= deadline_ns.load() && !woke.load()) late_yields.fetch_add(1);
        }
      };
      Thread a = spawn(pinned(), yielder);
      Thread b = spawn(pinned(), yielder);
      // Enough picks for a housekeeping that finds nothing to keep.
      for (int i = 0; i < 300; ++i) this_thread::yield();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(2);
      deadline_ns.store(deadline.time_since_epoch() / std::chrono::nanoseconds(1));
      this_thread::sleep_until(deadline);
      woke.store(true);
      a.join();
      b.join();
    }).join();
    // Each late yield is a pick: 16 to the housekeeping that expires the timer, one more for the
    // woken thread's turn, a few for the clock read before the deadline's own pick.
    EXPECT_LE(late_yields.load(), 16 + 4) << "round " << round;
  }
}

// The same for a timer hook registered from outside while the threads yield: the registration
// sets the attention word's kHousekeepingSoon on every processor, whose next pick cuts the budget.
TEST(ThreadYield, TimerHookAddedWhileThreadsYieldRunsWithinTheBudget) {
  Scheduler scheduler(one_vp());
  for (int round = 0; round < 3; ++round) {
    std::atomic<bool> quiet{false};
    std::atomic<bool> added{false};
    std::atomic<bool> ran{false};
    std::atomic<long> yields_until_run{0};
    Thread yielder = spawn(pinned(), [&] {
      std::atomic<bool> stop{false};
      Thread partner = spawn(pinned(), [&] {
        while (!stop.load(std::memory_order_relaxed)) this_thread::yield();
      });
      // Enough picks for a housekeeping that finds nothing to keep (no hook left registered).
      for (int i = 0; i < 300; ++i) this_thread::yield();
      quiet.store(true);
      while (!added.load()) this_thread::yield();
      while (!ran.load()) {
        this_thread::yield();
        yields_until_run.fetch_add(1);
      }
      stop.store(true, std::memory_order_relaxed);
      partner.join();
    });
    while (!quiet.load()) std::this_thread::yield();
    const auto id = scheduler.add_timer_hook(std::chrono::nanoseconds(1), [&] { ran.store(true); });
    added.store(true);
    yielder.join();
    scheduler.remove_hook(id);
    // Two picks a yield of this thread (its partner's in between): 16 picks and a few.
    EXPECT_LE(yields_until_run.load(), 8 + 2) << "round " << round;
  }
}

}  // namespace
}  // namespace weft
