// Node topologies built from the catalog, their routes, and the fabric.
#include "sim/topology.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <simgrid/s4u.hpp>
#include <string>

#include "core/catalog.h"
#include "sim/collectives.h"
#include "sim/isolate.h"
#include "sim/platform.h"
#include "tests/test_util.h"

namespace trainsim::sim {
namespace {

const InstanceType& Type(const std::string& name) {
  const Catalog& catalog = test::BuiltinCatalog();
  const InstanceType* t = catalog.Find(name);
  EXPECT_NE(t, nullptr) << name;
  return *t;
}

std::vector<std::string> Names(const NodeTopology& topo, const std::vector<Hop>& hops) {
  std::vector<std::string> out;
  for (const Hop& h : hops) out.push_back(topo.graph[h.edge].name);
  return out;
}

TEST(TopologyTest, NvswitchRoutesGoThroughTheSwitch) {
  NodeTopology topo = BuildNodeTopology(Type("p4d.24xlarge"), ModelParams());
  auto hops = Route(topo, topo.gpus[0], topo.gpus[5]);
  EXPECT_EQ(Names(topo, hops), (std::vector<std::string>{"nvlink0", "nvlink5"}));
  // 600 GB/s bidirectional, at the A100's fitted NVLink efficiency
  const double efficiency = *Type("p4d.24xlarge").gpu.nvlink_efficiency;
  EXPECT_DOUBLE_EQ(topo.graph[hops[0].edge].bandwidth_Bps, efficiency * 300e9);
}

TEST(TopologyTest, P4dGpuPairsShareANic) {
  NodeTopology topo = BuildNodeTopology(Type("p4d.24xlarge"), ModelParams());
  auto a = Names(topo, Route(topo, topo.gpus[2], topo.gateway));
  auto b = Names(topo, Route(topo, topo.gpus[3], topo.gateway));
  auto c = Names(topo, Route(topo, topo.gpus[4], topo.gateway));
  EXPECT_EQ(a.back(), "nic1");
  EXPECT_EQ(b.back(), "nic1");
  EXPECT_EQ(c.back(), "nic2");
  auto hops = Route(topo, topo.gpus[2], topo.gateway);
  // one 100 Gb/s EFA NIC, at the network's fitted efficiency
  const double efficiency = *Type("p4d.24xlarge").network_efficiency;
  EXPECT_DOUBLE_EQ(topo.graph[hops.back().edge].bandwidth_Bps, efficiency * 100e9 / 8);
}

TEST(TopologyTest, CubeMeshUsesDirectNvlinksAndPcieForNonNeighbours) {
  NodeTopology topo = BuildNodeTopology(Type("p3.16xlarge"), ModelParams());
  // 0-3 is a double NVLink: 2 x 25 GB/s each way.
  auto direct = Route(topo, topo.gpus[0], topo.gpus[3]);
  ASSERT_EQ(direct.size(), 1u);
  EXPECT_DOUBLE_EQ(topo.graph[direct[0].edge].bandwidth_Bps, 50e9);
  // 0-5 has no NVLink; NVLink does not forward through GPU 1 or 4, so the
  // route goes over PCIe (and the CPU).
  auto names = Names(topo, Route(topo, topo.gpus[0], topo.gpus[5]));
  for (const std::string& n : names) EXPECT_EQ(n.rfind("pcie", 0), 0u) << n;
}

TEST(TopologyTest, CubeMeshHasAnNvlinkRing) {
  NodeTopology topo = BuildNodeTopology(Type("p3.16xlarge"), ModelParams());
  std::vector<int> ring = NvlinkRing(topo);
  ASSERT_EQ(ring.size(), 8u);
  EXPECT_EQ(std::set<int>(ring.begin(), ring.end()).size(), 8u);
  for (std::size_t k = 0; k < ring.size(); ++k) {
    auto hops = Route(topo, topo.gpus[ring[k]], topo.gpus[ring[(k + 1) % ring.size()]]);
    ASSERT_EQ(hops.size(), 1u) << ring[k] << "->" << ring[(k + 1) % ring.size()];
    EXPECT_EQ(topo.graph[hops[0].edge].name.rfind("nvlink", 0), 0u);
  }
}

// The p3.16xlarge mesh: 6 NVLink bricks per GPU, so at most 3 brick-disjoint
// Hamiltonian cycles, each run both ways: 6 channels over all 8 GPUs, every
// hop a direct NVLink and no pair carrying more cycles than it has bricks.
TEST(TopologyTest, MeshChannelsUseEveryBrickOfTheNode) {
  const InstanceType& t = Type("p3.16xlarge");
  const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<std::vector<int>> channels = NvlinkChannels(t, all);
  ASSERT_EQ(channels.size(), 6u);
  std::map<std::pair<int, int>, int> used;  // directed hops
  for (const std::vector<int>& ring : channels) {
    ASSERT_EQ(std::set<int>(ring.begin(), ring.end()).size(), 8u);
    for (std::size_t k = 0; k < ring.size(); ++k) ++used[{ring[k], ring[(k + 1) % ring.size()]}];
  }
  for (const auto& [hop, count] : used) {
    int bricks = 0;
    for (const NvlinkPair& p : t.nvlink_pairs) {
      if ((p.a == hop.first && p.b == hop.second) || (p.a == hop.second && p.b == hop.first)) {
        bricks = p.links;
      }
    }
    EXPECT_LE(count, bricks) << hop.first << "->" << hop.second;
  }
  // Two GPUs: one channel per brick between them (0-3: two, 0-1: one).
  EXPECT_EQ(NvlinkChannels(t, {0, 3}).size(), 2u);
  EXPECT_EQ(NvlinkChannels(t, {0, 1}).size(), 1u);
  // An NVSwitch node: one ring, in the members' order.
  EXPECT_EQ(NvlinkChannels(Type("p4d.24xlarge"), all), std::vector<std::vector<int>>{all});
}

TEST(TopologyTest, PcieOnlyNodeRoutesThroughPcie) {
  NodeTopology topo = BuildNodeTopology(Type("g5.48xlarge"), ModelParams());
  for (const std::string& n : Names(topo, Route(topo, topo.gpus[0], topo.gpus[7]))) {
    EXPECT_EQ(n.rfind("pcie", 0), 0u) << n;
  }
  EXPECT_TRUE(NvlinkRing(topo).empty() || NvlinkRing(topo).size() == 8u);
}

// 8 concurrent 256 MB ring all-reduces over 4 p4d nodes, one per local rank (as
// with tp 8), on `shape`'s fabric: the simulated seconds.
double RingsOverFourNodes(const ClusterShape& shape) {
  auto out = RunIsolated([&]() {
    ConfigureNetworkModel();
    ModelParams params;
    Platform p = BuildPlatform(shape, params);
    std::vector<CollectiveCall> calls;
    for (int local = 0; local < 8; ++local) {
      std::vector<int> group;
      for (int node = 0; node < 4; ++node) group.push_back(node * 8 + local);
      calls.push_back(
          {CollKind::kAllReduce, CollAlgo::kRing, 256e6, group, "g" + std::to_string(local)});
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", MeasureConcurrent(p, params, calls));
    return std::string(buf);
  });
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? std::stod(*out) : -1;
}

// An all-reduce between nodes under different leaf switches slows down when
// the leaf uplinks are oversubscribed; under one leaf it does not.
TEST(FabricTest, OversubscriptionSlowsCrossLeafTraffic) {
  auto run = [](double oversubscription, int nodes_per_leaf) {
    return RingsOverFourNodes(
        ClusterShape{Type("p4d.24xlarge"), 4, oversubscription, nodes_per_leaf});
  };
  const double flat = run(1.0, 2), oversub = run(4.0, 2), one_leaf = run(4.0, 4);
  EXPECT_GT(oversub, 1.5 * flat);
  EXPECT_NEAR(one_leaf, flat, 0.01 * flat);
}

// The same with a core tier: leaves of 1 node, pods of 2 leaves, so the rings
// cross pods. An oversubscribed pod tier slows them as an oversubscribed leaf
// tier does; a non-blocking one only adds two switch hops.
TEST(FabricTest, PodOversubscriptionSlowsCrossPodTraffic) {
  auto run = [](int leaves_per_pod, double pod_oversubscription) {
    ClusterShape shape{Type("p4d.24xlarge"), 4, 1.0, 1};
    shape.leaves_per_pod = leaves_per_pod;
    shape.pod_oversubscription = pod_oversubscription;
    return RingsOverFourNodes(shape);
  };
  const double flat = run(0, 1.0), pods = run(2, 1.0), oversub = run(2, 4.0);
  EXPECT_GT(pods, flat);
  EXPECT_LT(pods, 1.01 * flat);
  EXPECT_GT(oversub, 1.5 * pods);
}

}  // namespace
}  // namespace trainsim::sim

namespace trainsim::sim {
namespace {

// Every link of a route between nodes under different leaves, in order.
TEST(FabricTest, CrossLeafRouteClimbsThroughPortsAndUplinks) {
  auto out = RunIsolated([&]() {
    ConfigureNetworkModel();
    Platform p = BuildPlatform(ClusterShape{Type("p4d.24xlarge"), 4, 1.0, 2}, ModelParams());
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    p.gpus[0]->route_to(p.gpus[16], links, &latency);
    std::string names;
    for (auto* l : links) names += l->get_name() + " ";
    return names;
  });
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(*out,
            "n0-pcie-gpu0_UP n0-pcie-nic0_UP n0-nic0_DOWN node0-port_UP leaf0-uplink_UP "
            "leaf1-uplink_DOWN "
            "node2-port_DOWN n2-nic0_UP n2-pcie-nic0_DOWN n2-pcie-gpu0_DOWN ");
}

// With a core tier, a route between pods climbs through both pods' uplinks too;
// one inside a pod does not.
TEST(FabricTest, CrossPodRouteClimbsThroughPodUplinks) {
  auto out = RunIsolated([&]() {
    ConfigureNetworkModel();
    ClusterShape shape{Type("p4d.24xlarge"), 8, 1.0, 2};
    shape.leaves_per_pod = 2;
    Platform p = BuildPlatform(shape, ModelParams());
    std::string names;
    for (int to : {16, 32}) {  // node 2 (pod 0), node 4 (pod 1)
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0;
      p.gpus[0]->route_to(p.gpus[to], links, &latency);
      for (auto* l : links) {
        if (l->get_name().find("uplink") != std::string::npos) names += l->get_name() + " ";
      }
      names += "| ";
    }
    return names;
  });
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(*out,
            "leaf0-uplink_UP leaf1-uplink_DOWN | "
            "leaf0-uplink_UP pod0-uplink_UP pod1-uplink_DOWN leaf2-uplink_DOWN | ");
}

}  // namespace
}  // namespace trainsim::sim
