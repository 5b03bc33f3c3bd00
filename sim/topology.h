// The inside of one node as a graph (Boost.Graph), built from a catalog entry.
//
// Vertices are GPUs, NVSwitch, PCIe switches, the CPU root complex, NICs and
// the node's gateway to the fabric; edges are links with a one-direction
// bandwidth and a latency. Routes are shortest paths that never pass through
// a third GPU (NVLink does not forward), which is what makes a cube-mesh's
// non-neighbours go over PCIe and the CPU.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <string>
#include <vector>

#include "core/instance_type.h"
#include "sim/model_params.h"

namespace trainsim::sim {

enum class VertexKind { kGpu, kNvSwitch, kPcieSwitch, kCpu, kNic, kGateway };

struct TopoVertex {
  VertexKind kind = VertexKind::kGpu;
  int index = 0;  // GPU local rank, NIC number, ...
  std::string name;
};

struct TopoEdge {
  double bandwidth_Bps = 0;  // bytes per second, each direction
  double latency_s = 0;
  std::string name;
};

using NodeGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, TopoVertex, TopoEdge>;
using Vertex = boost::graph_traits<NodeGraph>::vertex_descriptor;
using Edge = boost::graph_traits<NodeGraph>::edge_descriptor;

struct NodeTopology {
  NodeGraph graph;
  std::vector<Vertex> gpus;  // by local rank
  Vertex cpu = 0;            // host CPU and memory (PCIe root complex)
  Vertex gateway = 0;
};

// One hop of a route: the edge, and whether it is walked from its lower to
// its higher vertex id (the "up" direction of the split-duplex link).
struct Hop {
  Edge edge;
  bool up = true;
};

NodeTopology BuildNodeTopology(const InstanceType& type, const ModelParams& params);

// PCIe switches of a node: one per NIC group (at most one per GPU; one when the
// instance has no NICs). The node's GPUs share them in consecutive groups, and
// each switch reaches host memory through one root link.
int PcieSwitchCount(const InstanceType& t);

// Achievable fractions of the NVLink line rate: of collectives' copies (the
// GPU's catalog figure, else ModelParams::nvlink_efficiency), and of NVLink
// SHARP all-reduces (the GPU's NVLS figure, else the NVLink one).
double NvlinkEfficiency(const InstanceType& t, const ModelParams& p);
double NvlsEfficiency(const InstanceType& t, const ModelParams& p);

// Shortest route (by transfer time of a large message) from `from` to `to`,
// not passing through any GPU other than the endpoints. Empty if from == to.
std::vector<Hop> Route(const NodeTopology& topo, Vertex from, Vertex to);

// Largest number of GPUs of the node connected by NVLink only, as a ring
// (Hamiltonian cycle of the NVLink graph), or empty if there is none.
std::vector<int> NvlinkRing(const NodeTopology& topo);

// The ring channels a collective among `locals` (local GPU indices of one
// node of type `t`, at least two) runs at once, each as the order in which it
// passes the members. On an NVLink mesh (kNvlinkCubeMesh) NCCL spreads its
// channels over all of a GPU's NVLinks: here a channel each way around every
// brick-disjoint Hamiltonian cycle of the members' NVLinks (a pair with k
// bricks carries up to k cycles), found greedily, and for two members one
// channel per brick between them. A mesh with no such cycle, and every other
// topology (NVSwitch: one ring already uses each GPU's whole link), gives one
// channel in `locals` order. docs/model.md section 3.
std::vector<std::vector<int>> NvlinkChannels(const InstanceType& t, const std::vector<int>& locals);

}  // namespace trainsim::sim
