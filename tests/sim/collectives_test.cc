// Collectives against their alpha-beta closed forms on uncontended networks,
// and a contention case.
#include "sim/collectives.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

#include "sim/isolate.h"
#include "sim/platform.h"
#include "tests/test_util.h"

namespace trainsim::sim {
namespace {

// A single-node "NVSwitch" machine with n GPUs: every GPU has one link of
// bandwidth B (each direction) and latency alpha/2 to the switch, so a
// GPU-to-GPU message sees latency alpha and bandwidth B.
InstanceType SwitchNode(int gpus, double GBps) {
  InstanceType t;
  t.name = "test-switch";
  t.gpus = gpus;
  t.topology = IntraTopology::kNvswitch;
  t.nvlink_GBps_per_gpu_per_dir = GBps;
  t.pcie_GBps_per_dir = 16;
  t.nics = 1;
  t.nic_gbps = 100;
  return t;
}

// Runs `calls` on `nodes` x `type` and returns the simulated seconds.
double Simulate(const InstanceType& type, int nodes, const ModelParams& params,
                const std::function<std::vector<CollectiveCall>(const Platform&)>& make) {
  auto out = RunIsolated([&]() {
    ConfigureNetworkModel();
    Platform p = BuildPlatform(ClusterShape{type, nodes, 1.0, 32}, params);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", MeasureConcurrent(p, params, make(p)));
    return std::string(buf);
  });
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? std::strtod(out->c_str(), nullptr) : -1;
}

// The numbers of a RunIsolated reply of space-separated figures.
std::vector<double> Numbers(const std::string& text) {
  std::istringstream in(text);
  std::vector<double> out;
  for (double v; in >> v;) out.push_back(v);
  return out;
}

std::vector<int> Iota(int n, int from = 0) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = from + i;
  return v;
}

// Link latencies only: no protocol latency, so that times follow the
// alpha-beta closed forms of the links.
ModelParams Params() {
  ModelParams p;
  p.nvlink_latency_s = 2.5e-6;  // alpha = 5 us GPU to GPU
  p.protocol_base_latency_s = p.protocol_intra_step_latency_s = 0;
  p.protocol_inter_step_latency_s = 0;
  return p;
}

struct RingCase {
  CollKind kind;
  int n;
  double steps_per_n;  // 2 for all-reduce, 1 for reduce-scatter / all-gather
};

TEST(CollectivesTest, RingMatchesAlphaBetaOnUncontendedSwitch) {
  const double S = 256.0 * 1024 * 1024, B = 50e9, alpha = 5e-6;
  const RingCase cases[] = {{CollKind::kAllReduce, 4, 2},  {CollKind::kAllReduce, 16, 2},
                            {CollKind::kAllReduce, 64, 2}, {CollKind::kReduceScatter, 8, 1},
                            {CollKind::kAllGather, 8, 1},  {CollKind::kReduceScatter, 32, 1},
                            {CollKind::kAllGather, 64, 1}};
  for (const RingCase& c : cases) {
    double t = Simulate(SwitchNode(c.n, B / 1e9), 1, Params(), [&](const Platform&) {
      return std::vector<CollectiveCall>{{c.kind, CollAlgo::kRing, S, Iota(c.n), "g"}};
    });
    double steps = c.steps_per_n * (c.n - 1);
    double expected = steps / c.n * S / B + steps * alpha;
    EXPECT_NEAR(t, expected, 0.02 * expected) << ToString(c.kind) << " n=" << c.n;
  }
}

TEST(CollectivesTest, SendRecvIsLatencyPlusSizeOverBandwidth) {
  const double S = 64.0 * 1024 * 1024, B = 50e9, alpha = 5e-6;
  double t = Simulate(SwitchNode(2, 50), 1, Params(), [&](const Platform&) {
    return std::vector<CollectiveCall>{{CollKind::kSendRecv, CollAlgo::kRing, S, {0, 1}, "p"}};
  });
  EXPECT_NEAR(t, alpha + S / B, 0.001 * (alpha + S / B));
}

// All-to-all (expert parallelism): every member sends S / n to each other member at once,
// so (n - 1) S / n leave through each GPU's link, in one latency step.
TEST(CollectivesTest, AllToAllSendsEveryPieceAtOnce) {
  const double S = 64.0 * 1024 * 1024, B = 50e9, alpha = 5e-6;
  for (int n : {2, 4, 8}) {
    double t = Simulate(SwitchNode(n, B / 1e9), 1, Params(), [&](const Platform&) {
      return std::vector<CollectiveCall>{{CollKind::kAllToAll, CollAlgo::kRing, S, Iota(n), "a"}};
    });
    const double expected = alpha + (n - 1.0) / n * S / B;
    EXPECT_NEAR(t, expected, 0.001 * expected) << "n=" << n;
  }
}

TEST(CollectivesTest, ParameterServerIsBoundByTheServersNics) {
  // 4 nodes x 1 GPU, a 100 Gb/s NIC each, PCIe wider than the NIC. Each of
  // the 4 workers pushes S in shares to the servers, which answer with S in
  // shares. One server (node 0's host): 3 remote pushes of S share its NIC
  // in, then 3 pulls out: 6 S / B. A server on every node: each NIC carries
  // 3 S / 4 in and out per phase: 1.5 S / B.
  const double S = 256.0 * 1024 * 1024, B = 100e9 / 8;
  InstanceType t = SwitchNode(1, 100);
  t.pcie_GBps_per_dir = 64;
  t.efa = true;
  auto run = [&](int servers) {
    return Simulate(t, 4, Params(), [&](const Platform& p) {
      CollectiveCall call{CollKind::kAllReduce, CollAlgo::kParameterServer, S, Iota(4), "ps"};
      for (int n = 0; n < servers; ++n) call.servers.push_back(p.cpu_endpoint(n));
      return std::vector<CollectiveCall>{call};
    });
  };
  EXPECT_NEAR(run(1), 6 * S / B, 0.01 * 6 * S / B);
  EXPECT_NEAR(run(4), 1.5 * S / B, 0.01 * 1.5 * S / B);
}

TEST(CollectivesTest, CopyToHostCrossesThePcieLinks) {
  // GPU -> host memory: the GPU's PCIe link and the switch's root link.
  const double S = 64.0 * 1024 * 1024;
  InstanceType t = SwitchNode(2, 100);
  t.pcie_GBps_per_dir = 16;
  double one = Simulate(t, 1, Params(), [&](const Platform& p) {
    return std::vector<CollectiveCall>{
        {CollKind::kSendRecv, CollAlgo::kRing, S, {0, p.cpu_endpoint(0)}, "c0"}};
  });
  // Two GPUs behind one PCIe switch (one NIC) share its root link.
  double two = Simulate(t, 1, Params(), [&](const Platform& p) {
    return std::vector<CollectiveCall>{
        {CollKind::kSendRecv, CollAlgo::kRing, S, {0, p.cpu_endpoint(0)}, "c0"},
        {CollKind::kSendRecv, CollAlgo::kRing, S, {1, p.cpu_endpoint(0)}, "c1"}};
  });
  EXPECT_NEAR(one, S / 16e9, 0.01 * S / 16e9);
  EXPECT_NEAR(two, 2 * S / 16e9, 0.01 * 2 * S / 16e9);
}

// 2 nodes x 4 GPUs, 1 NIC of 400 Gb/s per node, NVLink far wider than the
// NIC. Phases: intra-node RS over 4 (3 steps of S/4 at B), inter-node
// all-reduce of S/4 between 2 peers as a double binary tree (each tree sends
// its half S/8 up, then down; the 4 peer pairs share the node's NIC each
// way), intra-node AG.
struct HierarchicalCase {
  InstanceType type;
  ModelParams params;
  double S = 256.0 * 1024 * 1024, B = 100e9, alpha = 5e-6, nic = 400e9 / 8;

