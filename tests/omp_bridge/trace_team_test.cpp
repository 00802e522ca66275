// What recording a trace of an OpenMP team reads of the clock, and where its workers' spans land
// (docs/observability.md, "What recording costs"): a worker's region, join and barrier spans read
// no clock, they begin no earlier than their master's region, and a worker that parked in a
// barrier still gets its barrier's end at the time it resumed. Counts and orders only, no time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "omp.h"
#include "omp_bridge/gomp_abi.h"
#include "scheduler/test_config.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"
#include "weft/trace_file.h"

namespace weft {
namespace {

using testing::config_with;

constexpr int kThreads = 8;
constexpr int kRegions = 100;

void empty_region(void*) {}

// A barrier that thread 0 reaches late: the other threads wait in it long enough to park.
void late_master_barrier(void*) {
  if (omp_get_thread_num() == 0) this_thread::sleep_for(std::chrono::milliseconds(50));
  GOMP_barrier();
}

// Runs `regions` parallel regions of kThreads threads of `fn` on a scheduler recording `events`
// on 2 virtual processors, and returns the trace.
trace::ProcessTrace record(const std::string& events, void (*fn)(void*), int regions) {
  const std::string file =
      ::testing::TempDir() + "/weft_trace_team_" + std::to_string(::getpid()) + ".raw";
  {
    Scheduler scheduler(config_with({{"topology", "synthetic:pack:1 core:2 pu:1"},
                                     {"scheduler.vps", "2"},
                                     {"trace.file", file},
                                     {"trace.format", "raw"},
                                     {"trace.events", events}}));
    spawn([&] {
      for (int i = 0; i < regions; ++i) GOMP_parallel(fn, nullptr, kThreads, 0);
    }).join();
    scheduler.shutdown();
  }
  trace::ProcessTrace recorded = trace::read_raw(file);
  ::unlink(file.c_str());
  return recorded;
}

bool named(const trace::ProcessTrace& trace, const trace::Event& e, trace::EventKind kind,
           const char* name) {
  return e.kind == kind && trace.strings.at(e.a) == name;
}

// Each region's clock reads are its master's (the region's begin, the join's begin and end), and
// one in 16 of the workers' records at most: 24 a region before, each worker reading at its
// region's begin (unless it resumed from a park) and at its join's begin and end.
TEST(OmpTrace, WorkersOfARegionReadNoClock) {
  const trace::ProcessTrace trace = record("omp", empty_region, kRegions);
  std::uint64_t reads = 0;
  int masters = 0;
  int workers = 0;
  for (const trace::Location& location : trace.locations) {
    reads += location.clock_reads;
    for (const trace::Event& e : location.events) {
      if (!named(trace, e, trace::EventKind::begin, "parallel region")) continue;
      (e.b == kThreads ? masters : workers) += 1;
    }
  }
  std::printf("%llu clock reads, %d regions of %d threads\n",
              static_cast<unsigned long long>(reads), kRegions, kThreads);
  EXPECT_EQ(masters, kRegions);
  EXPECT_EQ(workers, kRegions * (kThreads - 1));
  EXPECT_LE(reads, static_cast<std::uint64_t>(6 * kRegions))
      << "clock reads in " << kRegions << " regions of " << kThreads;
}

// A worker's span is placed from its master's times: the k-th region of worker w begins no
// earlier than its master's k-th region, on whichever virtual processor each ran.
TEST(OmpTrace, WorkerRegionsBeginAfterTheirMasters) {
  const trace::ProcessTrace trace = record("omp", empty_region, kRegions);
  std::map<std::uint64_t, std::vector<std::uint64_t>> begins;  // by thread number (the arg)
  for (const trace::Location& location : trace.locations) {
    for (const trace::Event& e : location.events) {
      if (named(trace, e, trace::EventKind::begin, "parallel region"))
        begins[e.b == kThreads ? 0 : e.b].push_back(e.time);
    }
  }
  for (auto& [num, times] : begins) std::sort(times.begin(), times.end());
  const std::vector<std::uint64_t>& master = begins[0];
  ASSERT_EQ(master.size(), static_cast<std::size_t>(kRegions));
  for (std::uint64_t num = 1; num < kThreads; ++num) {
    const std::vector<std::uint64_t>& worker = begins[num];
    ASSERT_EQ(worker.size(), master.size()) << "worker " << num;
    for (std::size_t k = 0; k < worker.size(); ++k)
      EXPECT_GE(worker[k], master[k]) << "worker " << num << ", region " << k;
  }
}

// A worker that parked in a barrier keeps a span of its own that shows the wait: its park lies
// inside it, and it ends no earlier than the switch that resumed the worker, on whichever virtual
// processor it resumed. (Its end takes that switch's time where nothing was recorded between, else
// reads the clock: which one depends on what the core ran meanwhile, so it is not asserted.)
TEST(OmpTrace, WorkerThatParkedInABarrierHasItsOwnTimedSpan) {
  const trace::ProcessTrace trace = record("sched,omp", late_master_barrier, 1);
  struct Barrier {
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    std::uint64_t resumed = 0;  // the last switch to the thread before its end, on the end's track
  };
  std::map<std::uint64_t, Barrier> barriers;  // by thread id: one barrier each
  std::map<std::uint64_t, std::vector<std::uint64_t>> parks;
  for (const trace::Location& location : trace.locations) {
    std::uint64_t running = 0;
    std::map<std::uint64_t, std::uint64_t> switched_in;
    for (const trace::Event& e : location.events) {
      if (e.kind == trace::EventKind::thread_switch) {
        if (e.category == static_cast<std::uint8_t>(trace::SwitchReason::park))
          parks[e.a].push_back(e.time);
        running = e.b;
        switched_in[running] = e.time;
      } else if (named(trace, e, trace::EventKind::begin, "barrier")) {
        barriers[running].begin = e.time;
      } else if (named(trace, e, trace::EventKind::end, "barrier")) {
        barriers[running].end = e.time;
        barriers[running].resumed = switched_in[running];
      }
    }
  }
  int parked = 0;
  for (const auto& [thread, barrier] : barriers) {
    const std::vector<std::uint64_t>& times = parks[thread];
    if (std::none_of(times.begin(), times.end(), [&](std::uint64_t park) {
          return park >= barrier.begin && park <= barrier.end;
        }))
      continue;
    ++parked;
    EXPECT_GE(barrier.end, barrier.resumed) << "thread " << thread << " ended before it resumed";
    EXPECT_LT(barrier.begin, barrier.resumed) << "thread " << thread;
  }
  // The 7 threads that waited for the late master parked.
  EXPECT_GT(parked, 0);
}

}  // namespace
}  // namespace weft
