#include "weft/topology.h"

#include <gtest/gtest.h>
#include <hwloc.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "weft/error.h"

namespace weft {
namespace {

constexpr const char* kTwoNodes = "synthetic:pack:2 [numa] core:4 pu:1";

// The message of the weft::Error `load(spec)` throws, or "" when it loads.
std::string load_error(const std::string& spec) {
  try {
    Topology::load(spec);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(Topology, SyntheticCounts) {
  Topology topology = Topology::load(kTwoNodes);
  EXPECT_EQ(topology.spec(), kTwoNodes);
  EXPECT_EQ(topology.num_numa_nodes(), 2);
  EXPECT_EQ(topology.num_cores(), 8);
  EXPECT_EQ(topology.num_pus(), 8);
  ASSERT_EQ(topology.cores().size(), 8u);
  for (int i = 0; i < 8; ++i) {
    const Topology::Core& core = topology.core(i);
    EXPECT_EQ(core.index, i);
    EXPECT_EQ(core.numa, i / 4) << "core " << i;
    EXPECT_EQ(core.pus.size(), 1u);
  }
  EXPECT_EQ(topology.cores_of_numa(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(topology.cores_of_numa(1), (std::vector<int>{4, 5, 6, 7}));
}

TEST(Topology, HyperthreadsBelongToTheirCore) {
  Topology topology = Topology::load("synthetic:pack:1 [numa] core:3 pu:2");
  EXPECT_EQ(topology.num_cores(), 3);
  EXPECT_EQ(topology.num_pus(), 6);
  EXPECT_EQ(topology.core(1).pus, (std::vector<int>{2, 3}));
}

TEST(Topology, WithoutNumaLevelHasOneNode) {
  Topology topology = Topology::load("synthetic:pack:2 core:3 pu:1");
  EXPECT_EQ(topology.num_numa_nodes(), 1);
  EXPECT_EQ(topology.num_cores(), 6);
  for (const Topology::Core& core : topology.cores()) EXPECT_EQ(core.numa, 0);
  EXPECT_EQ(topology.distance(0, 0), 10);
}

TEST(Topology, NumaOfCoreFollowsNestedNodes) {
  // Four nodes, two per package: cores must map to the node whose cpuset holds them.
  Topology topology = Topology::load("synthetic:pack:2 group:2 [numa] core:3 pu:1");
  EXPECT_EQ(topology.num_numa_nodes(), 4);
  for (const Topology::Core& core : topology.cores()) EXPECT_EQ(core.numa, core.index / 3);
}

TEST(Topology, DefaultDistances) {
  Topology topology = Topology::load("synthetic:pack:3 [numa] core:2 pu:1");
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(topology.distance(a, a), 10);
    for (int b = 0; b < 3; ++b) {
      EXPECT_EQ(topology.distance(a, b), topology.distance(b, a));
      if (a != b) {
        EXPECT_EQ(topology.distance(a, b), 20);
      }
    }
    std::vector<int> order = topology.numa_by_distance(a);
    ASSERT_EQ(order.size(), 3u);
    EXPECT_EQ(order.front(), a);
  }
  EXPECT_EQ(topology.numa_by_distance(1), (std::vector<int>{1, 0, 2}));
}

class TempFile {
 public:
  TempFile()
      : path_((std::filesystem::temp_directory_path() /
               ("weft_topology_test_" + std::to_string(::getpid()) + ".xml"))
                  .string()) {}
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

using HwlocTopology = std::unique_ptr<hwloc_topology, decltype(&hwloc_topology_destroy)>;

HwlocTopology load_synthetic(const char* description) {
  hwloc_topology_t raw = nullptr;
  EXPECT_EQ(hwloc_topology_init(&raw), 0);
  HwlocTopology topology(raw, hwloc_topology_destroy);
  EXPECT_EQ(hwloc_topology_set_synthetic(raw, description), 0);
  EXPECT_EQ(hwloc_topology_load(raw), 0);
  return topology;
}

// Four nodes where node 0 is near node 1 and far from 2 and 3, in hwloc units of 100 = local.
void add_latencies(hwloc_topology_t topology) {
  hwloc_obj_t nodes[4];
  for (unsigned i = 0; i < 4; ++i)
    nodes[i] = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, i);
  hwloc_uint64_t values[16] = {100, 120, 300, 310,  //
                               120, 100, 310, 300,  //
                               300, 310, 100, 120,  //
                               310, 300, 120, 100};
  hwloc_distances_add_handle_t handle = hwloc_distances_add_create(
      topology, "NUMALatency", HWLOC_DISTANCES_KIND_FROM_USER | HWLOC_DISTANCES_KIND_MEANS_LATENCY,
      0);
  ASSERT_NE(handle, nullptr);
  ASSERT_EQ(hwloc_distances_add_values(topology, handle, 4, nodes, values, 0), 0);
  ASSERT_EQ(hwloc_distances_add_commit(topology, handle, 0), 0);
}

TEST(Topology, XmlRoundTripKeepsLayoutAndDistances) {
  TempFile file;
  HwlocTopology exported = load_synthetic("pack:4 [numa] core:2 pu:2");
  add_latencies(exported.get());
  ASSERT_EQ(hwloc_topology_export_xml(exported.get(), file.path().c_str(), 0), 0);

  Topology topology = Topology::load("xml:" + file.path());
  EXPECT_FALSE(topology.is_this_machine());
  EXPECT_EQ(topology.num_numa_nodes(), 4);
  EXPECT_EQ(topology.num_cores(), 8);
  EXPECT_EQ(topology.num_pus(), 16);
  for (const Topology::Core& core : topology.cores()) EXPECT_EQ(core.numa, core.index / 2);
  EXPECT_EQ(topology.distance(0, 0), 10);
  EXPECT_EQ(topology.distance(0, 1), 12);
  EXPECT_EQ(topology.distance(3, 0), 31);
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) EXPECT_EQ(topology.distance(a, b), topology.distance(b, a));
  }
  EXPECT_EQ(topology.numa_by_distance(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(topology.numa_by_distance(2), (std::vector<int>{2, 3, 0, 1}));
  EXPECT_EQ(topology.numa_by_distance(3), (std::vector<int>{3, 2, 1, 0}));
  EXPECT_NE(topology.summary().find("reported by the machine"), std::string::npos);
}

TEST(Topology, HostLoadsAndIsThisMachine) {
  for (const char* spec : {"", "host"}) {
    Topology topology = Topology::load(spec);
    EXPECT_TRUE(topology.is_this_machine()) << "spec '" << spec << "'";
    EXPECT_GE(topology.num_cores(), 1);
    EXPECT_GE(topology.num_pus(), topology.num_cores());
    EXPECT_GE(topology.num_numa_nodes(), 1);
    for (const Topology::Core& core : topology.cores()) {
      EXPECT_GE(core.numa, 0);
      EXPECT_LT(core.numa, topology.num_numa_nodes());
      EXPECT_FALSE(core.pus.empty());
    }
    for (int node = 0; node < topology.num_numa_nodes(); ++node) {
      EXPECT_EQ(topology.distance(node, node), 10);
      EXPECT_EQ(topology.numa_by_distance(node).front(), node);
    }
  }
}

TEST(Topology, BindOnHostPinsTheThread) {
  Topology topology = Topology::load("host");
  const int last = topology.num_cores() - 1;
  // A thread of its own, so that the test's main thread keeps its affinity.
  bool bound = false;
  std::vector<int> cpus_after;
  std::thread thread([&] {
    bound = topology.bind_current_thread(last);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &set)) cpus_after.push_back(cpu);
      }
    }
  });
  thread.join();
  EXPECT_TRUE(bound);
  EXPECT_EQ(cpus_after, topology.core(last).pus);
}

TEST(Topology, BindIsANoOpOnSyntheticTopologies) {
  Topology topology = Topology::load(kTwoNodes);
  EXPECT_FALSE(topology.is_this_machine());
  cpu_set_t before, after;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  EXPECT_FALSE(topology.bind_current_thread(7));
  ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  EXPECT_THROW(topology.bind_current_thread(8), Error);
}

TEST(Topology, SummaryNamesTheLevels) {
  std::string summary = Topology::load(kTwoNodes).summary();
  for (const char* part : {"2 packages", "2 NUMA nodes", "8 cores", "8 processing units",
                           "NUMA node 1: cores 4-7", "not this machine"}) {
    EXPECT_NE(summary.find(part), std::string::npos) << part << " missing from: " << summary;
  }
}

TEST(Topology, BadSpecsNameTheSpecAndWhatIsExpected) {
  std::string message = load_error("synthetic:pack:x");
  EXPECT_NE(message.find("topology 'synthetic:pack:x'"), std::string::npos) << message;
  EXPECT_NE(message.find("not a valid hwloc synthetic description"), std::string::npos) << message;
  EXPECT_NE(message.find("synthetic:pack:2 [numa] core:4 pu:1"), std::string::npos) << message;

  message = load_error("xml:/nonexistent/weft.xml");
  EXPECT_NE(message.find("topology 'xml:/nonexistent/weft.xml'"), std::string::npos) << message;
  EXPECT_NE(message.find("expected 'xml:<path>'"), std::string::npos) << message;

  message = load_error("synthetic:pack:2 pu:2");
  EXPECT_NE(message.find("has no core level"), std::string::npos) << message;

  message = load_error("machine");
  EXPECT_NE(message.find("topology 'machine' is not understood"), std::string::npos) << message;
  EXPECT_NE(message.find("'host'"), std::string::npos) << message;
}

TEST(Topology, OutOfRangeIndicesAreRefused) {
  Topology topology = Topology::load(kTwoNodes);
  EXPECT_THROW(topology.core(8), Error);
  EXPECT_THROW(topology.core(-1), Error);
  EXPECT_THROW(topology.distance(0, 2), Error);
  EXPECT_THROW(topology.numa_by_distance(-1), Error);
}

TEST(Topology, CopiesShareTheLoadedTopology) {
  Topology copy = Topology::load(kTwoNodes);
  {
    Topology original = Topology::load("synthetic:pack:1 [numa] core:2 pu:1");
    copy = original;
  }
  EXPECT_EQ(copy.num_cores(), 2);
  EXPECT_FALSE(copy.summary().empty());
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

TEST(Topology, NumaNodesHaveOperatingSystemIndices) {
  const Topology topology = Topology::load("synthetic:pack:2 [numa] core:4 pu:1");
  ASSERT_EQ(topology.num_numa_nodes(), 2);
  EXPECT_EQ(topology.numa_os_index(0), 0);
  EXPECT_EQ(topology.numa_os_index(1), 1);
  EXPECT_THROW(topology.numa_os_index(2), Error);
}

}  // namespace
}  // namespace weft
