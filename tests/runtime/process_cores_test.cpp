// scheduler.cores: cpu lists, a topology restricted to some processing units, and how weftrun -p
// splits a node's cores among processes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error_text.h"
#include "weft/config.h"
#include "weft/cpu_list.h"
#include "weft/error.h"
#include "weft/placement.h"
#include "weft/topology.h"

namespace weft {
namespace {

using testing::error_of;
using testing::expect_contains;

TEST(CpuList, ParsesAndFormats) {
  EXPECT_EQ(parse_cpu_list("3"), (std::vector<int>{3}));
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5,1-2,2"), (std::vector<int>{1, 2, 5}));
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({4}), "4");
  EXPECT_EQ(format_cpu_list({}), "");
}

TEST(CpuList, RefusesMalformedLists) {
  expect_contains(error_of([] { parse_cpu_list(""); }), "cpu list '': '' is not an index");
  expect_contains(error_of([] { parse_cpu_list("1,,2"); }), "'' is not an index");
  expect_contains(error_of([] { parse_cpu_list("a-3"); }), "'a-3' is not an index");
  expect_contains(error_of([] { parse_cpu_list("3-1"); }),
                  "'3-1' is a range whose end comes first; expected indices and ranges");
  expect_contains(error_of([] { parse_cpu_list("-1"); }), "is not an index");
}

TEST(RestrictedTopology, KeepsTheListedProcessingUnits) {
  const Topology topology = Topology::load("synthetic:pack:2 [numa] core:4 pu:2", "2-5,14-15");
  EXPECT_EQ(topology.cpus(), "2-5,14-15");
  ASSERT_EQ(topology.num_cores(), 3);
  EXPECT_EQ(topology.core(0).pus, (std::vector<int>{2, 3}));
  EXPECT_EQ(topology.core(1).pus, (std::vector<int>{4, 5}));
  EXPECT_EQ(topology.core(2).pus, (std::vector<int>{14, 15}));
  EXPECT_EQ(topology.num_numa_nodes(), 2);
  EXPECT_EQ(topology.core(2).numa, 1);
  expect_contains(topology.summary(), "restricted to cpus 2-5,14-15");
}

TEST(RestrictedTopology, DropsNodesWithoutCores) {
  const Topology topology = Topology::load("synthetic:pack:2 [numa] core:4 pu:1", "0-1");
  EXPECT_EQ(topology.num_cores(), 2);
  EXPECT_EQ(topology.num_numa_nodes(), 1);
}

TEST(RestrictedTopology, RefusesMissingProcessingUnits) {
  expect_contains(error_of([] { Topology::load("synthetic:pack:1 core:2 pu:1", "1-2"); }),
                  "cpu list '1-2' names processing unit 2, which topology "
                  "'synthetic:pack:1 core:2 pu:1' lacks; expected processing units of 0-1");
}

TEST(ConfiguredTopology, NamesTheKey) {
  Config config;
  config.set("topology", "synthetic:pack:1 core:4 pu:1", ConfigSource::command_line, "--set");
  EXPECT_EQ(configured_topology(config).num_cores(), 4);
  config.set("scheduler.cores", "1,3", ConfigSource::command_line, "--set");
  const Topology topology = configured_topology(config);
  ASSERT_EQ(topology.num_cores(), 2);
  EXPECT_EQ(topology.core(1).os_index, 3);
  config.set("scheduler.cores", "1-x", ConfigSource::command_line, "weftrun");
  expect_contains(error_of([&] { configured_topology(config); }),
                  "configuration key 'scheduler.cores' = '1-x' (command line: weftrun): cpu list");
  config.set("scheduler.cores", "7", ConfigSource::command_line, "--set");
  const std::string error = error_of([&] { configured_topology(config); });
  expect_contains(error, "names processing unit 7");
  expect_contains(error, "(configuration key 'scheduler.cores' = '7'");
}

TEST(SplitCores, ContiguousBlocksRemainderFirst) {
  const Topology topology = Topology::load("synthetic:pack:2 [numa] core:4 pu:2");
  EXPECT_EQ(split_cores(topology, 1), (std::vector<std::string>{"0-15"}));
  EXPECT_EQ(split_cores(topology, 2), (std::vector<std::string>{"0-7", "8-15"}));
  EXPECT_EQ(split_cores(topology, 3), (std::vector<std::string>{"0-5", "6-11", "12-15"}));
  EXPECT_EQ(split_cores(topology, 8).back(), "14-15");
}

TEST(SplitCores, MoreProcessesThanCoresShareThemInTurn) {
  const Topology topology = Topology::load("synthetic:pack:1 core:2 pu:1");
  EXPECT_EQ(split_cores(topology, 4), (std::vector<std::string>{"0", "1", "0", "1"}));
  expect_contains(error_of([&] { split_cores(topology, 0); }), "0 processes; expected at least 1");
}

}  // namespace
}  // namespace weft
