// Placement rules, all in exact integer arithmetic:
//
// Slots. A task owns cores_per_task (c) cores of one NUMA node: every node is cut, in core
// order, into floor(cores of the node / c) slots of c consecutive cores; the rest of a node
// (fewer than c cores) holds no task. Tasks are placed on slots, so a task never straddles two
// nodes. With c = 1 a slot is a core. Let K be the number of slots and T the number of tasks.
//
//   compact  task i takes slot i: tasks fill the cores in order.
//   scatter  task i takes slot floor(i * K / T): tasks are spread evenly over the whole host and
//            the slots skipped between two tasks are left free for their OpenMP threads.
//   numa     Algorithm 1 of notes/seeds.md (paper 000) on slots: the tasks are split evenly
//            among the NUMA nodes in rank order, then spread evenly inside their node. On nodes
//            of unequal size each node gets tasks in proportion to its slots, which is exactly
//            Algorithm 1 when the nodes are equal.
//
// Oversubscription (T > K): compact and scatter both give slot floor(i * K / T), blocks of
// consecutive ranks sharing a slot; numa shares the slots of a node the same way (Algorithm 1
// already does so when a node has more tasks than slots). The number of tasks on two slots then
// differs by at most 1, and neighbouring ranks, which tend to talk to each other, share cores.
//
// Progress threads:
//   none       -1.
//   colocated  the task's core.
//   numa       a free core (one no task owns) of the task's node: the l-th of the n tasks of a
//              node, in core order, gets free core number floor(l * F / n) of the F free cores of
//              that node, or its own core when the node has no free core. Under the numa task
//              policy with c = 1 this is the core Algorithm 2 computes (the tests check it on
//              every node size up to 16); for the other policies it keeps Algorithm 2's
//              invariants: never off the task's node, on a task's core only if the node is full.
//   dedicated  the last core of every NUMA node is kept for progress threads: tasks are placed
//              by their policy on the other cores, and each task's progress thread goes to the
//              kept core of its node. A node of a single core cannot keep one and is refused.
#include "weft/placement.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "weft/config.h"
#include "weft/error.h"
#include "weft/topology.h"

