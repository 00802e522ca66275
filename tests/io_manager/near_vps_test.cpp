// Sources polled near a device (SourceSpec::near_vps, notes/seeds.md 004): the idle time of the
// near virtual processors polls them, and a far one steps in only when they are starved.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>

#include "io_test_util.h"
#include "manager.h"
#include "weft/io.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using io::detail::may_poll;
using io::detail::SourceEntry;
using testing::finishes;
using testing::io_config;

TEST(NearVps, FarCoresPollOnlyAStarvedSource) {
  SourceEntry anywhere;
  EXPECT_TRUE(may_poll(anywhere, 0, 0));
  SourceEntry near_one;
  near_one.near = {false, true};
  near_one.polled_ns = 1'000'000;
  EXPECT_TRUE(may_poll(near_one, 1, 1'000'001));
  EXPECT_FALSE(may_poll(near_one, 0, 1'000'001));
  EXPECT_FALSE(may_poll(near_one, 5, 1'000'001));  // beyond the list: far
  EXPECT_TRUE(may_poll(near_one, 0, 1'000'000 + 50'000));
  EXPECT_TRUE(may_poll(near_one, -1, 1'000'001));  // a busy core's scheduling point
}

// The near virtual processor computes without a scheduling point: the far, idle one must poll the
// source meanwhile, or work in flight would wait for the computation to end.
TEST(NearVps, AFarIdleCoreTakesOverWhileTheNearOneComputes) {
  Scheduler scheduler(io_config("poll", 2));
  std::atomic<bool> computing{false};
  std::atomic<bool> far_polled{false};
  std::atomic<bool> near_polled{false};
  io::SourceSpec spec;
  spec.name = "near vp 1";
  spec.near_vps = {1};
  spec.poll = [&] {
    const int vp = this_thread::vp();
    if (vp == 1) near_polled.store(true);
    if (vp == 0 && computing.load()) far_polled.store(true);
    return false;
  };
  spec.busy = [] { return true; };
  io::Source source(std::move(spec));
  // While both are idle the near one polls.
  EXPECT_TRUE(finishes([&] { return near_polled.load(); }, [] {}));
  ThreadAttr attr;
  attr.placement = Placement::pinned(1);
  Thread computation = spawn(attr, [&] {
    computing.store(true);
    // Bounded, so that a broken fallback fails the test instead of hanging it.
    for (int i = 0; i < 200'000'000 && !far_polled.load(std::memory_order_relaxed); ++i) {
    }
    computing.store(false);
  });
  computation.join();
  EXPECT_TRUE(far_polled.load()) << "virtual processor 0 never polled the starved source";
}

}  // namespace
}  // namespace weft
