// Per-GPU memory model. Every formula is derived, with its source, in docs/memory.md.
#include "sim/memory_model.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/model_spec.h"
#include "core/units.h"

namespace trainsim::sim {
namespace {

// Reserve: an assumption, not a measurement (docs/memory.md, "Reserve").
// Fixed part: the CUDA context with its loaded kernel images (a few hundred MiB on A100/H100),
// cuBLAS workspaces (a few MiB to tens of MiB per handle and stream) and NCCL buffers (4 MiB
// per channel per peer by default, for each of the tp, pp, dp and embedding communicators):
// about 1 GiB together on a Megatron-style job.
constexpr double kReserveFixedBytes = 1.0 * kGiB;
// Proportional part: fragmentation of the caching allocator, which cannot hand out blocks
// between live tensors of different sizes; 5% of everything else the GPU holds.
constexpr double kFragmentationFraction = 0.05;

// What one stage (pipeline rank) holds, before the reserve.
struct StageMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double inflight = 0;
  double host_bytes = 0;  // offloaded to host memory (not in sum())
  double sum() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes;
  }
};

bool IsFp32Training(Precision p) { return p == Precision::kFp32 || p == Precision::kTf32; }

// Weights (and gradients, same dtype): bf16/fp16 for 16-bit and fp8 training, fp32 otherwise.
double WeightBytesPerParam(Precision p) { return IsFp32Training(p) ? 4 : 2; }

// Optimizer state per parameter. Mixed precision adds a master copy of the weights; both it and
// the moments are fp32 unless training.optimizer_state says bf16.
double OptimizerBytesPerParam(const TrainingConfig& t) {
  const OptimizerState state = t.optimizer_state;
  const double master = IsFp32Training(t.precision) ? 0 : state == OptimizerState::kBf16 ? 2 : 4;
  const double moment = state == OptimizerState::kFp32 ? 4 : 2;
  return master + (t.optimizer == Optimizer::kAdam ? 2 : 1) * moment;  // Adam: m, v; SGD: momentum
}

// Activations are 16-bit in mixed precision and fp8 training, 32-bit in fp32/tf32 training.
double ActivationScale(Precision p) { return IsFp32Training(p) ? 2 : 1; }

// --- Activations -------------------------------------------------------------------------

