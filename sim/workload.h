// The workload of one training step: for every pipeline stage, the ordered
// operations its GPUs run (compute kernels with their durations, TP
// collectives, pipeline sends/receives, DP gradient buckets, optimizer).
//
// Every GPU of a stage runs the same program (TP ranks and DP replicas are
// symmetric); the engine decides whether to simulate all of them or one per
// stage. Durations of compute come from ComputeModel: catalog peak x a
// documented efficiency (sim/model_params.h) until calibration exists.
#pragma once

#include <string>
#include <vector>

#include "core/scenario.h"
#include "sim/collectives.h"
#include "sim/groups.h"
#include "sim/model_params.h"

namespace trainsim::sim {

// GEMM rates a hardware profile measured, in one dtype.
struct MeasuredGemms {
  const std::vector<TablePoint>* table = nullptr;  // rate against FLOPs
  const HardwareProfile* profile = nullptr;        // its points: rates of exact shapes
  std::string dtype;
};

// The dimensions of one GEMM: C[m x n] = A[m x k] B[k x n].
struct GemmDims {
  double m = 0, n = 0, k = 0;
};

class ComputeModel {
 public:
  // `measured.table` (a profile's table for the scenario's precision), when
  // given, replaces kernel_overhead_s + the efficiency x peak model.
  // `sixteen_bit_peak_flops` (fp8 scenarios): the 16-bit peak of SixteenBit().
  ComputeModel(double peak_flops, double hbm_Bps, const ModelParams& params,
               MeasuredGemms measured = {}, double sixteen_bit_peak_flops = 0);
  double GemmSeconds(double flops) const;
  // The weight GEMMs of one block. With a profile: each at the measured rate
  // of its exact shape, else at the table's rate for its FLOPs. Without one:
  // GemmSeconds of their total FLOPs (the model counts a block as one kernel).
  double GemmSeconds(const std::vector<GemmDims>& gemms) const;
  double MemorySeconds(double bytes) const;
  // A fused attention kernel (flash attention) that does `flops` of matrix
  // work and moves `bytes` to and from device memory: the slower of its compute
  // and MemorySeconds(bytes), a roofline (docs/model.md section 2). Its compute
  // runs at ModelParams::attention_efficiency when set (the GPU's fitted
  // figure), else as GemmSeconds(flops).
  double AttentionSeconds(double flops, double bytes) const;
  // A GEMM whose inner rows are not 16-byte aligned (ModelParams::
  // unaligned_gemm_efficiency): at that fraction of the peak when set, else
  // GemmSeconds(flops).
  double UnalignedGemmSeconds(double flops) const;
  const ModelParams& params() const { return params_; }
  // A convolution that does `flops` and moves `operand_bytes` (inputs, weights,
  // output): the slower of its compute at the conv efficiency and its traffic.
  double ConvSeconds(double flops, double operand_bytes) const;
  // The model of the GEMMs that FP8 training keeps in 16 bits: Transformer
  // Engine and torchao's float8 convert the linear layers only, so the
  // attention core and the output layer run at the 16-bit peak (same
  // efficiency, no measured table). *this unless the precision is fp8.
  ComputeModel SixteenBit() const;

 private:
  // One kernel of `flops` at `efficiency` x the peak, with the launch overhead.
  double KernelSeconds(double flops, double efficiency) const;

