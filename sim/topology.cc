#include "sim/topology.h"

#include <algorithm>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/function_property_map.hpp>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>

namespace trainsim::sim {
namespace {

constexpr double kGB = 1e9;

Vertex AddVertex(NodeGraph& g, VertexKind kind, int index, std::string name) {
  return boost::add_vertex(TopoVertex{kind, index, std::move(name)}, g);
}

void AddLink(NodeGraph& g, Vertex a, Vertex b, double GBps, double latency_s, std::string name) {
  boost::add_edge(a, b, TopoEdge{GBps * kGB, latency_s, std::move(name)}, g);
}

// Achievable fraction of the NIC line rate: the catalog's figure when it has
// one, else the parameters' assumption.
double NetworkEfficiency(const InstanceType& t, const ModelParams& p) {
  if (t.network_efficiency) return *t.network_efficiency;
  return p.network_efficiency;
}

void AddNvlinks(NodeTopology& topo, const InstanceType& t, const ModelParams& p) {
  NodeGraph& g = topo.graph;
  const double eff = NvlinkEfficiency(t, p);
  if (t.topology == IntraTopology::kNvswitch && t.nvlink_GBps_per_gpu_per_dir) {
    Vertex sw = AddVertex(g, VertexKind::kNvSwitch, 0, "nvswitch");
    for (int i = 0; i < t.gpus; ++i) {
      AddLink(g, topo.gpus[i], sw, eff * *t.nvlink_GBps_per_gpu_per_dir, p.nvlink_latency_s,
              "nvlink" + std::to_string(i));
    }
  }
  if (t.topology == IntraTopology::kNvlinkCubeMesh && t.nvlink_GBps_per_link_per_dir) {
    for (const NvlinkPair& pair : t.nvlink_pairs) {
      if (pair.a >= t.gpus || pair.b >= t.gpus) continue;
      AddLink(g, topo.gpus[pair.a], topo.gpus[pair.b],
              eff * pair.links * *t.nvlink_GBps_per_link_per_dir, p.nvlink_latency_s,
              "nvlink" + std::to_string(pair.a) + "-" + std::to_string(pair.b));
    }
  }
}

// The latency figures are NIC to NIC; each node's NIC link carries half.
double NicLatency(const InstanceType& t, const ModelParams& p) {
  if (!t.efa) return p.ena_latency_s / 2;
  return (t.is_aws ? p.efa_latency_s : p.infiniband_latency_s) / 2;
}

}  // namespace

double NvlinkEfficiency(const InstanceType& t, const ModelParams& p) {
  if (t.gpu.nvlink_efficiency) return *t.gpu.nvlink_efficiency;
  return p.nvlink_efficiency;
}

double NvlsEfficiency(const InstanceType& t, const ModelParams& p) {
  if (t.gpu.nvls_efficiency) return *t.gpu.nvls_efficiency;
  return NvlinkEfficiency(t, p);
}

// NICs hang off PCIe switches; GPUs share a switch (and so a NIC group) in
// consecutive pairs, quads, ... as on p4d (2 GPUs per NIC) or p3dn (8 per NIC).
int PcieSwitchCount(const InstanceType& t) {
  if (t.nics <= 0) return 1;
  return std::max(1, std::min(t.gpus, t.nics));
}

NodeTopology BuildNodeTopology(const InstanceType& t, const ModelParams& p) {
  NodeTopology topo;
  NodeGraph& g = topo.graph;
  for (int i = 0; i < t.gpus; ++i) {
    topo.gpus.push_back(AddVertex(g, VertexKind::kGpu, i, "gpu" + std::to_string(i)));
  }
  Vertex cpu = AddVertex(g, VertexKind::kCpu, 0, "cpu");
  topo.cpu = cpu;
  topo.gateway = AddVertex(g, VertexKind::kGateway, 0, "gateway");
  const int switches = PcieSwitchCount(t);
  const int gpus_per_switch = std::max(1, t.gpus / switches);
  const double pcie = t.pcie_GBps_per_dir > 0 ? t.pcie_GBps_per_dir : p.unknown_pcie_GBps_per_dir;
  // A NIC group: the NICs behind one PCIe switch, as one aggregated link.
  const int nics_per_switch = std::max(1, t.nics / switches);
  for (int s = 0; s < switches; ++s) {
    Vertex sw = AddVertex(g, VertexKind::kPcieSwitch, s, "pcie" + std::to_string(s));
    AddLink(g, sw, cpu, pcie, p.pcie_latency_s, "pcie-root" + std::to_string(s));
    for (int i = s * gpus_per_switch; i < std::min(t.gpus, (s + 1) * gpus_per_switch); ++i) {
      AddLink(g, topo.gpus[i], sw, pcie, p.pcie_latency_s, "pcie-gpu" + std::to_string(i));
    }
    if (t.nics > 0) {
      Vertex nic = AddVertex(g, VertexKind::kNic, s, "nic" + std::to_string(s));
      AddLink(g, sw, nic, pcie, p.pcie_latency_s, "pcie-nic" + std::to_string(s));
      double GBps = NetworkEfficiency(t, p) * nics_per_switch * t.nic_gbps / 8.0;
      AddLink(g, nic, topo.gateway, GBps, NicLatency(t, p), "nic" + std::to_string(s));
    }
  }
  AddNvlinks(topo, t, p);
  return topo;
}

std::vector<Hop> Route(const NodeTopology& topo, Vertex from, Vertex to) {
  if (from == to) return {};
  const NodeGraph& g = topo.graph;
  // No transit through a third GPU.
  std::function<bool(Vertex)> allowed = [&](Vertex v) {
    return g[v].kind != VertexKind::kGpu || v == from || v == to;
  };
  std::function<bool(Edge)> all_edges = [](Edge) { return true; };
  boost::filtered_graph<NodeGraph, std::function<bool(Edge)>, std::function<bool(Vertex)>> fg(
      g, all_edges, allowed);
  // Cost of a hop: time to move 1 MB over it, so wide links win and latency breaks ties.
  auto weight = [&](Edge e) { return 1e6 / g[e].bandwidth_Bps + g[e].latency_s; };
  std::vector<Vertex> pred(boost::num_vertices(g));
  std::vector<double> dist(boost::num_vertices(g));
  boost::dijkstra_shortest_paths(
      fg, from,
      boost::predecessor_map(pred.data())
          .distance_map(dist.data())
          .weight_map(boost::make_function_property_map<Edge, double>(weight)));
  std::vector<Hop> hops;
  if (pred[to] == to) return hops;  // unreachable
  for (Vertex v = to; v != from; v = pred[v]) {
    Vertex u = pred[v];
    Edge e = boost::edge(u, v, g).first;
    hops.push_back(Hop{e, u < v});
  }
  std::reverse(hops.begin(), hops.end());
  return hops;
}

std::vector<int> NvlinkRing(const NodeTopology& topo) {
  const NodeGraph& g = topo.graph;
  const int n = static_cast<int>(topo.gpus.size());
  std::vector<std::vector<bool>> adj(n, std::vector<bool>(n, false));
  bool has_switch = false;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    Vertex a = boost::source(*e, g), b = boost::target(*e, g);
    if (g[a].kind == VertexKind::kGpu && g[b].kind == VertexKind::kGpu) {
      adj[g[a].index][g[b].index] = adj[g[b].index][g[a].index] = true;
    }
    has_switch =
        has_switch || g[a].kind == VertexKind::kNvSwitch || g[b].kind == VertexKind::kNvSwitch;
  }
  std::vector<int> ring;
  if (has_switch || n == 1) {
    for (int i = 0; i < n; ++i) ring.push_back(i);
    return ring;
  }
  // Hamiltonian cycle by backtracking: at most 8 GPUs per node.
  std::vector<bool> used(n, false);
  ring.push_back(0);
  used[0] = true;
  std::function<bool()> extend = [&]() -> bool {
    if (static_cast<int>(ring.size()) == n) return adj[ring.back()][0];
    for (int next = 0; next < n; ++next) {
      if (used[next] || !adj[ring.back()][next]) continue;
      used[next] = true;
      ring.push_back(next);
      if (extend()) return true;
      ring.pop_back();
      used[next] = false;
    }
    return false;
  };
  if (n > 1 && extend()) return ring;
  return {};
}