  HierarchicalCase() : type(SwitchNode(4, 100)), params(Params()) {
    type.nic_gbps = 400;
    type.efa = true;
    type.pcie_GBps_per_dir = 60;  // wider than the NIC, narrower than NVLink
    params.pcie_latency_s = 0;
    params.efa_latency_s = 0;
    params.switch_latency_s = 0;
  }
  double Intra() const { return 3 * (S / 4 / B + alpha); }
  double Inter() const { return 2 * (S / 4 / 2 / (nic / 4)); }
  double Run() const {
    return Simulate(type, 2, params, [&](const Platform&) {
      return std::vector<CollectiveCall>{
          {CollKind::kAllReduce, CollAlgo::kHierarchical, S, Iota(8), "h"}};
    });
  }
};

TEST(CollectivesTest, HierarchicalInOnePieceIsSumOfItsPhases) {
  HierarchicalCase c;
  c.params.hierarchical_piece_bytes = c.S;
  const double sum = 2 * c.Intra() + c.Inter();
  EXPECT_NEAR(c.Run(), sum, 0.02 * sum);
}

// In pieces, the phases of different pieces overlap: faster than their sum,
// never faster than the NIC, which carries every piece's inter-node share.
TEST(CollectivesTest, HierarchicalPiecesOverlapTheirPhases) {
  HierarchicalCase c;
  c.params.hierarchical_piece_bytes = c.S / 64;
  c.params.max_hierarchical_pieces = 0;
  const double t = c.Run();
  EXPECT_LT(t, 0.9 * (2 * c.Intra() + c.Inter()));
  EXPECT_GT(t, c.Inter());
}

// The long-pipeline shortcut (simulate some pieces, extrapolate the rest)
// against every piece simulated.
TEST(CollectivesTest, LongHierarchicalShortcutMatchesEveryPieceSimulated) {
  HierarchicalCase c;
  c.params.hierarchical_piece_bytes = c.S / 128;
  c.params.max_hierarchical_pieces = 0;
  const double full = c.Run();
  c.params.max_hierarchical_pieces = 16;
  const double shortcut = c.Run();
  EXPECT_NEAR(shortcut, full, 0.01 * full);
}

TEST(CollectivesTest, TreeIsPipelinedAndBeatsNaiveReduceThenBroadcast) {
  // On a switch, a chunked double binary tree over 8 ranks moves S in about
  // S/B (each member sends and receives ~S in total per direction) plus a
  // pipeline fill of ~2*depth chunk times.
  const double S = 256.0 * 1024 * 1024, B = 50e9;
  ModelParams p = Params();
  double t = Simulate(SwitchNode(8, 50), 1, p, [&](const Platform&) {
    return std::vector<CollectiveCall>{{CollKind::kAllReduce, CollAlgo::kTree, S, Iota(8), "t"}};
  });
  // Lower bound: an inner member receives two children's halves and its
  // parent's half (3/2 S) over its one incoming link, in each tree it is
  // inner in; upper bound: reduce then broadcast without overlap.
  double lower = S / B;
  double upper = 2 * 3 * S / B;
  EXPECT_GT(t, lower);
  EXPECT_LT(t, upper);
}

TEST(CollectivesTest, TwoGroupsSharingANicTakeLongerThanOne) {
  // 2 nodes x 2 GPUs, one NIC per node shared by both GPUs.
  InstanceType t = SwitchNode(2, 100);
  t.nic_gbps = 100;
  t.efa = true;
  const double S = 64.0 * 1024 * 1024;
  double one = Simulate(t, 2, Params(), [&](const Platform&) {
    return std::vector<CollectiveCall>{{CollKind::kAllReduce, CollAlgo::kRing, S, {0, 2}, "a"}};
  });
  double two = Simulate(t, 2, Params(), [&](const Platform&) {
    return std::vector<CollectiveCall>{{CollKind::kAllReduce, CollAlgo::kRing, S, {0, 2}, "a"},
                                       {CollKind::kAllReduce, CollAlgo::kRing, S, {1, 3}, "b"}};
  });
  EXPECT_GT(two, 1.8 * one);
}

TEST(CollectivesTest, MultiNodeRingsUseOneChannelPerLocalMember) {
  InstanceType t = SwitchNode(4, 100);
  auto out = RunIsolated([&]() {
    ConfigureNetworkModel();
    Platform p = BuildPlatform(ClusterShape{t, 2, 1.0, 32}, ModelParams());
    auto ch = RingChannels(p, Iota(8));
    std::string s;
    for (const auto& ring : ch) {
      for (int r : ring) s += std::to_string(r);
      s += ";";
    }
    return s;
  });
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "01234567;12305674;23016745;30127456;");
}

