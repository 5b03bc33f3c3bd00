// The one stage model: what a pipeline stage of a layout holds and does, described once and
// read by the simulator (sim/workload.cc turns it into operations and messages), the
// planner's estimator (planner/search/estimator.cc applies closed forms to it) and the memory model
// (sim/memory_model.cc). A mechanism is added here, not in each of them (DESIGN.md section 8,
// "one cost model").
//
// Three parts:
//  - PieceCosts: the seconds and bytes of one microbatch through each kind of piece of the
//    model on one GPU (a dense layer, an MoE layer, the embedding, the output layer and loss,
//    a pipeline message). They depend on the instance, precision, tp, micro batch, cp and ep,
//    not on the pipeline or data-parallel layout: the planner makes them once per
//    (instance, tp, micro batch) and reuses them for every pp, dp and ZeRO stage.
//  - StageShare: which layers stage `stage` holds (the one layer-to-stage split, core's
//    SplitLayers), how many of them are MoE layers and how many full recompute re-runs, and
//    the parameters one of its GPUs keeps and steps.
//  - GroupShape (sim/groups.h): every communication group of the layout (TP, CP, EP, the DP
//    group, the hybrid shard group and the groups across it, the expert-data-parallel group)
//    as its members and their distance in GPU ranks, from which a closed form reads how many
//    members share a node.
//  - LayerPass: a transformer layer's pass on the compute stream, forward or backward: its
//    compute and its TP, CP and EP collectives in order, each collective with the compute
//    it is pipelined with (its window).
// And the one overlap rule both models use: what a collective in flight beside compute
// costs that compute (StretchedComputeSeconds).
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <algorithm>
#include <array>
#include <vector>

#include "core/scenario.h"
#include "sim/groups.h"
#include "sim/workload.h"

