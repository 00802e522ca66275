// The cores one process of a job uses: the restriction scheduler.cores puts on the configured
// topology, and how weftrun -p splits a node's cores among its processes.
#include <algorithm>
#include <string>
#include <vector>

#include "weft/config.h"
#include "weft/cpu_list.h"
#include "weft/error.h"
#include "weft/placement.h"
#include "weft/topology.h"

namespace weft {

Topology configured_topology(const Config& config) {
  const std::string spec = config.get_string("topology");
  const std::string cpus = config.get_string("scheduler.cores");
  if (cpus.empty()) return Topology::load(spec);
  const Config::Entry& entry = config.entry("scheduler.cores");
  const std::string key = "configuration key 'scheduler.cores' = '" + entry.value + "' (" +
                          std::string(to_string(entry.source)) +
                          (entry.origin.empty() ? "" : ": " + entry.origin) + ")";
  try {
    parse_cpu_list(cpus);
  } catch (const Error& error) {
    throw Error(key + ": " + error.what());
  }
  try {
    return Topology::load(spec, cpus);
  } catch (const Error& error) {
    throw Error(std::string(error.what()) + " (" + key + ")");
  }
}

std::vector<std::string> split_cores(const Topology& topology, int processes) {
  if (processes < 1) {
    throw Error("split_cores: " + std::to_string(processes) + " processes; expected at least 1");
  }
  const int cores = topology.num_cores();
  std::vector<std::string> lists;
  for (int process = 0; process < processes; ++process) {
    int first = process % cores;
    int count = 1;
    if (processes <= cores) {
      const int base = cores / processes;
      const int extra = cores % processes;
      first = process * base + std::min(process, extra);
      count = base + (process < extra ? 1 : 0);
    }
    std::vector<int> pus;
    for (int core = first; core < first + count; ++core) {
      const std::vector<int>& of_core = topology.core(core).pus;
      pus.insert(pus.end(), of_core.begin(), of_core.end());
    }
    std::sort(pus.begin(), pus.end());
    lists.push_back(format_cpu_list(pus));
  }
  return lists;
}

}  // namespace weft