// The long-ring shortcut (simulate max_ring_steps, extrapolate the rest)
// against every step simulated, with contention between 8 concurrent rings
// sharing NICs, as data-parallel groups do.
TEST(CollectivesTest, LongRingShortcutMatchesEveryStepSimulated) {
  InstanceType t = SwitchNode(8, 300);
  t.nics = 4;
  t.nic_gbps = 100;
  t.efa = true;
  t.pcie_GBps_per_dir = 31.5;
  auto run = [&](int max_steps, CollKind kind) {
    ModelParams p;
    p.max_ring_steps = max_steps;
    return Simulate(t, 16, p, [&](const Platform&) {
      std::vector<CollectiveCall> calls;
      for (int local = 0; local < 8; ++local) {
        std::vector<int> group;
        for (int node = 0; node < 16; ++node) group.push_back(node * 8 + local);
        calls.push_back({kind, CollAlgo::kRing, 64e6, group, "r" + std::to_string(local)});
      }
      return calls;
    });
  };
  for (CollKind kind : {CollKind::kAllReduce, CollKind::kAllGather}) {
    const double full = run(0, kind), shortcut = run(8, kind);
    EXPECT_NEAR(shortcut, full, 0.005 * full) << ToString(kind);
  }
}

// Node-local collectives on many nodes, measured together, are simulated on one node of
// each kind (ModelParams::node_by_node): the same time as every node simulated, with nodes
// of two kinds (a 4-GPU all-reduce and a host copy on even nodes, an 8-GPU all-gather on odd
// ones; the odd nodes' is the slowest) and one kind.
TEST(CollectivesTest, NodeByNodeMatchesEveryNodeSimulated) {
  InstanceType t = SwitchNode(8, 300);
  t.nics = 4;
  auto run = [&](bool node_by_node, bool mixed) {
    ModelParams p = Params();
    p.node_by_node = node_by_node;
    return Simulate(t, 6, p, [&](const Platform& platform) {
      std::vector<CollectiveCall> calls;
      for (int node = 0; node < 6; ++node) {
        const std::string n = std::to_string(node);
        if (mixed && node % 2 == 1) {
          calls.push_back(
              {CollKind::kAllGather, CollAlgo::kRing, 512e6, Iota(8, node * 8), "g" + n});
          continue;
        }
        calls.push_back({CollKind::kAllReduce, CollAlgo::kRing, 64e6, Iota(4, node * 8), "a" + n});
        calls.push_back({CollKind::kSendRecv,
                         CollAlgo::kRing,
                         16e6,
                         {node * 8 + 5, platform.cpu_endpoint(node)},
                         "c" + n});
      }
      return calls;
    });
  };
  for (bool mixed : {false, true}) {
    const double every = run(false, mixed), once = run(true, mixed);
    EXPECT_GT(every, 0);
    EXPECT_NEAR(once, every, 1e-9 * every) << (mixed ? "two kinds" : "one kind");
  }
  EXPECT_GT(run(true, true), run(true, false));  // the odd nodes' gather sets the time
}

