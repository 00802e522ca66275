// The wake rule (docs/scheduler.md, Waking VPs): a free thread made ready from elsewhere on the
// queue of a virtual processor that is busy wakes a sleeping one, which steals it, when none
// searches. Each test queues a thread behind a thread that never yields while another processor
// sleeps: without the rule the queued thread never runs and the test hangs until ctest's timeout.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "test_config.h"
#include "weft/detail/prefer_vp.h"
#include "weft/error.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::config_with;

Config vps(int count) {
  const std::string n = std::to_string(count);
  return config_with({{"topology", "synthetic:pack:1 core:" + n + " pu:1"}, {"scheduler.vps", n}});
}

ThreadAttr placed(Placement placement) {
  ThreadAttr attr;
  attr.placement = placement;
  return attr;
}

std::uint64_t sleeps(int vp) {
  return Scheduler::current()->stats()[vp].sleeps;
}

void pause_briefly() {
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// Returns once virtual processor `vp` has gone to sleep after `before` (a count of its sleeps read
// while it was running a thread) and so has nothing left to run. No time limit: ctest's is the
// test's.
void await_sleep_after(int vp, std::uint64_t before) {
  while (sleeps(vp) <= before) pause_briefly();
}

// Returns once virtual processor `vp`, which nothing will wake afterwards, sleeps: a thread run
// there reads its count of sleeps, so that the next sleep counted is one that follows it.
void await_sleeping(int vp) {
  std::atomic<std::uint64_t> before{0};
  spawn(placed(Placement::pinned(vp)), [&] { before.store(sleeps(vp)); }).join();
  await_sleep_after(vp, before.load());
}

// A free thread parked after running on VP 0: its wake-up queues it on VP 0's shared queue, or on
// `preferred_vp`'s when one is given. Spawned again until one runs on VP 0 (an idle VP may steal
// it at its spawn).
Thread park_on_vp0(Event& event, std::atomic<int>& ran_on, int preferred_vp = -1) {
  for (;;) {
    std::atomic<int> started_on{-1};
    std::atomic<std::uint64_t> before{0};
    Thread waiter = spawn(placed(Placement::free(0)), [&] {
      if (this_thread::vp() == 0) before.store(sleeps(0));
      started_on.store(this_thread::vp());
      if (this_thread::vp() != 0) return;
      if (preferred_vp >= 0) this_thread::prefer_vp(preferred_vp);
      event.wait();
      ran_on.store(this_thread::vp());
    });
    while (started_on.load() < 0) pause_briefly();
    if (started_on.load() == 0) {
      // VP 0 sleeps only once nothing runs there or waits in its queues: the waiter has parked.
      await_sleep_after(0, before.load());
      return waiter;
    }
    waiter.join();
  }
}

// A thread pinned to VP `vp` that spins, never yielding, until the waiter has run.
Thread spin_until_ran(int vp, std::atomic<int>& ran_on) {
  std::atomic<bool> spinning{false};
  Thread spinner = spawn(placed(Placement::pinned(vp)), [&spinning, &ran_on] {
    spinning.store(true);
    while (ran_on.load() < 0) {
    }
  });
  while (!spinning.load()) pause_briefly();
  return spinner;
}

TEST(WakeRule, ThreadReadiedFromOutsideBehindBusyVpRunsOnSleepingVp) {
  Scheduler scheduler(vps(2));
  Event event;
  std::atomic<int> ran_on{-1};
  Thread waiter = park_on_vp0(event, ran_on);
  Thread spinner = spin_until_ran(0, ran_on);
  await_sleeping(1);
  event.set();  // from the main kernel thread, outside weft
  waiter.join();
  spinner.join();
  EXPECT_EQ(ran_on.load(), 1);
}

TEST(WakeRule, ThreadReadiedFromAnotherBusyVpRunsOnSleepingVp) {
  Scheduler scheduler(vps(3));
  Event event;
  std::atomic<int> ran_on{-1};
  Thread waiter = park_on_vp0(event, ran_on);
  Thread spinner = spin_until_ran(0, ran_on);
  await_sleeping(2);
  // The waker stays on VP 1, never yielding, so that only VP 2 can run the waiter.
  Thread waker = spawn(placed(Placement::pinned(1)), [&] {
    event.set();
    while (ran_on.load() < 0) {
    }
  });
  waiter.join();
  waker.join();
  spinner.join();
  EXPECT_EQ(ran_on.load(), 2);
}

// this_thread::prefer_vp (what an OpenMP worker of a team with more threads than places calls as
// it leaves a region): the waiter last ran on VP 0 and asked for VP 1; its waker stays on VP 0
// without yielding. Queued on VP 0, where it last ran, it would run only once the waker gives up
// (after a second, then on VP 0); queued on VP 1 from elsewhere, it wakes that sleeping VP and
// runs there at once.
TEST(WakeRule, PreferredVpQueuesParkedFreeThreadThere) {
  Scheduler scheduler(vps(2));
  Event event;
  std::atomic<int> ran_on{-1};
  Thread waiter = park_on_vp0(event, ran_on, 1);
  await_sleeping(1);
  Thread waker = spawn(placed(Placement::pinned(0)), [&] {
    event.set();
    // A bound, not a timing: without the preference the waiter can run only after this loop.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (ran_on.load() < 0 && std::chrono::steady_clock::now() < give_up) {
    }
  });
  waker.join();
  waiter.join();
  EXPECT_EQ(ran_on.load(), 1);
}

TEST(WakeRule, PreferredVpOutOfRangeIsRefused) {
  Scheduler scheduler(vps(2));
  std::atomic<int> refused{0};
  spawn([&] {
    for (int vp : {-1, 2}) {
      try {
        this_thread::prefer_vp(vp);
      } catch (const Error&) {
        refused.fetch_add(1);
      }
    }
  }).join();
  EXPECT_EQ(refused.load(), 2);
}

}  // namespace
}  // namespace weft