// Korthikanti et al. 2022, Sec. 4, generalised to the FFN width f and SwiGLU (docs/memory.md):
// 16-bit bytes one layer stores for one microbatch. `moe`: an MoE layer, whose MLP
// intermediates are per routed token (and shared-expert visit), at the expert width.
double LayerActivationBytes16(const Scenario& s, Recompute mode, bool moe) {
  const ModelSpec& m = s.model;
  const double sb = MicrobatchTokens(s);
  const double h = m.hidden, t = TensorParallel(s);
  const double f = moe && m.expert_ffn_hidden > 0 ? m.expert_ffn_hidden : m.ffn_hidden;
  // Rows through the MLP: tokens, or with MoE every routed token (padded to the capacity
  // factor) and every shared-expert visit.
  // With expert parallelism the busiest rank takes moe_imbalance times the mean.
  const double busiest = s.parallel.ep > 1 ? s.training.moe_imbalance : 1;
  const double routed =
      sb * m.experts_per_token * (m.capacity_factor > 0 ? m.capacity_factor : 1) * busiest;
  const double rows = moe ? routed + sb * m.shared_experts : sb;
  const double sp_divisor = s.training.sequence_parallel ? t : 1;
  if (mode == Recompute::kFull) return 2 * sb * h / sp_divisor;  // the layer input only
  if (mode == Recompute::kSelectiveOp) {
    // torchtitan's op-level policy (flash attention only): the block's input and the outputs
    // it keeps, those of wq, wv and the attention (split by tp), of w1 (f wide, split by tp)
    // and of w2 (the row-parallel output, whole before its reduction).
    const double kv = KvDim(m);
    return 2 * sb * h / sp_divisor + 2 * sb * (h + kv + h) / t + 2 * rows * f / t + 2 * sb * h;
  }
  if (KeepsProjections(mode)) {
    // MaxText's policies (flash attention only): the layer's input, the outputs of the q, k
    // and v projections (split by tp) and of the output projection (whole before its
    // reduction), and with "save_dot_except_mlpwi" of the MLP's down projection, a row of h
    // per routed token and shared-expert visit.
    const double qkv = m.kv_lora_rank > 0 ? 2 * QkWidth(m) + VWidth(m) : QkWidth(m) + 2 * KvDim(m);
    const double down = mode == Recompute::kSaveDotExceptMlpWi ? 2 * rows * h : 0;
    return 2 * sb * h / sp_divisor + 2 * sb * qkv / t + 2 * sb * h + down;
  }

  // Not split by tp (split by t only with SP): 2 norm inputs (4sbh), QKV input (2sbh),
  // MLP input (2sbh), two dropout masks (2sbh; none without dropout).
  const bool dropout = s.training.dropout;
  double replicated = (dropout ? 10 : 8) * sb * h;
  // Split by tp: Q, K, V and the output projection input (8sbh); MLP intermediates:
  // GELU input + fc2 input (4sbf), or SwiGLU's fused gate/up input + fc2 input (6sbf).
  // Flash attention takes K and V at their own width (grouped-query attention is not
  // expanded to the query heads), so they are 2sb kv each there.
  // MLA: queries and keys at their own width, values and the projection input at theirs
  // (QkWidth, VWidth), and the two latents, which every TP rank holds whole.
  const bool flash = s.training.flash_attention;
  const double kv = flash ? KvDim(m) : h;
  const double per_row = m.mlp == MlpKind::kSwiGlu ? 6 : 4;
  double mlp_inner = per_row * rows * f;
  double attention =
      m.kv_lora_rank > 0 ? 2 * sb * (2 * QkWidth(m) + 2 * VWidth(m)) : 2 * sb * (h + 2 * kv + h);
  const double latents =
      m.kv_lora_rank > 0 ? 2 * sb * (m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim) : 0;
  // MoE: the experts' input, every routed token's hidden state in expert order (2 sb k h,
  // kept by every TP rank) and the router's fp32 probabilities (4 sb E).
  double moe_inputs = moe ? 2 * routed * h + 4 * sb * m.experts : 0;
  // Selective recompute's modules (training.recompute_modules) beyond the attention core drop
  // what they recompute: "layernorm" the QKV and MLP inputs, the two norms' outputs;
  // "mla_up_proj" the queries, keys and values projected out of the latents; "mlp" (a dense
  // layer) and "moe" (an MoE layer) every MLP intermediate and the MoE inputs; "moe_act" the
  // routed experts' activation output; "shared_experts" the shared experts' intermediates.
  const unsigned modules = mode == Recompute::kSelective ? s.training.recompute_modules : 0;
  if (modules & ~kRecomputeCoreAttn) {
    if (modules & kRecomputeLayernorm) replicated -= 4 * sb * h;
    if (m.kv_lora_rank > 0 && (modules & kRecomputeMlaUpProj)) attention = 2 * sb * VWidth(m);
    const double shared_rows = moe ? sb * m.shared_experts : 0;
    if (modules & (moe ? kRecomputeMoe : kRecomputeMlp)) {
      mlp_inner = moe_inputs = 0;
    } else {
      if (moe && (modules & kRecomputeMoeAct)) mlp_inner -= 2 * (rows - shared_rows) * f;
      if (modules & kRecomputeSharedExperts) mlp_inner -= per_row * shared_rows * f;
    }
  }
  const double split = attention + mlp_inner;
  // Attention scores: softmax output (2as^2b), its dropout mask (as^2b), dropout output
  // (2as^2b); without dropout the softmax output alone. Dropped by selective recompute's
  // attention core; never stored with flash attention.
  const double score_bytes = dropout ? 5.0 : 2.0;
  const bool keeps_scores = mode == Recompute::kNone ||
                            (mode == Recompute::kSelective && !(modules & kRecomputeCoreAttn));
  const double scores = keeps_scores && !flash ? score_bytes * m.heads * m.seq_len * sb : 0;
  return (replicated + latents + moe_inputs) / sp_divisor + (split + scores) / t;
}

// Bytes one layer stores for one microbatch in `mode`, at the scenario's precision. Flash
// attention adds its softmax statistics: one fp32 logsumexp per head and query, 4 a s b / t
// (FlashAttention-2, Algorithm 1, output L), kept unless the whole layer is recomputed.
double LayerBytes(const Scenario& s, Recompute mode, bool moe = false) {
  const ModelSpec& m = s.model;
  const double sb = MicrobatchTokens(s);
  // MaxText's policies keep no attention output: the kernel runs again in the backward.
  const bool stats =
      s.training.flash_attention && mode != Recompute::kFull && !KeepsProjections(mode);
  const double logsumexp = stats ? 4.0 * m.heads * sb / TensorParallel(s) : 0;
  return LayerActivationBytes16(s, mode, moe) * ActivationScale(s.training.precision) + logsumexp;
}

