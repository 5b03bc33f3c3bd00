#include "sim/groups.h"

#include <algorithm>

namespace trainsim::sim {

int GroupShape::PerNode(int gpus_per_node) const {
  return std::max(1, std::min(members, gpus_per_node / stride));
}

GroupShape ShapeOf(const Scenario& s, GroupKind kind) {
  const int tp = s.parallel.tp;
  switch (kind) {
    case GroupKind::kTp:
      return {tp, 1};
    case GroupKind::kCp:
      return {s.parallel.cp, tp};
    case GroupKind::kEp:  // expert_tp apart: consecutive slots, or with expert_tp 1 GPUs
      return {s.parallel.ep, s.expert_tp()};
    case GroupKind::kDp:
      return {s.replicas(), tp};
    case GroupKind::kShard:
      return {s.shard_degree(), tp};
    case GroupKind::kAcrossShards:
      return {s.shard_replicas(), s.shard_degree() * tp};
    case GroupKind::kExpertData:
      return {s.expert_replicas(), s.expert_tp() * s.parallel.ep};
  }
  return {};
}

}  // namespace trainsim::sim
