// Configurations for scheduler tests, built from explicit settings only so that the developer's
// WEFT_* environment cannot change what a test checks.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "weft/config.h"

namespace weft::testing {

inline Config config_with(std::vector<std::pair<std::string, std::string>> settings) {
  ConfigOverrides overrides;
  overrides.settings = std::move(settings);
  return Config::load(overrides, {});
}

// Two virtual processors, whatever the machine: tests oversubscribe the two cores of CI.
inline Config two_vps() {
  return config_with({{"topology", "synthetic:pack:1 core:2 pu:1"}, {"scheduler.vps", "2"}});
}

}  // namespace weft::testing
