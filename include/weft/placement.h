// Placement policies as pure functions: which core(s) each task of a host gets and where its
// progress thread goes. They only compute; binding is the scheduler's business. Cores are hwloc
// logical indices, numbered contiguously inside each NUMA node.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/topology.h"

namespace weft {

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

// Where a process's communication goes (notes/seeds.md, 004): the polling of its transport's
// worker, and the memory the transport allocates, belong on the NUMA nodes nearest the network
// interfaces the transport uses, since that is where the interfaces deposit incoming data.
struct NicPlacement {
  std::vector<int> numa;          // logical NUMA nodes chosen; empty: no binding
  std::vector<std::string> nics;  // the interfaces weighed
  std::string reason;             // one line, for weft-info and the logs
};

// Chooses from `nics` (Topology::nics) for a transport restricted to `devices`, a list in the
// form of UCX_NET_DEVICES ("mlx5_0:1,eth0"; "" or "all" for every interface). RDMA interfaces
// (OpenFabrics) are weighed alone when there are some, as UCX prefers them; each interface weighs
// its PCI link bandwidth (1 when unknown), shared among the nodes it is attached to. The heaviest
// nodes are chosen, all of them on a tie (several rails). No interface with a known node of this
// topology gives no binding.
NicPlacement place_near_nics(const std::vector<Topology::Nic>& nics, std::string_view devices);

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
