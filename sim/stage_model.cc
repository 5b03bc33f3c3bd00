#include "sim/stage_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainsim::sim {

namespace {

// The output head's parameters (vocab x hidden), whether tied or not.
double HeadParams(const ModelSpec& m) { return static_cast<double>(m.vocab) * m.hidden; }

// Input embedding: token (+ position, + token-type) tables.
double InputEmbeddingParams(const ModelSpec& m) {
  return EmbeddingParameterCount(m) - (m.tied_embeddings ? 0 : HeadParams(m));
}

// What ParameterCount holds outside the blocks and the embeddings: the final norm.
double FinalNormParams(const ModelSpec& m) {
  return ParameterCount(m) - LayersParameterCount(m, 0, m.layers) - EmbeddingParameterCount(m);
}

double LayerListStageParams(const ModelSpec& m, const LayerRange& range) {
  double params = 0;
  for (int i = range.first; i < range.first + range.count; ++i) params += m.layer_list[i].params;
  return params;
}

double TransformerStageParams(const ModelSpec& m, int tp, int stages, int stage,
                              const LayerRange& range) {
  double params = LayersParameterCount(m, range.first, range.first + range.count);
  if (stage == 0) params += InputEmbeddingParams(m);
  const bool last = stage == stages - 1;
  // Untied: the head lives on the last stage. Tied with pp > 1: Megatron keeps a copy of the
  // word embedding there (kept in sync by an all-reduce). Tied with pp == 1: one copy in all.
  if (last && (!m.tied_embeddings || stages > 1)) params += HeadParams(m);
  if (last) params += FinalNormParams(m);
  return params / tp;
}

// StageParameterCount, given the stage's layers and StageExpertParameterCount.
double StageParams(const Scenario& s, int stage, const LayerRange& range, double experts) {
  if (s.model.kind == ModelKind::kLayerList) return LayerListStageParams(s.model, range);
  // Expert parallelism keeps 1 / ep of the routed experts on each GPU, each split over
  // expert_tp GPUs instead of the dense layers' tp.
  const double tp = TensorParallel(s);
  return TransformerStageParams(s.model, tp, PipelineStages(s), stage, range) -
         experts * s.expert_tp() * s.parallel.ep / tp + experts;
}

}  // namespace

bool RecomputesLayer(const TrainingConfig& t, int i) {
  return t.recompute == Recompute::kFull && (i + 1) % t.recompute_every == 0;
}

int RecomputedLayers(const TrainingConfig& t, int layers) {
  return t.recompute == Recompute::kFull ? layers / t.recompute_every : 0;
}

double StageParameterCount(const Scenario& s, int stage) {
  return StageParams(s, stage, StageLayers(s, stage), StageExpertParameterCount(s, stage));
}

double StageExpertParameterCount(const Scenario& s, int stage) {
  if (s.model.kind != ModelKind::kTransformer || s.model.experts == 0) return 0;
  const LayerRange range = StageLayers(s, stage);
  return RoutedExpertParameterCount(s.model, range.first, range.first + range.count) /
         (s.expert_tp() * s.parallel.ep);
}

PieceCosts MakePieceCosts(const Scenario& s, const ComputeModel& cm) {
  const ModelSpec& m = s.model;
  const double e = ActivationBytesPerElem(s.training.precision);
  const double b = s.training.micro_batch;
  PieceCosts c;
  if (m.kind == ModelKind::kLayerList) {
    for (const LayerSpec& L : m.layer_list) {
      c.layers.push_back(ConvLayerSeconds(L, b, e, cm, ConvTransposes(s)));
      c.p2p_bytes = std::max(c.p2p_bytes, L.activation_bytes * b * e / 2);
    }
    return c;
  }
  c.layer = TransformerLayerCost(s, cm);
  if (m.experts > 0) c.moe_layer = TransformerLayerCost(s, cm, true);
  c.ep = s.parallel.ep;
  c.cp = s.parallel.cp;
  // Each GPU of a context-parallel group holds 1 / cp of the sequence.
  const double t = s.parallel.tp, tokens = b * m.seq_len / s.parallel.cp;
  c.embed_fwd_s = c.embed_bwd_s = cm.MemorySeconds(2 * tokens * m.hidden * e);
  const double loss = 2 * tokens * m.vocab / t * 4;  // fp32 softmax + cross-entropy, r+w
  const double logits_s =                            // the output layer stays in 16 bits under FP8
      cm.SixteenBit().GemmSeconds({{tokens, m.vocab / t, m.hidden * 1.0}});
  c.logits_fwd_s = logits_s + cm.MemorySeconds(loss);
  c.logits_bwd_s = 2 * logits_s + cm.MemorySeconds(loss);
  c.p2p_bytes = TransformerP2pBytes(s);
  return c;
}

