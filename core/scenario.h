// Scenario (format v1): what to train, on what, and how. See docs/formats.md.
//
// ParseScenario is strict: unknown fields, wrong types and impossible values
// are errors that name file:line:column and the field. The planner's `search`
// and `sweep` sections are checked too, but kept out of Scenario: the planner
// and the sweep read them with ParsePlanningScenario (core/search.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/catalog.h"
#include "core/hardware_profile.h"
#include "core/instance_type.h"
#include "core/model_spec.h"
#include "core/status.h"
#include "core/strategy.h"

namespace trainsim {

// How the instances are bought (docs/planner.md section 6): by the hour on demand or as spot,
// through SageMaker (on demand or managed spot), as reserved blocks paid up front (EC2
// Capacity Blocks for ML, SageMaker training plans), under a 1- or 3-year Savings Plan, or on
// spot that falls back to on-demand when a deadline's slack runs out, or on spot training on the
// data-parallel replicas left after a reclaim (elastic).
enum class Pricing {
  kOnDemand,
  kSpot,
  kSagemaker,
  kSagemakerSpot,
  kCapacityBlock,
  kTrainingPlan,
  kSavingsPlan1y,
  kSavingsPlan3y,
  kSpotFallback,
  kSpotElastic
};
inline constexpr int kPricingOptions = 10;
// Options that run (at least at first) on spot instances: interrupted, and ruled out by
// search.spot_allowed false.
inline bool IsSpot(Pricing p) {
  return p == Pricing::kSpot || p == Pricing::kSagemakerSpot || p == Pricing::kSpotFallback ||
         p == Pricing::kSpotElastic;
}
// Options bought as reserved blocks paid up front (Capacity Blocks, training plans).
inline bool IsReserved(Pricing p) {
  return p == Pricing::kCapacityBlock || p == Pricing::kTrainingPlan;
}
// kSelectiveOp: torchtitan's op-level selective checkpointing (docs/model.md section 2).
// kSaveDotExceptMlp, kSaveDotExceptMlpWi: MaxText's remat policies of those names (Pax's
// SAVE_QKV_OUT_PROJ is the first): a layer keeps its input and the outputs of its q, k, v and
// output projections (and of the MLP's down projection), and recomputes the rest.
enum class Recompute {
  kNone,
  kSelective,
  kFull,
  kSelectiveOp,
  kSaveDotExceptMlp,
  kSaveDotExceptMlpWi
};
inline constexpr int kRecomputeModes = 6;
// Megatron-Core's `--recompute-modules` (training.recompute_modules, with recompute
// "selective"): the parts of every layer whose activations the backward recomputes instead of
// keeping (transformer_config.py, `recompute_modules`). kCoreAttn alone is Megatron's default
// and trainsim's "selective" before the field existed. A set, as bits.
enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1u << 0,       // the attention core (scores, softmax, AV)
  kRecomputeLayernorm = 1u << 1,      // both norms' outputs
  kRecomputeMlaUpProj = 1u << 2,      // MLA's query and key/value up-projections (and RoPE)
  kRecomputeMlp = 1u << 3,            // a dense layer's MLP
  kRecomputeMoe = 1u << 4,            // an MoE layer's MLP: router, dispatch, experts, combine
  kRecomputeMoeAct = 1u << 5,         // the experts' activation function
  kRecomputeSharedExperts = 1u << 6,  // the shared experts
};
inline constexpr int kRecomputeModuleCount = 7;
// The names a file gives them, in bit order; the names of a set's modules, in that order.
const char* RecomputeModuleName(int bit);
std::vector<std::string> RecomputeModuleNames(unsigned modules);
// MaxText's policies.
inline bool KeepsProjections(Recompute r) {
  return r == Recompute::kSaveDotExceptMlp || r == Recompute::kSaveDotExceptMlpWi;
}
// Op-level policies (torchtitan's and MaxText's): every layer keeps chosen outputs and
// recomputes the rest in its backward, holding one layer's working set meanwhile; they keep no
// attention scores, so they need flash attention.
inline bool IsOpLevelPolicy(Recompute r) {
  return r == Recompute::kSelectiveOp || KeepsProjections(r);
}
enum class Schedule { kGpipe, k1F1B, kInterleaved };
enum class Optimizer { kSgd, kAdam };
// The dtype of the optimizer's state: fp32 master weights and moments (the default); fp32 master
// weights with bf16 moments (DeepSeek-V3, Megatron-Core's precision-aware optimizer); or all of
// it in bf16 (Apex's distributed Adam with `dtype` bf16, as NeMo 1's Nemotron-4 recipe runs it).
enum class OptimizerState { kFp32, kBf16Moments, kBf16 };
enum class MemoryFormat { kNhwc, kNchw };
// How FP8 training scales its tensors: one scale per tensor (Transformer Engine's delayed and
// current scaling, torchao's tensorwise) or one per row (torchao's rowwise).
enum class Fp8Scaling { kTensorwise, kRowwise };
// The flash-attention kernel family: FlashAttention-2 class (flash-attn 2, Triton flash
// kernels, PyTorch SDPA's flash backend) or cuDNN's fused attention (Transformer Engine's
// FusedAttention, NVTE_FUSED_ATTN=1; PyTorch SDPA's cuDNN backend).
enum class AttentionKernel { kFlash, kCudnn };
// The dtype data parallelism reduces gradients in: the weights' (2 bytes in 16-bit training) or
// fp32 (torch AMP's fp32 weights, FSDP MixedPrecision(reduce_dtype=float32), Megatron's fp32
// main_grad buffers).
enum class GradReduceDtype { kWeights, kFp32 };
// kAuto: like NCCL, the fastest of the three for each collective (by simulating each).
// kParameterServer: workers push gradients to server processes on the nodes'
// hosts and pull the reduced result back (not a collective algorithm).
enum class DpAlgorithm { kRing, kTree, kHierarchical, kAuto, kParameterServer };
// How gradients are grouped into all-reduces: PyTorch DDP buckets (launched
// when full), or Horovod's tensor fusion (every cycle, all ready tensors,
// fused up to the threshold).
enum class DpFusion { kDdp, kHorovod };
// Which framework's ZeRO-3 runs (parallel.zero_impl), as it issues a sharding unit's
// collectives (docs/model.md section 2). kFsdp1: PyTorch FSDP's FlatParameter, one all-gather
// and one reduce-scatter per wrapped unit; kFsdp2: per-parameter DTensor shards, the same
// collectives with copies into and out of the flat communication buffer on the GPU;
// kDeepSpeed: DeepSpeed's partitioned parameters, gathered in coalesced prefetch buckets of
// 5e7 elements and reduced in buckets of 5e8; kXla: JAX/XLA's SPMD sharding (MaxText, Pax),
// one all-gather and one reduce-scatter per layer of the scanned stack.
enum class ZeroImpl { kFsdp1, kFsdp2, kDeepSpeed, kXla };
inline constexpr int kZeroImpls = 4;