namespace {

// The most brick-disjoint Hamiltonian cycles of a multigraph (`bricks`: the
// bricks between positions), each once per direction of travel.
std::vector<std::vector<int>> MostDisjointCycles(std::vector<std::vector<int>> bricks) {
  const int n = static_cast<int>(bricks.size());
  // Every Hamiltonian cycle from position 0, one direction of each.
  std::vector<std::vector<int>> cycles;
  std::vector<int> path{0};
  std::vector<bool> used(n, false);
  used[0] = true;
  std::function<void()> extend = [&]() {
    if (static_cast<int>(path.size()) == n) {
      if (bricks[path.back()][0] > 0 && path[1] < path.back()) cycles.push_back(path);
      return;
    }
    for (int next = 0; next < n; ++next) {
      if (used[next] || bricks[path.back()][next] == 0) continue;
      used[next] = true;
      path.push_back(next);
      extend();
      path.pop_back();
      used[next] = false;
    }
  };
  extend();
  // The largest selection (a cycle may be taken again where bricks allow) that
  // fits the bricks; no GPU takes part in more than degree / 2 cycles.
  int bound = std::numeric_limits<int>::max();
  for (const auto& row : bricks) {
    bound = std::min(bound, std::accumulate(row.begin(), row.end(), 0) / 2);
  }
  auto use = [&](const std::vector<int>& c, int d) {
    bool fits = true;
    for (int k = 0; k < n; ++k) {
      int& b = bricks[c[k]][c[(k + 1) % n]];
      b -= d;
      bricks[c[(k + 1) % n]][c[k]] -= d;
      fits = fits && b >= 0;
    }
    return fits;
  };
  std::vector<int> chosen, best;
  std::function<void(std::size_t)> pick = [&](std::size_t from) {
    if (chosen.size() > best.size()) best = chosen;
    if (static_cast<int>(best.size()) >= bound) return;
    for (std::size_t i = from; i < cycles.size(); ++i) {
      if (use(cycles[i], 1)) {
        chosen.push_back(static_cast<int>(i));
        pick(i);
        chosen.pop_back();
      }
      use(cycles[i], -1);
      if (static_cast<int>(best.size()) >= bound) return;
    }
  };
  pick(0);
  std::vector<std::vector<int>> out;
  for (int i : best) out.push_back(cycles[i]);
  return out;
}

}  // namespace