namespace weft {
namespace {

// ceil(a / b) for a >= 0, b > 0.
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

void require(bool condition, std::string_view call, const std::string& message) {
  if (!condition) throw Error(std::string(call) + ": " + message);
}

// The cores tasks may use, per NUMA node, and the core each node keeps for progress threads.
struct Host {
  std::vector<std::vector<int>> cores_of_node;
  std::vector<int> kept_core;  // -1 unless the progress policy is dedicated
};

Host host_of(const CoreLayout& layout, ProgressPolicy progress) {
  Host host;
  for (int node = 0; node < layout.num_numa_nodes(); ++node) {
    std::vector<int> cores = layout.cores_of_numa(node);
    int kept = -1;
    if (progress == ProgressPolicy::dedicated && !cores.empty()) {
      require(cores.size() > 1, "place_tasks",
              "progress policy 'dedicated' keeps the last core of every NUMA node for progress "
              "threads, but NUMA node " +
                  std::to_string(node) +
                  " has a single core; expected at least 2 cores per NUMA node (or progress "
                  "policy numa, colocated or none)");
      kept = cores.back();
      cores.pop_back();
    }
    host.cores_of_node.push_back(std::move(cores));
    host.kept_core.push_back(kept);
  }
  return host;
}

struct Slot {
  int numa;
  std::vector<int> cores;
};

std::vector<Slot> slots_of(const Host& host, int cores_per_task) {
  std::vector<Slot> slots;
  for (int node = 0; node < static_cast<int>(host.cores_of_node.size()); ++node) {
    const std::vector<int>& cores = host.cores_of_node[node];
    for (std::size_t first = 0; first + cores_per_task <= cores.size(); first += cores_per_task) {
      slots.push_back({node, {cores.begin() + first, cores.begin() + first + cores_per_task}});
    }
  }
  return slots;
}

// Algorithm 1 with node j weighted by its slot count S_j: with P_j the slots of the nodes before
// j and K all slots, node j gets the ranks ceil(P_j * T / K) <= r < ceil(P_(j+1) * T / K). For
// equal nodes P_j = j * C and this is numa = floor(r * N / T) of the seed.
int numa_slot(int rank, int tasks, const std::vector<Slot>& slots) {
  const std::int64_t total = static_cast<std::int64_t>(slots.size());
  // The last node ends at rank `tasks`, so every rank stops the loop at its node.
  for (std::int64_t before = 0;;) {
    std::int64_t end = before;
    while (end < total && slots[end].numa == slots[before].numa) ++end;
    const std::int64_t first_rank = ceil_div(before * tasks, total);
    const std::int64_t end_rank = ceil_div(end * tasks, total);
    if (rank < end_rank) {
      const std::int64_t local_id = rank - first_rank;
      const std::int64_t n_local = end_rank - first_rank;
      return static_cast<int>(before + local_id * (end - before) / n_local);
    }
    before = end;
  }
}

int slot_of_task(int task, int tasks, TaskPolicy policy, const std::vector<Slot>& slots) {
  const std::int64_t total = static_cast<std::int64_t>(slots.size());
  switch (policy) {
    case TaskPolicy::compact:
      if (tasks <= total) return task;
      [[fallthrough]];
    case TaskPolicy::scatter:
      return static_cast<int>(task * total / tasks);
    case TaskPolicy::numa:
      return numa_slot(task, tasks, slots);
  }
  return task;
}

void place_progress_threads(const Host& host, int num_cores, ProgressPolicy policy,
                            std::vector<TaskPlace>& places) {
  if (policy != ProgressPolicy::numa) {
    for (TaskPlace& place : places) {
      place.progress_core = policy == ProgressPolicy::none        ? -1
                            : policy == ProgressPolicy::colocated ? place.core
                                                                  : host.kept_core[place.numa];
    }
    return;
  }
  std::vector<bool> owned(num_cores);
  for (const TaskPlace& place : places) {
    for (int core : place.cores) owned[core] = true;
  }
  for (int node = 0; node < static_cast<int>(host.cores_of_node.size()); ++node) {
    std::vector<int> free;
    for (int core : host.cores_of_node[node]) {
      if (!owned[core]) free.push_back(core);
    }
    std::vector<TaskPlace*> on_node;
    for (TaskPlace& place : places) {
      if (place.numa == node) on_node.push_back(&place);
    }
    std::stable_sort(on_node.begin(), on_node.end(),
                     [](const TaskPlace* a, const TaskPlace* b) { return a->core < b->core; });
    const std::int64_t n_local = static_cast<std::int64_t>(on_node.size());
    const std::int64_t n_free = static_cast<std::int64_t>(free.size());
    for (std::int64_t l = 0; l < n_local; ++l) {
      on_node[l]->progress_core = free.empty() ? on_node[l]->core : free[l * n_free / n_local];
    }
  }
}

}  // namespace

std::string_view to_string(TaskPolicy policy) {
  switch (policy) {
    case TaskPolicy::scatter:
      return "scatter";
    case TaskPolicy::numa:
      return "numa";
    case TaskPolicy::compact:
      return "compact";
  }
  return "unknown";
}

std::string_view to_string(ProgressPolicy policy) {
  switch (policy) {
    case ProgressPolicy::none:
      return "none";
    case ProgressPolicy::colocated:
      return "colocated";
    case ProgressPolicy::numa:
      return "numa";
    case ProgressPolicy::dedicated:
      return "dedicated";
  }
  return "unknown";
}

std::optional<TaskPolicy> parse_task_policy(std::string_view name) {
  for (TaskPolicy policy : {TaskPolicy::scatter, TaskPolicy::numa, TaskPolicy::compact}) {
    if (to_string(policy) == name) return policy;
  }
  return std::nullopt;
}

std::optional<ProgressPolicy> parse_progress_policy(std::string_view name) {
  for (ProgressPolicy policy : {ProgressPolicy::none, ProgressPolicy::colocated,
                                ProgressPolicy::numa, ProgressPolicy::dedicated}) {
    if (to_string(policy) == name) return policy;
  }
  return std::nullopt;
}

CoreLayout CoreLayout::of(const Topology& topology) {
  CoreLayout layout;
  for (const Topology::Core& core : topology.cores()) layout.numa_of_core.push_back(core.numa);
  return layout;
}

CoreLayout CoreLayout::uniform(int numa_nodes, int cores_per_node) {
  require(numa_nodes >= 1, "CoreLayout::uniform",
          "numa_nodes is " + std::to_string(numa_nodes) + "; expected at least 1");
  require(cores_per_node >= 1, "CoreLayout::uniform",
          "cores_per_node is " + std::to_string(cores_per_node) + "; expected at least 1");
  CoreLayout layout;
  for (int node = 0; node < numa_nodes; ++node) {
    layout.numa_of_core.insert(layout.numa_of_core.end(), cores_per_node, node);
  }
  return layout;
}

int CoreLayout::num_numa_nodes() const {
  return numa_of_core.empty() ? 0 : *std::max_element(numa_of_core.begin(), numa_of_core.end()) + 1;
}

std::vector<int> CoreLayout::cores_of_numa(int node) const {
  std::vector<int> cores;
  for (int core = 0; core < num_cores(); ++core) {
    if (numa_of_core[core] == node) cores.push_back(core);
  }
  return cores;
}

std::vector<TaskPlace> place_tasks(const CoreLayout& layout, int tasks, int cores_per_task,
                                   TaskPolicy task_policy, ProgressPolicy progress_policy) {
  constexpr std::string_view kCall = "place_tasks";
  require(tasks >= 1, kCall, "tasks is " + std::to_string(tasks) + "; expected at least 1");
  require(cores_per_task >= 1, kCall,
          "cores_per_task is " + std::to_string(cores_per_task) + "; expected at least 1");
  require(layout.num_cores() >= 1, kCall, "the layout has no cores; expected at least 1");
  require(std::all_of(layout.numa_of_core.begin(), layout.numa_of_core.end(),
                      [](int node) { return node >= 0; }),
          kCall, "the layout has a core of negative NUMA node; expected nodes 0 and up");
  const Host host = host_of(layout, progress_policy);
  const std::vector<Slot> slots = slots_of(host, cores_per_task);
  if (slots.empty()) {
    std::size_t largest = 0;
    for (const std::vector<int>& cores : host.cores_of_node)
      largest = std::max(largest, cores.size());
    throw Error(std::string(kCall) + ": cores_per_task " + std::to_string(cores_per_task) +
                " is larger than every NUMA node, the largest having " + std::to_string(largest) +
                " usable cores" +
                (progress_policy == ProgressPolicy::dedicated
                     ? " (progress policy 'dedicated' keeps one core per node)"
                     : "") +
                "; expected 1.." + std::to_string(largest));
  }
  std::vector<TaskPlace> places;
  places.reserve(tasks);
  for (int task = 0; task < tasks; ++task) {
    const Slot& slot = slots[slot_of_task(task, tasks, task_policy, slots)];
    places.push_back({task, slot.cores.front(), slot.numa, slot.cores, -1});
  }
  place_progress_threads(host, layout.num_cores(), progress_policy, places);
  return places;
}

NumaSlot numa_task_slot(int rank, int tasks, int numa_nodes, int cores_per_node) {
  constexpr std::string_view kCall = "numa_task_slot";
  require(tasks >= 1, kCall, "tasks is " + std::to_string(tasks) + "; expected at least 1");
  require(rank >= 0 && rank < tasks, kCall,
          "rank is " + std::to_string(rank) + "; expected 0.." + std::to_string(tasks - 1));
  require(numa_nodes >= 1, kCall,
          "numa_nodes is " + std::to_string(numa_nodes) + "; expected at least 1");
  require(cores_per_node >= 1, kCall,
          "cores_per_node is " + std::to_string(cores_per_node) + "; expected at least 1");
  const std::int64_t r = rank, n = tasks, nodes = numa_nodes, c = cores_per_node;
  const std::int64_t numa = r * nodes / n;
  const std::int64_t first = ceil_div(numa * n, nodes);
  const std::int64_t n_local = ceil_div((numa + 1) * n, nodes) - first;
  const std::int64_t local_id = r - first;
  const std::int64_t pos_local = local_id * c / n_local;
  return {static_cast<int>(numa), static_cast<int>(local_id), static_cast<int>(n_local),
          static_cast<int>(pos_local + numa * c)};
}

int numa_progress_core(const NumaSlot& slot, int cores_per_node) {
  constexpr std::string_view kCall = "numa_progress_core";
  require(cores_per_node >= 1, kCall,
          "cores_per_node is " + std::to_string(cores_per_node) + "; expected at least 1");
  require(slot.n_local >= 1, kCall,
          "slot.n_local is " + std::to_string(slot.n_local) +
              "; expected at least 1 (a slot computed by numa_task_slot)");
  require(slot.pos_global >= 0, kCall,
          "slot.pos_global is " + std::to_string(slot.pos_global) + "; expected at least 0");
  if (slot.n_local >= cores_per_node) return slot.pos_global;
  // k = floor(pos_global / spacing) and progress = ceil((k + 1) * spacing) - 1 with
  // spacing = C / (C - n_local), both kept as integer divisions: floating point lands on the
  // wrong core, even on the wrong node (2 nodes x 9 cores, 4 tasks, pos_global 9: 10, not 8).
  const std::int64_t c = cores_per_node, free = c - slot.n_local;
  const std::int64_t k = slot.pos_global * free / c;
  return static_cast<int>(((k + 1) * c + free - 1) / free - 1);
}

int virtual_processor_count(const Config& config, const Topology& topology) {
  const int cores = topology.num_cores();
  const std::int64_t configured = config.get_int("scheduler.vps");
  if (configured <= cores) return configured == 0 ? cores : static_cast<int>(configured);
  const Config::Entry& entry = config.entry("scheduler.vps");
  throw Error("configuration key 'scheduler.vps' = '" + entry.value + "' (" +
              std::string(to_string(entry.source)) +
              (entry.origin.empty() ? "" : ": " + entry.origin) + "): " +
              (topology.is_this_machine() ? std::string("this machine")
                                          : "the topology '" + topology.spec() + "'") +
              " has " + std::to_string(cores) +
              " cores; expected at most that many, or 0 for one per core");
}

}  // namespace weft