// Layers whose activations a GPU holds at once with activation offload: two
// on the way out to host memory, two on the way back (docs/memory.md).
constexpr int kOffloadResidentLayers = 4;

double TransformerStageActivations(const Scenario& s, const StageShare& share, double inflight) {
  const ModelSpec& m = s.model;
  const double scale = ActivationScale(s.training.precision);
  const int layers = share.layers.count, stage = share.stage;
  const int moe = share.moe_layers;
  const double per_layer = LayerActivationBytes(s, layers, moe);
  double bytes = s.training.offload_activations
                     ? std::min(layers, kOffloadResidentLayers) * per_layer
                     : layers * per_layer * inflight;
  if (share.recomputed_layers > 0 || (IsOpLevelPolicy(s.training.recompute) && layers > 0)) {
    // The layer being recomputed materialises all of its activations for one microbatch.
    bytes += LayerBytes(s, Recompute::kNone, moe > 0);
  } else if (s.training.recompute == Recompute::kSelective &&
             s.training.recompute_modules != kRecomputeCoreAttn && layers > 0) {
    // The modules being recomputed materialise what they dropped, one layer at a time.
    bytes +=
        LayerBytes(s, Recompute::kNone, moe > 0) - LayerBytes(s, Recompute::kSelective, moe > 0);
  }
  if (s.parallel.cp > 1 && layers > 0) {
    // Context parallelism: the layer whose attention runs holds the keys and values of the
    // whole sequence, gathered from the CP group, and in its backward their gradients until
    // the reduce-scatter: one layer and microbatch at a time, 16-bit (fp32 with scale 2).
    const double kv_width = m.kv_lora_rank > 0 ? QkWidth(m) + VWidth(m) : 2 * KvDim(m);
    bytes += 2 * 2.0 * m.seq_len * s.training.micro_batch * kv_width / TensorParallel(s) * scale;
  }
  const double sb = MicrobatchTokens(s);
  const double sp_divisor = s.training.sequence_parallel ? TensorParallel(s) : 1;
  if (stage == 0) bytes += 2 * sb * m.hidden / sp_divisor * scale * inflight;  // embedding output
  if (share.last()) {
    bytes += 4 * sb * m.vocab / TensorParallel(s);  // fp32 logits for the loss, one microbatch
  }
  return bytes;
}

double LayerListStageActivations(const Scenario& s, const StageShare& share, double inflight) {
  const ModelSpec& m = s.model;
  double per_sample = 0;
  for (int i = share.layers.first; i < share.layers.end(); ++i) {
    per_sample += m.layer_list[i].activation_bytes;
  }
  return per_sample * s.training.micro_batch * inflight * ActivationScale(s.training.precision);
}

// --- Stages ------------------------------------------------------------------------------

// The weights of the largest ZeRO-3 sharding unit of the stage: a layer, with
// the embedding or output head joined to the first or last (workload.cc).
double LargestUnitParams(const Scenario& s, const StageShare& share) {
  const ModelSpec& m = s.model;
  const int first = share.layers.first, end = share.layers.end();
  double largest = 0;
  if (m.kind == ModelKind::kLayerList) {
    for (int i = first; i < end; ++i) largest = std::max(largest, m.layer_list[i].params);
    return largest;
  }
  // A layer's share on this GPU: its dense part split by tp, with expert parallelism its
  // routed experts' by expert_tp x ep.
  const double tp = TensorParallel(s), ep = s.parallel.ep;
  double inside = 0;
  for (int l = first; l < end; ++l) {
    const double routed = ep > 1 ? RoutedExpertParameterCount(m, l, l + 1) : 0;
    const double unit = (LayerParameterCount(m, l) - routed) / tp + routed / (s.expert_tp() * ep);
    largest = std::max(largest, unit);
    inside += unit;
  }
  return largest + (share.params - inside);
}

// DeepSpeed ZeRO-3 gathers per parameterised submodule: the stage's largest on this GPU, a
// linear layer (the MLP's up projection, gate and up fused under SwiGLU as Megatron-DeepSpeed
// fuses them; the fused QKV projection; the output projection; an expert's) or the embedding
// table (first stage) and the head (last).
double LargestSubmoduleParams(const Scenario& s, const StageShare& share) {
  const ModelSpec& m = s.model;
  if (m.kind == ModelKind::kLayerList) return LargestUnitParams(s, share);
  const double h = m.hidden, tp = TensorParallel(s);
  const double gated = m.mlp == MlpKind::kSwiGlu ? 2 : 1;
  const bool dense = MoeLayerCount(m, 0, m.layers) < m.layers;
  const double expert_f = m.expert_ffn_hidden > 0 ? m.expert_ffn_hidden : m.ffn_hidden;
  double largest =
      std::max({h * (h + 2 * KvDim(m)) / tp, h * h / tp, dense ? gated * m.ffn_hidden * h / tp : 0,
                m.experts > 0 ? gated * expert_f * h / s.expert_tp() : 0});
  if (share.first() || share.last()) largest = std::max(largest, m.vocab * h / tp);
  return largest;
}

