// The planner's fast estimator: the step time of a configuration in
// microseconds of arithmetic, to rank hundreds of thousands of candidates
// before the SimGrid simulator confirms the best few.
//
// Compute comes from the simulator's own figures (sim::TransformerLayerCost,
// sim::ConvLayerSeconds, the same compute model and profile), so estimator
// and simulator differ only in how communication and overlap are treated:
// here collectives are alpha-beta formulas (ring algorithms, NCCL's protocol
// latencies of sim/model_params.h) and overlap is a closed-form rule
// (docs/planner.md, "Estimator"). Not thread-safe: one Estimator per thread.
#pragma once

#include "core/scenario.h"
#include "sim/model_params.h"
#include "sim/workload.h"

namespace trainsim::planner {

// Per-microbatch compute figures that depend only on (instance, tp, micro
// batch): computed once and reused for every pp, dp, ZeRO stage, recompute
// and schedule.
struct LayerFigures {
  // Transformer: one layer's forward / backward / recompute blocks.
  sim::LayerCost layer;
  sim::LayerCost moe_layer;  // an MoE layer's (ModelSpec::experts),
  int moe_ep = 1;            // for this expert parallelism (Step redoes it)
  int cp = 1;  // made for this context parallelism (Step redoes all of them for another)
  double embed_fwd_s = 0, embed_bwd_s = 0;    // first stage
  double logits_fwd_s = 0, logits_bwd_s = 0;  // last stage
  double p2p_bytes = 0;                       // one pipeline message, per GPU
  // Layer-list models: every layer's forward and backward.
  std::vector<sim::LayerSeconds> layers;
};

// Where the estimated step goes, on the slowest pipeline stage.
struct StepEstimate {
  double step_s = 0;
  double compute_s = 0;     // forward + backward + recompute, all microbatches
  double tp_comm_s = 0;     // blocking TP collectives
  double pp_bubble_s = 0;   // pipeline fill and drain, and the pipeline messages
  double dp_exposed_s = 0;  // gradient reduction and weight gathers not hidden by compute
  double optimizer_s = 0;   // on the GPU, or with offload_optimizer the node's CPU step
  double offload_s = 0;     // optimizer / parameter offload copies not hidden by compute
};

class Estimator {
 public:
  // `s` carries the instance type and the training settings; fails when the
  // catalog lacks a figure the compute model needs.
  static Expected<Estimator> Create(const Scenario& s, const sim::ModelParams& params);

  // Figures for `s`'s tp and micro batch.
  LayerFigures Figures(const Scenario& s) const;
  // The step of `s` (its parallel and training settings), given Figures(s).
  StepEstimate Step(const Scenario& s, const LayerFigures& f) const;

 private:
  Estimator(sim::ComputeModel cm, const sim::ModelParams& params)
      : cm_(std::move(cm)), params_(params) {}
  sim::ComputeModel cm_;
  sim::ModelParams params_;
};

}  // namespace trainsim::planner
