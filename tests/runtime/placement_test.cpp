#include "weft/placement.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "error_text.h"
#include "weft/error.h"
#include "weft/topology.h"

namespace weft {
namespace {

using testing::error_of;

constexpr const char* kTwoNodes = "synthetic:pack:2 [numa] core:4 pu:1";
constexpr std::array kTaskPolicies = {TaskPolicy::scatter, TaskPolicy::numa, TaskPolicy::compact};
constexpr std::array kProgressPolicies = {ProgressPolicy::none, ProgressPolicy::colocated,
                                          ProgressPolicy::numa, ProgressPolicy::dedicated};

std::vector<int> cores_of(const std::vector<TaskPlace>& places) {
  std::vector<int> cores;
  for (const TaskPlace& place : places) cores.push_back(place.core);
  return cores;
}

std::vector<int> progress_of(const std::vector<TaskPlace>& places) {
  std::vector<int> cores;
  for (const TaskPlace& place : places) cores.push_back(place.progress_core);
  return cores;
}

std::string describe(const CoreLayout& layout, int tasks, int cores_per_task, TaskPolicy task,
                     ProgressPolicy progress) {
  std::string text = "layout [";
  for (int node : layout.numa_of_core) text += std::to_string(node);
  return text + "], " + std::to_string(tasks) + " tasks x " + std::to_string(cores_per_task) +
         " cores, " + std::string(to_string(task)) + "/" + std::string(to_string(progress));
}

// The invariants every placement keeps, whatever the policies.
void expect_invariants(const CoreLayout& layout, int tasks, int cores_per_task, TaskPolicy task,
                       ProgressPolicy progress) {
  SCOPED_TRACE(describe(layout, tasks, cores_per_task, task, progress));
  std::vector<TaskPlace> places = place_tasks(layout, tasks, cores_per_task, task, progress);
  ASSERT_EQ(static_cast<int>(places.size()), tasks);

  std::map<int, int> load;  // tasks per core
  for (int i = 0; i < tasks; ++i) {
    const TaskPlace& place = places[i];
    EXPECT_EQ(place.task, i);
    ASSERT_EQ(static_cast<int>(place.cores.size()), cores_per_task);
    EXPECT_EQ(place.cores.front(), place.core);
    EXPECT_EQ(layout.numa_of_core.at(place.core), place.numa);
    for (int core : place.cores) {
      EXPECT_EQ(layout.numa_of_core.at(core), place.numa) << "task " << i << " straddles nodes";
      ++load[core];
    }
  }
  // Cores of the tasks: never shared unless the host is oversubscribed, then shared evenly.
  const bool oversubscribed = [&] {
    int slots = 0;
    for (int node = 0; node < layout.num_numa_nodes(); ++node) {
      int usable = static_cast<int>(layout.cores_of_numa(node).size()) -
                   (progress == ProgressPolicy::dedicated ? 1 : 0);
      slots += std::max(0, usable) / cores_per_task;
    }
    return tasks > slots;
  }();
  int min_load = tasks, max_load = 0;
  for (const auto& [core, count] : load) {
    min_load = std::min(min_load, count);
    max_load = std::max(max_load, count);
  }
  if (!oversubscribed) {
    EXPECT_EQ(max_load, 1) << "two tasks share a core";
  }

  std::set<int> owned;
  for (const auto& [core, count] : load) owned.insert(core);
  for (const TaskPlace& place : places) {
    SCOPED_TRACE("task " + std::to_string(place.task));
    const std::vector<int> node_cores = layout.cores_of_numa(place.numa);
    switch (progress) {
      case ProgressPolicy::none:
        EXPECT_EQ(place.progress_core, -1);
        break;
      case ProgressPolicy::colocated:
        EXPECT_EQ(place.progress_core, place.core);
        break;
      case ProgressPolicy::dedicated:
        EXPECT_EQ(place.progress_core, node_cores.back());
        EXPECT_EQ(owned.count(node_cores.back()), 0u) << "a task sits on a kept core";
        break;
      case ProgressPolicy::numa: {
        EXPECT_EQ(layout.numa_of_core.at(place.progress_core), place.numa)
            << "progress thread left its task's node";
        const bool node_full = std::all_of(node_cores.begin(), node_cores.end(),
                                           [&](int core) { return owned.count(core) > 0; });
        if (owned.count(place.progress_core) > 0) {
          EXPECT_TRUE(node_full) << "progress on task core " << place.progress_core
                                 << " while its node has a free core";
          EXPECT_EQ(place.progress_core, place.core);
        }
        break;
      }
    }
  }
}

CoreLayout layout_of(const std::vector<int>& cores_per_node) {
  CoreLayout layout;
  for (int node = 0; node < static_cast<int>(cores_per_node.size()); ++node) {
    layout.numa_of_core.insert(layout.numa_of_core.end(), cores_per_node[node], node);
  }
  return layout;
}

TEST(Placement, PolicyNamesRoundTrip) {
  for (TaskPolicy policy : kTaskPolicies) EXPECT_EQ(parse_task_policy(to_string(policy)), policy);
  for (ProgressPolicy policy : kProgressPolicies) {
    EXPECT_EQ(parse_progress_policy(to_string(policy)), policy);
  }
  EXPECT_EQ(parse_task_policy("round-robin"), std::nullopt);
  EXPECT_EQ(parse_progress_policy("Numa"), std::nullopt);
}

TEST(Placement, LayoutOfSyntheticTopology) {
  CoreLayout layout = CoreLayout::of(Topology::load(kTwoNodes));
  EXPECT_EQ(layout.numa_of_core, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(layout.num_numa_nodes(), 2);
  EXPECT_EQ(layout.cores_of_numa(1), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(CoreLayout::uniform(2, 4).numa_of_core, layout.numa_of_core);
}

// notes/seeds.md, paper 000: 8 cores on 2 NUMA nodes, every task count.
TEST(Placement, WorkedExamplesOfTheSeed) {
  const std::vector<std::vector<int>> tasks = {{0},
                                               {0, 4},
                                               {0, 2, 4},
                                               {0, 2, 4, 6},
                                               {0, 1, 2, 4, 6},
                                               {0, 1, 2, 4, 5, 6},
                                               {0, 1, 2, 3, 4, 5, 6},
                                               {0, 1, 2, 3, 4, 5, 6, 7}};
  const std::vector<std::vector<int>> progress = {{1},
                                                  {1, 5},
                                                  {1, 3, 5},
                                                  {1, 3, 5, 7},
                                                  {3, 3, 3, 5, 7},
                                                  {3, 3, 3, 7, 7, 7},
                                                  {0, 1, 2, 3, 7, 7, 7},
                                                  {0, 1, 2, 3, 4, 5, 6, 7}};
  const CoreLayout layout = CoreLayout::of(Topology::load(kTwoNodes));
  for (int n = 1; n <= 8; ++n) {
    SCOPED_TRACE(std::to_string(n) + " tasks");
    std::vector<TaskPlace> places =
        place_tasks(layout, n, 1, TaskPolicy::numa, ProgressPolicy::numa);
    EXPECT_EQ(cores_of(places), tasks[n - 1]);
    EXPECT_EQ(progress_of(places), progress[n - 1]);
    for (int r = 0; r < n; ++r) {
      NumaSlot slot = numa_task_slot(r, n, 2, 4);
      EXPECT_EQ(slot.pos_global, tasks[n - 1][r]);
      EXPECT_EQ(slot.numa, tasks[n - 1][r] / 4);
      EXPECT_EQ(numa_progress_core(slot, 4), progress[n - 1][r]);
    }
  }
}

TEST(Placement, IntegerArithmeticOnNineCoreNodes) {
  // 2 nodes x 9 cores, 4 tasks: rank 2 is the first task of node 1. Floating point gives 8,
  // a core of node 0.
  NumaSlot slot = numa_task_slot(2, 4, 2, 9);
  EXPECT_EQ(slot.numa, 1);
  EXPECT_EQ(slot.local_id, 0);
  EXPECT_EQ(slot.n_local, 2);
  EXPECT_EQ(slot.pos_global, 9);
  EXPECT_EQ(numa_progress_core(slot, 9), 10);
  std::vector<TaskPlace> places =
      place_tasks(CoreLayout::uniform(2, 9), 4, 1, TaskPolicy::numa, ProgressPolicy::numa);
  EXPECT_EQ(places[2].core, 9);
  EXPECT_EQ(places[2].progress_core, 10);
}

// place_tasks generalises Algorithm 2 to any placement; on Algorithm 1's own placement it must
// give exactly the cores of the seed's formula.
TEST(Placement, NumaPolicyIsAlgorithmsOneAndTwo) {
  for (int nodes = 1; nodes <= 4; ++nodes) {
    for (int cores = 1; cores <= 16; ++cores) {
      const CoreLayout layout = CoreLayout::uniform(nodes, cores);
      for (int n = 1; n <= 2 * nodes * cores; ++n) {
        std::vector<TaskPlace> places =
            place_tasks(layout, n, 1, TaskPolicy::numa, ProgressPolicy::numa);
        for (int r = 0; r < n; ++r) {
          NumaSlot slot = numa_task_slot(r, n, nodes, cores);
          ASSERT_EQ(places[r].core, slot.pos_global)
              << nodes << "x" << cores << ", " << n << " tasks, rank " << r;
          ASSERT_EQ(places[r].numa, slot.numa);
          ASSERT_EQ(places[r].progress_core, numa_progress_core(slot, cores))
              << nodes << "x" << cores << ", " << n << " tasks, rank " << r;
        }
      }
    }
  }
}

TEST(Placement, InvariantsOnManyTopologies) {
  for (int nodes = 1; nodes <= 4; ++nodes) {
    for (int cores = 1; cores <= 16; ++cores) {
      const CoreLayout layout = CoreLayout::uniform(nodes, cores);
      for (TaskPolicy task : kTaskPolicies) {
        for (ProgressPolicy progress : kProgressPolicies) {
          if (progress == ProgressPolicy::dedicated && cores == 1) continue;
          for (int n = 1; n <= nodes * cores; ++n) expect_invariants(layout, n, 1, task, progress);
        }
      }
    }
  }
}

TEST(Placement, InvariantsOnSyntheticTopologies) {
  for (const char* spec :
       {"synthetic:pack:1 [numa] core:1 pu:1", "synthetic:pack:1 [numa] core:6 pu:2",
        "synthetic:pack:2 [numa] core:4 pu:1", "synthetic:pack:2 group:2 [numa] core:3 pu:1",
        "synthetic:pack:4 [numa] core:16 pu:1", "synthetic:pack:3 core:5 pu:1"}) {
    SCOPED_TRACE(spec);
    const CoreLayout layout = CoreLayout::of(Topology::load(spec));
    for (TaskPolicy task : kTaskPolicies) {
      for (int n = 1; n <= layout.num_cores(); ++n) {
        expect_invariants(layout, n, 1, task, ProgressPolicy::numa);
      }
    }
  }
}

TEST(Placement, CompactFillsCoresInOrder) {
  std::vector<TaskPlace> places =
      place_tasks(CoreLayout::uniform(2, 4), 3, 1, TaskPolicy::compact, ProgressPolicy::numa);
  EXPECT_EQ(cores_of(places), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(progress_of(places), (std::vector<int>{3, 3, 3}));
  places = place_tasks(CoreLayout::uniform(2, 4), 5, 1, TaskPolicy::compact, ProgressPolicy::numa);
  EXPECT_EQ(cores_of(places), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(progress_of(places), (std::vector<int>{0, 1, 2, 3, 5}));
}

TEST(Placement, ScatterLeavesGapsForThreads) {
  std::vector<TaskPlace> places =
      place_tasks(CoreLayout::uniform(2, 4), 3, 1, TaskPolicy::scatter, ProgressPolicy::colocated);
  EXPECT_EQ(cores_of(places), (std::vector<int>{0, 2, 5}));  // floor(i * 8 / 3)
  EXPECT_EQ(progress_of(places), (std::vector<int>{0, 2, 5}));
  places = place_tasks(CoreLayout::uniform(2, 8), 4, 2, TaskPolicy::scatter, ProgressPolicy::numa);
  EXPECT_EQ(cores_of(places), (std::vector<int>{0, 4, 8, 12}));
  EXPECT_EQ(places[1].cores, (std::vector<int>{4, 5}));
  EXPECT_EQ(progress_of(places), (std::vector<int>{2, 6, 10, 14}));
}

TEST(Placement, SeveralCoresPerTask) {
  const CoreLayout layout = CoreLayout::uniform(2, 4);
  std::vector<TaskPlace> places =
      place_tasks(layout, 4, 2, TaskPolicy::compact, ProgressPolicy::none);
  EXPECT_EQ(places[1].cores, (std::vector<int>{2, 3}));
  EXPECT_EQ(places[3].cores, (std::vector<int>{6, 7}));
  places = place_tasks(layout, 2, 2, TaskPolicy::numa, ProgressPolicy::numa);
  EXPECT_EQ(places[0].cores, (std::vector<int>{0, 1}));
  EXPECT_EQ(places[1].cores, (std::vector<int>{4, 5}));
  EXPECT_EQ(progress_of(places), (std::vector<int>{2, 6}));
  // Three cores per task: the fourth core of a node holds no task; no task straddles nodes.
  places = place_tasks(layout, 2, 3, TaskPolicy::compact, ProgressPolicy::numa);
  EXPECT_EQ(places[1].cores, (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(progress_of(places), (std::vector<int>{3, 7}));

  for (int nodes = 1; nodes <= 4; ++nodes) {
    for (int cores = 1; cores <= 16; ++cores) {
      const CoreLayout uniform = CoreLayout::uniform(nodes, cores);
      for (int per_task = 2; per_task <= cores; ++per_task) {
        for (TaskPolicy task : kTaskPolicies) {
          for (ProgressPolicy progress : kProgressPolicies) {
            if (progress == ProgressPolicy::dedicated && per_task >= cores) continue;
            for (int n = 1; n <= nodes * cores / per_task + 2; ++n) {
              expect_invariants(uniform, n, per_task, task, progress);
            }
          }
        }
      }
    }
  }
}

TEST(Placement, DedicatedKeepsTheLastCoreOfEachNode) {
  std::vector<TaskPlace> places =
      place_tasks(CoreLayout::uniform(2, 4), 6, 1, TaskPolicy::numa, ProgressPolicy::dedicated);
  EXPECT_EQ(cores_of(places), (std::vector<int>{0, 1, 2, 4, 5, 6}));
  EXPECT_EQ(progress_of(places), (std::vector<int>{3, 3, 3, 7, 7, 7}));
}

TEST(Placement, OversubscriptionSharesCoresEvenly) {
  for (const CoreLayout& layout :
       {CoreLayout::uniform(1, 2), CoreLayout::uniform(2, 1), CoreLayout::uniform(2, 3),
        layout_of({5, 2}), layout_of({3, 1, 6})}) {
    for (TaskPolicy task : kTaskPolicies) {
      for (ProgressPolicy progress :
           {ProgressPolicy::none, ProgressPolicy::colocated, ProgressPolicy::numa}) {
        for (int n : {layout.num_cores() + 1, 7, 64, 100}) {
          SCOPED_TRACE(describe(layout, n, 1, task, progress));
          expect_invariants(layout, n, 1, task, progress);
          std::vector<int> load(layout.num_cores());
          for (const TaskPlace& place : place_tasks(layout, n, 1, task, progress)) {
            ++load[place.core];
          }
          auto [low, high] = std::minmax_element(load.begin(), load.end());
          EXPECT_LE(*high - *low, 1);
        }
      }
    }
  }
  std::vector<TaskPlace> places =
      place_tasks(CoreLayout::uniform(1, 2), 64, 1, TaskPolicy::compact, ProgressPolicy::numa);
  EXPECT_EQ(places[31].core, 0);  // blocks of neighbouring ranks
  EXPECT_EQ(places[32].core, 1);
  EXPECT_EQ(places[32].progress_core, 1);
}

TEST(Placement, UnequalNodesGetTasksInProportion) {
  const CoreLayout layout = layout_of({6, 2});
  std::vector<TaskPlace> places = place_tasks(layout, 4, 1, TaskPolicy::numa, ProgressPolicy::numa);
  EXPECT_EQ(cores_of(places), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(progress_of(places), (std::vector<int>{1, 3, 5, 7}));
  for (const std::vector<int>& sizes :
       {std::vector<int>{6, 2}, {1, 7}, {3, 4, 5}, {16, 1, 2, 9}, {2, 0, 3}}) {
    const CoreLayout unequal = layout_of(sizes);
    for (TaskPolicy task : kTaskPolicies) {
      for (int n = 1; n <= unequal.num_cores(); ++n) {
        expect_invariants(unequal, n, 1, task, ProgressPolicy::numa);
        expect_invariants(unequal, n, 1, task, ProgressPolicy::colocated);
      }
    }
  }
}

TEST(Placement, RefusalsNameTheArgument) {
  const CoreLayout layout = CoreLayout::uniform(2, 4);
  auto place = [&](int tasks, int per_task, ProgressPolicy progress = ProgressPolicy::numa) {
    return error_of([&] { place_tasks(layout, tasks, per_task, TaskPolicy::numa, progress); });
  };
  EXPECT_NE(place(0, 1).find("tasks is 0; expected at least 1"), std::string::npos);
  EXPECT_NE(place(2, 0).find("cores_per_task is 0; expected at least 1"), std::string::npos);
  std::string message = place(2, 5);
  EXPECT_NE(message.find("cores_per_task 5"), std::string::npos) << message;
  EXPECT_NE(message.find("expected 1..4"), std::string::npos) << message;
  message = place(2, 4, ProgressPolicy::dedicated);
  EXPECT_NE(message.find("expected 1..3"), std::string::npos) << message;
  message = error_of([] {
    place_tasks(CoreLayout::uniform(2, 1), 1, 1, TaskPolicy::numa, ProgressPolicy::dedicated);
  });
  EXPECT_NE(message.find("'dedicated'"), std::string::npos) << message;
  EXPECT_NE(message.find("NUMA node 0 has a single core"), std::string::npos) << message;
  EXPECT_NE(error_of([] {
              place_tasks(CoreLayout{}, 1, 1, TaskPolicy::numa, ProgressPolicy::numa);
            }).find("no cores"),
            std::string::npos);
  EXPECT_NE(error_of([] { numa_task_slot(4, 4, 2, 4); }).find("rank is 4; expected 0..3"),
            std::string::npos);
  EXPECT_NE(error_of([] { numa_task_slot(0, 1, 0, 4); }).find("numa_nodes is 0"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              numa_progress_core(NumaSlot{0, 0, 0, 0}, 4);
            }).find("n_local"),
            std::string::npos);
  EXPECT_NE(error_of([] { CoreLayout::uniform(1, 0); }).find("cores_per_node is 0"),
            std::string::npos);
}

// The build's weft-info program (tests/CMakeLists.txt passes its path).
std::string weft_info_path() {
  return std::filesystem::exists(WEFT_INFO_PROGRAM) ? WEFT_INFO_PROGRAM : "";
}

struct ProgramRun {
  int status;
  std::string output;  // stdout and stderr
};

// `environment`: assignments put before the command, "UCX_NET_DEVICES=eth0".
ProgramRun run_weft_info(const std::string& arguments, const std::string& environment = "") {
  const std::string path = weft_info_path();
  EXPECT_FALSE(path.empty()) << "weft-info not found at " WEFT_INFO_PROGRAM
                                "; build the weft-info target";
  if (path.empty()) return {-1, ""};
  FILE* pipe = ::popen((environment + " '" + path + "' " + arguments + " 2>&1").c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  if (pipe == nullptr) return {-1, ""};
  std::string output;
  std::array<char, 4096> buffer;
  while (std::size_t got = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
    output.append(buffer.data(), got);
  }
  int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(WeftInfo, PlacementAsJson) {
  ProgramRun run = run_weft_info(
      "placement --topology 'synthetic:pack:2 [numa] core:4 pu:1' --tasks 3 --policy numa "
      "--progress numa --json");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output,
            "[{\"task\": 0, \"core\": 0, \"numa\": 0, \"progress_core\": 1}, "
            "{\"task\": 1, \"core\": 2, \"numa\": 0, \"progress_core\": 3}, "
            "{\"task\": 2, \"core\": 4, \"numa\": 1, \"progress_core\": 5}]\n");
}

TEST(WeftInfo, PlacementDefaultsComeFromTheConfiguration) {
  ProgramRun run = run_weft_info(
      "placement --topology 'synthetic:pack:2 [numa] core:4 pu:1' --tasks 3 --json "
      "--set placement.tasks=compact --set placement.progress=colocated");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("{\"task\": 2, \"core\": 2, \"numa\": 0, \"progress_core\": 2}"),
            std::string::npos)
      << run.output;
}

// notes/seeds.md, 004: the interfaces of an XML topology and the node traffic is handled near.
TEST(WeftInfo, TopologyShowsTheInterfacesAndWhereTrafficGoes) {
  const std::string xml =
      "--topology xml:" + std::string(WEFT_TEST_TOPOLOGIES) + "/nic-rdma-on-node1.xml";
  ProgramRun run = run_weft_info("topology " + xml);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("mlx5_0     RDMA     1     12"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("near NUMA node 1"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("polled from cores 2-3"), std::string::npos) << run.output;
  run = run_weft_info("topology " + xml, "UCX_NET_DEVICES=eth0");
  EXPECT_NE(run.output.find("near NUMA node 0, weighing network interface eth0"), std::string::npos)
      << run.output;
}

TEST(WeftInfo, BadInputExitsWithStatusTwo) {
  for (const char* arguments :
       {"placement --tasks 0", "placement --tasks 2 --policy round-robin",
        "placement --tasks 2 --progress everywhere", "placement --tasks x", "--frobnicate",
        "placement --tasks 2 --topology synthetic:pack:x"}) {
    ProgramRun run = run_weft_info(arguments);
    EXPECT_EQ(run.status, 2) << arguments << ": " << run.output;
    EXPECT_NE(run.output.find("expected"), std::string::npos) << arguments << ": " << run.output;
  }
  ProgramRun run = run_weft_info("placement --tasks 2 --policy round-robin");
  EXPECT_NE(run.output.find("--policy"), std::string::npos) << run.output;
}

// The NUMA-aware collectives' model (docs/mpi-collectives.md): constants and choices.
TEST(WeftInfo, NumaShowsTheConstantsAndEachCollectivesChoice) {
  const std::string seed =
      " --set mpi.coll_numa_constants=local=1,remote=2,link=0.5,notify=50,atomic=10";
  ProgramRun run = run_weft_info(
      "numa --topology 'synthetic:pack:2 [numa] core:8 pu:1' --ranks 16 --bytes 1M" + seed);
  EXPECT_EQ(run.status, 0) << run.output;
  for (const char* part : {"Constants (mpi.coll_numa_constants)", "notification (t_W)  50",
                           "ranks per node: 8 8", "bcast       staged", "allgather   staged"}) {
    EXPECT_NE(run.output.find(part), std::string::npos) << part << " in " << run.output;
  }
  run = run_weft_info("numa --topology 'synthetic:pack:1 core:8 pu:1' --bytes 1M" + seed);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("bcast       flat       -        -          -         -      -     "
                            "one NUMA node"),
            std::string::npos)
      << run.output;
  for (const char* arguments :
       {"numa --bytes 1X", "numa --ranks 0", "placement --tasks 2 --bytes 4",
        "numa --set mpi.coll_numa_constants=fast"}) {
    run = run_weft_info(arguments);
    EXPECT_EQ(run.status, 2) << arguments << ": " << run.output;
    EXPECT_NE(run.output.find("expected"), std::string::npos) << arguments << ": " << run.output;
  }
}

TEST(WeftInfo, HelpAndDefaultReport) {
  ProgramRun help = run_weft_info("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.output.find("weft-info placement"), std::string::npos) << help.output;
  ProgramRun report = run_weft_info("--topology 'synthetic:pack:2 [numa] core:4 pu:1'");
  EXPECT_EQ(report.status, 0) << report.output;
  for (const char* part : {"NUMA node 1: cores 4-7", "VP 7", "scheduler.vps"}) {
    EXPECT_NE(report.output.find(part), std::string::npos) << part << " in " << report.output;
  }
}

}  // namespace
}  // namespace weft
