// What a trace of an MPI_Barrier reads of the clock (docs/observability.md, "What recording
// costs"): each call's begin, and not its end, which is bounded by the other rank's begin (the
// stamp it leaves in its pair ring slot) for two ranks, and by the last arrival's read for more.
// Counts and orders only, no time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "mpi.h"
#include "mpi_test_util.h"
#include "weft/trace_file.h"

namespace weft::testing {
namespace {

constexpr int kBarriers = 200;

struct Barriers {
  std::uint64_t reads = 0;
  // Each MPI_Barrier span's begin and end times, of every rank.
  std::vector<std::uint64_t> begins;
  std::vector<std::uint64_t> ends;
};

// kBarriers barriers of `ranks` ranks on 2 virtual processors, recording MPI calls.
Barriers record(int ranks) {
  const std::string file =
      ::testing::TempDir() + "/weft_trace_barrier_" + std::to_string(::getpid()) + ".raw";
  EXPECT_EQ(run_ranks(ranks, 2,
                      [](int) {
                        for (int i = 0; i < kBarriers; ++i) MPI_Barrier(MPI_COMM_WORLD);
                      },
                      {{"trace.file", file}, {"trace.format", "raw"}, {"trace.events", "mpi"}}),
            0);
  const trace::ProcessTrace trace = trace::read_raw(file);
  ::unlink(file.c_str());
  Barriers barriers;
  for (const trace::Location& location : trace.locations) {
    barriers.reads += location.clock_reads;
    for (const trace::Event& e : location.events) {
      const bool span = e.kind == trace::EventKind::begin || e.kind == trace::EventKind::end;
      if (!span || trace.strings.at(e.a) != "MPI_Barrier") continue;
      if (e.kind == trace::EventKind::begin) barriers.begins.push_back(e.time);
      if (e.kind == trace::EventKind::end) barriers.ends.push_back(e.time);
    }
  }
  std::printf("%llu clock reads, %d barriers of %d ranks\n",
              static_cast<unsigned long long>(barriers.reads), kBarriers, ranks);
  return barriers;
}

// The k-th barrier's ends come after all its ranks' begins: sorted, the k-th end is no earlier
// than the last begin of its group of `ranks` (a power of two).
void expect_ends_after_every_begin(Barriers& barriers, int ranks) {
  std::sort(barriers.begins.begin(), barriers.begins.end());
  std::sort(barriers.ends.begin(), barriers.ends.end());
  const auto last = static_cast<std::size_t>(ranks - 1);
  for (std::size_t k = 0; k < barriers.ends.size(); ++k) {
    EXPECT_GE(barriers.ends[k], barriers.begins[k | last])
        << "barrier end " << k << " before the last arrival";
  }
}

TEST(TraceBarrier, PairBarrierReadsTheClockOnlyAtItsBegins) {
  WEFT_ONE_PROCESS_ONLY("the trace is read back from this process's raw file");
  Barriers barriers = record(2);
  ASSERT_EQ(barriers.begins.size(), static_cast<std::size_t>(2 * kBarriers));
  ASSERT_EQ(barriers.ends.size(), barriers.begins.size());
  // 4 a barrier before (each rank's begin and end), 2 now, one in 16 untimed ends read anyway,
  // and the reads of MPI_Init and MPI_Finalize.
  EXPECT_LE(barriers.reads, static_cast<std::uint64_t>(3 * kBarriers))
      << "clock reads in " << kBarriers << " barriers of 2 ranks";
  expect_ends_after_every_begin(barriers, 2);
}

// A barrier of 8 ranks meets in the communicator's meeting: each rank's begin reads the clock,
// and its end does not: it is bounded by the read of the last rank to arrive, made before it let
// the others go (which no record holds, so clock_reads does not count it). 16 reads a barrier
// before, 8 now counted, and those of MPI_Init and MPI_Finalize.
TEST(TraceBarrier, MeetingBarrierReadsTheClockOnlyAtItsBegins) {
  WEFT_ONE_PROCESS_ONLY("the trace is read back from this process's raw file");
  constexpr int kRanks = 8;
  Barriers barriers = record(kRanks);
  ASSERT_EQ(barriers.begins.size(), static_cast<std::size_t>(kRanks * kBarriers));
  ASSERT_EQ(barriers.ends.size(), barriers.begins.size());
  EXPECT_LE(barriers.reads, static_cast<std::uint64_t>((kRanks + 2) * kBarriers))
      << "clock reads in " << kBarriers << " barriers of " << kRanks << " ranks";
  expect_ends_after_every_begin(barriers, kRanks);
}

}  // namespace
}  // namespace weft::testing
