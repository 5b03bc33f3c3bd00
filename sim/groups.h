// The communication groups of a layout, part of the stage model (sim/stage_model.h): every
// group a collective spans, as its members and their distance in GPU ranks. The engine builds
// its groups from ShapeOf, the workload names the group of each data-parallel collective by
// it, and the estimator reads how many members share a node.
#pragma once

#include "core/scenario.h"

namespace trainsim::sim {

// The communication groups of a layout. GPU ranks are laid out (stage, DP slot, TP rank), TP
// fastest: rank = (stage x slots + d) x tp + t with slots = dp x cp (Scenario::replicas).
enum class GroupKind {
  kTp,            // the tp ranks of one slot
  kCp,            // cp consecutive slots
  kEp,            // ep consecutive slots (with expert_tp 1: ep consecutive GPUs)
  kDp,            // every slot of a TP rank (gradient all-reduce, ZeRO without hybrid groups)
  kShard,         // ZeRO's shard group: shard_degree consecutive slots
  kAcrossShards,  // the slots that hold the same shard, one in each shard group
  kExpertData,    // the GPUs that hold the same experts, one in each EP group
};
inline constexpr int kGroupKinds = 7;
static_assert(static_cast<int>(GroupKind::kExpertData) + 1 == kGroupKinds);
// A group's members and the distance between consecutive members in GPU ranks (a multiple of
// tp, the group made of slots on each TP rank, except an EP group with expert_tp 1).
struct GroupShape {
  int members = 1;
  int stride = 1;
  // Members on one node of `gpus_per_node` GPUs (at least 1).
  int PerNode(int gpus_per_node) const;
};
GroupShape ShapeOf(const Scenario& s, GroupKind kind);

}  // namespace trainsim::sim
