// The planner's fast estimator: the step time of a configuration in
// microseconds of arithmetic, to rank hundreds of thousands of candidates
// before the SimGrid simulator confirms the best few.
//
// It reads the simulator's stage model (sim/stage_model.h: the piece costs, each stage's
// share of the layers and parameters, the communication groups, the overlap rule), so
// estimator and simulator differ only in how communication and overlap are evaluated: here
// collectives are alpha-beta formulas (ring algorithms, NCCL's protocol latencies of
// sim/model_params.h) and overlap is a closed-form rule (docs/planner.md, "Estimator").
// Not thread-safe: one Estimator per thread.
#pragma once

#include "core/scenario.h"
#include "sim/model_params.h"
#include "sim/stage_model.h"

namespace trainsim::planner {

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

  // The piece costs of `s` (sim::MakePieceCosts): they depend only on the instance, tp,
  // micro batch, cp and ep, so a caller makes them once per (instance, tp, micro batch) and
  // Step redoes the MoE layer's for another ep and all of them for another cp.
  sim::PieceCosts Figures(const Scenario& s) const;
  // The step of `s` (its parallel and training settings), given Figures(s).
  StepEstimate Step(const Scenario& s, const sim::PieceCosts& f) const;

 private:
  Estimator(sim::ComputeModel cm, const sim::ModelParams& params)
      : cm_(std::move(cm)), params_(params) {}
  sim::ComputeModel cm_;
  sim::ModelParams params_;
};

// `trainsim simulate --estimate`: the step of `s` as configured, in closed form (no simulation,
// so any cluster size), after the memory model's check: a configuration that does not fit is
// InvalidInput "the configuration does not fit: ..." (sim::DescribeShortfall).
Expected<StepEstimate> EstimateScenarioStep(const Scenario& s);

}  // namespace trainsim::planner
