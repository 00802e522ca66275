// Network interfaces read from hwloc XML topologies that carry PCI and OS devices, and the
// placement of communication near them (notes/seeds.md, 004).
#include <gtest/gtest.h>

#include <string>

#include "weft/placement.h"
#include "weft/topology.h"

namespace weft {
namespace {

Topology fixture(const std::string& name, std::string_view cpus = "") {
  return Topology::load("xml:" + std::string(WEFT_TEST_TOPOLOGIES) + "/" + name + ".xml", cpus);
}

const Topology::Nic* find(const Topology& topology, std::string_view name) {
  for (const Topology::Nic& nic : topology.nics()) {
    if (nic.name == name) return &nic;
  }
  return nullptr;
}

TEST(Nics, ReadFromXmlWithTheirKindNodeAndLink) {
  Topology topology = fixture("nic-rdma-on-node1");
  ASSERT_EQ(topology.nics().size(), 3u);
  const Topology::Nic* hca = find(topology, "mlx5_0");
  ASSERT_NE(hca, nullptr);
  EXPECT_EQ(hca->kind, Topology::Nic::Kind::openfabrics);
  EXPECT_EQ(hca->numa, std::vector<int>{1});
  EXPECT_EQ(hca->numa_os, std::vector<int>{1});
  EXPECT_DOUBLE_EQ(hca->link_gbytes_per_s, 12.0);
  const Topology::Nic* ipoib = find(topology, "ib0");
  ASSERT_NE(ipoib, nullptr);
  EXPECT_EQ(ipoib->kind, Topology::Nic::Kind::network);
  EXPECT_EQ(ipoib->numa, std::vector<int>{1});
  const Topology::Nic* ethernet = find(topology, "eth0");
  ASSERT_NE(ethernet, nullptr);
  EXPECT_EQ(ethernet->numa, std::vector<int>{0});
  EXPECT_DOUBLE_EQ(ethernet->link_gbytes_per_s, 0.25);
}

TEST(Nics, NoneOnASyntheticTopology) {
  EXPECT_TRUE(Topology::load("synthetic:pack:2 [numa] core:2 pu:1").nics().empty());
}

TEST(Nics, ADeviceBelowTheWholeMachineHasNoKnownNode) {
  Topology topology = fixture("nic-unknown-node");
  ASSERT_EQ(topology.nics().size(), 1u);
  EXPECT_TRUE(topology.nics()[0].numa_os.empty());
  NicPlacement placement = place_near_nics(topology.nics(), "");
  EXPECT_TRUE(placement.numa.empty());
  EXPECT_EQ(placement.nics, std::vector<std::string>{"eth0"});
  EXPECT_NE(placement.reason.find("node unknown"), std::string::npos) << placement.reason;
}

TEST(Nics, ARestrictedTopologyNumbersTheNodesItKeeps) {
  // cpus 2-3 keep package 1 only: its node is node 0 of the restricted topology.
  Topology node1 = fixture("nic-rdma-on-node1", "2-3");
  ASSERT_EQ(node1.num_numa_nodes(), 1);
  EXPECT_EQ(find(node1, "mlx5_0")->numa, std::vector<int>{0});
  EXPECT_EQ(find(node1, "mlx5_0")->numa_os, std::vector<int>{1});
  // cpus 0-1 keep package 0: the HCA is on a node this process lacks.
  Topology node0 = fixture("nic-rdma-on-node1", "0-1");
  EXPECT_TRUE(find(node0, "mlx5_0")->numa.empty());
  NicPlacement placement = place_near_nics(node0.nics(), "");
  EXPECT_TRUE(placement.numa.empty()) << placement.reason;
  EXPECT_NE(placement.reason.find("on a node this process lacks"), std::string::npos)
      << placement.reason;
}

TEST(NicPlacement, RdmaInterfacesWinOverEthernet) {
  NicPlacement placement = place_near_nics(fixture("nic-rdma-on-node1").nics(), "");
  EXPECT_EQ(placement.numa, std::vector<int>{1});
  EXPECT_EQ(placement.nics, std::vector<std::string>{"mlx5_0"});
  EXPECT_NE(placement.reason.find("RDMA"), std::string::npos) << placement.reason;
}

TEST(NicPlacement, UcxNetDevicesChoosesTheInterfaces) {
  const Topology topology = fixture("nic-rdma-on-node1");
  EXPECT_EQ(place_near_nics(topology.nics(), "eth0").numa, std::vector<int>{0});
  EXPECT_EQ(place_near_nics(topology.nics(), "mlx5_0:1").numa, std::vector<int>{1});
  EXPECT_EQ(place_near_nics(topology.nics(), "all").numa, std::vector<int>{1});
  NicPlacement missing = place_near_nics(topology.nics(), "hfi1_0:1");
  EXPECT_TRUE(missing.numa.empty());
  EXPECT_NE(missing.reason.find("hfi1_0"), std::string::npos) << missing.reason;
}

TEST(NicPlacement, EqualRailsKeepBothNodesAndTheFasterWins) {
  const Topology topology = fixture("nic-two-rails");
  EXPECT_EQ(place_near_nics(topology.nics(), "").numa, (std::vector<int>{0, 1}));
  std::vector<Topology::Nic> nics = topology.nics();
  nics[1].link_gbytes_per_s = 25.0;  // mlx5_1, on node 1, on a wider link
  EXPECT_EQ(place_near_nics(nics, "").numa, std::vector<int>{1});
  // A node with two slower rails outweighs one with a single faster one.
  nics.push_back(nics[0]);
  nics.back().name = "mlx5_2";
  nics[0].link_gbytes_per_s = nics.back().link_gbytes_per_s = 16.0;
  EXPECT_EQ(place_near_nics(nics, "").numa, std::vector<int>{0});
}

TEST(NicPlacement, NoInterfaceGivesNoBinding) {
  NicPlacement placement = place_near_nics({}, "");
  EXPECT_TRUE(placement.numa.empty());
  EXPECT_TRUE(placement.nics.empty());
  EXPECT_NE(placement.reason.find("no network interface"), std::string::npos);
}

}  // namespace
}  // namespace weft