StageMemory ComputeStage(const Scenario& s, int stage) {
  const StageShare share = MakeStageShare(s, stage);
  const double params = share.params;
  const Precision p = s.training.precision;
  const int zero = s.parallel.zero_stage;
  // ZeRO shards over the shard group: the whole DP group, or a hybrid group.
  const double shards = std::max(1, s.shard_degree());
  StageMemory mem;
  mem.weights_bytes = params * WeightBytesPerParam(p);
  mem.gradients_bytes = params * WeightBytesPerParam(p);
  // ZeRO >= 1 shards the state (the routed experts' over the dp / ep ranks that hold them).
  mem.optimizer_bytes = share.optimizer_params * OptimizerBytesPerParam(s.training);
  if (zero >= 2) mem.gradients_bytes /= shards;
  if (zero >= 3) {
    // Each GPU keeps its shard; a gathered unit and the prefetched next one
    // are whole, and so is the unit whose gradients are being reduced. With
    // parameter offload the shards of weights and gradients live in host
    // memory (FSDP keeps the sharded flat parameter and its gradient there).
    const double unit = LargestUnitParams(s, share) * WeightBytesPerParam(p);
    // The routed experts (expert parallelism) shard over the GPUs that hold them.
    const double experts = share.expert_params * WeightBytesPerParam(p);
    double weight_shard = (mem.weights_bytes - experts) / shards + experts / s.expert_replicas();
    double grad_shard = mem.gradients_bytes - experts / shards + experts / s.expert_replicas();
    if (s.training.offload_params) {
      mem.host_bytes += weight_shard + grad_shard;
      weight_shard = grad_shard = 0;
    }
    double gathered = 2 * unit, reducing = unit;
    if (s.parallel.zero_impl == ZeroImpl::kDeepSpeed) {
      // Per submodule (kDeepSpeed*, stage_model.h): the parameters kept within the reuse
      // distance (about that many around the turn from forward to backward) and the prefetch
      // bucket, at least the largest submodule; its gradient and the contiguous reduce bucket,
      // allocated whole (at most the stage).
      const double sub = LargestSubmoduleParams(s, share), here = params;
      gathered =
          std::min(here, std::max(sub, kDeepSpeedMaxReuseDistance) + kDeepSpeedPrefetchElements) *
          WeightBytesPerParam(p);
      reducing = (sub + std::min(here, kDeepSpeedReduceBucketElements)) * WeightBytesPerParam(p);
    }
    mem.weights_bytes = weight_shard + gathered;
    mem.gradients_bytes = grad_shard + reducing;
    // Without resharding after forward every layer's gathered weights wait for its backward:
    // at the turn from forward to backward the whole stage is gathered.
    if (!s.parallel.reshard_after_forward) {
      mem.weights_bytes = weight_shard + params * WeightBytesPerParam(p);
    }
    if (KeepsStageUnsharded(s)) {
      // FSDP2 under a pipeline also accumulates the stage's gradients unsharded, in the reduce
      // dtype, until the chunk's last backward.
      mem.gradients_bytes =
          grad_shard + params * WeightBytesPerParam(p) * GradReduceScale(s.training);
    }
  }
  if (s.training.offload_optimizer) {
    mem.host_bytes += mem.optimizer_bytes;
    mem.optimizer_bytes = 0;
  }
  mem.inflight = InflightMicrobatches(s, stage);
  mem.activations_bytes = s.model.kind == ModelKind::kLayerList
                              ? LayerListStageActivations(s, share, mem.inflight)
                              : TransformerStageActivations(s, share, mem.inflight);
  if (s.training.offload_activations) {
    const int layers = share.layers.count;
    mem.host_bytes += layers * LayerActivationBytes(s, layers, share.moe_layers) * mem.inflight;
  }
  return mem;
}

double ReserveBytes(double other_bytes) {
  return kReserveFixedBytes + kFragmentationFraction * other_bytes;
}