struct TrainingConfig {
  int64_t global_batch = 0;  // samples per optimizer step (required)
  int micro_batch = 1;       // samples per microbatch per pipeline
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdam;
  OptimizerState optimizer_state = OptimizerState::kFp32;
  Recompute recompute = Recompute::kNone;
  // With recompute "full": only every k-th layer of a stage is recomputed (the k-th, 2k-th,
  // ...; torchtitan's layer-level selective checkpointing, selective_ac_option "k"); the
  // others keep all their activations. 1 = every layer.
  int recompute_every = 1;
  // With recompute "selective": the RecomputeModule bits; the attention core alone by default.
  unsigned recompute_modules = kRecomputeCoreAttn;
  bool sequence_parallel = false;
  // The layers apply dropout (hidden and attention dropout above 0): each keeps its 1-byte
  // masks for the backward. false: dropout probability 0 (MPT, most Llama-style recipes),
  // no masks kept and no dropout pass over the score matrix (docs/memory.md section 3).
  bool dropout = true;
  // Fused attention that keeps the score matrix on chip (FlashAttention, Dao et al. 2022;
  // FlashAttention-2, Dao 2023). Not given in the file: the model's
  // flash_attention_default (the parser sets it; false for a layer-list model).
  bool flash_attention = false;
  // Which flash kernel (flash_attention true only): cuDNN's runs at the GPU's fitted cuDNN
  // attention rate where it has one (docs/model.md section 2).
  AttentionKernel attention_kernel = AttentionKernel::kFlash;
  // Gradient reduction dtype (DDP buckets, the ZeRO reduce-scatters): "weights" (the default)
  // or "fp32", which doubles the bytes reduced in 16-bit training.
  GradReduceDtype grad_reduce_dtype = GradReduceDtype::kWeights;
  // Layout of a layer-list model's activations: NHWC (channels last, the
  // default: what the conv efficiency was fitted on) or NCHW (PyTorch's
  // default format), whose 16-bit convolutions transpose their operands to
  // the tensor cores' NHWC and back (docs/model.md section 6).
  MemoryFormat memory_format = MemoryFormat::kNhwc;
  // FP8 recipes (precision fp8 only): rowwise-scaled GEMMs run at the GPU's
  // fitted rowwise rate where it has one (docs/model.md section 6).
  Fp8Scaling fp8_scaling = Fp8Scaling::kTensorwise;
  // Total work; at most one of these is set (0 = not given).
  double tokens = 0;
  double samples = 0;
  double epochs = 0;
  double dataset_samples = 0;  // with epochs
  // Input pipeline: samples per second one node's data loader delivers
  // (0 = never the bottleneck), and how many microbatches it holds ready
  // when a step starts.
  double input_samples_per_s_per_node = 0;
  int input_prefetch_microbatches = 2;
  // Offload to host memory over the node's PCIe links: stored activations
  // (copied out after each layer's forward, back before its backward), and
  // the optimizer (gradients out, the step on the CPU, weights back).
  bool offload_activations = false;
  bool offload_optimizer = false;
  // Parameter offload (FSDP CPUOffload(offload_params=True), ZeRO-Infinity
  // offload_param to the CPU): the GPU's ZeRO-3 shard of weights, gradients
  // and optimizer state lives in host memory; each layer's shard is copied in
  // before its all-gather and its gradient shard out after its
  // reduce-scatter. Needs zero_stage 3; implies offload_optimizer (the step
  // runs on the CPU, where the parameters are).
  bool offload_params = false;
  // Mixture of experts with expert parallelism: the routed tokens of the
  // busiest expert-parallel rank over the mean (>= 1; 1 = even). It scales
  // that rank's expert compute and all-to-all traffic, which the others wait
  // for. Not a sourced default: give your router's measured figure.
  double moe_imbalance = 1.0;
};

