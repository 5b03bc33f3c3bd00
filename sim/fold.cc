#include "sim/fold.h"

#include <algorithm>
#include <string>

#include "core/strategy.h"

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

// Whether the pod tier keeps the cluster repeating leaf by leaf ("" if it
// does), for stages of `stage_leaves` leaves. A non-blocking pod tier only
// adds switch hops, and the fold reproduces them where a stage's DP ring or
// its pipeline sends cross pods (FoldedShape); an oversubscribed one carries
// traffic that grows with the leaves of a pod, which the fold does not build.
std::string PodsBlock(const Scenario& s, long long stage_leaves) {
  const long long per_pod = s.cluster.leaves_per_pod;
  const long long leaves =
      (s.cluster.nodes + s.cluster.nodes_per_leaf - 1LL) / s.cluster.nodes_per_leaf;
  if (per_pod == 0 || leaves <= per_pod) return "";  // one pod
  if (s.cluster.pod_oversubscription > 1) {
    return "an oversubscribed pod tier (cluster.pod_oversubscription > 1) is simulated whole";
  }
  if (stage_leaves % per_pod != 0 && per_pod % stage_leaves != 0) {
    return "pipeline stages (" + std::to_string(stage_leaves) +
           " leaves) and pods (cluster.leaves_per_pod " + std::to_string(per_pod) +
           ") do not align";
  }
  return "";
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
  // DP slots (context parallelism's ranks are slots too: Scenario::replicas).
  const long long gpn = s.instance.gpus, tp = s.parallel.tp, dp = s.replicas();
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
  for (const Strategy* st : kStrategies) {  // each splits slots into groups of its degree
    const int degree = s.parallel.*st->degree;
    if (degree > 1 && st->splits_slots && replicas_per_leaf % degree != 0) {
      f.why_not = "a " + std::string(st->title) + " group (parallel." + std::string(st->name) +
                  ") crosses a leaf boundary";
      return f;
    }
  }
  if (s.parallel.ep > 1 && per_leaf * gpn % (s.parallel.ep * s.expert_tp()) != 0) {
    f.why_not = "an expert-parallel group (parallel.ep) crosses a leaf boundary";
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
  const long long stage_leaves = stage_nodes / per_leaf;
  f.why_not = PodsBlock(s, stage_leaves);
  if (f.why_not.empty()) f.why_not = TreesBlock(s, program, params);
  if (!f.why_not.empty()) return f;
  f.replicas = static_cast<int>(kFoldLeaves * replicas_per_leaf);
  return f;
}

ClusterShape FoldedShape(const Scenario& s, const Fold& fold) {
  const ClusterConfig& c = s.cluster;
  ClusterShape shape{s.instance, c.nodes, c.oversubscription, c.nodes_per_leaf};
  shape.leaves_per_pod = c.leaves_per_pod;
  shape.pod_oversubscription = c.pod_oversubscription;
  if (!fold.active()) return shape;
  const int stage_nodes = s.parallel.tp * s.replicas() / s.instance.gpus;
  const int kept = kFoldLeaves * c.nodes_per_leaf;
  shape.built.assign(c.nodes, false);
  for (int node = 0; node < c.nodes; ++node) shape.built[node] = node % stage_nodes < kept;
  // A stage over several pods: its kept leaves stand for the first leaf of
  // each of its first kFoldLeaves pods, so that the folded DP ring crosses
  // pods as the real one does (PodsBlock).
  const int stage_leaves = stage_nodes / c.nodes_per_leaf;
  const int leaves = c.nodes / c.nodes_per_leaf;
  if (c.leaves_per_pod > 0 && leaves > c.leaves_per_pod && stage_leaves > c.leaves_per_pod) {
    for (int leaf = 0; leaf < leaves; ++leaf) {
      const int first = leaf - leaf % stage_leaves, k = leaf % stage_leaves;
      shape.pod_of_leaf.push_back((first + (k < kFoldLeaves ? k * c.leaves_per_pod : k)) /
                                  c.leaves_per_pod);
    }
  }
  return shape;
}

int BuiltNodes(const Scenario& s, const Fold& fold) {
  if (!fold.active()) return s.cluster.nodes;
  return s.parallel.pp * kFoldLeaves * s.cluster.nodes_per_leaf;
}

}  // namespace trainsim::sim
