// The NUMA copy cost model (weft/numa_copy.h): the choice between a flat single copy and one
// staged copy per node, the fragment size and tree shape it derives, and the constants' text
// form and cache.
#include "weft/numa_copy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "weft/error.h"
#include "weft/topology.h"

namespace weft::numa_copy {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

Layout even(int nodes, int per_node) {
  Layout layout;
  for (int n = 0; n < nodes; ++n) {
    for (int i = 0; i < per_node; ++i) layout.node_of.push_back(n);
  }
  return layout;
}

TEST(NumaCopy, OneNodeIsAlwaysFlat) {
  const Constants c = seed_defaults();
  for (Collective kind :
       {Collective::bcast, Collective::reduce, Collective::allreduce, Collective::allgather}) {
    const Plan plan = choose(kind, 64 * kMiB, even(1, 64), 0, true, c);
    EXPECT_EQ(plan.algorithm, Algorithm::flat) << to_string(kind);
    EXPECT_NE(plan.reason.find("one NUMA node"), std::string::npos) << plan.reason;
  }
}

TEST(NumaCopy, UnknownNodeIsFlat) {
  Layout layout = even(2, 8);
  layout.node_of[3] = -1;
  EXPECT_EQ(choose(Collective::bcast, 4 * kMiB, layout, 0, true, seed_defaults()).algorithm,
            Algorithm::flat);
}

TEST(NumaCopy, ManyRemoteReadersStageALargeBroadcast) {
  // With the seed's constants the link carries 4 remote readers' worth of a core's remote copy:
  // 8 readers on the other node saturate it under flat, and staging moves the message across
  // once.
  const Plan big = choose(Collective::bcast, 4 * kMiB, even(2, 8), 0, true, seed_defaults());
  EXPECT_EQ(big.algorithm, Algorithm::staged) << big.reason;
  EXPECT_LT(big.staged_ns, big.flat_ns);
  EXPECT_EQ(big.slots, 4);
  // One reader per node gains nothing from a second copy.
  const Plan few = choose(Collective::bcast, 4 * kMiB, even(2, 1), 0, true, seed_defaults());
  EXPECT_EQ(few.algorithm, Algorithm::flat) << few.reason;
}

TEST(NumaCopy, SmallMessagesStayFlat) {
  const Plan plan = choose(Collective::bcast, 256, even(4, 16), 0, true, seed_defaults());
  EXPECT_EQ(plan.algorithm, Algorithm::flat) << plan.reason;
}

TEST(NumaCopy, ReductionsAndAllgatherStageWhenTheLinkIsTheBottleneck) {
  const Constants c = seed_defaults();
  for (Collective kind : {Collective::reduce, Collective::allreduce, Collective::allgather}) {
    const Plan plan = choose(kind, 16 * kMiB, even(4, 16), 0, true, c);
    EXPECT_EQ(plan.algorithm, Algorithm::staged) << to_string(kind) << ": " << plan.reason;
  }
  // A free link and cheap remote reads: one copy is better than two.
  Constants fast_link = c;
  fast_link.link_ns_per_byte = 0.001;
  fast_link.remote_ns_per_byte = c.local_ns_per_byte;
  for (Collective kind : {Collective::bcast, Collective::allgather}) {
    EXPECT_EQ(choose(kind, 16 * kMiB, even(4, 16), 0, true, fast_link).algorithm, Algorithm::flat)
        << to_string(kind);
  }
}

TEST(NumaCopy, NonCommutativeReductionsNeedNodesOfConsecutiveRanks) {
  Layout interleaved;
  for (int r = 0; r < 32; ++r) interleaved.node_of.push_back(r % 2);
  EXPECT_FALSE(interleaved.contiguous());
  EXPECT_TRUE(even(2, 16).contiguous());
  const Constants c = seed_defaults();
  EXPECT_EQ(choose(Collective::allreduce, 16 * kMiB, interleaved, 0, false, c).algorithm,
            Algorithm::flat);
  EXPECT_EQ(choose(Collective::allreduce, 16 * kMiB, interleaved, 0, true, c).algorithm,
            Algorithm::staged);
  EXPECT_EQ(choose(Collective::allreduce, 16 * kMiB, even(2, 16), 0, false, c).algorithm,
            Algorithm::staged);
}

TEST(NumaCopy, FragmentFollowsTheSquareRootRule) {
  const Constants c = seed_defaults();       // t = 1, t_W + t_A = 60: f* = sqrt(60 m)
  EXPECT_EQ(fragment_size(1024, c), 4096u);  // at least a page
  // m = 4 MiB: sqrt(60 * 4 Mi) = 15 863, rounded up to 4 pages.
  EXPECT_EQ(fragment_size(4 * kMiB, c), 16384u);
  EXPECT_EQ(fragment_size(std::size_t{1} << 40, c), kMiB);  // at most 1 MiB
  for (std::size_t m = 4096; m < 64 * kMiB; m *= 2) {
    EXPECT_EQ(fragment_size(m, c) % 4096, 0u);
    EXPECT_LE(fragment_size(m, c), fragment_size(2 * m, c));
  }
}

TEST(NumaCopy, TreeShapeFollowsTheLatencies) {
  Constants c = seed_defaults();
  // Stores cheap against the wait: one parent tells everyone.
  c.atomic_ns = 1;
  c.notify_ns = 1000;
  EXPECT_EQ(tree_arity(15, c), 15);
  // Stores dear: 4 children (depth 2, 2 x 4 stores) beat 15 stores in a row and a binary tree's
  // depth 4 (4 x 2 stores).
  c.atomic_ns = 1000;
  c.notify_ns = 10;
  EXPECT_EQ(tree_arity(15, c), 4);
  EXPECT_EQ(tree_arity(1, c), 1);
}

TEST(NumaCopy, ConstantsParseAndFormat) {
  const Constants base = seed_defaults();
  const auto parsed = Constants::parse("local=0.25,notify=80", base);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_DOUBLE_EQ(parsed->local_ns_per_byte, 0.25);
  EXPECT_DOUBLE_EQ(parsed->notify_ns, 80);
  EXPECT_DOUBLE_EQ(parsed->remote_ns_per_byte, base.remote_ns_per_byte);
  const auto again = Constants::parse(parsed->format(), base);
  ASSERT_TRUE(again.has_value());
  EXPECT_DOUBLE_EQ(again->local_ns_per_byte, 0.25);
  EXPECT_FALSE(Constants::parse("local=fast", base));
  EXPECT_FALSE(Constants::parse("speed=1", base));
  EXPECT_FALSE(Constants::parse("", base));
  EXPECT_THROW(effective("local=-1"), Error);
  EXPECT_EQ(effective("atomic=3").atomic_ns, 3);
}

TEST(NumaCopy, CacheRoundTrip) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("weft-numa-" + std::to_string(::getpid()));
  const std::string path = (dir / "numa-constants").string();
  EXPECT_FALSE(read_cache(path).has_value());
  Constants c = seed_defaults();
  c.local_ns_per_byte = 0.125;
  c.source = "test";
  write_cache(path, c);
  const auto read = read_cache(path);
  ASSERT_TRUE(read.has_value());
  EXPECT_DOUBLE_EQ(read->local_ns_per_byte, 0.125);
  EXPECT_NE(read->source.find("test"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(NumaCopy, MeasuresThisMachine) {
  const Topology topology = Topology::load("host");
  const Constants c = measure(topology, seed_defaults());
  EXPECT_GT(c.local_ns_per_byte, 0);
  EXPECT_GT(c.remote_ns_per_byte, 0);
  EXPECT_GT(c.link_ns_per_byte, 0);
  EXPECT_GT(c.notify_ns, 0);
  EXPECT_GT(c.atomic_ns, 0);
  EXPECT_NE(c.source.find("measured"), std::string::npos);
}

}  // namespace
}  // namespace weft::numa_copy