// Calls of the same shape (the same members relative to their first node, the same leaves
// relative to its leaf) take the same time wherever they run, which lets MeasureConcurrent
// reuse a time (the DP collectives of identical stages): proved with the reuse off, on rings
// over 4 of 12 nodes in leaves of 4. Rings that straddle two leaves have another shape: with
// the reuse on they are measured, not taken for the one-leaf rings.
TEST(CollectivesTest, CallsOfTheSameShapeTakeTheSameTimeAnywhere) {
  InstanceType t = SwitchNode(8, 300);
  t.nics = 4;
  auto ring = [](int first_node) {
    std::vector<CollectiveCall> calls;
    for (int local = 0; local < 8; ++local) {
      std::vector<int> group;
      for (int node = first_node; node < first_node + 4; ++node) group.push_back(node * 8 + local);
      calls.push_back({CollKind::kAllReduce, CollAlgo::kRing, 64e6, group,
                       "r" + std::to_string(first_node) + "_" + std::to_string(local)});
    }
    return calls;
  };
  auto times = [&](bool reuse) {
    auto out = RunIsolated([&]() {
      ConfigureNetworkModel();
      ModelParams p = Params();
      p.switch_latency_s = 2e-6;  // crossing leaves costs two more switch hops
      p.node_by_node = reuse;
      Platform platform = BuildPlatform(ClusterShape{t, 12, 1.0, 4}, p);
      std::string text;
      for (int first : {0, 4, 8, 2, 6}) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g ", MeasureConcurrent(platform, p, ring(first)));
        text += buf;
      }
      return text;
    });
    EXPECT_TRUE(out.ok()) << out.status().message();
    std::vector<double> v;
    std::istringstream in(out.ok() ? *out : "");
    for (double x; in >> x;) v.push_back(x);
    return v;
  };
  const std::vector<double> each = times(false), reused = times(true);
  ASSERT_EQ(each.size(), 5u);
  EXPECT_NEAR(each[1], each[0], 1e-9 * each[0]);  // one leaf each: the same shape
  EXPECT_NEAR(each[2], each[0], 1e-9 * each[0]);
  EXPECT_NEAR(each[4], each[3], 1e-9 * each[3]);  // two half leaves each
  EXPECT_GT(each[3], each[0]);                    // the leaf crossing costs its latency
  ASSERT_EQ(reused.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(reused[i], each[i], 1e-9 * each[i]) << i;
}

// 2 nodes x 4 GPUs, one NIC per GPU, NVLink far faster than the NICs.
// NCCL-style channels: 4 rings, each leaving node 0 through a different GPU
// and NIC, so every NIC direction carries one flow and every step moves
// S / (8 ranks x 4 channels) per channel at NIC speed, plus the NIC-to-NIC
// latency (all other latencies zero).
TEST(CollectivesTest, MultiNodeChannelsRunConcurrentlyAtNicSpeed) {
  InstanceType t = SwitchNode(4, 1000);
  t.nics = 4;
  t.nic_gbps = 100;
  t.efa = true;
  t.pcie_GBps_per_dir = 500;
  ModelParams p;
  p.nvlink_latency_s = p.pcie_latency_s = p.switch_latency_s = 0;
  p.efa_latency_s = 10e-6;
  p.protocol_base_latency_s = p.protocol_intra_step_latency_s = 0;
  p.protocol_inter_step_latency_s = 0;
  const double S = 256.0 * 1024 * 1024, nic = 100e9 / 8;
  double t_ar = Simulate(t, 2, p, [&](const Platform&) {
    return std::vector<CollectiveCall>{{CollKind::kAllReduce, CollAlgo::kRing, S, Iota(8), "m"}};
  });
  const double expected = 2 * 7 * (S / 32 / nic + p.efa_latency_s);
  EXPECT_NEAR(t_ar, expected, 0.02 * expected);
}

TEST(CollectivesTest, InterNodeMessageSeesTheNicToNicLatencyOnce) {
  InstanceType t = SwitchNode(2, 100);
  t.efa = true;
  ModelParams p;
  p.nvlink_latency_s = p.pcie_latency_s = p.switch_latency_s = 0;
  double one_byte = Simulate(t, 2, p, [&](const Platform&) {
    return std::vector<CollectiveCall>{{CollKind::kSendRecv, CollAlgo::kRing, 1, {0, 2}, "l"}};
  });
  EXPECT_NEAR(one_byte, p.efa_latency_s, 0.01 * p.efa_latency_s);
}

