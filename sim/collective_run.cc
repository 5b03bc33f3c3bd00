#include "sim/collective_run.h"

#include <cstdio>
#include <string>
#include <vector>

#include "sim/isolate.h"
#include "sim/platform.h"

namespace trainsim::sim {

Expected<double> SimulateCollectiveSeconds(const CollectiveRun& run, const ModelParams& params) {
  const int per_node = run.per_node > 0 ? run.per_node : run.type.gpus;
  if (per_node > run.type.gpus) {
    return Status::InvalidInput(std::to_string(per_node) + " GPUs per node, more than " +
                                run.type.name + "'s " + std::to_string(run.type.gpus));
  }
  if (run.nodes < 1 || run.bytes <= 0) {
    return Status::InvalidInput("a collective needs at least one node and bytes > 0");
  }
  Expected<std::string> seconds = RunIsolated([&]() {
    ConfigureNetworkModel();
    Platform p = BuildPlatform(ClusterShape{run.type, run.nodes, 1.0, 32}, params);
    std::vector<int> group;  // the first per_node GPUs of every node (Platform numbering)
    for (int node = 0; node < run.nodes; ++node) {
      for (int g = 0; g < per_node; ++g) group.push_back(node * run.type.gpus + g);
    }
    CollectiveCall call{run.kind, CollAlgo::kRing, run.bytes, group, "coll"};
    CollAlgo algo = CollAlgo::kRing;
    const double s = run.ring_only ? MeasureConcurrent(p, params, {call})
                                   : MeasureFastest(p, params, {call}, &algo);
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", s);
    return std::string(text);
  });
  if (!seconds.ok()) return seconds.status();
  return std::stod(*seconds);
}

double BusFactor(CollKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case CollKind::kAllReduce:
      return 2 * (n - 1) / n;
    case CollKind::kAllGather:
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll:
      return (n - 1) / n;
    case CollKind::kSendRecv:
      return 1;
  }
  return 1;
}

}  // namespace trainsim::sim
