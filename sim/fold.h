// The fold (docs/model.md section 4, "The fold"): a reduced simulation of a
// large cluster builds and measures only the first kFoldLeaves leaves of every
// pipeline stage, where the cluster repeats itself leaf by leaf.
//
// Where every stage fills whole leaves with whole DP replicas, each leaf of a
// stage carries the same traffic: its nodes run the same TP collectives, send
// to the next stage's leaf of the same place, and are crossed by the same
// number of DP ring hops, whatever the leaf count. So the DP collectives are
// measured on the replicas of the first leaves with the real group's chunk,
// step count and protocol latency (CollectiveCall::members/nodes), trees are
// extended in depth, and everything else is measured on those replicas alone.
// Where the cluster does not repeat so (a stage ending inside a leaf, a
// replica across a leaf boundary, hybrid shard groups across leaves, fewer
// than 2 x kFoldLeaves leaves per stage, leaves too small to keep
// kFoldMinNodes nodes, trees whose depth cannot be extended, an oversubscribed
// pod tier, stages not aligned with pods), the whole cluster is built.
#pragma once

#include <string>
#include <vector>

#include "core/scenario.h"
#include "sim/engine.h"
#include "sim/model_params.h"
#include "sim/platform.h"
#include "sim/workload.h"

namespace trainsim::sim {

inline constexpr int kFoldLeaves = 2;
// The fewest nodes of a stage the fold keeps: a tree's time grows by an even
// step per level of depth once its members span leaves, and the tree measured
// on the part and on every other member of it is within 0.2% of the whole
// from 16 nodes on (8 per leaf), 0.7% at 8 (tests/sim/collectives_test.cc).
inline constexpr int kFoldMinNodes = 16;

struct Fold {
  // DP replicas of each stage measured: those of its first kFoldLeaves
  // leaves. 0 = all (not folded).
  int replicas = 0;
  std::string why_not;  // why not folded ("" when folded, or not asked for)
  bool active() const { return replicas > 0; }
};

// With `program`, also the DP all-reduces that may run as trees: a tree's
// time grows by an even step per level only up to params.tree_max_bytes, and
// the hierarchical algorithm's does not (tests/sim/collectives_test.cc), so
// those are not folded. Without it, the answer for the layout alone (sizes
// unknown: trees of any size are taken to fold).
Fold PlanFold(const Scenario& s, SimMode mode, const ModelParams& params,
              const StepProgram* program = nullptr);

// The cluster to build for `fold`: every node, or the first kFoldLeaves leaves
// of each stage, in the pods of the leaves they stand for.
ClusterShape FoldedShape(const Scenario& s, const Fold& fold);

// The nodes a simulation of `s` builds.
int BuiltNodes(const Scenario& s, const Fold& fold);

}  // namespace trainsim::sim
