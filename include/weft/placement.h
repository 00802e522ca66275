// Placement policies as pure functions: which core(s) each task of a host gets and where its
// progress thread goes. They only compute; binding is the scheduler's business. Cores are hwloc
// logical indices, numbered contiguously inside each NUMA node.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

class Topology;

enum class TaskPolicy { scatter, numa, compact };
enum class ProgressPolicy { none, colocated, numa, dedicated };

std::string_view to_string(TaskPolicy policy);
std::string_view to_string(ProgressPolicy policy);
std::optional<TaskPolicy> parse_task_policy(std::string_view name);
std::optional<ProgressPolicy> parse_progress_policy(std::string_view name);

// The part of a topology placement needs: the NUMA node of every core.
struct CoreLayout {
  std::vector<int> numa_of_core;

  static CoreLayout of(const Topology& topology);
  static CoreLayout uniform(int numa_nodes, int cores_per_node);
  int num_cores() const { return static_cast<int>(numa_of_core.size()); }
  int num_numa_nodes() const;
  std::vector<int> cores_of_numa(int node) const;
};

struct TaskPlace {
  int task;
  int core;                // the task's own core (its first one)
  int numa;                // NUMA node of `core`
  std::vector<int> cores;  // the cores_per_task cores the task owns, `core` first
  int progress_core;       // core of the task's progress thread; -1 with ProgressPolicy::none
};

// Places `tasks` tasks owning `cores_per_task` cores each. When the host has fewer cores than
// tasks * cores_per_task the tasks share cores (oversubscription) as evenly as possible.
// Throws weft::Error for tasks < 1, cores_per_task < 1 or cores_per_task larger than a NUMA node.
std::vector<TaskPlace> place_tasks(const CoreLayout& layout, int tasks, int cores_per_task,
                                   TaskPolicy task_policy, ProgressPolicy progress_policy);

class Config;

// How many virtual processors run: scheduler.vps, or one per core when it is 0. Virtual processor
// i runs on core i. Throws weft::Error, naming the key, its value and source, when the topology
// has fewer cores than that.
int virtual_processor_count(const Config& config, const Topology& topology);

// The topology the configuration describes: key `topology`, restricted to the processing units of
// scheduler.cores when it is set. Throws weft::Error naming the key, its value and its source.
Topology configured_topology(const Config& config);

// How weftrun -p shares a node among `processes` processes: cpu lists (operating-system indices of
// processing units, for scheduler.cores), one per process. The cores are split in contiguous
// blocks, the remainder going one each to the first processes; with fewer cores than processes,
// the processes take the cores in turn and share them. Throws weft::Error for processes < 1.
std::vector<std::string> split_cores(const Topology& topology, int processes);

// The two algorithms of notes/seeds.md (paper 000), in exact integer arithmetic, for a host of
// `numa_nodes` nodes of `cores_per_node` cores each.
struct NumaSlot {
  int numa;        // node of the task
  int local_id;    // index of the task inside its node
  int n_local;     // tasks on that node
  int pos_global;  // the task's core
};
NumaSlot numa_task_slot(int rank, int tasks, int numa_nodes, int cores_per_node);  // Algorithm 1
int numa_progress_core(const NumaSlot& slot, int cores_per_node);                  // Algorithm 2

}  // namespace weft
