// Where the worker of an OpenMP team of 2 on 2 cores runs (docs/omp_bridge.md, "A team of two"):
// beside its master while its shares are short, so that the two hand one core to each other
// instead of waiting across cores; on the other core once its shares are long, also after a run
// of short regions left it beside the master and the other core asleep. Counts of regions by
// where the two threads ran, no time.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <vector>

#include "omp.h"
#include "omp_bridge/gomp_abi.h"
#include "scheduler/test_config.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

// Where the two threads of each region ran (at the begin and at the end of their shares), and
// whether an idle VP stole a thread during the region.
struct Regions {
  std::vector<std::array<int, 2>> vps;
  std::vector<std::array<int, 2>> began_on;
  std::vector<bool> stolen;
  std::size_t next = 0;
  std::chrono::microseconds work{0};
};

// Busy for `work` without a scheduling point, as a computing share is.
void compute(std::chrono::microseconds work) {
  const auto until = std::chrono::steady_clock::now() + work;
  while (std::chrono::steady_clock::now() < until) {
  }
}

void record_region(void* data) {
  auto& regions = *static_cast<Regions*>(data);
  const auto num = static_cast<std::size_t>(omp_get_thread_num());
  regions.began_on[regions.next][num] = this_thread::vp();
  compute(regions.work);
  regions.vps[regions.next][num] = this_thread::vp();
}

std::uint64_t steals() {
  std::uint64_t count = 0;
  for (const auto& vp : Scheduler::current()->stats()) count += vp.steals;
  return count;
}

// Runs `count` regions of 2 threads with shares of `work` each, after those already in `regions`.
void run_regions(Regions& regions, int count, std::chrono::microseconds work) {
  regions.work = work;
  for (int i = 0; i < count; ++i) {
    regions.vps.push_back({-1, -1});
    regions.began_on.push_back({-1, -1});
    const std::uint64_t before = steals();
    GOMP_parallel(record_region, &regions, 2, 0);
    regions.stolen.push_back(steals() != before);
    ++regions.next;
  }
}

// Regions in [first, last) whose two threads ran on one VP.
int on_one_vp(const Regions& regions, std::size_t first, std::size_t last) {
  int count = 0;
  for (std::size_t i = first; i < last; ++i) {
    count += regions.vps[i][0] == regions.vps[i][1] ? 1 : 0;
  }
  return count;
}

// Before, the worker stayed on the VP it was placed on (the other core) and every region crossed
// cores; in some runs the other core stole a thread and the two ran on one core from then on.
TEST(OmpTeamOfTwo, ShortRegionsRunOnTheMastersVp) {
  Regions regions;
  {
    Scheduler scheduler(testing::two_vps());
    spawn([&] { run_regions(regions, 2000, std::chrono::microseconds(0)); }).join();
    scheduler.shutdown();
  }
  // The first regions place the worker; a few more may cross cores where this loaded machine
  // deschedules a VP's kernel thread long enough for the other VP to steal a thread.
  EXPECT_GE(on_one_vp(regions, 10, 2000), 1800) << "of 1990 regions";
}

// Short shares between barriers, after short regions: the two hand one core to each other at
// every barrier (an idle VP does not steal the one queued at each hand-off).
constexpr int kBarriers = 2000;

void barriers(void* data) {
  auto& vps = *static_cast<std::array<std::vector<int>, 2>*>(data);
  auto& mine = vps[static_cast<std::size_t>(omp_get_thread_num())];
  for (int i = 0; i < kBarriers; ++i) {
    GOMP_barrier();
    mine[static_cast<std::size_t>(i)] = this_thread::vp();
  }
}

TEST(OmpTeamOfTwo, ShortSharesBetweenBarriersRunOnOneVp) {
  Regions regions;
  std::array<std::vector<int>, 2> vps;
  for (auto& thread : vps) thread.assign(kBarriers, -1);
  {
    Scheduler scheduler(testing::two_vps());
    spawn([&] {
      run_regions(regions, 200, std::chrono::microseconds(0));
      GOMP_parallel(barriers, &vps, 2, 0);
    }).join();
    scheduler.shutdown();
  }
  int together = 0;
  for (std::size_t i = 0; i < kBarriers; ++i) together += vps[0][i] == vps[1][i] ? 1 : 0;
  EXPECT_GE(together, kBarriers * 9 / 10) << "of " << kBarriers << " barriers";
}

// A run of short regions leaves the worker on its master's VP and the other VP asleep (nothing
// wakes a VP for a thread that another VP's own thread queued there): long shares that follow
// would wait for the master's, region after region, unless the worker leaves. Counted: regions
// whose worker began its share on the master's VP without being stolen there, that is, queued
// behind the master. Where the worker queues itself on the other VP, that VP runs it, or the
// master's VP steals it back once idle (on a loaded machine the other VP's kernel thread may not
// get a core before the master's share ends). Short regions after them gather again.
TEST(OmpTeamOfTwo, LongSharesLeaveTheMastersVpAndShortOnesComeBack) {
  Regions regions;
  {
    Scheduler scheduler(testing::two_vps());
    spawn([&] {
      run_regions(regions, 500, std::chrono::microseconds(0));
      run_regions(regions, 100, std::chrono::microseconds(200));
      run_regions(regions, 500, std::chrono::microseconds(0));
    }).join();
    scheduler.shutdown();
  }
  int behind_master = 0;
  for (std::size_t i = 502; i < 600; ++i) {
    behind_master += regions.began_on[i][1] == regions.began_on[i][0] && !regions.stolen[i];
  }
  // Before, 16 to 48 in four runs of five; the fifth ran every region across cores.
  EXPECT_LE(behind_master, 10) << "of 98 long regions after the first two";
  EXPECT_GE(on_one_vp(regions, 610, 1100), 440) << "of 490 short regions after the long ones";
}

}  // namespace
}  // namespace weft
