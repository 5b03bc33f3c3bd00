// Turns a cluster (instance type x nodes, fabric settings) into a SimGrid
// platform: one host per GPU, one zone per node whose links and routes come
// from the node's Boost.Graph topology, nodes under leaf switches, leaves
// under a spine with the set oversubscription, and optionally leaves grouped
// in pods whose spines hang under a core tier (a three-tier fat tree).
//
// Must be called once, inside the process that runs the SimGrid engine,
// after ConfigureNetworkModel() and before any actor starts.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/instance_type.h"
#include "sim/model_params.h"

namespace simgrid::s4u {
class Host;
}

namespace trainsim::sim {

struct ClusterShape {
  InstanceType instance;
  int nodes = 1;
  double oversubscription = 1.0;
  int nodes_per_leaf = 32;
  // Leaves under one pod's spines; 0 = one spine tier for all leaves. Pods are
  // built only where there are several.
  int leaves_per_pod = 0;
  double pod_oversubscription = 1.0;  // pod uplink : its leaves' uplinks
  // The pod of each leaf (empty: leaf / leaves_per_pod). A folded simulation
  // may place a kept leaf in the pod of a leaf it stands for (sim/fold.h).
  std::vector<int> pod_of_leaf = {};
  // The nodes to build, by node (empty: all). A folded simulation (sim/fold.h)
  // builds a few leaves of each pipeline stage; the others' GPUs are null.
  // Leaf uplinks keep the capacity of the whole leaf.
  std::vector<bool> built = {};
};

// Endpoints of messages are numbered: GPUs by global rank, then the nodes'
// hosts (CPU and host memory, behind the PCIe root): host of node n is
// endpoint gpus.size() + n.
struct Platform {
  int nodes = 0;
  int gpus_per_node = 0;
  // By global rank (node * gpus_per_node + local) and by node; null where a
  // node is not built (ClusterShape::built).
  std::vector<simgrid::s4u::Host*> gpus;
  std::vector<simgrid::s4u::Host*> cpus;
  std::vector<int> nvlink_ring;  // local ranks in NVLink ring order
  // NVLink meshes: the ring channels (NvlinkChannels, local ranks) of every
  // set of the node's GPUs, indexed by its bit mask; empty on other nodes.
  std::vector<std::vector<std::vector<int>>> mesh_channels;
  bool infiniband = false;                       // nodes talk over InfiniBand (not EFA or TCP)
  std::optional<double> protocol_latency_scale;  // InstanceType's refitted one
  // NVLink SHARP nodes (InstanceType::nvlink_sharp), where an all-reduce
  // inside one node runs as NVLS (CollAlgo::kNvls): its traffic is scaled by
  // NVLink efficiency / NVLS efficiency, so that links built at the NVLink
  // efficiency carry it at the NVLS one. 0 on other nodes (no NVLS).
  double nvls_traffic_scale = 0;
  int nodes_per_leaf = 1;
  // By leaf, the pod (ClusterShape::pod_of_leaf, resolved), and by pod its
  // nodes in the real cluster; empty with one pod.
  std::vector<int> pod_of_leaf;
  std::vector<int> pod_nodes;
  // Times MeasureConcurrent measured, by the calls' shape up to where on the
  // cluster they run (collectives.cc): the same shape is not simulated twice.
  // A platform is measured under one ModelParams (one simulation's).
  std::shared_ptr<std::map<std::vector<double>, double>> measured =
      std::make_shared<std::map<std::vector<double>, double>>();
  int leaf_of(int node) const { return node / nodes_per_leaf; }
  int pod_of(int node) const { return pod_of_leaf.empty() ? 0 : pod_of_leaf[leaf_of(node)]; }
  int node_of(int rank) const { return rank / gpus_per_node; }
  int local_of(int rank) const { return rank % gpus_per_node; }
  int cpu_endpoint(int node) const { return static_cast<int>(gpus.size()) + node; }
  simgrid::s4u::Host* host(int endpoint) const {
    const int n = static_cast<int>(gpus.size());
    return endpoint < n ? gpus[endpoint] : cpus[endpoint - n];
  }
};

// Sets SimGrid's network model explicitly: CM02 max-min sharing with latency
// and bandwidth factors of 1, no TCP window (weight-S 0) and no cross-traffic,
// so that a message of S bytes over a free route of latency L and bottleneck
// bandwidth B takes exactly L + S/B. (SimGrid's default LV08 multiplies
// latencies by ~13 and shapes flows like TCP: DESIGN.md section 3.)
void ConfigureNetworkModel();

Platform BuildPlatform(const ClusterShape& shape, const ModelParams& params);

}  // namespace trainsim::sim