// NCCL-like choice: a latency-bound small all-reduce across 16 nodes goes to
// the tree (about 2 log2(n) message latencies instead of 2(n-1)); a large one
// to a bandwidth-optimal ring. The time returned is the chosen algorithm's.
TEST(CollectivesTest, FastestAlgorithmDependsOnTheSize) {
  InstanceType t = SwitchNode(1, 100);
  t.efa = true;
  // Returns the chosen algorithm; checks its time is the best candidate's.
  auto run = [&](double bytes) {
    auto out = RunIsolated([&]() {
      ConfigureNetworkModel();
      ModelParams params;
      Platform p = BuildPlatform(ClusterShape{t, 16, 1.0, 32}, params);
      auto one = [&](CollAlgo a) {
        return MeasureConcurrent(p, params, {{CollKind::kAllReduce, a, bytes, Iota(16), "x"}});
      };
      CollAlgo algo = CollAlgo::kRing;
      const double best = MeasureFastest(
          p, params, {{CollKind::kAllReduce, CollAlgo::kRing, bytes, Iota(16), "f"}}, &algo);
      double expected = std::min(one(CollAlgo::kRing), one(CollAlgo::kHierarchical));
      if (bytes <= params.tree_max_bytes) expected = std::min(expected, one(CollAlgo::kTree));
      char buf[64];
      std::snprintf(buf, sizeof buf, "%d %.17g %.17g", static_cast<int>(algo), best, expected);
      return std::string(buf);
    });
    EXPECT_TRUE(out.ok()) << out.status().message();
    int algo = 0;
    double best = 0, expected = 0;
    std::sscanf(out->c_str(), "%d %lf %lf", &algo, &best, &expected);
    EXPECT_NEAR(best, expected, 1e-9 * best) << bytes;
    return static_cast<CollAlgo>(algo);
  };
  EXPECT_EQ(run(4096), CollAlgo::kTree);
  EXPECT_NE(run(1 << 30), CollAlgo::kTree);
}

// A group that ends half way through a node (4 members on one node of 4, 2 on the next, as a
// DP group of 3 slots of tp 4 on 8-GPU nodes is): the hierarchical algorithm runs to its end
// when a scenario fixes it (every member walks the same pieces), and the automatic choice
// leaves it to the ring and the tree (it needs as many members on every node). Before, the
// members disagreed on the pieces, the simulation deadlocked, and its cut-short time won.
TEST(CollectivesTest, UnevenGroupsRunHierarchicalToItsEndAndChooseRingOrTree) {
  HierarchicalCase c;
  c.params.hierarchical_piece_bytes = c.S / 8;
  const std::vector<int> uneven = {0, 1, 2, 3, 4, 5};
  auto out = RunIsolated([&]() {
    ConfigureNetworkModel();
    Platform p = BuildPlatform(ClusterShape{c.type, 2, 1.0, 32}, c.params);
    auto one = [&](CollAlgo a) {
      return MeasureConcurrent(p, c.params, {{CollKind::kAllReduce, a, c.S, uneven, "u"}});
    };
    CollAlgo algo = CollAlgo::kRing;
    const double best = MeasureFastest(
        p, c.params, {{CollKind::kAllReduce, CollAlgo::kRing, c.S, uneven, "f"}}, &algo);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%d %.17g %.17g %.17g", static_cast<int>(algo), best,
                  one(CollAlgo::kRing), one(CollAlgo::kHierarchical));
    return std::string(buf);
  });
  ASSERT_TRUE(out.ok()) << out.status().message();
  int algo = 0;
  double best = 0, ring = 0, hierarchical = 0;
  std::sscanf(out->c_str(), "%d %lf %lf %lf", &algo, &best, &ring, &hierarchical);
  EXPECT_NE(static_cast<CollAlgo>(algo), CollAlgo::kHierarchical);
  EXPECT_DOUBLE_EQ(best, ring);  // above tree_max_bytes: the ring is the only other candidate
  // It ran to its end: at least the time of a quarter of the buffer through the node's NIC.
  EXPECT_GT(hierarchical, c.S / 4 / c.nic);
}

// The long-pipeline shortcut of the tree against every chunk simulated.
TEST(CollectivesTest, LongTreeShortcutMatchesEveryChunkSimulated) {
  InstanceType t = SwitchNode(1, 100);
  t.efa = true;
  auto run = [&](int max_chunks) {
    ModelParams p;
    p.max_tree_chunks = max_chunks;
    return Simulate(t, 16, p, [&](const Platform&) {
      return std::vector<CollectiveCall>{
          {CollKind::kAllReduce, CollAlgo::kTree, 4096.0 * 1024 * 1024, Iota(16), "t"}};
    });
  };
  const double full = run(0), shortcut = run(32);
  EXPECT_NEAR(shortcut, full, 0.005 * full);
}

