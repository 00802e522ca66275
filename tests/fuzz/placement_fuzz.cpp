// The placement functions (weft/placement.h) on synthetic layouts, against the rules their header
// and runtime/placement.cpp state. The input gives the NUMA node of each core (nodes of any size,
// in any order, possibly empty), the number of tasks, cores per task and both policies.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "weft/error.h"
#include "weft/placement.h"

namespace {

using weft::CoreLayout;
using weft::ProgressPolicy;
using weft::TaskPlace;
using weft::TaskPolicy;
using weft::fuzz::require;

std::string where(const TaskPlace& place) {
  return "task " + std::to_string(place.task) + " (core " + std::to_string(place.core) + ", node " +
         std::to_string(place.numa) + ")";
}

void check(const CoreLayout& layout, int tasks, int per_task, TaskPolicy policy,
           ProgressPolicy progress, const std::vector<TaskPlace>& places) {
  const int cores = layout.num_cores();
  require(static_cast<int>(places.size()) == tasks, "not one place per task");
  // The cores a task may own: with 'dedicated' the last core of each node is kept.
  std::map<int, std::vector<int>> usable;  // by node
  for (int core = 0; core < cores; ++core) usable[layout.numa_of_core[core]].push_back(core);
  std::map<int, int> kept;
  if (progress == ProgressPolicy::dedicated) {
    for (auto& [node, list] : usable) {
      kept[node] = list.back();
      list.pop_back();
    }
  }
  std::int64_t slots = 0;
  std::vector<int> usable_on(cores, -1);  // a core's node when tasks may own it, else -1
  for (const auto& [node, list] : usable) {
    slots += static_cast<std::int64_t>(list.size()) / per_task;
    for (int core : list) usable_on[core] = node;
  }

  std::vector<int> load(cores);
  std::map<int, int> tasks_of_node;
  for (int i = 0; i < tasks; ++i) {
    const TaskPlace& place = places[i];
    require(place.task == i, "place " + std::to_string(i) + " is of " + where(place));
    require(place.core >= 0 && place.core < cores, where(place) + ": no such core");
    require(place.numa == layout.numa_of_core[place.core], where(place) + ": wrong node");
    require(static_cast<int>(place.cores.size()) == per_task, where(place) + ": wrong core count");
    require(place.cores.front() == place.core, where(place) + ": its own core is not first");
    std::set<int> distinct(place.cores.begin(), place.cores.end());
    require(static_cast<int>(distinct.size()) == per_task, where(place) + ": a core twice");
    for (int core : place.cores) {
      require(core >= 0 && core < cores && usable_on[core] == place.numa,
              where(place) + " owns core " + std::to_string(core) + ", not usable on its node");
      ++load[core];
    }
    ++tasks_of_node[place.numa];
    switch (progress) {
      case ProgressPolicy::none:
        require(place.progress_core == -1, where(place) + ": a progress core under 'none'");
        break;
      case ProgressPolicy::colocated:
        require(place.progress_core == place.core, where(place) + ": progress not colocated");
        break;
      case ProgressPolicy::dedicated:
        require(place.progress_core == kept[place.numa],
                where(place) + ": progress not on the kept core");
        break;
      case ProgressPolicy::numa:
        require(place.progress_core >= 0 && place.progress_core < cores &&
                    layout.numa_of_core[place.progress_core] == place.numa,
                where(place) + ": progress core off its node");
        break;
    }
    if (i == 0) continue;
    const TaskPlace& before = places[i - 1];
    // Tasks are laid in slot order: node by node, core by core within a node.
    const auto order = [](const TaskPlace& p) { return std::pair(p.numa, p.core); };
    if (policy == TaskPolicy::compact && tasks <= slots) {
      require(order(before) < order(place),
              where(place) + " is not after task " + std::to_string(i - 1) + " under 'compact'");
    } else {
      require(!(order(place) < order(before)),
              where(place) + " comes before task " + std::to_string(i - 1));
    }
  }
  // No core over its share: a core per task while there are enough, else as even as can be.
  const std::int64_t share = (tasks + slots - 1) / slots;
  for (int core = 0; core < cores; ++core) {
    require(load[core] <= share, "core " + std::to_string(core) + " has " +
                                     std::to_string(load[core]) + " tasks; its share is " +
                                     std::to_string(share));
  }
  // numa: each node's tasks in proportion to its slots, within one.
  if (policy == TaskPolicy::numa) {
    for (const auto& [node, list] : usable) {
      const std::int64_t own = static_cast<std::int64_t>(list.size()) / per_task;
      const std::int64_t got = tasks_of_node[node];
      require(got * slots >= own * tasks - slots && got * slots <= own * tasks + slots,
              "node " + std::to_string(node) + " has " + std::to_string(got) + " of " +
                  std::to_string(tasks) + " tasks for " + std::to_string(own) + " of " +
                  std::to_string(slots) + " slots");
    }
  }
  // numa progress: a task's core only when its node has no core left free.
  if (progress == ProgressPolicy::numa) {
    std::map<int, int> free_core;  // by node: one no task owns
    for (const auto& [node, list] : usable) {
      for (int core : list) {
        if (load[core] == 0) free_core.emplace(node, core);
      }
    }
    for (const TaskPlace& place : places) {
      const auto free = free_core.find(place.numa);
      require(load[place.progress_core] == 0 || free == free_core.end(),
              where(place) + ": progress on an owned core while core " +
                  std::to_string(free == free_core.end() ? -1 : free->second) +
                  " of its node is free");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  weft::fuzz::Input input(data, size);
  const TaskPolicy policy = static_cast<TaskPolicy>(input.below(3));
  const ProgressPolicy progress = static_cast<ProgressPolicy>(input.below(4));
  const int tasks = 1 + static_cast<int>(input.below(1024));
  const int per_task = 1 + static_cast<int>(input.below(16));
  // Then runs of cores: a node (0..15) and how many cores of it follow.
  CoreLayout layout;
  while (!input.empty() && layout.num_cores() < 512) {
    const int node = static_cast<int>(input.below(16));
    const int run = 1 + static_cast<int>(input.below(32));
    layout.numa_of_core.insert(layout.numa_of_core.end(), run, node);
  }
  std::vector<TaskPlace> places;
  try {
    places = weft::place_tasks(layout, tasks, per_task, policy, progress);
  } catch (const weft::Error&) {
    return 0;  // refused: no cores, a node too small for a task, 'dedicated' on a 1-core node
  }
  check(layout, tasks, per_task, policy, progress, places);
  return 0;
}
