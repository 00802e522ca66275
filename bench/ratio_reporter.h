// A console reporter that, after the usual table, prints one line per comparison of weft with a
// peer measured in the same run:
//
//   RATIO <metric> weft/<peer> <weft's time per iteration / the peer's>
//
// Benchmarks are named <metric>/<subject>. Each metric that has a `weft` subject is compared with
// every subject of that metric not named weft or weft_* (those are further weft figures, such as
// spawn_join/weft_from_main). Below 1 weft is faster. Ratios of two runs of one noisy machine are
// far steadier than absolute times, which is why bench/run gathers these lines from every program.
#pragma once

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace weft::bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // Colours only on a terminal: bench/run pipes the output and greps it.
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
      const std::string& name = run.run_name.function_name;
      if (!times_ns_.contains(name)) names_.push_back(name);
      times_ns_[name].push_back(run.GetAdjustedRealTime() * 1e9 /
                                benchmark::GetTimeUnitMultiplier(run.time_unit));
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::ostream& out = GetOutputStream();
    const std::streamsize precision = out.precision(3);
    for (const std::string& name : names_) {
      const auto [metric, subject] = split(name);
      if (subject.empty() || subject.starts_with("weft")) continue;
      const auto weft = times_ns_.find(metric + "/weft");
      if (weft == times_ns_.end()) continue;
      out << "RATIO " << metric << " weft/" << subject << ' '
          << median(weft->second) / median(times_ns_[name]) << '\n';
    }
    out.precision(precision);
    out.flush();
  }

 private:
  static std::pair<std::string, std::string> split(const std::string& name) {
    const std::size_t slash = name.find('/');
    if (slash == std::string::npos) return {name, {}};
    return {name.substr(0, slash), name.substr(slash + 1)};
  }

  // Of the repetitions, when --benchmark_repetitions asked for several: one preempted run on a
  // shared machine must not move the ratio.
  static double median(std::vector<double> values) {
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    return values[values.size() / 2];
  }

  std::vector<std::string> names_;  // in the order they ran
  std::map<std::string, std::vector<double>> times_ns_;
};

}  // namespace weft::bench