// NCCL's protocol latency of each call, in us, on 2 nodes of `t`, with round
// constants (base 10 us, 1 us per step inside a node, 100 us across) and a
// scale of 2.
std::string ProtocolLatenciesUs(const InstanceType& t, const std::vector<CollectiveCall>& calls) {
  auto out = RunIsolated([&]() {
    ConfigureNetworkModel();
    ModelParams params;
    params.protocol_base_latency_s = 10e-6;
    params.protocol_intra_step_latency_s = 1e-6;
    params.protocol_inter_step_latency_s = 100e-6;
    params.protocol_latency_scale = 2;
    Platform p = BuildPlatform(ClusterShape{t, 2, 1.0, 32}, params);
    std::string text;
    for (const CollectiveCall& call : calls) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.6g", text.empty() ? "" : " ",
                    ProtocolLatency(p, params, call) * 1e6);
      text += buf;
    }
    return text;
  });
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *out : "";
}

// NCCL's tuning-model latency: base + per-step latencies, intra-node or
// across the network, scaled where a collective crosses EFA.
TEST(CollectivesTest, ProtocolLatencyFollowsNcclTuningModel) {
  InstanceType t = SwitchNode(4, 100);
  t.efa = true;
  const std::string us =
      ProtocolLatenciesUs(t, {{CollKind::kAllReduce, CollAlgo::kRing, 1e6, Iota(8), "x"},
                              {CollKind::kAllGather, CollAlgo::kRing, 1e6, Iota(8), "x"},
                              {CollKind::kAllReduce, CollAlgo::kHierarchical, 1e6, Iota(8), "x"},
                              {CollKind::kAllReduce, CollAlgo::kRing, 1e6, Iota(4), "x"},
                              {CollKind::kSendRecv, CollAlgo::kRing, 1e6, {0, 4}, "x"}});
  // Ring all-reduce over 2 x 4: 14 steps, 2 across the network:
  // 2 x (10 + 12 x 1 + 2 x 100) = 444. All-gather: 7 steps, 1 across:
  // 2 x (10 + 6 + 100) = 232. Tree pattern: 2 x (10 + 2 x (3 x 1 + 1 x 100))
  // = 432. One node: NCCL's own constants, unscaled: 10 + 6 x 1 = 16.
  // Send/recv: none.
  EXPECT_EQ(us, "444 232 432 16 0");
}

// Over InfiniBand, where NCCL's constants were measured, the fitted scale
// (for the EFA rows it was fitted to) does not apply.
TEST(CollectivesTest, ProtocolLatencyIsNcclsOwnOverInfiniband) {
  InstanceType t = SwitchNode(4, 100);
  t.efa = true;
  t.infiniband = true;
  EXPECT_EQ(ProtocolLatenciesUs(t, {{CollKind::kAllReduce, CollAlgo::kRing, 1e6, Iota(8), "x"}}),
            "222");  // 10 + 12 x 1 + 2 x 100
}

TEST(CollectivesTest, CollectiveTimeGrowsByTheProtocolLatency) {
  InstanceType t = SwitchNode(4, 100);
  t.efa = true;
  const ModelParams p;
  auto run = [&](double scale) {
    ModelParams q = Params();  // link latencies as in the closed forms, NCCL's constants kept
    q.protocol_base_latency_s = p.protocol_base_latency_s;
    q.protocol_intra_step_latency_s = p.protocol_intra_step_latency_s;
    q.protocol_inter_step_latency_s = p.protocol_inter_step_latency_s;
    q.protocol_latency_scale = scale;
    return Simulate(t, 2, q, [&](const Platform&) {
      return std::vector<CollectiveCall>{
          {CollKind::kAllReduce, CollAlgo::kRing, 64e6, Iota(8), "r"}};
    });
  };
  const double expected = 3 * (p.protocol_base_latency_s + 12 * p.protocol_intra_step_latency_s +
                               2 * p.protocol_inter_step_latency_s);
  EXPECT_NEAR(run(3) - run(0), expected, 1e-3 * expected);
}

// NVLink efficiency e: a ring on one node moves its bytes at e x the line rate.
TEST(CollectivesTest, NvlinkEfficiencyScalesTheRingBandwidth) {
  const double S = 256.0 * 1024 * 1024, B = 100e9;
  auto run = [&](double efficiency) {
    InstanceType t = SwitchNode(8, 100);
    t.gpu.nvlink_efficiency = efficiency;
    ModelParams p = Params();
    p.nvlink_latency_s = 0;
    return Simulate(t, 1, p, [&](const Platform&) {
      return std::vector<CollectiveCall>{{CollKind::kAllReduce, CollAlgo::kRing, S, Iota(8), "r"}};
    });
  };
  const double line = 2.0 * 7 / 8 * S / B;
  EXPECT_NEAR(run(1.0), line, 1e-3 * line);
  EXPECT_NEAR(run(0.5), 2 * line, 2e-3 * line);
}

