// Configurations for MPI tests: a job of `ranks` ranks on `vps` virtual processors of a synthetic
// two-core machine, built from explicit settings only (the developer's WEFT_* environment cannot
// change what a test checks). Dozens of ranks on two cores is the point: oversubscription.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "scheduler/test_config.h"

namespace weft::testing {

inline Config job_config(int ranks, int vps,
                         std::vector<std::pair<std::string, std::string>> extra = {}) {
  std::vector<std::pair<std::string, std::string>> settings = {
      {"topology", "synthetic:pack:1 core:2 pu:1"},
      {"scheduler.vps", std::to_string(vps)},
      {"mpi.ranks", std::to_string(ranks)}};
  settings.insert(settings.end(), extra.begin(), extra.end());
  return config_with(std::move(settings));
}

}  // namespace weft::testing