  double peak_flops_;
  double hbm_Bps_;
  ModelParams params_;
  MeasuredGemms measured_;
  double sixteen_bit_peak_flops_ = 0;  // 0: the same as peak_flops_
};

// The compute model of a scenario's GPU and precision: the catalog peak and
// memory bandwidth with the efficiencies of `params` (or the GPU's own fitted
// ones), or the hardware profile's measured tables. Fails (InvalidInput) when
// a figure the model needs is missing from the catalog.
Expected<ComputeModel> MakeComputeModel(const Scenario& s, const ModelParams& params);

// Bytes per element of activations (and of weights and gradients) in `p`.
double ActivationBytesPerElem(Precision p);

// Bytes that data parallelism reduces per byte of weights: 1, or 2 when a
// 16-bit run reduces its gradients in fp32 (training.grad_reduce_dtype).
double GradReduceScale(const TrainingConfig& t);

// Parameter offload (training.offload_params) copies the ZeRO-3 shards in the
// dtype FSDP keeps on the CPU, whatever the training precision: the sharded
// flat parameter stays fp32 there and is cast to the 16-bit param_dtype on the
// GPU after the copy (FlatParamHandle._use_low_precision_shard); the reduced
// gradient shard is cast to fp32 before _offload_grad copies it out
// (torch/distributed/fsdp/_runtime_utils.py).
inline constexpr double kHostShardBytesPerParam = 4;

// The tokens of one micro batch on one GPU: its sequences, of which context parallelism
// leaves each GPU 1 / cp (the attention's queries, the activations it stores, its messages).
inline double MicrobatchTokens(const Scenario& s) {
  return static_cast<double>(s.training.micro_batch) * s.model.seq_len / s.parallel.cp;
}

// Costs of one transformer layer for one microbatch on one GPU (tp and
// sequence parallelism of `s` applied). The step program is built from these;
// the planner's estimator reads them directly.
struct LayerCost {
  double attn_fwd_s = 0, mlp_fwd_s = 0;  // forward blocks (GEMMs + memory-bound ops)
  double attn_bwd_s = 0, mlp_bwd_s = 0;
  double core_fwd_s = 0;  // attention core forward (scores, softmax, AV), in attn_fwd_s
  // What selective recompute (training.recompute_modules) re-runs before the backward on the
  // compute stream: the attention core (core_attn; nothing with flash attention, whose backward
  // kernel recomputes the scores itself, inside attn_bwd_s), both norms (layernorm), MLA's
  // up-projections (mla_up_proj), the experts' activation (moe_act), the shared experts
  // (shared_experts). mlp_replay_s: the MLP block's forward compute that "mlp" (a dense layer)
  // or "moe" (an MoE layer) runs again with its TP and EP exchanges (MlpRecomputePass); 0 when
  // it is kept. selective_recompute_flops: their GEMM FLOPs on this GPU.
  double selective_recompute_s = 0;
  double mlp_replay_s = 0;
  double selective_recompute_flops = 0;
  // What torchtitan's op-level selective checkpointing (recompute "selective_op") re-runs:
  // the layer's forward but the attention core and the saved GEMMs (docs/model.md section 2).
  double op_recompute_s = 0;
  // What MaxText's policies (recompute "save_dot_except_mlp" / "save_dot_except_mlpwi") re-run:
  // the layer's forward but its q, k, v, output and down projections, whose outputs are kept
  // or not needed (docs/model.md section 2).
  double proj_recompute_s = 0;
  double fwd_flops = 0, core_flops = 0;  // GEMM FLOPs on this GPU
  double tp_bytes = 0;                   // one TP all-reduce (or RS/AG pair)
  // MoE layers with expert parallelism: bytes one GPU sends in one all-to-all
  // (the dispatch and the combine, each forward and backward); 0 = none. Under tensor
  // parallelism each TP rank dispatches its 1/tp of the tokens.
  double ep_bytes = 0;
  // MoE layers under tensor parallelism: the routed rows (hidden states) the token
  // dispatcher all-gathers over the TP group after the dispatch and reduce-scatters before
  // the combine, in place of the dense MLP's TP exchange (Megatron-Core's all-to-all
  // dispatcher); 0 = none.
  double moe_tp_bytes = 0;
  bool moe = false;  // an MoE layer (its MLP is MoeMlpBlock's under tensor parallelism)
  // Context parallelism: the keys and values of every chunk of the sequence one
  // GPU receives (all-gathered over the CP group, and their gradients sent back
  // in the backward); 0 = none. core_bwd_s: the attention core's backward, in
  // attn_bwd_s (what the backward exchange is pipelined with).
  double cp_bytes = 0;
  double core_bwd_s = 0;
  // Forward seconds of the weight GEMMs beside each block's TP collectives: the
  // first one after the all-gather (QKV; the MLP's up projection) and the last
  // one before the reduce-scatter (attention projection; down projection).
  // Parts of attn_fwd_s / mlp_fwd_s; the windows of parallel.tp_overlap.
  double attn_in_gemm_s = 0, attn_out_gemm_s = 0, mlp_in_gemm_s = 0, mlp_out_gemm_s = 0;
};
// `moe`: of an MoE layer (ModelSpec::experts), whose MLP is the router and the
// experts (all of them on this GPU, or with parallel.ep its share of them and
// the tokens its group routes to them, and the all-to-alls' bytes).
LayerCost TransformerLayerCost(const Scenario& s, const ComputeModel& cm, bool moe = false);

// Bytes one GPU sends to the next pipeline stage per microbatch (a
// transformer's activation; 1/tp of it with parallel.pp_scatter_gather).
double TransformerP2pBytes(const Scenario& s);

// A TP collective of `comm_s` pipelined with the GEMM of `gemm_s` beside it, both
// split in `chunks` pieces (parallel.tp_overlap: Transformer Engine splits the GEMM
// by the TP group's size): the longer of the two plus one piece of the shorter,
// max(gemm', comm) + min(gemm', comm) / chunks, where the GEMM runs at 1 - `share`
// of the GPU while the collective's kernels are in flight (ModelParams::
// comm_compute_share): gemm' = gemm + share x min(comm, gemm / (1 - share)).
// docs/model.md section 2.
double PipelinedSeconds(double gemm_s, double comm_s, int chunks, double share);

// Forward and backward seconds of one layer of a layer-list model for `b`
// samples at `e` bytes per element (docs/model.md section 2).
struct LayerSeconds {
  double fwd = 0, bwd = 0;
};
LayerSeconds ConvLayerSeconds(const LayerSpec& L, double b, double e, const ComputeModel& cm,
                              bool transposes = false);

// Whether a layer-list model's convolutions transpose their operands: NCHW
// activations (training.memory_format) in 16-bit (or fp8) precision. fp32 runs
// on the CUDA cores in NCHW as it is; TF32 in NCHW shows no such cost in the
// corpus (docs/model.md section 6), so it has none here.
bool ConvTransposes(const Scenario& s);

enum class OpKind {
  kCompute,    // seconds on the compute stream
  kEpColl,     // expert-parallel all-to-all of `bytes` (blocking, on the compute stream)
  kCpColl,     // context-parallel K/V exchange of `bytes` over the CP group, pipelined with
               // `seconds` of attention core (PipelinedSeconds with cp pieces)
  kTpColl,     // TP collective of `bytes` (blocking, on the compute stream); with
               // `seconds` > 0, pipelined with a GEMM of that many seconds
               // (PipelinedSeconds, parallel.tp_overlap)
  kSend,       // hand an activation/gradient to the send stream (`dir`), non-blocking
  kRecv,       // wait for an activation/gradient from the neighbour stage (`dir`)
  kLaunch,     // let async stream `stream` start its next item
  kWait,       // wait until the first `upto` items of async stream `stream` are done
  kInputWait,  // wait for the input pipeline to deliver microbatch `microbatch`
};

enum class OpPhase { kForward, kBackward, kRecompute, kOptimizer, kOther };

// Streams beside the compute stream, each running its items in order once
// launched: data-parallel collectives (gradient reduction, ZeRO gathers) and
// the two copy engines to and from host memory (offload).
enum AsyncStream { kDpStream = 0, kToHostStream = 1, kFromHostStream = 2, kAsyncStreams = 3 };

struct Op {
  OpKind kind = OpKind::kCompute;
  OpPhase phase = OpPhase::kOther;
  double seconds = 0;                    // kCompute; kTpColl: the GEMM it overlaps
  double bytes = 0;                      // kTpColl, kSend, kRecv (message size)
  CollKind coll = CollKind::kAllReduce;  // kTpColl; kWait: the kind of the item waited for
  int dir = 0;  // kSend/kRecv: 0 forward (stage i -> i+1), 1 backward (i -> i-1)
  int microbatch = -1;
  std::string label;
  int stream = kDpStream;  // kLaunch, kWait
  int upto = 0;            // kWait
};

// An item of an async stream: a DP collective, or (host streams, kind
// kSendRecv) a copy of `bytes` between the GPU and its node's host memory.
struct AsyncItem {
  CollKind kind = CollKind::kAllReduce;
  double bytes = 0;
  std::string label;
  // The ranks a DP collective spans (sim/groups.h): kDp, or with hybrid sharding
  // (parallel.shard_group) kShard for ZeRO's gathers and reduce-scatters and kAcrossShards for
  // the gradient shards' all-reduce, or with expert parallelism kExpertData for the routed
  // experts' gradients.
  GroupKind group = GroupKind::kDp;
};

struct StageProgram {
  std::vector<Op> ops;                          // compute stream, in order
  std::vector<AsyncItem> async[kAsyncStreams];  // async streams, in order
  double compute_per_microbatch_s = 0;  // forward + backward (+ recompute), TP comm excluded
};

struct StepProgram {
  std::vector<StageProgram> stages;
  double model_flops = 0;     // per step, whole cluster, no recompute
  double hardware_flops = 0;  // per step, whole cluster, with recompute
  double samples = 0;         // per step
  double tokens = 0;          // per step
};

// Fails (InvalidInput) when the catalog lacks a figure the model needs, e.g.
// the GPU's peak for the precision or its memory bandwidth.
Expected<StepProgram> BuildStepProgram(const Scenario& s, const ModelParams& params);

}  // namespace trainsim::sim