namespace trainsim::sim {

// Seconds and bytes of one microbatch through each kind of piece, on one GPU.
struct PieceCosts {
  LayerCost layer;                            // a dense transformer layer
  LayerCost moe_layer;                        // an MoE layer (ModelSpec::experts), else all 0
  int ep = 1;                                 // the expert parallelism moe_layer was made for
  int cp = 1;                                 // the context parallelism every figure was made for
  double embed_fwd_s = 0, embed_bwd_s = 0;    // first stage: embedding lookup
  double logits_fwd_s = 0, logits_bwd_s = 0;  // last stage: output layer and loss
  // One pipeline message per GPU: a transformer's activation (TransformerP2pBytes); a
  // layer list's largest layer output (each stage sends its last layer's, StageP2pBytes).
  double p2p_bytes = 0;
  std::vector<LayerSeconds> layers;  // layer-list models: every layer's forward and backward
};
// `cm` is the scenario's compute model (MakeComputeModel).
PieceCosts MakePieceCosts(const Scenario& s, const ComputeModel& cm);

// pp and tp of `s`, at least 1. Inline, as StageLayers: the planner's memory pruning asks
// for every stage of every candidate.
inline int PipelineStages(const Scenario& s) { return std::max(1, s.parallel.pp); }
inline int TensorParallel(const Scenario& s) { return std::max(1, s.parallel.tp); }

// Full recompute re-runs the forward of every layer of a stage, or with
// training.recompute_every k of every k-th one (stage-local index i with
// (i + 1) % k == 0, as torchtitan counts the blocks it wraps).
bool RecomputesLayer(const TrainingConfig& t, int i);
// How many of a stage's `layers` layers that is.
int RecomputedLayers(const TrainingConfig& t, int layers);

// Parameters one GPU of pipeline `stage` holds: its contiguous share of the layers (split
// as evenly as possible, the first stages taking the remainder) divided by tp, plus the input
// embedding on stage 0 and the output head (or, tied with pp > 1, Megatron's copy of the word
// embedding) and final norm on the last stage. Layer lists are not split by tp.
double StageParameterCount(const Scenario& s, int stage);
// The routed experts' part of it (what expert parallelism splits and the
// expert-data-parallel group reduces and shards).
double StageExpertParameterCount(const Scenario& s, int stage);

// What pipeline stage `stage` holds, on one GPU.
struct StageShare {
  int stage = 0;
  int stages = 1;
  LayerRange layers;          // SplitLayers of the model's layers over pp stages
  int moe_layers = 0;         // MoE layers among them
  int recomputed_layers = 0;  // full recompute re-runs their forward (RecomputedLayers)
  double params = 0;          // parameters one GPU keeps (StageParameterCount)
  double expert_params = 0;   // the routed experts' part (StageExpertParameterCount)
  // Parameters whose optimizer step one GPU owns: all of them, or with ZeRO >= 1 the shard
  // group's share of the dense ones and the expert-data-parallel group's of the experts'.
  double optimizer_params = 0;
  bool first() const { return stage == 0; }
  bool last() const { return stage == stages - 1; }
};
StageShare MakeStageShare(const Scenario& s, int stage);
// The layers of pipeline stage `stage` (Scenario::PipelinePart). With the interleaved schedule
// and the embedding or loss counted in the split, the count is its chunks' (c * pp + stage)
// and the range starts at its first chunk's first layer (the layers are not contiguous then;
// what is summed over the range treats them as alike).
inline LayerRange StageLayers(const Scenario& s, int stage) {
  const int pp = PipelineStages(s);
  const int v = s.parallel.schedule == Schedule::kInterleaved ? s.parallel.virtual_stages : 1;
  const bool counted = s.parallel.split_counts_embedding || s.parallel.split_counts_loss;
  if (!counted || v == 1) return s.PipelinePart(pp, stage);
  // The stage's chunks c * pp + stage, counted from its first chunk's first layer.
  LayerRange range = s.PipelinePart(pp * v, stage);
  for (int c = 1; c < v; ++c) range.count += s.PipelinePart(pp * v, c * pp + stage).count;
  return range;
}
// Only the layers, MoE and recomputed counts of it (the parameters 0): what the estimator
// compares stages by, before it needs the slowest one's parameters (MakeStageShare).
StageShare StageLayerShare(const Scenario& s, int stage);

// Bytes of a layer-list model's pipeline message from stage `share`: its last layer's output
// for one microbatch (activation_bytes are given at 2 bytes per element).
double StageP2pBytes(const Scenario& s, const StageShare& share);

// The optimizer step of `params` parameters (StageShare::optimizer_params): a memory-bound
// pass over their state on the GPU (mixed-precision Adam reads and writes the fp32 master, m
// and v, 24 B, plus the gradient and the 16-bit weights, about 8 B; SGD with momentum about
// half), or with training.offload_optimizer the same pass on the node's CPU over host memory,
// which all the node's GPUs share, so each GPU's step waits for the whole node's.
struct OptimizerSeconds {
  double gpu_s = 0;
  double host_s = 0;
};
OptimizerSeconds OptimizerStepSeconds(const Scenario& s, const ComputeModel& cm, double params);

// The data-parallel collectives of the stage model: which collective, over which group, moves
// which bytes. The step program launches them per bucket, per layer or after the optimizer
// (sim/workload.cc); the estimator prices the same calls over a stage's bytes.
struct DpCall {
  CollKind kind = CollKind::kAllReduce;
  GroupKind group = GroupKind::kDp;
  double bytes = 0;
};
// The group ZeRO's gathers and reduce-scatters span: the DP group, or with hybrid sharding
// (parallel.shard_group) one shard group.
GroupKind ShardSpan(const Scenario& s);
// The reduction of `bytes` of gradients (as reduced): ZeRO-0 an all-reduce over the DP group;
// ZeRO >= 1 a reduce-scatter over the shard span and, with hybrid sharding, an all-reduce of the
// shard across the shard groups (FSDP HYBRID_SHARD, MiCS). One or two calls, in order.
struct GradientCalls {
  std::array<DpCall, 2> calls;
  int count = 0;
  const DpCall* begin() const { return calls.data(); }
  const DpCall* end() const { return calls.data() + count; }
};
GradientCalls GradientReduction(const Scenario& s, double bytes);
// The routed experts' gradients (expert parallelism), over the ranks that hold the same experts:
// reduce-scattered under ZeRO >= 1, else all-reduced.
DpCall ExpertGradientReduction(const Scenario& s, double bytes);
// ZeRO's all-gather of `bytes` of weights over the shard span (ZeRO-3 before each use, ZeRO-1/2
// after the optimizer step), and of the routed experts' over the ranks that hold them.
DpCall WeightGather(const Scenario& s, double bytes);
DpCall ExpertWeightGather(const Scenario& s, double bytes);
// DeepSpeed's ZeRO-3 defaults (deepspeed/runtime/zero/config.py and stage3.py; docs/
// framework-facts.md section 1), in elements: parameters are fetched in coalesced all-gathers
// of up to stage3_prefetch_bucket_size ahead of use and kept while reused within
// stage3_max_reuse_distance; gradients are reduce-scattered, every micro-step, through a
// contiguous bucket of reduce_bucket_size.
inline constexpr double kDeepSpeedPrefetchElements = 5e7;
inline constexpr double kDeepSpeedMaxReuseDistance = 1e9;
inline constexpr double kDeepSpeedReduceBucketElements = 5e8;
// How ZeRO-3's implementation (parallel.zero_impl) issues one sharding unit of `unit_bytes` of
// weights: into how many equal calls its weight gather and its gradient reduction are
// split (DeepSpeed: its prefetch and reduce buckets; every other implementation: one each),
// and whether the GPU copies the unit into and out of a flat buffer around them (FSDP2).
struct UnitCalls {
  int gathers = 1, reductions = 1;
  bool copies = false;
};
UnitCalls ShardedUnitCalls(const Scenario& s, double unit_bytes);
// FSDP2 under a pipeline (zero_impl fsdp2, pp > 1, ZeRO-3 over more than one rank), as
// torch.distributed.pipelining and torchtitan run it: each unit is gathered once per step, at
// its first forward (torchtitan sets reshard_after_forward false under PP, and
// PipelineStage.backward_maybe_with_nosync disables resharding after backward), its gradients
// accumulate unsharded in the reduce dtype (gradient sync off), and the units of a model chunk
// are reduce-scattered together after the chunk's last backward (docs/framework-facts.md
// section 3).
bool KeepsStageUnsharded(const Scenario& s);

// ZeRO-1/2 with parallel.overlap_param_gather (and more than one replica): the weights the
// optimizer updated are gathered layer by layer during the next step's first forward pass,
// not after the optimizer step.
bool UpdatesGatheredInForward(const Scenario& s);
// Its bucket size for model chunk `chunk` of pipeline stage `stage`, as Megatron-Core buckets:
// parallel.bucket_mb for the first chunk of the first stage, unbounded (the chunk in one
// bucket) for every other, whose gathers are off the critical path
// (distributed_data_parallel.py).
double UpdateGatherBucketBytes(const Scenario& s, int stage, int chunk);

// One step of a layer's pass on the compute stream: compute, or a collective of the TP, CP or
// EP group. A collective's window is the compute it is pipelined with: under
// parallel.tp_overlap a TP collective's GEMM (moved out of the block's compute), the CP ring's
// attention core (kept in the compute; the ring runs in cp pieces beside it); 0 = it blocks.
struct PassStep {
  enum class Kind { kCompute, kTp, kCp, kEp };
  Kind kind = Kind::kCompute;
  double seconds = 0;  // kCompute: its seconds; a collective: its window
  CollKind coll = CollKind::kAllReduce;
  double bytes = 0;
  const char* what = "";  // kEp: "dispatch" or "combine"
  // The block it belongs to (the attention or the MLP), and whether it is the shared experts'
  // block nested in an MoE MLP: what a sum by block (the estimator's) groups by.
  enum class Block { kAttention, kMlp };
  Block block = Block::kAttention;
  bool inner = false;
};

// A layer's pass: its steps in order (a fixed array: the planner builds passes for every
// candidate it estimates).
class LayerPass {
 public:
  // Steps added from here on belong to `block` (PassStep::block, PassStep::inner).
  void Open(PassStep::Block block, bool inner = false) { block_ = block, inner_ = inner; }
  void Add(PassStep step) {
    step.block = block_, step.inner = inner_;
    steps_[count_++] = step;
  }
  const PassStep* begin() const { return steps_.data(); }
  const PassStep* end() const { return steps_.data() + count_; }
  int size() const { return count_; }