// Whether the backward recomputes `module` of every layer (recompute "selective" only).
inline bool Recomputes(const TrainingConfig& t, RecomputeModule module) {
  return t.recompute == Recompute::kSelective && (t.recompute_modules & module) != 0;
}

// A slower node or GPU: its compute takes `slowdown` times as long.
struct Straggler {
  int node = -1;  // a whole node, or
  int gpu = -1;   // one GPU (global rank)
  double slowdown = 1.0;
};

struct ClusterConfig {
  std::string instance;  // catalog name (required)
  int nodes = 1;
  Pricing pricing = Pricing::kOnDemand;
  double oversubscription = 1.0;  // leaf uplink : downlink ratio of the fabric (>= 1)
  int nodes_per_leaf = 32;        // nodes under one leaf switch
  // A third tier: leaves under one pod's spines (0 = none: every leaf under
  // one spine), and the pod uplink : its leaves' uplinks ratio (>= 1).
  int leaves_per_pod = 0;
  double pod_oversubscription = 1.0;
  std::string fabric;       // catalog fabric whose figures fill the fields above not given
  std::optional<int> nics;  // override of the catalog NIC count
  std::string profile;      // hardware profile file (calibration); empty = catalog
  std::vector<Straggler> stragglers;
};

// The largest tp, pp or dp a file may give: keeps tp * pp * dp an int64.
inline constexpr int kMaxParallel = 1 << 20;

