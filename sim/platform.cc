#include "sim/platform.h"

#include <simgrid/s4u.hpp>

#include "sim/topology.h"

namespace sg4 = simgrid::s4u;

namespace trainsim::sim {
namespace {

using Direction = sg4::LinkInRoute::Direction;

// The node's links created in `zone`, one split-duplex link per graph edge.
std::vector<sg4::SplitDuplexLink*> CreateLinks(sg4::NetZone* zone, const NodeTopology& topo,
                                               int node) {
  const NodeGraph& g = topo.graph;
  std::vector<sg4::SplitDuplexLink*> links(boost::num_edges(g), nullptr);
  std::size_t k = 0;
  for (auto [e, end] = boost::edges(g); e != end; ++e, ++k) {
    auto* link = zone->create_split_duplex_link("n" + std::to_string(node) + "-" + g[*e].name,
                                                g[*e].bandwidth_Bps);
    link->set_latency(g[*e].latency_s);
    links[k] = link;
  }
  return links;
}

// Edge descriptors are not indices; number them in iteration order once.
std::map<std::pair<Vertex, Vertex>, std::size_t> EdgeIndex(const NodeGraph& g) {
  std::map<std::pair<Vertex, Vertex>, std::size_t> index;
  std::size_t k = 0;
  for (auto [e, end] = boost::edges(g); e != end; ++e, ++k) {
    Vertex a = boost::source(*e, g), b = boost::target(*e, g);
    index[{std::min(a, b), std::max(a, b)}] = k;
  }
  return index;
}

// Routes of one node, as (edge index, up) lists: GPU i -> GPU j, GPU i ->
// gateway, GPU i -> host CPU, host CPU -> gateway.
struct NodeRoutes {
  std::vector<std::vector<std::vector<std::pair<std::size_t, bool>>>> gpu_to_gpu;
  std::vector<std::vector<std::pair<std::size_t, bool>>> gpu_to_gateway;
  std::vector<std::vector<std::pair<std::size_t, bool>>> gpu_to_cpu;
  std::vector<std::pair<std::size_t, bool>> cpu_to_gateway;
};

NodeRoutes ComputeRoutes(const NodeTopology& topo) {
  const NodeGraph& g = topo.graph;
  auto index = EdgeIndex(g);
  auto convert = [&](const std::vector<Hop>& hops) {
    std::vector<std::pair<std::size_t, bool>> out;
    for (const Hop& h : hops) {
      Vertex a = boost::source(h.edge, g), b = boost::target(h.edge, g);
      out.emplace_back(index.at({std::min(a, b), std::max(a, b)}), h.up);
    }
    return out;
  };
  const std::size_t n = topo.gpus.size();
  NodeRoutes r;
  r.gpu_to_gpu.assign(n, std::vector<std::vector<std::pair<std::size_t, bool>>>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i != j) r.gpu_to_gpu[i][j] = convert(Route(topo, topo.gpus[i], topo.gpus[j]));
    }
    r.gpu_to_gateway.push_back(convert(Route(topo, topo.gpus[i], topo.gateway)));
    r.gpu_to_cpu.push_back(convert(Route(topo, topo.gpus[i], topo.cpu)));
  }
  r.cpu_to_gateway = convert(Route(topo, topo.cpu, topo.gateway));
  return r;
}

std::vector<sg4::LinkInRoute> ToSimgrid(const std::vector<std::pair<std::size_t, bool>>& route,
                                        const std::vector<sg4::SplitDuplexLink*>& links,
                                        bool reverse) {
  std::vector<sg4::LinkInRoute> out;
  for (const auto& [k, up] : route) {
    bool dir_up = reverse ? !up : up;
    out.emplace_back(links[k], dir_up ? Direction::UP : Direction::DOWN);
  }
  if (reverse) std::reverse(out.begin(), out.end());
  return out;
}

double NodeNicBps(const InstanceType& t) { return t.nics * t.nic_gbps / 8.0 * 1e9; }

}  // namespace

void ConfigureNetworkModel() {
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/latency-factor:1");
  sg4::Engine::set_config("network/bandwidth-factor:1");
  sg4::Engine::set_config("network/weight-S:0");
  sg4::Engine::set_config("network/crosstraffic:0");
  // Actors' stacks: 64 KiB instead of 8 MiB. Collectives create thousands of
  // actors, and each 8 MiB stack is a mapping of its own whose guard page
  // splits it: most of a run on p5 with the hierarchical candidate (0.74 s ->
  // 0.45 s). The tests and the accuracy benchmark's 488 points run identically
  // with 8 KiB stacks (and fail at 4 KiB): 64 KiB is 8 times what they use,
  // and the guard page stays, so an overflow stops the simulation's process
  // (an error) rather than corrupting it.
  sg4::Engine::set_config("contexts/stack-size:64");
}