// NVLink SHARP (NVLS): each member's link carries S (n + 1) / n each way in
// one pass, at the NVLS efficiency e_s: an all-reduce of S on 8 GPUs with
// links of B takes 9/8 S / (e_s B) (no protocol latency; the links' own
// latency once, GPU to switch to GPU); the ring at the NVLink efficiency e_l
// takes 2 x 7/8 S / (e_l B). The ring collectives themselves do not change.
TEST(CollectivesTest, NvlinkSharpAllReduceIsOnePassThroughTheSwitch) {
  const double S = 256.0 * 1024 * 1024, B = 100e9, e_l = 0.8, e_s = 0.6;
  InstanceType t = SwitchNode(8, 100);
  t.nvlink_sharp = true;
  t.gpu.nvlink_efficiency = e_l;
  t.gpu.nvls_efficiency = e_s;
  ModelParams p = Params();
  p.nvlink_latency_s = 0;
  auto run = [&](CollKind kind, CollAlgo algo) {
    return Simulate(t, 1, p, [&](const Platform&) {
      return std::vector<CollectiveCall>{{kind, algo, S, Iota(8), "v"}};
    });
  };
  const double nvls = 9.0 / 8 * S / (e_s * B);
  EXPECT_NEAR(run(CollKind::kAllReduce, CollAlgo::kNvls), nvls, 1e-6 * nvls);
  const double ring = 2.0 * 7 / 8 * S / (e_l * B);
  EXPECT_NEAR(run(CollKind::kAllReduce, CollAlgo::kRing), ring, 1e-6 * ring);
  EXPECT_NEAR(run(CollKind::kAllGather, CollAlgo::kRing), ring / 2, 1e-6 * ring);
}

// NVLS is an algorithm of all-reduces inside one node of an NVLink SHARP
// machine: the automatic choice takes it there (it beats the ring), the TP
// choice too where it is faster (S (n + 1) / n at e_nvls against 2 (n - 1) / n S
// at e_nvl: with both at 1, 4 GPUs and more, not 2); a group across nodes,
// another collective, or a node without NVLink SHARP keep the ring.
TEST(CollectivesTest, NvlinkSharpAppliesToAllReducesInsideOneNode) {
  InstanceType t = SwitchNode(8, 100);
  t.nvlink_sharp = true;
  t.efa = true;
  auto out = RunIsolated([&]() {
    ConfigureNetworkModel();
    ModelParams params;
    Platform p = BuildPlatform(ClusterShape{t, 2, 1.0, 32}, params);
    CollAlgo algo = CollAlgo::kRing;
    MeasureFastest(p, params, {{CollKind::kAllReduce, CollAlgo::kRing, 1e9, Iota(8), "f"}}, &algo);
    std::string r = ToString(algo);
    for (const auto& [kind, group] :
         std::vector<std::pair<CollKind, std::vector<int>>>{{CollKind::kAllReduce, Iota(4, 8)},
                                                            {CollKind::kAllReduce, Iota(8, 4)},
                                                            {CollKind::kAllReduce, Iota(2)},
                                                            {CollKind::kAllGather, Iota(8)}}) {
      r += std::string(" ") + ToString(TpAlgo(p, kind, group));
    }
    return r;
  });
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(*out, "nvls nvls ring ring ring");
  t.nvlink_sharp = false;
  auto without = RunIsolated([&]() {
    ConfigureNetworkModel();
    Platform p = BuildPlatform(ClusterShape{t, 1, 1.0, 32}, ModelParams{});
    return std::string(ToString(TpAlgo(p, CollKind::kAllReduce, Iota(8))));
  });
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(*without, "ring");
}

// On an NVLink mesh a ring collective inside the node runs a channel each way
// around every brick-disjoint cycle (NvlinkChannels): on a DGX-1-like mesh of 8
// GPUs with 6 bricks of B each, 6 channels of S/6 each, so an all-reduce takes
// 2 (n-1)/n S / (6 B), six times one ring over single bricks.
TEST(CollectivesTest, MeshAllReduceUsesAllTheBricks) {
  const double S = 256.0 * 1024 * 1024, B = 25e9;
  InstanceType t = SwitchNode(8, 100);
  t.topology = IntraTopology::kNvlinkCubeMesh;
  t.nvlink_GBps_per_gpu_per_dir.reset();
  t.nvlink_GBps_per_link_per_dir = B / 1e9;
  t.gpu.nvlink_efficiency = 1.0;
  // The DGX-1 hybrid cube mesh (double bricks on the quads' diagonals and
  // between them: 6 per GPU).
  t.nvlink_pairs = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1},
                    {1, 5, 2}, {2, 3, 2}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1},
                    {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2}};
  ModelParams p = Params();
  p.nvlink_latency_s = 0;
  const double t_all = Simulate(t, 1, p, [&](const Platform&) {
    return std::vector<CollectiveCall>{{CollKind::kAllReduce, CollAlgo::kRing, S, Iota(8), "r"}};
  });
  const double expected = 2.0 * 7 / 8 * S / (6 * B);
  EXPECT_NEAR(t_all, expected, 1e-3 * expected);
}