struct ParallelConfig {
  int tp = 1;
  int pp = 1;
  int dp = 0;  // 0 in the file = derived as gpus / (tp * pp); always set after parsing
  // ZeRO stage: 1 shards optimizer state, 2 also gradients, 3 also weights
  // (FSDP's FULL_SHARD is stage 3, SHARD_GRAD_OP stage 2).
  int zero_stage = 0;
  // Whose ZeRO-3 (stage 3 only; ZeRO-1/2 are modelled as Megatron-Core's distributed optimizer).
  ZeroImpl zero_impl = ZeroImpl::kFsdp1;
  // ZeRO-3 under FSDP: each layer's gathered weights are freed after its forward and gathered
  // again for its backward (FULL_SHARD). false: kept from the forward to the backward (FSDP1's
  // SHARD_GRAD_OP, FSDP2 reshard_after_forward=False). Not given: true, but false for fsdp2
  // with pp > 1 (torchtitan's default under a pipeline; the parser sets it).
  bool reshard_after_forward = true;
  // Hybrid sharding (FSDP HYBRID_SHARD / _HYBRID_SHARD_ZERO2, SMP v2
  // hybrid_shard_degree, DeepSpeed MiCS): ZeRO-2/3 state is sharded over groups
  // of `shard_group` consecutive DP ranks and replicated across the dp /
  // shard_group groups, whose gradients are all-reduced. 0 = the whole DP
  // group (plain ZeRO; the default). Read it through Scenario::shard_degree().
  int shard_group = 0;
  // Expert parallelism (Megatron-Core's expert_model_parallel_size): the
  // experts of each MoE layer are split over groups of `ep` consecutive DP
  // ranks, which exchange tokens by all-to-all; expert gradients are reduced
  // over the dp / ep ranks that hold the same experts. 1 = every GPU holds
  // every expert.
  int ep = 1;
  // Expert tensor parallelism (Megatron-Core's expert_tensor_parallel_size): the routed
  // experts split over `expert_tp` GPUs. 0 (the default) = tp, the experts split like the
  // dense MLP over the TP group; 1 = each expert whole on its GPU, the EP group made of
  // consecutive GPU ranks across TP and DP ("MoE parallel folding"). Read it through
  // Scenario::expert_tp().
  int expert_tp = 0;
  // Context parallelism (Megatron-Core's context_parallel_size, SMP v2's
  // context_parallel_degree): each sequence split over `cp` GPUs, which hold
  // the same weights (gradients are reduced over dp x cp) and exchange keys
  // and values in a ring (ring attention). 1 = none.
  int cp = 1;
  Schedule schedule = Schedule::k1F1B;
  int virtual_stages = 1;
  // Megatron-Core's account_for_embedding_in_pipeline_split / _loss_: the pipeline split
  // counts the embedding / the loss as a layer at its start / end (Scenario::PipelinePart).
  bool split_counts_embedding = false;
  bool split_counts_loss = false;
  DpAlgorithm dp_algorithm = DpAlgorithm::kAuto;
  // DDP gradient bucket cap, or Horovod's fusion threshold (default 128 MiB
  // with dp_fusion horovod, Horovod >= 0.21).
  double bucket_bytes = 25.0 * 1024 * 1024;
  DpFusion dp_fusion = DpFusion::kDdp;
  double cycle_s = 1e-3;   // Horovod's cycle time (HOROVOD_CYCLE_TIME, 1 ms since 0.21)
  bool overlap_dp = true;  // launch DP buckets during backward
  // ZeRO-1/2: the weights the optimizer updated are gathered during the next
  // step's first forward pass, each layer's before it runs and the next one's
  // beside it (Megatron-Core `--overlap-param-gather`, on by default in NeMo 2
  // with dp > 1; Apex's distributed Adam `overlap_param_sync`), instead of in
  // one gather after the optimizer step. docs/model.md section 2.
  bool overlap_param_gather = false;
  // Tensor-parallel communication pipelined with the GEMMs beside it
  // (Transformer Engine's userbuffers, NeMo `ub_tp_comm_overlap`, Megatron-LM
  // `--tp-comm-overlap`); needs sequence parallelism. docs/model.md section 2.
  bool tp_overlap = false;
  // Pipeline sends split over the TP group (Megatron's scatter/gather
  // optimisation, Narayanan et al. 2021 section 4.1): each TP rank sends 1/tp
  // of the activation and the receivers all-gather it over NVLink. false: every
  // TP rank sends the whole activation (Megatron-LM before the optimisation).
  bool pp_scatter_gather = true;
  // dp_algorithm parameter_server: server processes, one on the host of each
  // of the first `parameter_servers` nodes (0 in the file = one per node;
  // always set after parsing).
  int parameter_servers = 0;
};

// FSDP2 under a pipeline (ZeRO-3, zero_impl fsdp2, pp > 1), which trainsim models as
// torch.distributed.pipelining and torchtitan run it (sim::KeepsStageUnsharded): the parser
// keeps reshard_after_forward false for it.
inline bool PipelinedFsdp2(const ParallelConfig& p) {
  return p.zero_stage == 3 && p.zero_impl == ZeroImpl::kFsdp2 && p.pp > 1;
}

// The one microbatch count: microbatches each pipeline (each data-parallel replica) runs per
// step, global_batch / (dp x micro_batch); without a pipeline, the gradient accumulation steps.
inline int64_t MicrobatchesPerPipeline(int64_t global_batch, int dp, int micro_batch) {
  return global_batch / (static_cast<int64_t>(std::max(1, dp)) * std::max(1, micro_batch));
}

// ---- the strategies' degrees (core/strategy.h) ----

inline StrategyDegrees DegreesOf(const ParallelConfig& p) {
  StrategyDegrees d;
  for (int i = 0; i < kStrategyCount; ++i) d[i] = p.*kStrategies[i]->degree;
  return d;
}