Platform BuildPlatform(const ClusterShape& shape, const ModelParams& params) {
  const InstanceType& type = shape.instance;
  const NodeTopology topo = BuildNodeTopology(type, params);
  const NodeRoutes routes = ComputeRoutes(topo);
  Platform p;
  p.nodes = shape.nodes;
  p.gpus_per_node = type.gpus;
  p.infiniband = type.infiniband;
  p.protocol_latency_scale = type.protocol_latency_scale;
  if (type.nvlink_sharp && type.nvlink_GBps_per_gpu_per_dir) {
    p.nvls_traffic_scale = NvlinkEfficiency(type, params) / NvlsEfficiency(type, params);
  }
  p.nvlink_ring = NvlinkRing(topo);
  if (p.nvlink_ring.empty()) {
    for (int i = 0; i < type.gpus; ++i) p.nvlink_ring.push_back(i);
  }
  if (type.topology == IntraTopology::kNvlinkCubeMesh && type.gpus <= 16) {
    p.mesh_channels.resize(std::size_t{1} << type.gpus);
    for (std::size_t mask = 0; mask < p.mesh_channels.size(); ++mask) {
      std::vector<int> locals;
      for (int i = 0; i < type.gpus; ++i) {
        if (mask >> i & 1) locals.push_back(i);
      }
      if (locals.size() >= 2) p.mesh_channels[mask] = NvlinkChannels(type, locals);
    }
  }

  const int per_leaf = std::max(1, shape.nodes_per_leaf);
  p.nodes_per_leaf = per_leaf;
  const int leaves = (shape.nodes + per_leaf - 1) / per_leaf;
  const double over = std::max(1.0, shape.oversubscription);
  // Pods, where leaves_per_pod leaves fewer than all the leaves in one.
  const long long per_pod = shape.leaves_per_pod;
  if (per_pod > 0 && leaves > per_pod) {
    p.pod_of_leaf = shape.pod_of_leaf;
    if (p.pod_of_leaf.empty()) {
      for (int leaf = 0; leaf < leaves; ++leaf) p.pod_of_leaf.push_back(leaf / per_pod);
    }
    const long long pod_size = per_pod * per_leaf;
    for (long long first = 0; first < shape.nodes; first += pod_size) {
      p.pod_nodes.push_back(static_cast<int>(std::min<long long>(shape.nodes - first, pod_size)));
    }
  }
  auto built = [&](int node) { return shape.built.empty() || shape.built[node]; };
  p.gpus.assign(static_cast<std::size_t>(shape.nodes) * type.gpus, nullptr);
  p.cpus.assign(shape.nodes, nullptr);
  auto* fabric = sg4::create_star_zone("fabric");
  const double nic_Bps = std::max(NodeNicBps(type), 1.0);
  // Every node's links are created in the fabric zone before any other zone
  // exists: SimGrid checks a new link's name against every zone from the
  // root, so links made inside thousands of node zones would cost N^2 (5.6 s
  // at 1024 nodes). Routes may use links of any zone.
  std::vector<std::vector<sg4::SplitDuplexLink*>> node_links;
  std::vector<sg4::SplitDuplexLink*> ports;
  node_links.resize(shape.nodes);
  ports.resize(shape.nodes);
  for (int node = 0; node < shape.nodes; ++node) {
    if (!built(node)) continue;
    node_links[node] = CreateLinks(fabric, topo, node);
    // The node's port on its leaf switch carries all of its NICs.
    ports[node] =
        fabric->create_split_duplex_link("node" + std::to_string(node) + "-port", nic_Bps);
    ports[node]->set_latency(params.switch_latency_s);
  }
  // A switch: a router in a zone of its own inside `parent` (SimGrid resolves
  // routes between sibling zones only, not to a router placed beside them).
  auto create_switch = [](sg4::NetZone* parent, const std::string& name) {
    auto* zone = sg4::create_full_zone(name + "-switchzone");
    zone->set_parent(parent);
    auto* router = zone->create_router(name + "-switch");
    zone->seal();
    parent->add_route(zone->get_netpoint(), nullptr, router, nullptr, {}, true);
    return router;
  };
  auto uplink = [&](const std::string& name, double Bps) {
    auto* link = fabric->create_split_duplex_link(name + "-uplink", Bps);
    link->set_latency(params.switch_latency_s);
    return std::vector<sg4::LinkInRoute>{{link, Direction::UP}};
  };
  // Builds the leaf's built nodes in a zone under `parent` and routes it
  // through its uplink: the leaf's nodes' bandwidth over the oversubscription.
  auto build_leaf = [&](int leaf, sg4::NetZone* parent) {
    const int first = leaf * per_leaf;
    const int last = std::min(shape.nodes, first + per_leaf);
    const std::string name = "leaf" + std::to_string(leaf);
    auto* leaf_zone = sg4::create_star_zone(name);
    leaf_zone->set_parent(parent);
    auto* leaf_router = create_switch(leaf_zone, name);
    for (int node = first; node < last; ++node) {
      if (!built(node)) continue;
      auto* zone = sg4::create_full_zone("node" + std::to_string(node));
      zone->set_parent(leaf_zone);
      std::vector<sg4::Host*> hosts;
      for (int i = 0; i < type.gpus; ++i) {
        hosts.push_back(zone->create_host("gpu" + std::to_string(node * type.gpus + i), 1e12));
      }
      auto* cpu = zone->create_host("cpu" + std::to_string(node), 1e12);
      auto* gw = zone->create_router("node" + std::to_string(node) + "-gw");
      const std::vector<sg4::SplitDuplexLink*>& links = node_links[node];
      auto add_both_ways = [&](simgrid::kernel::routing::NetPoint* a,
                               simgrid::kernel::routing::NetPoint* b,
                               const std::vector<std::pair<std::size_t, bool>>& route) {
        if (route.empty()) return;
        zone->add_route(a, b, nullptr, nullptr, ToSimgrid(route, links, false), false);
        zone->add_route(b, a, nullptr, nullptr, ToSimgrid(route, links, true), false);
      };
      add_both_ways(cpu->get_netpoint(), gw, routes.cpu_to_gateway);
      for (int i = 0; i < type.gpus; ++i) {
        for (int j = 0; j < type.gpus; ++j) {
          if (i == j) continue;
          zone->add_route(hosts[i]->get_netpoint(), hosts[j]->get_netpoint(), nullptr, nullptr,
                          ToSimgrid(routes.gpu_to_gpu[i][j], links, false), false);
        }
        add_both_ways(hosts[i]->get_netpoint(), gw, routes.gpu_to_gateway[i]);
        add_both_ways(hosts[i]->get_netpoint(), cpu->get_netpoint(), routes.gpu_to_cpu[i]);
      }
      zone->seal();
      std::copy(hosts.begin(), hosts.end(), p.gpus.begin() + node * type.gpus);
      p.cpus[node] = cpu;
      leaf_zone->add_route(zone->get_netpoint(), nullptr, gw, nullptr,
                           {{ports[node], Direction::UP}}, true);
    }
    leaf_zone->seal();
    parent->add_route(leaf_zone->get_netpoint(), nullptr, leaf_router, nullptr,
                      uplink(name, (last - first) * nic_Bps / over), true);
  };
  auto any_built = [&](int leaf) {
    bool any = false;
    for (int node = leaf * per_leaf; node < std::min(shape.nodes, (leaf + 1) * per_leaf); ++node) {
      any = any || built(node);
    }
    return any;
  };
  if (p.pod_of_leaf.empty()) {
    for (int leaf = 0; leaf < leaves; ++leaf) {
      if (any_built(leaf)) build_leaf(leaf, fabric);
    }
  } else {
    std::map<int, std::vector<int>> leaves_of_pod;
    for (int leaf = 0; leaf < leaves; ++leaf) {
      if (any_built(leaf)) leaves_of_pod[p.pod_of_leaf[leaf]].push_back(leaf);
    }
    // A pod's uplink to the core: its leaves' uplinks over the pod's
    // oversubscription, counting the leaves of the real pod (a folded
    // platform builds some of them).
    for (const auto& [pod, pod_leaves] : leaves_of_pod) {
      const std::string name = "pod" + std::to_string(pod);
      auto* pod_zone = sg4::create_star_zone(name);
      pod_zone->set_parent(fabric);
      auto* pod_router = create_switch(pod_zone, name);
      for (int leaf : pod_leaves) build_leaf(leaf, pod_zone);
      pod_zone->seal();
      fabric->add_route(
          pod_zone->get_netpoint(), nullptr, pod_router, nullptr,
          uplink(name, p.pod_nodes[pod] * nic_Bps / over / shape.pod_oversubscription), true);
    }
  }
  fabric->seal();
  return p;
}

}  // namespace trainsim::sim