StageShare StageLayerShare(const Scenario& s, int stage) {
  const ModelSpec& m = s.model;
  StageShare sh;
  sh.stage = stage;
  sh.stages = PipelineStages(s);
  sh.layers = StageLayers(s, stage);
  if (m.kind == ModelKind::kTransformer) {
    if (m.experts > 0) sh.moe_layers = MoeLayerCount(m, sh.layers.first, sh.layers.end());
    sh.recomputed_layers = RecomputedLayers(s.training, sh.layers.count);
  }
  return sh;
}

StageShare MakeStageShare(const Scenario& s, int stage) {
  StageShare sh = StageLayerShare(s, stage);
  if (s.model.experts > 0) sh.expert_params = StageExpertParameterCount(s, stage);
  sh.params = StageParams(s, stage, sh.layers, sh.expert_params);
  sh.optimizer_params = sh.params;
  if (s.parallel.zero_stage >= 1) {  // routed experts over the GPUs that hold them
    sh.optimizer_params =
        (sh.params - sh.expert_params) / s.shard_degree() + sh.expert_params / s.expert_replicas();
  }
  return sh;
}

double StageP2pBytes(const Scenario& s, const StageShare& share) {
  const ModelSpec& m = s.model;
  if (m.kind != ModelKind::kLayerList) return TransformerP2pBytes(s);
  if (share.layers.count == 0) return 0;
  const LayerSpec& L = m.layer_list[share.layers.end() - 1];
  return L.activation_bytes * s.training.micro_batch *
         ActivationBytesPerElem(s.training.precision) / 2;
}

OptimizerSeconds OptimizerStepSeconds(const Scenario& s, const ComputeModel& cm, double params) {
  const double bytes_per_param = s.training.optimizer == Optimizer::kAdam ? 32 : 16;
  OptimizerSeconds o;
  o.gpu_s = cm.MemorySeconds(params * bytes_per_param);
  o.host_s = params * bytes_per_param * s.instance.gpus / (cm.params().host_optimizer_GBps * 1e9);
  return o;
}