 private:
  std::array<PassStep, 16> steps_;
  int count_ = 0;
  PassStep::Block block_ = PassStep::Block::kAttention;
  bool inner_ = false;
};

// The forward pass (and a full recompute's) of a transformer layer of cost `c`, and its
// backward, which runs the blocks in reverse with each GEMM twice (input and weight
// gradients): each block's TP exchange (an all-reduce after it, or with sequence parallelism
// an all-gather before and a reduce-scatter after), the CP ring around the attention core, and
// an MoE layer's dispatch and combine (docs/model.md section 2).
LayerPass ForwardPass(const Scenario& s, const LayerCost& c);
LayerPass BackwardPass(const Scenario& s, const LayerCost& c);
// The MLP block that selective recompute runs again ("mlp", "moe": LayerCost::mlp_replay_s of
// compute, with the block's TP and EP exchanges).
LayerPass MlpRecomputePass(const Scenario& s, const LayerCost& c);

// A collective running beside `compute_s` of compute takes ModelParams::comm_compute_share
// of the GPU while it is in flight (the simulator's Occupying, sim/engine.cc): the compute
// goes at 1 - share and so lasts longer by share x min(comm, compute / (1 - share)), which is
// what this returns (docs/model.md section 2, "Communication takes compute").
double StretchedComputeSeconds(double comm_s, double compute_s, double share);

}  // namespace trainsim::sim
