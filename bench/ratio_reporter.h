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
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace weft::bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // Colours only on a terminal: bench/run pipes the output and greps it.
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.error_occurred || (run.run_type != Run::RT_Iteration && !median)) continue;
      Figures& figures = figures_[run.run_name.function_name];
      figures.family = run.family_index;
      const double ns =
          run.GetAdjustedRealTime() * 1e9 / benchmark::GetTimeUnitMultiplier(run.time_unit);
      if (median) {
        figures.median_ns = ns;
      } else {
        figures.repetitions_ns.push_back(ns);
      }
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    // In registration order, even when --benchmark_enable_random_interleaving shuffled the runs.
    std::vector<std::pair<std::int64_t, std::string>> order;
    for (const auto& [name, figures] : figures_) order.emplace_back(figures.family, name);
    std::sort(order.begin(), order.end());
    std::ostream& out = GetOutputStream();
    const std::streamsize precision = out.precision(3);
    for (const auto& [family, name] : order) {
      const auto [metric, subject] = split(name);
      if (subject.empty() || subject.starts_with("weft")) continue;
      const auto weft = figures_.find(metric + "/weft");
      if (weft == figures_.end()) continue;
      out << "RATIO " << metric << " weft/" << subject << ' '
          << weft->second.time_ns() / figures_[name].time_ns() << '\n';
    }
    out.precision(precision);
    out.flush();
  }

 private:
  struct Figures {
    std::int64_t family = 0;  // registration order
    std::vector<double> repetitions_ns;
    std::optional<double> median_ns;  // when only aggregates reached the reporter

    // The median of the repetitions, when --benchmark_repetitions asked for several: one run
    // preempted on a shared machine must not move the ratio.
    double time_ns() const {
      if (median_ns) return *median_ns;
      std::vector<double> values = repetitions_ns;
      std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
      return values[values.size() / 2];
    }
  };

  static std::pair<std::string, std::string> split(const std::string& name) {
    const std::size_t slash = name.find('/');
    if (slash == std::string::npos) return {name, {}};
    return {name.substr(0, slash), name.substr(slash + 1)};
  }

  std::map<std::string, Figures> figures_;  // by benchmark name
};

}  // namespace weft::bench