// The product of the degrees that split a data-parallel slot (1 with none above 1).
inline int SlotSplit(const ParallelConfig& p) {
  int split = 1;
  for (const Strategy* st : kStrategies) {
    if (st->splits_slots) split *= p.*st->degree;
  }
  return split;
}

// The first strategy above 1, or null.
inline const Strategy* FirstStrategy(const ParallelConfig& p) {
  for (const Strategy* st : kStrategies) {
    if (p.*st->degree > 1) return st;
  }
  return nullptr;
}

// Whether every strategy is at degree 1.
inline bool NoStrategy(const ParallelConfig& p) { return FirstStrategy(p) == nullptr; }

// " cp 2" for each strategy above 1, in kStrategies' order.
std::string DegreesText(const ParallelConfig& p);

struct Scenario {
  int version = 1;
  std::string name;  // file stem or "scenario"
  ModelSpec model;
  TrainingConfig training;
  ClusterConfig cluster;
  ParallelConfig parallel;
  InstanceType instance;  // resolved from the catalog, NIC override applied
  // The hardware profile in use (cluster.profile, or --profile), or null. Its
  // host link and collective figures are already applied to `instance`; the
  // simulator reads its GEMM tables and memory bandwidth.
  std::shared_ptr<const HardwareProfile> profile;

  int total_gpus() const { return cluster.nodes * instance.gpus; }
  // DP ranks that share one copy of the sharded state: parallel.shard_group
  // (dp when not hybrid), and how many such copies the DP group holds.
  // GPUs of a stage's TP rank that hold the same weights: dp x the strategies that split a
  // data-parallel slot (core/strategy.h; cp): the simulator's data-parallel slots, which
  // gradients and ZeRO span.
  int replicas() const { return parallel.dp * SlotSplit(parallel); }
  int shard_degree() const { return parallel.shard_group > 0 ? parallel.shard_group : replicas(); }
  int shard_replicas() const { return replicas() / shard_degree(); }
  int expert_tp() const { return parallel.expert_tp > 0 ? parallel.expert_tp : parallel.tp; }
  // GPUs of a stage that hold the same routed experts (the expert-data-parallel group, over
  // which their gradients are reduced and their ZeRO state sharded; at least 1).
  int expert_replicas() const { return parallel.tp * replicas() / (expert_tp() * parallel.ep); }
  // How much slower GPU `rank` computes (the largest straggler factor that
  // covers it; 1 for none).
  double Slowdown(int rank) const;
  int64_t microbatches_per_pipeline() const {
    return MicrobatchesPerPipeline(training.global_batch, parallel.dp, training.micro_batch);
  }
  // Part `part` of the model's layers cut into `parts` (pipeline stages, or with the
  // interleaved schedule the pp x virtual_stages model chunks): SplitLayers, with the
  // embedding and the loss counted as layers where parallel.split_counts_* say so.
  LayerRange PipelinePart(int parts, int part) const {
    const bool transformer = model.kind == ModelKind::kTransformer;
    return SplitLayers(LayerCount(model), parts, part,
                       transformer && parallel.split_counts_embedding,
                       transformer && parallel.split_counts_loss);
  }
};

Expected<Scenario> ParseScenario(std::string_view text, std::string_view filename,
                                 const Catalog& catalog);
// Loads a scenario file. The hardware profile named by `profile_path` (when
// not empty, relative to the working directory) or else by cluster.profile
// (relative to the scenario's folder) is loaded and attached; a profile that
// carries its own catalog entry (the cpu backend's "local-cpu") adds it first.
Expected<Scenario> LoadScenarioFile(const std::string& path, const Catalog& catalog,
                                    const std::string& profile_path = "");
// Attaches a profile to a parsed scenario: the profile must describe the
// scenario's GPU. Applies the measured host link (min of the two directions)
// and, on NVSwitch nodes, the NVLink efficiency implied by the measured
// all-reduce over all the node's GPUs. `file` names the profile in errors.
Status AttachProfile(std::shared_ptr<const HardwareProfile> profile, const std::string& file,
                     Scenario* s);

const char* ToString(Precision p);
const char* ToString(Schedule s);
const char* ToString(Recompute r);
const char* ToString(DpAlgorithm a);
const char* ToString(DpFusion f);
const char* ToString(ZeroImpl z);
const char* ToString(OptimizerState o);
const char* ToString(Pricing p);
const char* ToString(Optimizer o);

}  // namespace trainsim
