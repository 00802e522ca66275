// The wake rule (Go's): a thread that becomes ready while no virtual processor searches for work
// wakes a sleeping one, so a lone ready thread queued behind a computation that never yields is
// run by an idle core instead of waiting for the computation to end.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "test_config.h"
#include "weft/scheduler.h"
#include "weft/thread.h"

namespace weft {
namespace {

// A thread pinned to VP 0 computes without a scheduling point until the thread it started, placed
// by `placement` where VP 0 would run it, has run. Bounded, so that a missing wake-up fails the
// test instead of hanging it.
bool lone_thread_runs_beside_a_computation(Placement placement) {
  Scheduler scheduler(testing::config_with(
      {{"topology", "synthetic:pack:1 [numa] core:2 pu:1"}, {"scheduler.vps", "2"}}));
  // Let VP 1 go to sleep: the rule is about sleeping processors.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::atomic<bool> ran{false};
  bool seen_while_computing = false;
  ThreadAttr computing;
  computing.placement = Placement::pinned(0);
  Thread computation = spawn(computing, [&] {
    ThreadAttr lone;
    lone.placement = placement;
    Thread started = spawn(lone, [&] { ran.store(true); });
    started.detach();
    for (long i = 0; i < 1'000'000'000L && !seen_while_computing; ++i) {
      seen_while_computing = ran.load(std::memory_order_relaxed);
    }
  });
  computation.join();
  return seen_while_computing;
}

TEST(WakeRule, ALoneFreeThreadBehindAComputationWakesAnIdleCore) {
  EXPECT_TRUE(lone_thread_runs_beside_a_computation(Placement::free(0)));
}

TEST(WakeRule, ALoneNodeThreadBehindAComputationWakesAnIdleCore) {
  EXPECT_TRUE(lone_thread_runs_beside_a_computation(Placement::numa(0)));
}

}  // namespace
}  // namespace weft