namespace {

PassStep Collective(PassStep::Kind kind, CollKind coll, double bytes, double window_s = 0,
                    const char* what = "") {
  return {.kind = kind, .seconds = window_s, .coll = coll, .bytes = bytes, .what = what};
}

void Compute(LayerPass* pass, double seconds) { pass->Add({.seconds = seconds}); }

// One block and its TP exchange: an all-reduce after it, or with sequence parallelism an
// all-gather before and a reduce-scatter after. Under parallel.tp_overlap the all-gather is
// pipelined with the block's first GEMM (`in_gemm_s`) and the reduce-scatter with its last
// (`out_gemm_s`); those seconds move from the block's compute into the collectives'.
void Block(const Scenario& s, LayerPass* pass, double seconds, double tp_bytes,
           double in_gemm_s = 0, double out_gemm_s = 0) {
  const bool tp = s.parallel.tp > 1, sp = s.training.sequence_parallel;
  const bool overlap = tp && s.parallel.tp_overlap;
  if (!overlap) in_gemm_s = out_gemm_s = 0;
  if (tp && sp)
    pass->Add(Collective(PassStep::Kind::kTp, CollKind::kAllGather, tp_bytes, in_gemm_s));
  Compute(pass, seconds - in_gemm_s - out_gemm_s);
  if (tp) {
    pass->Add(Collective(PassStep::Kind::kTp, sp ? CollKind::kReduceScatter : CollKind::kAllReduce,
                         tp_bytes, out_gemm_s));
  }
}

// An MoE layer's two all-to-alls (dispatch and combine) around its experts; they block the
// compute stream as Megatron-Core's token dispatcher does.
void ExpertExchanges(LayerPass* pass, const LayerCost& c) {
  if (c.ep_bytes <= 0) return;
  pass->Add(Collective(PassStep::Kind::kEp, CollKind::kAllToAll, c.ep_bytes, 0, "dispatch"));
  pass->Add(Collective(PassStep::Kind::kEp, CollKind::kAllToAll, c.ep_bytes, 0, "combine"));
}

// An MoE layer's MLP under tensor parallelism: the dispatch, the routed rows all-gathered over
// TP (LayerCost::moe_tp_bytes; none with expert_tp 1), the experts (and any shared experts,
// which exchange like a dense MLP), the reduce-scatter and the combine; not pipelined with
// GEMMs.
void MoeMlpBlock(const Scenario& s, LayerPass* pass, double seconds, const LayerCost& c) {
  if (c.ep_bytes > 0) {
    pass->Add(Collective(PassStep::Kind::kEp, CollKind::kAllToAll, c.ep_bytes, 0, "dispatch"));
  }
  if (c.moe_tp_bytes > 0) {
    pass->Add(Collective(PassStep::Kind::kTp, CollKind::kAllGather, c.moe_tp_bytes));
  }
  if (s.model.shared_experts > 0) {
    pass->Open(PassStep::Block::kMlp, true);
    Block(s, pass, seconds, c.tp_bytes);
    pass->Open(PassStep::Block::kMlp);
  } else {
    Compute(pass, seconds);
  }
  if (c.moe_tp_bytes > 0) {
    pass->Add(Collective(PassStep::Kind::kTp, CollKind::kReduceScatter, c.moe_tp_bytes));
  }
  if (c.ep_bytes > 0) {
    pass->Add(Collective(PassStep::Kind::kEp, CollKind::kAllToAll, c.ep_bytes, 0, "combine"));
  }
}

// The MLP block of a forward pass, with `seconds` of compute.
void MlpForward(const Scenario& s, LayerPass* pass, double seconds, const LayerCost& c) {
  pass->Open(PassStep::Block::kMlp);
  if (c.moe && s.parallel.tp > 1) {
    MoeMlpBlock(s, pass, seconds, c);
    return;
  }
  Block(s, pass, seconds, c.tp_bytes, c.mlp_in_gemm_s, c.mlp_out_gemm_s);
  ExpertExchanges(pass, c);
}

}  // namespace

// Context parallelism: the attention core runs on each key/value chunk as the ring brings it
// (an all-gather of K and V over the CP group pipelined with the core, cp pieces); the
// backward also sends the chunks' dK and dV back (a reduce-scatter, after the core).
LayerPass ForwardPass(const Scenario& s, const LayerCost& c) {
  LayerPass pass;
  if (c.cp_bytes > 0) {
    Block(s, &pass, c.attn_fwd_s - c.core_fwd_s, c.tp_bytes, c.attn_in_gemm_s, c.attn_out_gemm_s);
    pass.Add(Collective(PassStep::Kind::kCp, CollKind::kAllGather, c.cp_bytes, c.core_fwd_s));
  } else {
    Block(s, &pass, c.attn_fwd_s, c.tp_bytes, c.attn_in_gemm_s, c.attn_out_gemm_s);
  }
  MlpForward(s, &pass, c.mlp_fwd_s, c);
  return pass;
}

LayerPass MlpRecomputePass(const Scenario& s, const LayerCost& c) {
  LayerPass pass;
  MlpForward(s, &pass, c.mlp_replay_s, c);
  return pass;
}

