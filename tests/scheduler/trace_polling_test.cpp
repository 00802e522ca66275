// The record of a switch (trace::thread_switch) and the mark of a polling yield
// (trace::mark_polling_yield), on one virtual processor recording sched events: a switch holds
// who ran, who runs next, that thread's rank, type and priority and why; a polling yield's switch
// is untimed, and a mark whose yield switched to no other thread is gone, so that the thread's
// next plain yield is timed. Counts and fields only, no time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_config.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"
#include "weft/trace.h"
#include "weft/trace_file.h"

namespace weft {
namespace {

using testing::config_with;

constexpr int kRounds = 100;
constexpr int kRank = 7;
constexpr int kPriority = 4;

ThreadAttr pinned(int rank = -1) {
  ThreadAttr attr;
  attr.placement = Placement::pinned(0);
  attr.priority = kPriority;
  attr.rank = rank;
  return attr;
}

struct Switches {
  std::uint64_t clock_reads = 0;
  std::uint64_t from = 0;            // the thread that yields
  std::vector<std::uint64_t> to;     // the thread each round spawned
  std::vector<trace::Event> yields;  // from `from` to a thread of `to`
};

// One core, no preemption (the threads switch only where they yield), the scheduler's records
// in a raw trace written to `file`.
Config one_core_traced(const std::string& file) {
  return config_with({{"topology", "synthetic:pack:1 core:1 pu:1"},
                      {"scheduler.vps", "1"},
                      {"scheduler.preempt_ms", "0"},
                      {"trace.file", file},
                      {"trace.format", "raw"},
                      {"trace.events", "sched"}});
}

// Each round, thread A marks a polling yield and yields while it is alone (no switch), spawns B
// (which records nothing) and yields to it plainly: B runs and ends.
Switches record_rounds() {
  const std::string file =
      ::testing::TempDir() + "/weft_trace_polling_" + std::to_string(::getpid()) + ".raw";
  Switches switches;
  {
    Scheduler scheduler(one_core_traced(file));
    spawn(pinned(), [&] {
      switches.from = this_thread::id();
      for (int i = 0; i < kRounds; ++i) {
        trace::mark_polling_yield();
        this_thread::yield();
        Thread b = spawn(pinned(kRank), [] {});
        switches.to.push_back(b.id());
        this_thread::yield();
        b.join();
      }
    }).join();
    scheduler.shutdown();
  }
  const trace::ProcessTrace recorded = trace::read_raw(file);
  ::unlink(file.c_str());
  for (const trace::Location& location : recorded.locations) {
    switches.clock_reads += location.clock_reads;
    for (const trace::Event& e : location.events) {
      if (e.kind == trace::EventKind::thread_switch && e.a == switches.from && e.b != 0 &&
          e.category == static_cast<std::uint8_t>(trace::SwitchReason::yield))
        switches.yields.push_back(e);
    }
  }
  return switches;
}

// The switch of each round's plain yield holds A, B, B's rank, type and priority, and the reason.
TEST(TracePolling, SwitchHoldsBothThreadsAndTheNextOnesRankTypeAndPriority) {
  const Switches switches = record_rounds();
  ASSERT_EQ(switches.yields.size(), static_cast<std::size_t>(kRounds));
  for (int i = 0; i < kRounds; ++i) {
    const trace::Event& e = switches.yields[static_cast<std::size_t>(i)];
    EXPECT_EQ(e.b, switches.to[static_cast<std::size_t>(i)]) << "round " << i;
    EXPECT_EQ(static_cast<std::int32_t>(e.c), kRank) << "round " << i;
    EXPECT_EQ(static_cast<unsigned>(e.d & 0xff), static_cast<unsigned>(ThreadType::user))
        << "round " << i;
    EXPECT_EQ(static_cast<unsigned>(e.d >> 8), static_cast<unsigned>(kPriority)) << "round " << i;
  }
}

// The polling yield switched to no other thread: its mark must not make the plain yield after it
// untimed (code ran between them). Each round then reads the clock at least twice: A's plain
// yield and B's exit. With the mark left in place, the plain yield took it and read no clock
// (about one read a round).
TEST(TracePolling, PollingYieldWithoutASwitchLeavesNoMark) {
  const Switches switches = record_rounds();
  ASSERT_EQ(switches.yields.size(), static_cast<std::size_t>(kRounds));
  EXPECT_GE(switches.clock_reads, static_cast<std::uint64_t>(2 * kRounds));
}

// Two threads that only mark and yield to each other: their switches read no clock but every
// 16th in a row (the bound of an interpolated time), and the starts, parks and ends around them.
TEST(TracePolling, PollingYieldsToEachOtherReadNoClock) {
  const std::string file =
      ::testing::TempDir() + "/weft_trace_polling_" + std::to_string(::getpid()) + ".raw";
  {
    Scheduler scheduler(one_core_traced(file));
    spawn(pinned(), [] {
      auto poll = [] {
        for (int i = 0; i < kRounds; ++i) {
          trace::mark_polling_yield();
          this_thread::yield();
        }
      };
      Thread a = spawn(pinned(), poll);
      Thread b = spawn(pinned(), poll);
      a.join();
      b.join();
    }).join();
    scheduler.shutdown();
  }
  const trace::ProcessTrace recorded = trace::read_raw(file);
  ::unlink(file.c_str());
  std::uint64_t reads = 0;
  std::uint64_t yields = 0;
  for (const trace::Location& location : recorded.locations) {
    reads += location.clock_reads;
    for (const trace::Event& e : location.events) {
      yields += e.kind == trace::EventKind::thread_switch &&
                e.category == static_cast<std::uint8_t>(trace::SwitchReason::yield);
    }
  }
  EXPECT_GE(yields, static_cast<std::uint64_t>(2 * kRounds - 1));
  EXPECT_LE(reads, yields / 16 + 20) << yields << " yields";
}

}  // namespace
}  // namespace weft