std::string Gib(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f", bytes / kGiB);
  return buffer;
}

// Capacity as the catalog gives it: "40", "79.6".
std::string CapacityGib(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g", bytes / kGiB);
  return buffer;
}

}  // namespace

double LayerActivationBytes(const Scenario& s, int layers, int moe_layers) {
  if (s.model.kind != ModelKind::kTransformer || layers == 0) return 0;
  // One layer of each kind in `mode`, on average over the stage's mix.
  auto bytes = [&](Recompute mode) {
    if (moe_layers == 0) return LayerBytes(s, mode);
    return ((layers - moe_layers) * LayerBytes(s, mode) + moe_layers * LayerBytes(s, mode, true)) /
           layers;
  };
  const int recomputed = RecomputedLayers(s.training, layers);
  if (s.training.recompute != Recompute::kFull || recomputed == layers) {
    return bytes(s.training.recompute);
  }
  // The layers full recompute skips keep everything.
  return (recomputed * bytes(Recompute::kFull) + (layers - recomputed) * bytes(Recompute::kNone)) /
         layers;
}

double InflightMicrobatches(const Scenario& s, int stage) {
  const int64_t m = std::max<int64_t>(1, s.microbatches_per_pipeline());
  const int pp = PipelineStages(s);
  switch (s.parallel.schedule) {
    case Schedule::kGpipe:
      return static_cast<double>(m);
    case Schedule::k1F1B:
      return static_cast<double>(std::min<int64_t>(pp - stage, m));
    case Schedule::kInterleaved: {
      // Megatron's interleaved 1F1B: rank i runs 2(pp - i - 1) + (v - 1)pp warm-up forward
      // passes of model chunks, then holds one more; each chunk is 1/v of the stage.
      const int64_t v = std::max(1, s.parallel.virtual_stages);
      const int64_t warmup = 2 * (pp - stage - 1) + (v - 1) * pp;
      return static_cast<double>(std::min(warmup + 1, m * v)) / v;
    }
  }
  return static_cast<double>(m);
}

double CheckpointBytesPerParam(const Scenario& s) {
  return WeightBytesPerParam(s.training.precision) + OptimizerBytesPerParam(s.training);
}

MemoryBreakdown ComputeMemory(const Scenario& s) {
  MemoryBreakdown best;
  for (int stage = 0; stage < PipelineStages(s); ++stage) {
    const StageMemory mem = ComputeStage(s, stage);
    // Host memory: every GPU of a node offloads its own share; the worst
    // stage stands for all of them.
    best.host_bytes_per_node = std::max(best.host_bytes_per_node, mem.host_bytes * s.instance.gpus);
    const double reserve = ReserveBytes(mem.sum());
    if (stage > 0 && mem.sum() + reserve <= best.total_bytes) continue;
    best.weights_bytes = mem.weights_bytes;
    best.gradients_bytes = mem.gradients_bytes;
    best.optimizer_bytes = mem.optimizer_bytes;
    best.activations_bytes = mem.activations_bytes;
    best.reserve_bytes = reserve;
    best.total_bytes = mem.sum() + reserve;
    best.worst_stage = stage;
    best.inflight_microbatches = mem.inflight;
  }
  best.host_capacity_bytes = s.instance.ram_gib * kGiB;
  best.capacity_bytes = s.instance.gpu_mem_gib * kGiB;
  best.fits =
      best.total_bytes <= best.capacity_bytes &&
      (best.host_capacity_bytes <= 0 || best.host_bytes_per_node <= best.host_capacity_bytes);
  return best;
}

std::string DescribeShortfall(const MemoryBreakdown& m, const Scenario& s) {
  const std::string instance = s.instance.name.empty() ? "the instance" : s.instance.name;
  if (m.total_bytes <= m.capacity_bytes) {
    return "offload needs " + Gib(m.host_bytes_per_node) + " GiB of host memory per node but " +
           instance + " has " + CapacityGib(m.host_capacity_bytes) + " GiB";
  }
  return "needs " + Gib(m.total_bytes) + " GiB per GPU on stage " + std::to_string(m.worst_stage) +
         " (weights " + Gib(m.weights_bytes) + ", gradients " + Gib(m.gradients_bytes) +
         ", optimizer " + Gib(m.optimizer_bytes) + ", activations " + Gib(m.activations_bytes) +
         ", reserve " + Gib(m.reserve_bytes) + ") but " + instance + " has " +
         CapacityGib(m.capacity_bytes) + " GiB per GPU";
}

}  // namespace trainsim::sim