LayerPass BackwardPass(const Scenario& s, const LayerCost& c) {
  LayerPass pass;
  pass.Open(PassStep::Block::kMlp);
  if (c.moe && s.parallel.tp > 1) {
    MoeMlpBlock(s, &pass, c.mlp_bwd_s, c);
  } else {
    ExpertExchanges(&pass, c);
    Block(s, &pass, c.mlp_bwd_s, c.tp_bytes, 2 * c.mlp_out_gemm_s, 2 * c.mlp_in_gemm_s);
  }
  pass.Open(PassStep::Block::kAttention);
  if (c.cp_bytes > 0) {
    pass.Add(Collective(PassStep::Kind::kCp, CollKind::kAllGather, c.cp_bytes, c.core_bwd_s));
    pass.Add(Collective(PassStep::Kind::kCp, CollKind::kReduceScatter, c.cp_bytes, 0));
    Block(s, &pass, c.attn_bwd_s - c.core_bwd_s, c.tp_bytes, 2 * c.attn_out_gemm_s,
          2 * c.attn_in_gemm_s);
  } else {
    Block(s, &pass, c.attn_bwd_s, c.tp_bytes, 2 * c.attn_out_gemm_s, 2 * c.attn_in_gemm_s);
  }
  return pass;
}

GroupKind ShardSpan(const Scenario& s) {
  return s.shard_replicas() > 1 ? GroupKind::kShard : GroupKind::kDp;
}

GradientCalls GradientReduction(const Scenario& s, double bytes) {
  GradientCalls out;
  if (s.parallel.zero_stage == 0) {
    out.calls[out.count++] = {CollKind::kAllReduce, GroupKind::kDp, bytes};
    return out;
  }
  out.calls[out.count++] = {CollKind::kReduceScatter, ShardSpan(s), bytes};
  if (s.shard_replicas() > 1) {
    out.calls[out.count++] = {CollKind::kAllReduce, GroupKind::kAcrossShards,
                              bytes / s.shard_degree()};
  }
  return out;
}

DpCall ExpertGradientReduction(const Scenario& s, double bytes) {
  return {s.parallel.zero_stage >= 1 ? CollKind::kReduceScatter : CollKind::kAllReduce,
          GroupKind::kExpertData, bytes};
}

DpCall WeightGather(const Scenario& s, double bytes) {
  return {CollKind::kAllGather, ShardSpan(s), bytes};
}

DpCall ExpertWeightGather(const Scenario&, double bytes) {
  return {CollKind::kAllGather, GroupKind::kExpertData, bytes};
}

UnitCalls ShardedUnitCalls(const Scenario& s, double unit_bytes) {
  const double unit_params = unit_bytes / ActivationBytesPerElem(s.training.precision);
  UnitCalls calls;
  switch (s.parallel.zero_impl) {
    case ZeroImpl::kDeepSpeed:
      calls.gathers =
          static_cast<int>(std::max(1.0, std::ceil(unit_params / kDeepSpeedPrefetchElements)));
      calls.reductions =
          static_cast<int>(std::max(1.0, std::ceil(unit_params / kDeepSpeedReduceBucketElements)));
      break;
    case ZeroImpl::kFsdp2:
      calls.copies = true;
      break;
    case ZeroImpl::kFsdp1:
    case ZeroImpl::kXla:
      break;
  }
  return calls;
}

bool KeepsStageUnsharded(const Scenario& s) {
  return PipelinedFsdp2(s.parallel) && s.shard_degree() > 1;
}

bool UpdatesGatheredInForward(const Scenario& s) {
  const int zero = s.parallel.zero_stage;
  return (zero == 1 || zero == 2) && s.parallel.overlap_param_gather && s.replicas() > 1;
}

double UpdateGatherBucketBytes(const Scenario& s, int stage, int chunk) {
  return stage == 0 && chunk == 0 ? s.parallel.bucket_bytes
                                  : std::numeric_limits<double>::infinity();
}

double StretchedComputeSeconds(double comm_s, double compute_s, double share) {
  return share * std::min(comm_s, compute_s / (1 - share));
}

}  // namespace trainsim::sim
