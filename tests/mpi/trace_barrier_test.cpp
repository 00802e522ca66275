// What a trace of an MPI_Barrier of two ranks reads of the clock (docs/observability.md, "What
// recording costs"): each call's begin, and not its end, which is bounded by the other rank's
// begin (the stamp it leaves in its pair ring slot). Counts and orders only, no time.
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

TEST(TraceBarrier, PairBarrierReadsTheClockOnlyAtItsBegins) {
  WEFT_ONE_PROCESS_ONLY("the trace is read back from this process's raw file");
  const std::string file =
      ::testing::TempDir() + "/weft_trace_barrier_" + std::to_string(::getpid()) + ".raw";
  ASSERT_EQ(run_ranks(2, 2,
                      [](int) {
                        for (int i = 0; i < kBarriers; ++i) MPI_Barrier(MPI_COMM_WORLD);
                      },
                      {{"trace.file", file}, {"trace.format", "raw"}, {"trace.events", "mpi"}}),
            0);
  const trace::ProcessTrace trace = trace::read_raw(file);
  ::unlink(file.c_str());

  std::uint64_t reads = 0;
  // Each MPI_Barrier span, by the rank's order of its records: begins and ends in turn.
  std::vector<std::uint64_t> begins;
  std::vector<std::uint64_t> ends;
  for (const trace::Location& location : trace.locations) {
    reads += location.clock_reads;
    for (const trace::Event& e : location.events) {
      const bool span = e.kind == trace::EventKind::begin || e.kind == trace::EventKind::end;
      if (!span || trace.strings.at(e.a) != "MPI_Barrier") continue;
      if (e.kind == trace::EventKind::begin) begins.push_back(e.time);
      if (e.kind == trace::EventKind::end) ends.push_back(e.time);
    }
  }
  std::printf("%llu clock reads, %d barriers of 2 ranks\n", static_cast<unsigned long long>(reads),
              kBarriers);
  ASSERT_EQ(begins.size(), static_cast<std::size_t>(2 * kBarriers));
  ASSERT_EQ(ends.size(), begins.size());
  // 4 a barrier before (each rank's begin and end), 2 now, one in 16 untimed ends read anyway,
  // and the reads of MPI_Init and MPI_Finalize.
  EXPECT_LE(reads, static_cast<std::uint64_t>(3 * kBarriers))
      << "clock reads in " << kBarriers << " barriers of 2 ranks";
  // The k-th barrier's ends come after both ranks' k-th begins: sorted, the k-th end is no
  // earlier than the (2k+1)-th begin.
  std::sort(begins.begin(), begins.end());
  std::sort(ends.begin(), ends.end());
  for (std::size_t k = 0; k < ends.size(); ++k)
    EXPECT_GE(ends[k], begins[k | 1]) << "barrier end " << k << " before the second arrival";
}

}  // namespace
}  // namespace weft::testing