std::vector<std::vector<int>> NvlinkChannels(const InstanceType& t,
                                             const std::vector<int>& locals) {
  const std::vector<std::vector<int>> one_ring{locals};
  const int n = static_cast<int>(locals.size());
  if (t.topology != IntraTopology::kNvlinkCubeMesh || n < 2) return one_ring;
  // Bricks between members, by position in `locals`.
  std::vector<std::vector<int>> bricks(n, std::vector<int>(n, 0));
  for (const NvlinkPair& pair : t.nvlink_pairs) {
    const auto a = std::find(locals.begin(), locals.end(), pair.a);
    const auto b = std::find(locals.begin(), locals.end(), pair.b);
    if (a == locals.end() || b == locals.end() || a == b) continue;
    const int i = static_cast<int>(a - locals.begin()), j = static_cast<int>(b - locals.begin());
    bricks[i][j] += pair.links;
    bricks[j][i] += pair.links;
  }
  std::vector<std::vector<int>> channels;
  if (n == 2) {
    for (int k = 0; k < bricks[0][1]; ++k) channels.push_back(locals);
    return channels.empty() ? one_ring : channels;
  }
  // Searched once per mesh and member set: the planner asks for the same few.
  static std::mutex mutex;
  static std::map<std::vector<std::vector<int>>, std::vector<std::vector<int>>> memo;
  std::vector<std::vector<int>> cycles;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = memo.find(bricks);
    if (it == memo.end()) it = memo.emplace(bricks, MostDisjointCycles(bricks)).first;
    cycles = it->second;
  }
  for (const std::vector<int>& cycle : cycles) {
    std::vector<int> forward;
    for (int k : cycle) forward.push_back(locals[k]);
    channels.push_back(forward);
    std::reverse(forward.begin(), forward.end());
    channels.push_back(std::move(forward));
  }
  return channels.empty() ? one_ring : channels;
}

}  // namespace trainsim::sim