// Network efficiency e: a message between nodes crosses the NIC at e x its rate.
TEST(CollectivesTest, NetworkEfficiencyScalesTheNicBandwidth) {
  const double S = 64.0 * 1024 * 1024, nic = 100e9 / 8;
  auto run = [&](std::optional<double> efficiency) {
    InstanceType t = SwitchNode(2, 100);
    t.efa = true;
    t.network_efficiency = efficiency;
    ModelParams p = Params();
    p.nvlink_latency_s = p.pcie_latency_s = p.switch_latency_s = p.efa_latency_s = 0;
    p.network_efficiency = 0.8;  // the assumption when the catalog has none
    return Simulate(t, 2, p, [&](const Platform&) {
      return std::vector<CollectiveCall>{{CollKind::kSendRecv, CollAlgo::kRing, S, {0, 2}, "s"}};
    });
  };
  EXPECT_NEAR(run(0.5), S / (0.5 * nic), 1e-3 * S / nic);
  EXPECT_NEAR(run(std::nullopt), S / (0.8 * nic), 1e-3 * S / nic);
}

}  // namespace
}  // namespace trainsim::sim
namespace trainsim::sim {
namespace {

// The fold (sim/fold.h) on p4d nodes, 8 per leaf, 8 concurrent groups of one
// member per node (TP ranks 0-7): a ring folded onto 16 of 64 nodes takes the
// real ring's time; a tree of up to tree_max_bytes grows by an even step per
// level of depth once its members span leaves, so one folded onto 16 members
// (2 leaves; its half, every other member, spans them too) and extended in
// depth (MeasureDepth) takes the whole tree's time. (Larger trees do not grow
// evenly, 2.0-2.8 ms per level at 64 MB, and are not folded.)
TEST(CollectivesTest, FoldedRingsAndTreesTakeTheWholeGroupsTime) {
  const InstanceType type = *test::BuiltinCatalog().Find("p4d.24xlarge");
  ModelParams p;
  auto out = RunIsolated([&]() {
    ConfigureNetworkModel();
    Platform pl = BuildPlatform(ClusterShape{type, 64, 1.0, 8}, p);
    // Groups of `part` members, folded when `folded`.
    auto measure = [&](CollAlgo algo, double bytes, int part, bool folded) {
      std::vector<CollectiveCall> calls;
      for (int t = 0; t < 8; ++t) {
        std::vector<int> g;
        for (int k = 0; k < part; ++k) g.push_back(k * 8 + t);
        calls.push_back({CollKind::kAllReduce, algo, bytes, g, "t" + std::to_string(t)});
        if (folded) calls.back().members = calls.back().nodes = 64;
      }
      return MeasureConcurrent(pl, p, calls);
    };
    std::string s;
    auto add = [&](double v) { s += std::to_string(v * 1e6) + " "; };
    for (double bytes : {4e6, 16e6}) {
      for (int part : {16, 32, 64}) add(measure(CollAlgo::kTree, bytes, part, false));
      add(measure(CollAlgo::kTree, bytes, 16, true));
    }
    add(measure(CollAlgo::kRing, 64e6, 64, false));
    add(measure(CollAlgo::kRing, 64e6, 16, true));
    return s;
  });
  ASSERT_TRUE(out.ok()) << out.status().message();
  const std::vector<double> us = Numbers(*out);
  ASSERT_EQ(us.size(), 10u);
  for (int b = 0; b < 2; ++b) {
    const double* t = &us[4 * b];  // 16, 32, 64 members; then 16 folded from 64
    EXPECT_NEAR(t[2] - t[1], t[1] - t[0], 0.02 * (t[1] - t[0])) << b;
    EXPECT_NEAR(t[3], t[2], 0.005 * t[2]) << b;
  }
  EXPECT_NEAR(us[9], us[8], 0.005 * us[8]);
}

// Ring ends (collectives.cc RingEnds): rings across 24 p4d nodes that start and
// end inside leaves of 8, 4 concurrent rings of 2 members per node (two channels),
// on a spine oversubscribed 16:1 (the uplinks are the bottleneck), measured on the
// first and last node of each leaf, take the time of every member, for each ring
// collective.
TEST(CollectivesTest, RingsMeasuredAtTheirLeafEndsTakeTheWholeRingsTime) {
  const InstanceType type = *test::BuiltinCatalog().Find("p4d.24xlarge");
  auto out = RunIsolated([&]() {
    ConfigureNetworkModel();
    ModelParams p;
    Platform pl = BuildPlatform(ClusterShape{type, 32, 16.0, 8}, p);
    std::string s;
    for (CollKind kind : {CollKind::kAllReduce, CollKind::kReduceScatter, CollKind::kAllGather}) {
      for (bool ends : {false, true}) {
        p.ring_ends = ends;
        pl.measured->clear();
        std::vector<CollectiveCall> calls;
        for (int t = 0; t < 4; ++t) {
          std::vector<int> g;
          for (int node = 4; node < 28; ++node) {
            g.push_back(node * 8 + t);
            g.push_back(node * 8 + t + 4);
          }
          calls.push_back({kind, CollAlgo::kRing, 256e6, g, "r" + std::to_string(t)});
        }
        s += std::to_string(MeasureConcurrent(pl, p, calls) * 1e6) + " ";
      }
    }
    return s;
  });
  ASSERT_TRUE(out.ok()) << out.status().message();
  const std::vector<double> us = Numbers(*out);
  ASSERT_EQ(us.size(), 6u);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(us[2 * k + 1], us[2 * k], 1e-6 * us[2 * k]) << k;
}

}  // namespace
}  // namespace trainsim::sim
