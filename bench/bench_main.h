// The body of main() of weft's Google Benchmark programs: the benchmarks run beside one
// weft::Scheduler that lives for the whole run (only one may run per process at a time), and the
// RATIO lines come last.
#pragma once

#include <benchmark/benchmark.h>

#include "ratio_reporter.h"
#include "weft/config.h"
#include "weft/scheduler.h"

namespace weft::bench {

// Two virtual processors, whatever the machine: the cross-core benchmarks need two, and more would
// only add idle processors that the one-core benchmarks could be stolen by.
inline int run_benchmarks(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ConfigOverrides overrides;
  overrides.settings = {{"scheduler.vps", "2"}};
  Scheduler scheduler(Config::load(overrides));
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  scheduler.shutdown();
  benchmark::Shutdown();
  return 0;
}

}  // namespace weft::bench
