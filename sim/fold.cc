#include "sim/fold.h"

#include <algorithm>

namespace trainsim::sim {

namespace {

// Why the DP all-reduces of `program` cannot be folded ("" if they can).
// Without a program: whether the layout's all-reduces (ZeRO-0, hybrid
// sharding, Horovod) may run as hierarchical all-reduces; their sizes are not
// known yet.
std::string TreesBlock(const Scenario& s, const StepProgram* program, const ModelParams& params) {
  double largest = 0;
  if (program) {
    for (const StageProgram& stage : program->stages) {
      for (const AsyncItem& item : stage.async[kDpStream]) {
        if (item.kind == CollKind::kAllReduce) largest = std::max(largest, item.bytes);
      }
    }
  } else if (s.parallel.zero_stage == 0 || s.shard_replicas() > 1 ||
             s.parallel.dp_fusion == DpFusion::kHorovod) {
    largest = -1;  // some, of sizes not known
  }
  if (largest == 0) return "";
  // Horovod fuses items up to its threshold.
  if (s.parallel.dp_fusion == DpFusion::kHorovod) {
    largest = std::max(largest, s.parallel.bucket_bytes);
  }
  // The all-reduce group: every DP rank, or with hybrid sharding one per shard group.
  const long long stride =
      static_cast<long long>(s.parallel.tp) * (s.shard_replicas() > 1 ? s.shard_degree() : 1);
  const bool several_per_node = stride < s.instance.gpus;
  switch (s.parallel.dp_algorithm) {
    case DpAlgorithm::kHierarchical:
      return "the hierarchical all-reduce's tree across nodes is not extended by the fold";
    case DpAlgorithm::kAuto:
      if (several_per_node) {
        return "the data-parallel all-reduce may run as the hierarchical algorithm, whose tree "
               "across nodes is not extended by the fold";
      }
      return "";
    case DpAlgorithm::kTree:
      if (program && largest > params.tree_max_bytes) {
        return "tree all-reduces larger than " +
               std::to_string(static_cast<long long>(params.tree_max_bytes / (1 << 20))) +
               " MiB are not extended in depth by the fold";
      }
      return "";
    default:
      return "";
  }
}

}  // namespace

Fold PlanFold(const Scenario& s, SimMode mode, const ModelParams& params,
              const StepProgram* program) {
  Fold f;
  if (mode != SimMode::kReduced || !params.fold) return f;
  if (s.parallel.dp_algorithm == DpAlgorithm::kParameterServer) {
    f.why_not = "parameter servers are simulated GPU by GPU";
    return f;
  }
  const long long gpn = s.instance.gpus, tp = s.parallel.tp, dp = s.parallel.dp;
  const long long per_leaf = s.cluster.nodes_per_leaf;
  if (tp * dp % gpn != 0) {
    f.why_not = "a pipeline stage ends inside a node";
    return f;
  }
  const long long stage_nodes = tp * dp / gpn;
  if (stage_nodes % per_leaf != 0) {
    f.why_not = "a pipeline stage (" + std::to_string(stage_nodes) +
                " nodes) does not fill whole leaves of cluster.nodes_per_leaf " +
                std::to_string(per_leaf);
    return f;
  }
  if (per_leaf * gpn % tp != 0) {
    f.why_not = "a tensor-parallel group crosses a leaf boundary";
    return f;
  }
  const long long replicas_per_leaf = per_leaf * gpn / tp;
  if (s.shard_degree() < dp && replicas_per_leaf % s.shard_degree() != 0) {
    f.why_not = "a shard group (parallel.shard_group) crosses a leaf boundary";
    return f;
  }
  if (kFoldLeaves * per_leaf < kFoldMinNodes) {
    f.why_not = "leaves of " + std::to_string(per_leaf) + " nodes are too small to fold";
    return f;
  }
  if (stage_nodes / per_leaf < 2 * kFoldLeaves) {
    f.why_not = "a pipeline stage spans fewer than " + std::to_string(2 * kFoldLeaves) + " leaves";
    return f;
  }
  f.why_not = TreesBlock(s, program, params);
  if (!f.why_not.empty()) return f;
  f.replicas = static_cast<int>(kFoldLeaves * replicas_per_leaf);
  return f;
}

std::vector<bool> FoldedNodes(const Scenario& s, const Fold& fold) {
  if (!fold.active()) return {};
  const int stage_nodes = s.parallel.tp * s.parallel.dp / s.instance.gpus;
  const int kept = kFoldLeaves * s.cluster.nodes_per_leaf;
  std::vector<bool> built(s.cluster.nodes, false);
  for (int node = 0; node < s.cluster.nodes; ++node) built[node] = node % stage_nodes < kept;
  return built;
}

int BuiltNodes(const Scenario& s, const Fold& fold) {
  if (!fold.active()) return s.cluster.nodes;
  return s.parallel.pp * kFoldLeaves * s.cluster.nodes_per_leaf;
}

}  // namespace trainsim::sim
