// Per-GPU memory model: what one GPU must hold for a scenario.
//
// Weights, gradients and optimizer state follow mixed-precision training
// practice (DESIGN.md section 3); activations follow Korthikanti et al. 2022
// ("Reducing Activation Recomputation in Large Transformer Models"), with and
// without recompute, sequence parallelism and flash attention; the pipeline schedule sets how
// many microbatches are in flight; ZeRO-1/2/3 shard the optimizer state,
// gradients and weights over dp; offload moves optimizer state, stored
// activations and (ZeRO-3) the weight and gradient shards to host memory.
// The worst pipeline stage is reported.
#pragma once

#include <string>

#include "core/scenario.h"
#include "sim/stage_model.h"

namespace trainsim::sim {

struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;  // all in-flight microbatches of the stage
  double reserve_bytes = 0;      // CUDA context, allocator fragmentation, workspaces
  double total_bytes = 0;
  double capacity_bytes = 0;  // the GPU's memory
  // Offload: host memory one node's GPUs use, and the node's memory (0 = unknown).
  double host_bytes_per_node = 0;
  double host_capacity_bytes = 0;
  bool fits = false;                 // in GPU memory and, with offload, in host memory
  int worst_stage = 0;               // pipeline stage with the largest total
  double inflight_microbatches = 0;  // held by the worst stage
};

// Activation bytes one transformer layer stores for one microbatch
// (Korthikanti et al. 2022, section 4, equations for t, SP and recompute; with
// flash attention no score matrix, and the fp32 softmax statistics instead), on
// average over a stage of `layers` layers, `moe_layers` of them MoE (they
// differ with training.recompute_every, and MoE layers store their experts'
// inputs and intermediates per routed token). Includes the fp32 doubling; 0
// for layer-list models.
double LayerActivationBytes(const Scenario& s, int layers, int moe_layers = 0);

// Microbatches whose activations pipeline `stage` (0-based) holds at its peak (Narayanan et
// al. 2021): GPipe m; 1F1B min(pp - stage, m); interleaved 1F1B with v model chunks
// min(2(pp - stage - 1) + (v - 1)pp + 1, m v) / v, in units of a whole stage's microbatch.
// m = microbatches_per_pipeline() (at least 1).
double InflightMicrobatches(const Scenario& s, int stage);

MemoryBreakdown ComputeMemory(const Scenario& s);

// Bytes per parameter of the training state a checkpoint saves: the weights
// and the optimizer state (fp32 master copy in mixed precision, moments).
double CheckpointBytesPerParam(const Scenario& s);

// "needs 52.3 GiB per GPU (weights 20.1, gradients ..., ) but p4d.24xlarge has 40 GiB"
std::string DescribeShortfall(const MemoryBreakdown& m, const Scenario& s);

}  // namespace trainsim::sim
