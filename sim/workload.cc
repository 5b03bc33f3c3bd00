#include "sim/workload.h"

#include <algorithm>
#include <deque>
#include <initializer_list>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "sim/memory_model.h"
#include "sim/stage_model.h"

namespace trainsim::sim {

namespace {

double Flops(const std::vector<GemmDims>& gemms) {
  double flops = 0;
  for (const GemmDims& g : gemms) flops += 2 * g.m * g.n * g.k;
  return flops;
}

// The attention's weight GEMMs before its core, on this GPU (rows = tokens):
// Q, K and V as one GEMM, or MLA's projections, whose down projections to the
// latents every TP rank computes whole (Megatron-Core's MLA splits the heads).
std::vector<GemmDims> AttentionInGemms(const ModelSpec& m, double tokens, double t) {
  const double h = m.hidden;
  if (m.kv_lora_rank == 0) return {{tokens, (h + 2 * KvDim(m)) / t, h}};
  const double heads = m.heads, qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
  std::vector<GemmDims> g;
  if (m.q_lora_rank > 0) {
    g.push_back({tokens, static_cast<double>(m.q_lora_rank), h});
    g.push_back({tokens, heads * qk_head / t, static_cast<double>(m.q_lora_rank)});
  } else {
    g.push_back({tokens, heads * qk_head / t, h});
  }
  g.push_back({tokens, static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim), h});
  g.push_back({tokens, heads * (m.qk_nope_head_dim + m.v_head_dim) / t,
               static_cast<double>(m.kv_lora_rank)});
  return g;
}

// The MLP's GEMMs on this GPU: dense, the up (and gate) projection then the
// down one over every token; MoE (moe = true), the router over every token,
// each routed expert over its even share of the routed tokens (padded to the
// capacity factor where there is one) and the shared experts over every token.
struct MlpShape {
  std::vector<GemmDims> gemms;
  double rows = 0;   // rows into this GPU's MLP GEMMs (one per token and expert visit)
  double elems = 0;  // this GPU's share of their FFN-wide intermediate (rows x width / split)
  double width = 0;  // FFN width of one MLP (dense or expert)
  double router_flops = 0;
};

MlpShape MlpGemms(const Scenario& s, double tokens, bool moe) {
  const ModelSpec& m = s.model;
  const double t = s.parallel.tp, ep = s.parallel.ep;
  const double h = m.hidden, gated = m.mlp == MlpKind::kSwiGlu ? 2 : 1;
  MlpShape shape;
  if (!moe) {
    shape.width = m.ffn_hidden, shape.rows = tokens, shape.elems = tokens * shape.width / t;
    shape.gemms = {{tokens, gated * shape.width / t, h}, {tokens, h, shape.width / t}};
    return shape;
  }
  shape.width = m.expert_ffn_hidden > 0 ? m.expert_ffn_hidden : m.ffn_hidden;
  // With expert parallelism this GPU holds experts / ep experts and computes the tokens
  // the ep ranks of its group route to them: as many rows in all, on the busiest rank
  // moe_imbalance times as many.
  const double busiest = ep > 1 ? s.training.moe_imbalance : 1;
  const double routed =
      tokens * m.experts_per_token * (m.capacity_factor > 0 ? m.capacity_factor : 1) * busiest;
  const int local = m.experts / s.parallel.ep;
  // Split over expert_tp GPUs (tp, or 1: each expert whole, and this GPU computes the 1 / tp of
  // the routed rows its EP group sends it; sequence parallelism gives each TP rank its own).
  const double etp = s.expert_tp(), routed_here = routed * etp / t;
  const double per_expert = routed_here / local, f = shape.width;
  shape.rows = routed_here + tokens * m.shared_experts;
  shape.elems = routed_here * f / etp + tokens * m.shared_experts * f / t;
  shape.gemms.push_back({tokens, static_cast<double>(m.experts), h});
  shape.router_flops = Flops({shape.gemms.back()});
  for (int i = 0; i < local; ++i) shape.gemms.push_back({per_expert, gated * f / etp, h});
  if (m.shared_experts > 0) shape.gemms.push_back({tokens, m.shared_experts * gated * f / t, h});
  for (int i = 0; i < local; ++i) shape.gemms.push_back({per_expert, h, f / etp});
  if (m.shared_experts > 0) shape.gemms.push_back({tokens, h, m.shared_experts * f / t});
  return shape;
}

}  // namespace

// Fills c's selective-recompute figures (LayerCost::selective_recompute_s, mlp_replay_s and
// selective_recompute_flops) from its forward's parts: `norm`, `residual` and `act` are the
// bytes one norm, one residual add and the MLP's activation function move; c's forward figures
// are set. The FLOPs leave out the attention core's, which BuildStepProgram counts from the
// model.
void SelectiveRecompute(const Scenario& s, const ComputeModel& cm,
                        const std::vector<GemmDims>& attn_in, const MlpShape& mlp, double norm,
                        double residual, double act, LayerCost* c) {
  // Filled whatever training.recompute is (the planner's estimator prices every recompute mode
  // from one scenario's costs); only selective recompute runs them.
  const TrainingConfig& t = s.training;
  const ModelSpec& m = s.model;
  auto recomputes = [&](RecomputeModule module) { return (t.recompute_modules & module) != 0; };
  if (recomputes(kRecomputeCoreAttn) && !t.flash_attention) {
    c->selective_recompute_s += c->core_fwd_s;
  }
  if (recomputes(kRecomputeLayernorm)) c->selective_recompute_s += 2 * cm.MemorySeconds(norm);
  if (recomputes(kRecomputeMlaUpProj) && m.kv_lora_rank > 0) {
    // The up-projections out of the latents: AttentionInGemms lists the query's down and up
    // projections (or one query projection without q_lora_rank), then the key/value ones.
    std::vector<GemmDims> up = {attn_in.back()};
    if (m.q_lora_rank > 0) up.push_back(attn_in[1]);
    c->selective_recompute_s += cm.GemmSeconds(up);
    c->selective_recompute_flops += Flops(up);
  }
  const bool replay = recomputes(c->moe ? kRecomputeMoe : kRecomputeMlp);
  if (replay) {
    // The block's forward but its norm and residual add, which Megatron-Core's MLP and MoE
    // modules do not contain.
    c->mlp_replay_s = c->mlp_fwd_s - cm.MemorySeconds(norm) - cm.MemorySeconds(residual);
    c->selective_recompute_flops += Flops(mlp.gemms);
    return;
  }
  if (!c->moe) return;
  const double shared_rows = MicrobatchTokens(s) * m.shared_experts;
  const double routed_share = (mlp.rows - shared_rows) / mlp.rows;
  if (recomputes(kRecomputeMoeAct)) {
    c->selective_recompute_s += cm.MemorySeconds(act * routed_share);
  }
  if (recomputes(kRecomputeSharedExperts) && shared_rows > 0) {
    // The shared experts' two GEMMs (the last of each projection's list) and activation.
    const std::vector<GemmDims> shared = {mlp.gemms[mlp.gemms.size() / 2], mlp.gemms.back()};
    c->selective_recompute_s += cm.GemmSeconds(shared) + cm.MemorySeconds(act * (1 - routed_share));
    c->selective_recompute_flops += Flops(shared);
  }
}

LayerCost TransformerLayerCost(const Scenario& s, const ComputeModel& cm, bool moe) {
  const ModelSpec& m = s.model;
  const double b = s.training.micro_batch, seq = m.seq_len, h = m.hidden, t = s.parallel.tp;
  const double a = m.heads;
  const double kv = KvDim(m);
  const double e = ActivationBytesPerElem(s.training.precision);
  // Context parallelism: this GPU's 1 / cp of each sequence, its queries against every key.
  const double cp = s.parallel.cp;
  const double tokens = MicrobatchTokens(s);
  const std::vector<GemmDims> attn_in = AttentionInGemms(m, tokens, t);
  const GemmDims attn_out{tokens, h, VWidth(m) / t};
  const MlpShape mlp_shape = MlpGemms(s, tokens, moe);
  const double f = mlp_shape.width;
  // GEMM FLOPs (2 per multiply-add), this GPU's share under tensor parallelism.
  const double qkv = Flops(attn_in);
  const double scores = 2 * tokens * seq * QkWidth(m) / t, av = 2 * tokens * seq * VWidth(m) / t;
  const double proj = Flops({attn_out});
  const double mlp = Flops(mlp_shape.gemms);
  // Memory-bound kernels, bytes read + written: norm (r+w of b*s*h), softmax
  // and dropout over the score matrix (2 passes, r+w, 1 without dropout; none
  // with flash attention), dropout + residual (3 tensors), activation function over the
  // FFN width (r+w). Sequence parallelism runs the norms, dropouts and
  // residual adds on this rank's 1/t of the sequence (that is what it is
  // for: without it every TP rank repeats them on the whole sequence).
  const double sequence_share = s.training.sequence_parallel ? 1 / t : 1;
  const double norm = 2 * tokens * h * e * sequence_share;
  const double softmax = (s.training.dropout ? 4 : 2) * b * (a / t) * seq * seq * e;
  const double residual = 3 * tokens * h * e * sequence_share;
  const double act = 2 * mlp_shape.elems * e;
  // MoE: tokens are permuted into expert order before the experts and back
  // after (a copy of every routed token's hidden state each way, r+w).
  const double permute = moe ? 2 * tokens * m.experts_per_token * h * e : 0;
  const double ep = s.parallel.ep;
  // The weight GEMMs' shapes (rows = tokens), as calibrate/plan.cc measures them.
  const double up = f * (m.mlp == MlpKind::kSwiGlu ? 2 : 1);
  const double qkv_s = cm.GemmSeconds(attn_in);
  const double proj_s = cm.GemmSeconds({attn_out});
  const double mlp_s = cm.GemmSeconds(mlp_shape.gemms);
  // The attention core stays in 16 bits under FP8 training (ComputeModel::SixteenBit).
  const ComputeModel core = cm.SixteenBit();
  // Without flash attention the core is two batched GEMMs per head; a head size that is not a
  // multiple of 8 elements misaligns their 16-bit rows (ModelParams::unaligned_gemm_efficiency).
  // Only 16-bit cores: fp32/tf32 ones need 4-element alignment.
  const bool unaligned_heads = e == 2 && m.hidden % m.heads == 0 && (m.hidden / m.heads) % 8 != 0;
  const auto core_gemm_s = [&](double flops) {
    return unaligned_heads ? core.UnalignedGemmSeconds(flops) : core.GemmSeconds(flops);
  };
  LayerCost c;
  double flash_bwd_s = 0;
  if (s.training.flash_attention) {
    // FlashAttention (Dao et al. 2022; FlashAttention-2, Dao 2023): forward and backward are
    // one kernel each that keep the score matrix on chip. Forward: the QK^T and AV GEMMs,
    // reading Q, K, V and writing O and the fp32 logsumexp. Backward: 5 GEMMs of the size of
    // one forward GEMM (QK^T again, dV, dP, dQ, dK: 2.5x the forward's FLOPs, FlashAttention-2
    // Sec. 4.1), reading Q, K, V, O, dO and the logsumexp and writing dQ, dK, dV.
    // With context parallelism the keys and values of every chunk are read (b s, not b s / cp).
    const double q = tokens * QkWidth(m) / t * e;
    const double k_v = b * seq * (m.kv_lora_rank > 0 ? QkWidth(m) + VWidth(m) : 2 * kv) / t * e;
    const double logsumexp = 4 * b * (a / t) * seq / cp;
    if (cp > 1) c.cp_bytes = k_v;  // what the ring brings to this GPU, all chunks
    c.core_fwd_s = core.AttentionSeconds(scores + av, q + k_v + q + logsumexp);
    flash_bwd_s = core.AttentionSeconds(2.5 * (scores + av), 3 * q + k_v + logsumexp + q + k_v);
  } else {
    c.core_fwd_s = core_gemm_s(scores) + core_gemm_s(av) + cm.MemorySeconds(softmax);
  }
  c.attn_fwd_s =
      cm.MemorySeconds(norm) + qkv_s + c.core_fwd_s + proj_s + cm.MemorySeconds(residual);
  c.mlp_fwd_s = cm.MemorySeconds(norm) + mlp_s + cm.MemorySeconds(act) +
                cm.MemorySeconds(residual) + (moe ? 2 * cm.MemorySeconds(permute) : 0);
  // Backward: input and weight gradients, each a GEMM the size of the forward one.
  c.attn_bwd_s = s.training.flash_attention
                     ? cm.MemorySeconds(2 * norm) + 2 * (qkv_s + proj_s) + flash_bwd_s +
                           cm.MemorySeconds(2 * residual)
                     : cm.MemorySeconds(2 * norm) +
                           2 * (qkv_s + core_gemm_s(scores) + core_gemm_s(av) + proj_s) +
                           cm.MemorySeconds(2 * softmax + 2 * residual);
  c.mlp_bwd_s = cm.MemorySeconds(2 * norm) + 2 * mlp_s + cm.MemorySeconds(2 * act + 2 * residual) +
                (moe ? 2 * cm.MemorySeconds(permute) : 0);
  if (s.training.precision == Precision::kFp8) {
    // FP8 linear layers quantize their 16-bit activations in memory-bound kernels (Transformer
    // Engine; torchao float8): forward each GEMM's input (read 2 bytes, write 1; the amax of the
    // scaling is fused into the cast), backward the output gradient the same way and the fp8
    // input transposed for the weight-gradient GEMM (read 1, write 1). Weights are cast once per
    // step (Transformer Engine caches them across microbatches), so not counted here.
    double qkv_in = 0, qkv_out = 0;  // elements per token into and out of the QKV GEMMs
    for (const GemmDims& g : attn_in) qkv_in += g.k, qkv_out += g.n;
    const double rows = mlp_shape.rows, elems = mlp_shape.elems;
    const double attn_in = tokens * (qkv_in + VWidth(m) / t), mlp_in = rows * h + elems;
    const double attn_out = tokens * (qkv_out + h), mlp_out = rows * h + elems * up / f;
    c.attn_fwd_s += cm.MemorySeconds(3 * attn_in);
    c.mlp_fwd_s += cm.MemorySeconds(3 * mlp_in);
    c.attn_bwd_s += cm.MemorySeconds(3 * attn_out + 2 * attn_in);
    c.mlp_bwd_s += cm.MemorySeconds(3 * mlp_out + 2 * mlp_in);
  }
  c.core_bwd_s = flash_bwd_s;
  c.attn_in_gemm_s = qkv_s;
  c.attn_out_gemm_s = proj_s;
  // The MLP's GEMMs are timed as one (GemmSeconds): split by FLOPs (the router
  // goes with the up projections).
  const double up_share =
      moe ? (mlp_shape.router_flops + (mlp - mlp_shape.router_flops) * up / (up + f)) / mlp
          : up / (up + f);
  c.mlp_in_gemm_s = mlp_s * up_share;
  c.mlp_out_gemm_s = mlp_s * (1 - up_share);
  // torchtitan's op-level policy keeps the outputs of SDPA and of every other matmul of a
  // block, counted in forward order wq, wk, wv, wo, w1, (w3,) w2: wq, wv, w1 and w2 are kept,
  // wk, wo and w3 (SwiGLU) recomputed; with a GELU MLP (w1, w2) the 6th, w2, is recomputed.
  // Everything else of the forward is re-run: the norms, activations and residual adds.
  const double qkv_kept = qkv_s * (h + kv) / (h + 2 * kv);
  const double mlp_kept =
      m.mlp == MlpKind::kSwiGlu ? c.mlp_in_gemm_s / 2 + c.mlp_out_gemm_s : c.mlp_in_gemm_s;
  c.op_recompute_s = c.attn_fwd_s + c.mlp_fwd_s - c.core_fwd_s - qkv_kept - mlp_kept;
  // MaxText's policies keep the q, k, v and output projections' outputs; the backward needs
  // the down projection's input, not its output, so it is not run again either.
  c.proj_recompute_s = c.attn_fwd_s + c.mlp_fwd_s - qkv_s - proj_s - c.mlp_out_gemm_s;
  c.fwd_flops = qkv + scores + av + proj + mlp;
  c.core_flops = scores + av;
  c.tp_bytes = tokens * h * e;
  // Every routed token's hidden state goes to its experts' ranks and comes back, padded to
  // the capacity factor; the busiest rank's share sets the pace. Under tensor parallelism
  // Megatron-Core's all-to-all token dispatcher (token_dispatcher.py: permute, all-to-all
  // over EP, all-gather over TP; reduce-scatter over TP, all-to-all, unpermute) has each TP
  // rank dispatch its sequence-parallel 1/tp of the tokens, and gathers the routed rows
  // inside the TP group afterwards.
  if (moe) {
    const double routed_bytes = tokens * m.experts_per_token * h * e *
                                (m.capacity_factor > 0 ? m.capacity_factor : 1) *
                                (ep > 1 ? s.training.moe_imbalance : 1);
    if (ep > 1) c.ep_bytes = routed_bytes / t;
    if (s.expert_tp() > 1) c.moe_tp_bytes = routed_bytes;  // expert_tp 1: no TP exchange
    c.moe = true;
  }
  SelectiveRecompute(s, cm, attn_in, mlp_shape, norm, residual, act, &c);
  return c;
}

double TransformerP2pBytes(const Scenario& s) {
  const double tokens = MicrobatchTokens(s);
  const double bytes = tokens * s.model.hidden * ActivationBytesPerElem(s.training.precision);
  // Scatter/gather optimisation: each TP rank sends 1/tp of the activation.
  return s.parallel.pp_scatter_gather ? bytes / s.parallel.tp : bytes;
}

namespace {

// Element-wise kernels over a tensor of `bytes`, each reading and writing the
// given number of passes over it.
double PassSeconds(const ComputeModel& cm, double bytes, std::initializer_list<double> kernels) {
  double seconds = 0;
  for (double passes : kernels) seconds += cm.MemorySeconds(passes * bytes);
  return seconds;
}

// A layer of a layer-list model (a convolution and its epilogue) for b samples
// at e bytes per element (docs/model.md section 2). The GEMM: forward reads the
// input and the weights and writes the output; backward computes the input
// gradient (reads dy and the weights, writes dx) and the weight gradient (reads
// dy and x, writes dW), each with the forward's FLOPs. Epilogue passes over the
// output y, forward / backward: BatchNorm 1 (statistics) + 2 (normalise) / 2
// (reductions over x and dy) + 3 (dx); ReLU 2 / 3 (dy and y read, dx written);
// residual add 3 / 3 (the two branches' gradients summed at the block input).
}  // namespace

bool ConvTransposes(const Scenario& s) {
  const Precision p = s.training.precision;
  return s.training.memory_format == MemoryFormat::kNchw &&
         (p == Precision::kFp16 || p == Precision::kBf16 || p == Precision::kFp8);
}

LayerSeconds ConvLayerSeconds(const LayerSpec& L, double b, double e, const ComputeModel& cm,
                              bool transposes) {
  const double scale = b * e / 2;  // the spec's bytes are per sample at 2 bytes/element
  const double out = L.activation_bytes * scale, in = L.input_bytes * scale;
  const double weights = L.params * e, flops = L.forward_flops * b;
  LayerSeconds t;
  t.fwd = cm.ConvSeconds(flops, in + weights + out);
  t.bwd = 2 * cm.ConvSeconds(flops, out + weights + in);
  if (transposes) {
    // NCHW on tensor cores: each convolution reads its NCHW activation operands and writes
    // NHWC copies, and writes its result back to NCHW (read + write of each): the forward
    // transposes x and y, the input-gradient convolution dy and dx, the weight-gradient
    // convolution x and dy.
    t.fwd += cm.MemorySeconds(2 * (in + out));
    t.bwd += cm.MemorySeconds(4 * (in + out));
  }
  switch (L.epilogue) {
    case Epilogue::kNone:
      break;
    case Epilogue::kBn:
      t.fwd += PassSeconds(cm, out, {1, 2});
      t.bwd += PassSeconds(cm, out, {2, 3});
      break;
    case Epilogue::kBnRelu:
      t.fwd += PassSeconds(cm, out, {1, 2, 2});
      t.bwd += PassSeconds(cm, out, {3, 2, 3});
      break;
    case Epilogue::kBnAddRelu:
      t.fwd += PassSeconds(cm, out, {1, 2, 3, 2});
      t.bwd += PassSeconds(cm, out, {3, 3, 2, 3});
      break;
  }
  return t;
}

namespace {

// Appends ops, merging consecutive compute of the same phase and microbatch.
class Emitter {
 public:
  explicit Emitter(StageProgram* out) : out_(out) {}
  void Compute(OpPhase phase, int mb, double seconds) {
    if (seconds <= 0) return;
    std::vector<Op>& ops = out_->ops;
    if (!ops.empty() && ops.back().kind == OpKind::kCompute && ops.back().phase == phase &&
        ops.back().microbatch == mb) {
      ops.back().seconds += seconds;
      return;
    }
    ops.push_back(
        Op{OpKind::kCompute, phase, seconds, 0, CollKind::kAllReduce, 0, mb, PhaseLabel(phase)});
  }
  // `overlap_s` > 0: pipelined with a GEMM of that many seconds (parallel.tp_overlap).
  void Tp(OpPhase phase, int mb, CollKind kind, double bytes, double overlap_s = 0) {
    out_->ops.push_back(Op{OpKind::kTpColl, phase, overlap_s, bytes, kind, 0, mb,
                           std::string("tp ") + ToString(kind)});
  }
  void Cp(OpPhase phase, int mb, CollKind kind, double bytes, double core_s) {
    out_->ops.push_back(Op{OpKind::kCpColl, phase, core_s, bytes, kind, 0, mb,
                           std::string("cp ") + ToString(kind)});
  }
  void Ep(OpPhase phase, int mb, double bytes, const char* what) {
    out_->ops.push_back(Op{OpKind::kEpColl, phase, 0, bytes, CollKind::kAllToAll, 0, mb,
                           std::string("ep all_to_all ") + what});
  }
  void P2p(OpKind kind, int dir, int mb, double bytes) {
    std::string what = dir == 0 ? "activation" : "gradient";
    out_->ops.push_back(Op{kind, OpPhase::kOther, 0, bytes, CollKind::kSendRecv, dir, mb,
                           (kind == OpKind::kSend ? "send " : "recv ") + what});
  }
  // Queues `item` on async stream `stream` and lets it start; returns how
  // many items of the stream must be done for this one to be (for Wait).
  int Launch(int stream, AsyncItem item) {
    std::vector<AsyncItem>& queue = out_->async[stream];
    Op op{OpKind::kLaunch,       OpPhase::kOther, 0, item.bytes, item.kind, 0, -1,
          "launch " + item.label};
    op.stream = stream;
    queue.push_back(std::move(item));
    out_->ops.push_back(std::move(op));
    return static_cast<int>(queue.size());
  }
  int DpLaunch(const DpCall& call) {
    std::string label = std::string("dp ") + ToString(call.kind);
    if (call.group == GroupKind::kShard) label += " in shard group";
    if (call.group == GroupKind::kAcrossShards) label += " across shard groups";
    return Launch(kDpStream, AsyncItem{call.kind, call.bytes, std::move(label), call.group});
  }
  // Waits until the first `upto` items of `stream` are done (all launched so
  // far when upto < 0).
  void Wait(int stream, int upto = -1) {
    const std::vector<AsyncItem>& queue = out_->async[stream];
    if (upto < 0) upto = static_cast<int>(queue.size());
    if (upto == 0) return;
    Op op{OpKind::kWait, OpPhase::kOther, 0, 0, queue[upto - 1].kind, 0, -1, "wait"};
    op.stream = stream;
    op.upto = upto;
    out_->ops.push_back(std::move(op));
  }
  void InputWait(int mb) {
    out_->ops.push_back(
        Op{OpKind::kInputWait, OpPhase::kOther, 0, 0, CollKind::kAllReduce, 0, mb, "wait input"});
  }

  static std::string PhaseLabel(OpPhase p) {
    switch (p) {
      case OpPhase::kForward:
        return "forward";
      case OpPhase::kBackward:
        return "backward";
      case OpPhase::kRecompute:
        return "recompute";
      case OpPhase::kOptimizer:
        return "optimizer";
      case OpPhase::kOther:
        return "other";
    }
    return "?";
  }

 private:
  StageProgram* out_;
};

// A layer's pass (sim/stage_model.h ForwardPass / BackwardPass) as operations of `phase`.
void EmitPass(Emitter& em, OpPhase phase, int mb, const LayerPass& pass) {
  for (const PassStep& step : pass) {
    switch (step.kind) {
      case PassStep::Kind::kCompute:
        em.Compute(phase, mb, step.seconds);
        break;
      case PassStep::Kind::kTp:
        em.Tp(phase, mb, step.coll, step.bytes, step.seconds);
        break;
      case PassStep::Kind::kCp:
        em.Cp(phase, mb, step.coll, step.bytes, step.seconds);
        break;
      case PassStep::Kind::kEp:
        em.Ep(phase, mb, step.bytes, step.what);
        break;
    }
  }
}

// One stage's share and piece costs (sim/stage_model.h) laid out per layer, as the schedule
// walker emits them.
struct StageWork {
  int stage = 0, stages = 1;
  int layers = 0;                      // layers of this stage
  int chunks = 1;                      // model chunks (interleaved schedule)
  int model_layers = 0;                // of the whole model (ChunkLayers)
  int split_lead = 0, split_tail = 0;  // the embedding, the loss counted in the split (SplitLayers)
  std::vector<double> fwd_s, bwd_s;    // per layer (layer-list models)
  // Bytes of weights (= of gradients in the weights' dtype; reductions scale
  // them by GradReduceScale): per layer, and of the parameters outside the
  // layers, the embedding (first stage) and the head (last stage).
  std::vector<double> layer_grad_bytes;
  // With expert parallelism, the routed experts' part of each layer's, which
  // the expert-data-parallel group reduces (GroupKind::kExpertData); all 0 and
  // left in layer_grad_bytes without it.
  std::vector<double> layer_expert_grad_bytes;
  // ZeRO-3 with FSDP2 (ShardedUnitCalls' copies): per unit, the GPU's copy of the gathered
  // flat buffer out into the parameters and of the gradients into the reduce-scatter's
  // buffer, one read and one write each.
  std::vector<double> gather_copy_s, reduce_copy_s;
  double embed_grad_bytes = 0, head_grad_bytes = 0;
  double embed_fwd_s = 0, embed_bwd_s = 0;    // first stage: embedding lookup
  double logits_fwd_s = 0, logits_bwd_s = 0;  // last stage: output layer and loss
  double p2p_bytes = 0;
  double activation_bytes = 0;  // one layer's stored activations, one microbatch (offload)
  LayerCost layer;              // transformer only: a dense layer,
  LayerCost moe_layer;          // and an MoE one (ModelSpec::experts)
  std::vector<bool> moe;        // per layer of the stage: an MoE layer
  bool transformer = true;
  double optimizer_s = 0;               // on the GPU
  double host_optimizer_s = 0;          // with offload_optimizer: on the node's CPU
  double optimizer_state_params = 0;    // parameters whose optimizer step this GPU owns
  double host_shard_per_unit_byte = 0;  // with offload_params: HostShardBytes / UnitBytes

  // Bytes of weights (= gradients) of the sharding unit of layer l: the layer,
  // with the embedding joined to the stage's first layer and the output head
  // to its last.
  double UnitBytes(int l) const {
    double bytes = layer_grad_bytes[l];
    if (l == 0) bytes += embed_grad_bytes;
    if (l == layers - 1) bytes += head_grad_bytes;
    return bytes;
  }
  const LayerCost& Cost(int l) const { return moe[l] ? moe_layer : layer; }
  // Parameter offload: bytes of this GPU's shard of unit l that cross PCIe,
  // in (weights before each gather) and out (gradients after each reduce-scatter).
  double HostShardBytes(int l) const { return UnitBytes(l) * host_shard_per_unit_byte; }
};

// One forward or backward pass of a microbatch through one model chunk of
// the stage (chunks > 1 only with the interleaved schedule).
struct Pass {
  bool forward = true;
  int microbatch = 0;
  int chunk = 0;
};

// Where a chunk sits in the whole pipeline: the first chunk of stage 0 holds
// the embedding, the last chunk of the last stage the logits; messages flow
// between consecutive chunks (stage pp-1, chunk c -> stage 0, chunk c+1).
struct ChunkPlace {
  bool first = false, last = false;
};

ChunkPlace Place(const StageWork& sm, int chunk) {
  return {sm.stage == 0 && chunk == 0, sm.stage == sm.stages - 1 && chunk == sm.chunks - 1};
}

// The stage's layers (indices local to the stage) that model chunk `chunk` holds. Chunk c of
// stage s is the model's chunk c * pp + s of the contiguous split of the layers into pp * v
// chunks, the first layers mod (pp * v) of which hold one more (SplitLayers, which may count
// the embedding and the loss as layers: then the first and last chunks hold one layer less);
// the stage's layer count (sim::StageLayers) is the sum.
std::pair<int, int> ChunkLayers(const StageWork& sm, int chunk) {
  if (sm.chunks == 1) return {0, sm.layers};
  const int n = sm.model_layers, all = sm.stages * sm.chunks;
  auto size = [&](int c) {
    return SplitLayers(n, all, c * sm.stages + sm.stage, sm.split_lead, sm.split_tail).count;
  };
  int first = 0;
  for (int c = 0; c < chunk; ++c) first += size(c);
  return {first, first + size(chunk)};
}

// The reduction of `bytes` of gradients (as reduced), GradientReduction's calls; returns the
// last one's Wait() count.
int ReduceGradients(Emitter& em, const Scenario& s, double bytes) {
  int last = 0;
  for (const DpCall& call : GradientReduction(s, bytes)) last = em.DpLaunch(call);
  return last;
}

class BucketFiller {
 public:
  BucketFiller(Emitter& em, const Scenario& s)
      : em_(em), s_(s), reduce_scale_(GradReduceScale(s.training)) {}
  // `bytes` of weights whose gradients are ready; buckets fill in the bytes
  // reduced (DDP's bucket_cap_mb counts the gradients in their own dtype).
  void Add(double bytes) {
    pending_ += bytes * reduce_scale_;
    // Horovod: each layer's gradients are handed over as they are ready; the
    // engine fuses whatever is ready at each cycle (engine.cc).
    if (pending_ >= s_.parallel.bucket_bytes || s_.parallel.dp_fusion == DpFusion::kHorovod) {
      Flush();
    }
  }
  // Routed experts' gradients (expert parallelism): buckets of their own,
  // reduced over the expert-data-parallel group.
  void AddExperts(double bytes) {
    if (bytes <= 0) return;
    experts_ += bytes * reduce_scale_;
    if (experts_ >= s_.parallel.bucket_bytes) FlushExperts();
  }
  void Flush() {
    FlushExperts();
    if (pending_ <= 0 || s_.replicas() <= 1) return;
    ReduceGradients(em_, s_, pending_);
    pending_ = 0;
  }

 private:
  void FlushExperts() {
    if (experts_ > 0 && s_.expert_replicas() > 1) {
      em_.DpLaunch(ExpertGradientReduction(s_, experts_));
    }
    experts_ = 0;
  }

  Emitter& em_;
  const Scenario& s_;
  double reduce_scale_;
  double pending_ = 0, experts_ = 0;
};

// The side traffic of each layer's forward and backward:
//  - ZeRO-3 / FSDP: the layer's weights are all-gathered before its forward
//    and again before its backward, the next layer's gather launched one
//    layer ahead (prefetch), and its gradients reduce-scattered right after
//    its backward. Without resharding after forward (FSDP SHARD_GRAD_OP) the
//    forward's gather serves the backward too. FSDP2 under a pipeline
//    (KeepsStageUnsharded) gathers each layer once per step, at its first
//    forward, and reduce-scatters a chunk's layers together after the chunk's
//    last backward.
//  - Activation offload: the layer's stored activations go to host memory
//    after its forward (at most two layers' copies in flight) and come back
//    before its backward (the next layer's fetched one layer ahead).
//  - Parameter offload (ZeRO-3 shards in host memory): before a layer's
//    gather its shard comes from host memory, fetched two layers ahead; the
//    gather starts once the shard is on the GPU (with dp 1 the copy is the
//    whole unit, fetched one layer ahead). After a layer's
//    reduce-scatter its gradient shard goes to host memory, launched at the
//    compute stream's next wait that covers the reduce-scatter (the compute
//    stream is what hands work to the copy engines).
class LayerTraffic {
 public:
  LayerTraffic(Emitter& em, const Scenario& s, const StageWork& sm)
      : em_(em),
        s_(s),
        sm_(sm),
        reduce_scale_(GradReduceScale(s.training)),
        gather_(s.parallel.zero_stage == 3 && s.shard_degree() > 1),
        once_(KeepsStageUnsharded(s)),
        offload_(s.training.offload_activations && sm.activation_bytes > 0),
        params_(s.training.offload_params),
        updates_(UpdatesGatheredInForward(s)) {}

  // Before a forward pass through the chunk of layers [first, last) (and the embedding, which
  // belongs to the first layer's unit) of microbatch `mb`.
  void BeforeChunk(int first, int last, int mb) {
    phase_ = OpPhase::kForward, mb_ = mb;
    if (updates_ && first < last) GatherUpdate(first, last);
  }
  // Before a backward pass of microbatch `mb`.
  void BeforeBackwardPass(int mb) { phase_ = OpPhase::kBackward, mb_ = mb; }
  // Layers [first, last) of a chunk, walked forward.
  void BeforeForward(int l, int first, int last) {
    if (updates_) GatherUpdate(l, last);
    if (!gather_ && !params_) return;
    if (l == first) {
      for (int k = l; k < std::min(last, l + Ahead()); ++k) FetchShard(k);
      Unshard(l);
    }
    if (l + Ahead() < last) FetchShard(l + Ahead());
    if (l + 1 < last) Unshard(l + 1);
    WaitUnit(l);
  }
  void AfterForward(int l, int first) {
    if (!offload_) return;
    copied_out_[l] = em_.Launch(
        kToHostStream, AsyncItem{CollKind::kSendRecv, sm_.activation_bytes, "activations to host"});
    if (l - 1 >= first) em_.Wait(kToHostStream, copied_out_[l - 1]);
  }
  void EndForwardPass() {
    if (offload_) em_.Wait(kToHostStream);
  }
  // Walked backward, from last - 1 down to first.
  void BeforeBackward(int l, int first, int last) {
    if (offload_) {
      if (l == last - 1) fetched_[l] = Fetch();
      if (l - 1 >= first) fetched_[l - 1] = Fetch();
      em_.Wait(kFromHostStream, fetched_[l]);
    }
    if ((gather_ || params_) && s_.parallel.reshard_after_forward) {  // else kept from the forward
      if (l == last - 1) {
        for (int k = l; k > std::max(first - 1, l - Ahead()); --k) FetchShard(k);
        Unshard(l);
      }
      if (l - Ahead() >= first) FetchShard(l - Ahead());
      if (l - 1 >= first) Unshard(l - 1);
      WaitUnit(l);
    }
  }
  void AfterBackward(int l) {
    if (gather_) {
      if (!once_) ReduceUnit(l);
    } else if (params_) {  // dp 1: the whole gradient is ready after the backward
      CopyGradientOut(sm_.HostShardBytes(l));
    }
  }
  // After a backward pass through the chunk of layers [first, last); `last_pass`: the chunk's
  // last of the step. FSDP2 under a pipeline reduces the chunk's units then, in forward order.
  void AfterBackwardPass(int first, int last, bool last_pass) {
    if (!once_ || !last_pass) return;
    for (int l = first; l < last; ++l) ReduceUnit(l);
  }
  // After the compute stream has waited for every DP item: the last gradient
  // shards go to host memory.
  void AllReduced() { CopyGradientsReducedBy(std::numeric_limits<int>::max()); }
  bool reduces_per_layer() const { return gather_; }

 private:
  UnitCalls Calls(int l) const { return ShardedUnitCalls(s_, sm_.UnitBytes(l)); }
  // ZeRO-3's gradient reduction of unit l, in the implementation's calls (copied into a flat
  // buffer first by FSDP2).
  void ReduceUnit(int l) {
    const UnitCalls calls = Calls(l);
    const double bytes = sm_.UnitBytes(l) * reduce_scale_;
    if (calls.copies) em_.Compute(OpPhase::kBackward, mb_, sm_.reduce_copy_s[l]);
    int reduced = 0;
    for (int i = 0; i < calls.reductions; ++i) {
      reduced = ReduceGradients(em_, s_, bytes / calls.reductions);
    }
    // With expert parallelism (FSDP2's per-parameter mesh, as torchtitan shards experts) the
    // routed experts' gradients over the GPUs that hold them.
    const double experts = sm_.layer_expert_grad_bytes[l];
    if (experts > 0 && s_.expert_replicas() > 1) {
      reduced = em_.DpLaunch(ExpertGradientReduction(s_, experts * reduce_scale_));
    }
    if (params_) grads_out_.push_back({reduced, sm_.HostShardBytes(l)});
  }
  // ZeRO-3's gather of unit l, in the implementation's calls; the last one's Wait() count.
  int Gather(int l) {
    const UnitCalls calls = Calls(l);
    int done = 0;
    for (int i = 0; i < calls.gathers; ++i) {
      done = em_.DpLaunch(WeightGather(s_, sm_.UnitBytes(l) / calls.gathers));
    }
    const double experts = sm_.layer_expert_grad_bytes[l];  // the routed experts', as above
    if (experts > 0 && s_.expert_replicas() > 1) {
      done = em_.DpLaunch(ExpertWeightGather(s_, experts));
    }
    return done;
  }
  // ZeRO-1/2 with overlap_param_gather, as Megatron-Core does it: the updated weights are
  // gathered in buckets (UpdateGatherBucketBytes), consecutive layers in forward order; the
  // first forward of a bucket waits for its gather and launches the next bucket's, the next
  // chunk's first at the end of a chunk (align_param_gather).
  void GatherUpdate(int l, int last) {
    if (!bucket_of_.count(l)) GatherBucket(l, last);  // a chunk's first layer
    const int bucket = bucket_of_[l];
    if (!waited_.insert(bucket).second) return;
    const int next = bucket_end_[bucket];
    if (next < sm_.layers && !bucket_of_.count(next)) {
      GatherBucket(next, next < last ? last : ChunkEndingAfter(next));
    }
    em_.Wait(kDpStream, updated_[bucket]);
  }
  // The end of the chunk whose first layer is `first`.
  int ChunkEndingAfter(int first) const {
    for (int c = 0; c < sm_.chunks; ++c) {
      const auto [begin, end] = ChunkLayers(sm_, c);
      if (begin == first) return end;
    }
    return sm_.layers;
  }
  // Launches the gather of the bucket that starts at layer `first` of the chunk ending at
  // `last` (at least one layer).
  void GatherBucket(int first, int last) {
    const int chunk = first < ChunkLayers(sm_, 0).second ? 0 : 1;  // the first chunk, or not
    const double cap = UpdateGatherBucketBytes(s_, sm_.stage, chunk);
    double dense = 0, experts = 0;
    int end = first;
    while (end < last && (end == first || dense + sm_.UnitBytes(end) <= cap)) {
      dense += sm_.UnitBytes(end);
      experts += sm_.layer_expert_grad_bytes[end];
      bucket_of_[end++] = first;
    }
    bucket_end_[first] = end;
    updated_[first] = em_.DpLaunch(WeightGather(s_, dense));
    if (experts > 0 && s_.expert_replicas() > 1) {
      updated_[first] = em_.DpLaunch(ExpertWeightGather(s_, experts));
    }
  }
  // How many layers ahead a shard is fetched: two when a gather (one layer
  // ahead) follows the copy, one when the copy is the whole unit (dp 1).
  int Ahead() const { return gather_ ? 2 : 1; }
  void FetchShard(int l) {
    if (params_ && !(once_ && gathered_.count(l))) {
      shards_[l] = em_.Launch(kFromHostStream, AsyncItem{CollKind::kSendRecv, sm_.HostShardBytes(l),
                                                         "weight shard from host"});
    }
  }
  // Unit l's gather, once its shard is on the GPU (offloaded parameters).
  void Unshard(int l) {
    if (!gather_ || (once_ && gathered_.count(l))) return;
    if (params_) em_.Wait(kFromHostStream, shards_[l]);
    gathered_[l] = Gather(l);
  }
  // The compute stream waits until unit l's weights are whole on the GPU.
  void WaitUnit(int l) {
    if (!gather_) {
      em_.Wait(kFromHostStream, shards_[l]);
      return;
    }
    if (once_ && !whole_.insert(l).second) return;  // gathered and copied out this step
    em_.Wait(kDpStream, gathered_[l]);
    // FSDP2 copies the gathered flat buffer out into the unit's parameters.
    if (Calls(l).copies) em_.Compute(phase_, mb_, sm_.gather_copy_s[l]);
    CopyGradientsReducedBy(gathered_[l]);
  }
  void CopyGradientOut(double bytes) {
    em_.Launch(kToHostStream, AsyncItem{CollKind::kSendRecv, bytes, "gradient shard to host"});
  }
  // Gradient shards whose reduce-scatter is among the first `dp_done` DP items.
  void CopyGradientsReducedBy(int dp_done) {
    while (!grads_out_.empty() && grads_out_.front().first <= dp_done) {
      CopyGradientOut(grads_out_.front().second);
      grads_out_.pop_front();
    }
  }
  int Fetch() {
    return em_.Launch(kFromHostStream, AsyncItem{CollKind::kSendRecv, sm_.activation_bytes,
                                                 "activations from host"});
  }

  Emitter& em_;
  const Scenario& s_;
  const StageWork& sm_;
  double reduce_scale_;
  bool gather_, once_, offload_, params_, updates_;
  OpPhase phase_ = OpPhase::kForward;  // the pass being emitted, and its microbatch
  int mb_ = 0;
  std::map<int, int> gathered_, copied_out_, fetched_, shards_;  // layer -> Wait() count
  // overlap_param_gather's buckets, named by their first layer: each layer's bucket, each
  // bucket's end (one past its last layer) and its gather's Wait() count, and the buckets
  // the compute stream has waited for.
  std::map<int, int> bucket_of_, bucket_end_, updated_;
  std::set<int> waited_;
  std::set<int> whole_;  // once_: the units whose gather the compute stream has waited for
  std::deque<std::pair<int, double>> grads_out_;  // (reduce-scatter's Wait() count, shard bytes)
};

void Forward(Emitter& em, const Scenario& s, const StageWork& sm, const Pass& p,
             LayerTraffic& traffic) {
  const ChunkPlace at = Place(sm, p.chunk);
  const int mb = p.microbatch;
  if (!at.first) em.P2p(OpKind::kRecv, 0, mb, sm.p2p_bytes);
  if (at.first && s.training.input_samples_per_s_per_node > 0) em.InputWait(mb);
  const auto [first, last] = ChunkLayers(sm, p.chunk);
  traffic.BeforeChunk(first, last, mb);
  if (at.first) em.Compute(OpPhase::kForward, mb, sm.embed_fwd_s);
  for (int l = first; l < last; ++l) {
    traffic.BeforeForward(l, first, last);
    if (sm.transformer) {
      EmitPass(em, OpPhase::kForward, mb, ForwardPass(s, sm.Cost(l)));
    } else {
      em.Compute(OpPhase::kForward, mb, sm.fwd_s[l]);
    }
    traffic.AfterForward(l, first);
  }
  traffic.EndForwardPass();
  if (at.last) em.Compute(OpPhase::kForward, mb, sm.logits_fwd_s);
  if (!at.last) em.P2p(OpKind::kSend, 0, mb, sm.p2p_bytes);
}

// `grads_ready`: after this pass the chunk's gradients go to DP buckets (its
// last backward pass; every pass with ZeRO-2, whose gradients are sharded
// and so reduced every microbatch); only when overlapping. ZeRO-3 reduces
// each layer instead (LayerTraffic), or with FSDP2 under a pipeline the
// chunk's layers after its last backward pass.
void Backward(Emitter& em, const Scenario& s, const StageWork& sm, const Pass& p, bool grads_ready,
              BucketFiller& buckets, LayerTraffic& traffic) {
  const ChunkPlace at = Place(sm, p.chunk);
  const int mb = p.microbatch;
  traffic.BeforeBackwardPass(mb);
  const bool fill = grads_ready && s.parallel.overlap_dp && !traffic.reduces_per_layer();
  if (!at.last) em.P2p(OpKind::kRecv, 1, mb, sm.p2p_bytes);
  if (at.last) {
    em.Compute(OpPhase::kBackward, mb, sm.logits_bwd_s);
    if (fill) buckets.Add(sm.head_grad_bytes);
  }
  const auto [first, last] = ChunkLayers(sm, p.chunk);
  for (int l = last - 1; l >= first; --l) {
    traffic.BeforeBackward(l, first, last);
    if (sm.transformer) {
      const LayerCost& c = sm.Cost(l);
      if (RecomputesLayer(s.training, l)) {
        EmitPass(em, OpPhase::kRecompute, mb, ForwardPass(s, c));
      } else if (s.training.recompute == Recompute::kSelective) {
        em.Compute(OpPhase::kRecompute, mb, c.selective_recompute_s);
        if (c.mlp_replay_s > 0) EmitPass(em, OpPhase::kRecompute, mb, MlpRecomputePass(s, c));
      } else if (s.training.recompute == Recompute::kSelectiveOp) {
        em.Compute(OpPhase::kRecompute, mb, c.op_recompute_s);
      } else if (KeepsProjections(s.training.recompute)) {
        em.Compute(OpPhase::kRecompute, mb, c.proj_recompute_s);
      }
      EmitPass(em, OpPhase::kBackward, mb, BackwardPass(s, c));
    } else {
      em.Compute(OpPhase::kBackward, mb, sm.bwd_s[l]);
    }
    traffic.AfterBackward(l);
    if (fill) buckets.Add(sm.layer_grad_bytes[l]);
    if (fill) buckets.AddExperts(sm.layer_expert_grad_bytes[l]);
  }
  if (at.first) {
    em.Compute(OpPhase::kBackward, mb, sm.embed_bwd_s);
    if (fill) buckets.Add(sm.embed_grad_bytes);
  }
  traffic.AfterBackwardPass(first, last, grads_ready);
  if (!at.first) em.P2p(OpKind::kSend, 1, mb, sm.p2p_bytes);
}

// The order of passes on one stage (Narayanan et al. 2021). GPipe: all
// forwards, then all backwards. 1F1B: (pp - stage - 1) warm-up forwards, then
// one forward and one backward in turn, then the remaining backwards.
// Interleaved 1F1B with v chunks (Megatron-LM): virtual microbatch k runs on
// chunk (k / pp) % v (reversed for backwards) with microbatch
// (k / (pp v)) pp + k % pp; warm-up is 2 (pp - stage - 1) + (v - 1) pp.
std::vector<Pass> ScheduleOrder(const Scenario& s, int stage, int m) {
  const int pp = s.parallel.pp;
  const int v = s.parallel.schedule == Schedule::kInterleaved ? s.parallel.virtual_stages : 1;
  std::vector<Pass> order;
  auto pass = [&](bool forward, int k) {
    if (v == 1) return Pass{forward, k, 0};
    const int chunk = (k / pp) % v;
    return Pass{forward, (k / (pp * v)) * pp + k % pp, forward ? chunk : v - 1 - chunk};
  };
  const int total = m * v;
  if (s.parallel.schedule == Schedule::kGpipe) {
    for (int i = 0; i < m; ++i) order.push_back(Pass{true, i, 0});
    for (int i = 0; i < m; ++i) order.push_back(Pass{false, i, 0});
    return order;
  }
  const int warmup = std::min(v == 1 ? pp - stage - 1 : 2 * (pp - stage - 1) + (v - 1) * pp, total);
  int f = 0, b = 0;
  for (; f < warmup; ++f) order.push_back(pass(true, f));
  while (f < total) {
    order.push_back(pass(true, f++));
    order.push_back(pass(false, b++));
  }
  while (b < total) order.push_back(pass(false, b++));
  return order;
}

// The stage model (sim/stage_model.h) of stage `stage`, with the per-layer detail the
// schedule walker needs.
StageWork MakeStageWork(const Scenario& s, const ComputeModel& cm, const PieceCosts& costs,
                        int stage) {
  const ModelSpec& m = s.model;
  const StageShare share = MakeStageShare(s, stage);
  StageWork sm;
  sm.stage = stage;
  sm.stages = s.parallel.pp;
  if (s.parallel.schedule == Schedule::kInterleaved) sm.chunks = s.parallel.virtual_stages;
  sm.model_layers = m.layers;
  sm.split_lead = s.parallel.split_counts_embedding, sm.split_tail = s.parallel.split_counts_loss;
  sm.transformer = m.kind == ModelKind::kTransformer;
  // Weights as wide as the activations; layer_grad_bytes & co. count them (the
  // reductions scale them by GradReduceScale, the gathers do not).
  const double e = ActivationBytesPerElem(s.training.precision), gb = e;
  const double t = s.parallel.tp;
  const int first = share.layers.first, last = share.layers.end();
  sm.layers = share.layers.count;
  sm.p2p_bytes = StageP2pBytes(s, share);
  if (sm.transformer) {
    sm.layer = costs.layer;
    sm.moe_layer = costs.moe_layer;
    const double ep = s.parallel.ep;
    for (int l = first; l < last; ++l) {
      sm.moe.push_back(IsMoeLayer(m, l));
      const double experts = ep > 1 ? RoutedExpertParameterCount(m, l, l + 1) : 0;
      sm.layer_grad_bytes.push_back((LayerParameterCount(m, l) - experts) / t * gb);
      sm.layer_expert_grad_bytes.push_back(experts / (s.expert_tp() * ep) * gb);
    }
    if (share.first()) sm.embed_fwd_s = costs.embed_fwd_s, sm.embed_bwd_s = costs.embed_bwd_s;
    if (share.last()) sm.logits_fwd_s = costs.logits_fwd_s, sm.logits_bwd_s = costs.logits_bwd_s;
    // Parameters outside the layers, placed as the memory model places them:
    // the embedding on the first stage, the output head on the last. Their
    // gradients join the buckets when ready; with one stage, all at the end.
    double inside = 0;  // the layers', experts' shares included
    for (int l = 0; l < sm.layers; ++l) {
      inside += (sm.layer_grad_bytes[l] + sm.layer_expert_grad_bytes[l]) / gb;
    }
    const double outside = share.params - inside;
    (stage == 0 ? sm.embed_grad_bytes : sm.head_grad_bytes) = outside * gb;
  } else {
    for (int l = first; l < last; ++l) {
      sm.fwd_s.push_back(costs.layers[l].fwd);
      sm.bwd_s.push_back(costs.layers[l].bwd);
      sm.layer_grad_bytes.push_back(m.layer_list[l].params * gb);
      sm.layer_expert_grad_bytes.push_back(0);
    }
  }
  sm.optimizer_state_params = share.optimizer_params;
  const OptimizerSeconds optimizer = OptimizerStepSeconds(s, cm, share.optimizer_params);
  sm.optimizer_s = optimizer.gpu_s;
  sm.host_optimizer_s = optimizer.host_s;
  if (s.training.offload_params) {
    sm.host_shard_per_unit_byte = kHostShardBytesPerParam / gb / std::max(1, s.shard_degree());
  }
  sm.activation_bytes = LayerActivationBytes(s, sm.layers, share.moe_layers);
  if (s.parallel.zero_stage == 3 && ShardedUnitCalls(s, 0).copies) {
    const double reduce_scale = GradReduceScale(s.training);
    for (int l = 0; l < sm.layers; ++l) {
      const double unit = sm.UnitBytes(l) + sm.layer_expert_grad_bytes[l];
      sm.gather_copy_s.push_back(cm.MemorySeconds(2 * unit));
      sm.reduce_copy_s.push_back(cm.MemorySeconds(2 * unit * reduce_scale));
    }
  }
  return sm;
}

// After the last backward pass: the remaining gradient reduction, the
// optimizer (on the GPU, or with offload on the host between two copies of
// the GPU's shard; with offloaded parameters after the last gradient shards
// reach the host, and nothing comes back: the next gathers fetch the shards),
// and ZeRO-1/2's gather of the updated weights.
void OptimizerStep(Emitter& em, const Scenario& s, const StageWork& sm, BucketFiller& buckets,
                   LayerTraffic& traffic) {
  const ParallelConfig& par = s.parallel;
  if (!par.overlap_dp && par.zero_stage < 2) {  // all gradients at once after the backward pass
    double total = sm.embed_grad_bytes + sm.head_grad_bytes;
    for (double g : sm.layer_grad_bytes) total += g;
    buckets.Add(total);
    buckets.AddExperts(
        std::accumulate(sm.layer_expert_grad_bytes.begin(), sm.layer_expert_grad_bytes.end(), 0.0));
  }
  buckets.Flush();
  em.Wait(kDpStream);
  const double e = ActivationBytesPerElem(s.training.precision);
  if (s.training.offload_params) {
    traffic.AllReduced();
    em.Wait(kToHostStream);
    em.Compute(OpPhase::kOptimizer, -1, sm.host_optimizer_s);
  } else if (s.training.offload_optimizer) {
    em.Launch(kToHostStream,
              AsyncItem{CollKind::kSendRecv, sm.optimizer_state_params * e, "gradients to host"});
    em.Wait(kToHostStream);
    em.Compute(OpPhase::kOptimizer, -1, sm.host_optimizer_s);
    em.Launch(kFromHostStream,
              AsyncItem{CollKind::kSendRecv, sm.optimizer_state_params * e, "weights from host"});
    em.Wait(kFromHostStream);
  } else {
    em.Compute(OpPhase::kOptimizer, -1, sm.optimizer_s);
  }
  if ((par.zero_stage == 1 || par.zero_stage == 2) && s.replicas() > 1 &&
      !UpdatesGatheredInForward(s)) {
    // Every replica (dp x cp of them: context-parallel ranks hold the same
    // weights) gathers the weights the others updated (the other members of
    // its shard group, with hybrid sharding).
    // With expert parallelism the routed experts' among the ranks that hold them.
    const double experts = StageExpertParameterCount(s, sm.stage);
    em.DpLaunch(WeightGather(s, (StageParameterCount(s, sm.stage) - experts) * e));
    if (experts > 0 && s.expert_replicas() > 1) em.DpLaunch(ExpertWeightGather(s, experts * e));
    em.Wait(kDpStream);
  }
}

StageProgram BuildStage(const Scenario& s, const ComputeModel& cm, const PieceCosts& costs,
                        int stage) {
  StageWork sm = MakeStageWork(s, cm, costs, stage);
  StageProgram prog;
  Emitter em(&prog);
  BucketFiller buckets(em, s);
  LayerTraffic traffic(em, s, sm);
  const int m = static_cast<int>(s.microbatches_per_pipeline());
  for (const Pass& p : ScheduleOrder(s, stage, m)) {
    if (p.forward) {
      Forward(em, s, sm, p, traffic);
    } else {
      const bool grads_ready = p.microbatch == m - 1 || s.parallel.zero_stage == 2;
      Backward(em, s, sm, p, grads_ready, buckets, traffic);
      // ZeRO-2 without overlap: the microbatch's gradients after its last pass.
      if (!s.parallel.overlap_dp && s.parallel.zero_stage == 2 && p.chunk == 0) {
        buckets.Add(sm.embed_grad_bytes + sm.head_grad_bytes +
                    std::accumulate(sm.layer_grad_bytes.begin(), sm.layer_grad_bytes.end(), 0.0));
        buckets.Flush();
      }
    }
  }
  OptimizerStep(em, s, sm, buckets, traffic);
  // Every microbatch does the same work: take the first one's (with the GEMMs that
  // tp_overlap moved into TP collectives, and the attention cores context parallelism
  // pipelines with its exchanges).
  for (const Op& op : prog.ops) {
    const bool pipelined = op.kind == OpKind::kTpColl || op.kind == OpKind::kCpColl;
    if ((op.kind == OpKind::kCompute || pipelined) && op.microbatch == 0) {
      prog.compute_per_microbatch_s += op.seconds;
    }
  }
  return prog;
}

}  // namespace

double ActivationBytesPerElem(Precision p) {
  return p == Precision::kFp32 || p == Precision::kTf32 ? 4 : 2;
}

double GradReduceScale(const TrainingConfig& t) {
  if (t.grad_reduce_dtype == GradReduceDtype::kWeights) return 1;
  return 4 / ActivationBytesPerElem(t.precision);
}

ComputeModel::ComputeModel(double peak_flops, double hbm_Bps, const ModelParams& params,
                           MeasuredGemms measured, double sixteen_bit_peak_flops)
    : peak_flops_(peak_flops),
      hbm_Bps_(hbm_Bps),
      params_(params),
      measured_(std::move(measured)),
      sixteen_bit_peak_flops_(sixteen_bit_peak_flops) {}

ComputeModel ComputeModel::SixteenBit() const {
  if (sixteen_bit_peak_flops_ <= 0) return *this;
  ModelParams sixteen_bit = params_;
  sixteen_bit.fp8_rowwise_gemm_efficiency.reset();  // an FP8 recipe's figure
  return ComputeModel(sixteen_bit_peak_flops_, hbm_Bps_, sixteen_bit);
}

double ComputeModel::GemmSeconds(double flops) const {
  if (measured_.table) return flops / InterpolateTable(*measured_.table, flops);
  return KernelSeconds(flops,
                       params_.fp8_rowwise_gemm_efficiency.value_or(params_.gemm_efficiency));
}

double ComputeModel::KernelSeconds(double flops, double efficiency) const {
  return params_.kernel_overhead_s + flops / (efficiency * peak_flops_);
}

double ComputeModel::GemmSeconds(const std::vector<GemmDims>& gemms) const {
  double total_flops = 0, seconds = 0;
  for (const GemmDims& g : gemms) {
    const double flops = 2 * g.m * g.n * g.k;
    total_flops += flops;
    std::optional<double> exact;
    if (measured_.profile) {
      exact = measured_.profile->GemmShapeFlopsPerSecond(measured_.dtype, g.m, g.n, g.k);
    }
    seconds += exact ? flops / *exact : measured_.table ? GemmSeconds(flops) : 0;
  }
  return measured_.table ? seconds : GemmSeconds(total_flops);
}

double PipelinedSeconds(double gemm_s, double comm_s, int chunks, double share) {
  const double gemm = gemm_s + StretchedComputeSeconds(comm_s, gemm_s, share);
  return std::max(gemm, comm_s) + std::min(gemm, comm_s) / std::max(1, chunks);
}

double ComputeModel::MemorySeconds(double bytes) const {
  return params_.kernel_overhead_s + bytes / (params_.hbm_efficiency * hbm_Bps_);
}

double ComputeModel::AttentionSeconds(double flops, double bytes) const {
  const double compute = params_.attention_efficiency
                             ? KernelSeconds(flops, *params_.attention_efficiency)
                             : GemmSeconds(flops);
  return std::max(compute, MemorySeconds(bytes));
}

double ComputeModel::UnalignedGemmSeconds(double flops) const {
  if (!params_.unaligned_gemm_efficiency) return GemmSeconds(flops);
  return KernelSeconds(flops, *params_.unaligned_gemm_efficiency);
}

double ComputeModel::ConvSeconds(double flops, double operand_bytes) const {
  const double efficiency = params_.conv_efficiency.value_or(params_.gemm_efficiency);
  return params_.kernel_overhead_s + std::max(flops / (efficiency * peak_flops_),
                                              operand_bytes / (params_.hbm_efficiency * hbm_Bps_));
}

Expected<ComputeModel> MakeComputeModel(const Scenario& s, const ModelParams& params) {
  const GpuSpec& gpu = s.instance.gpu;
  const HardwareProfile* profile = s.profile.get();
  const std::vector<TablePoint>* gemm_table = nullptr;
  if (profile) {
    auto it = profile->gemm_tables.find(ToString(s.training.precision));
    if (it != profile->gemm_tables.end()) gemm_table = &it->second;
  }
  std::optional<double> peak = gpu.PeakFlops(s.training.precision);
  if (!peak && gemm_table) {  // convolutions: the best measured GEMM rate stands in
    peak = 0.0;
    for (const TablePoint& t : *gemm_table) peak = std::max(*peak, t.y);
  }
  if (!peak) {
    return Status::InvalidInput("the catalog has no " +
                                std::string(ToString(s.training.precision)) + " peak for " +
                                gpu.name + "; choose another precision or give a hardware profile");
  }
  ModelParams effective = params;
  std::optional<double> memory_Bps;
  if (gpu.hbm_GBps) memory_Bps = *gpu.hbm_GBps * 1e9;
  if (profile && profile->memory_GBps) {  // measured: efficiency included
    memory_Bps = *profile->memory_GBps * 1e9;
    effective.hbm_efficiency = 1.0;
  }
  if (!memory_Bps) {
    return Status::InvalidInput("the catalog has no memory bandwidth for " + gpu.name +
                                " (not confirmed by a source); give a hardware profile");
  }
  // The catalog's GEMM efficiency is a tensor-core figure (fitted to 16-bit rows); fp32
  // GEMMs run on the CUDA cores and keep the assumption.
  if (gpu.gemm_efficiency && params.use_catalog_gemm_efficiency &&
      s.training.precision != Precision::kFp32) {
    effective.gemm_efficiency = *gpu.gemm_efficiency;
  }
  // TF32 GEMMs have their own figure where one is fitted (4-byte operands on the tensor cores).
  if (gpu.tf32_gemm_efficiency && params.use_catalog_gemm_efficiency &&
      s.training.precision == Precision::kTf32) {
    effective.gemm_efficiency = *gpu.tf32_gemm_efficiency;
  }
  if (gpu.attention_efficiency && params.use_catalog_gemm_efficiency) {
    effective.attention_efficiency = *gpu.attention_efficiency;
  }
  // cuDNN's fused attention has its own figure where one is fitted.
  if (s.training.attention_kernel == AttentionKernel::kCudnn && gpu.cudnn_attention_efficiency &&
      params.use_catalog_gemm_efficiency) {
    effective.attention_efficiency = *gpu.cudnn_attention_efficiency;
  }
  if (gpu.unaligned_gemm_efficiency && params.use_catalog_gemm_efficiency) {
    effective.unaligned_gemm_efficiency = *gpu.unaligned_gemm_efficiency;
  }
  const bool rowwise =
      s.training.precision == Precision::kFp8 && s.training.fp8_scaling == Fp8Scaling::kRowwise;
  if (!rowwise) {
    effective.fp8_rowwise_gemm_efficiency.reset();
  } else if (gpu.fp8_rowwise_gemm_efficiency && params.use_catalog_gemm_efficiency) {
    effective.fp8_rowwise_gemm_efficiency = *gpu.fp8_rowwise_gemm_efficiency;
  }
  // The catalog's conv efficiency is a 16-bit tensor-core figure (fitted to
  // mixed-precision rows); tf32 and fp32 convolutions have their own figures
  // where fitted, else they keep the GEMM efficiency.
  const bool sixteen_bit =
      s.training.precision == Precision::kFp16 || s.training.precision == Precision::kBf16;
  if (gpu.conv_efficiency && params.use_catalog_conv_efficiency && sixteen_bit) {
    effective.conv_efficiency = *gpu.conv_efficiency;
  }
  if (gpu.tf32_conv_efficiency && params.use_catalog_conv_efficiency &&
      s.training.precision == Precision::kTf32) {
    effective.conv_efficiency = *gpu.tf32_conv_efficiency;
  }
  if (gpu.fp32_conv_efficiency && params.use_catalog_conv_efficiency &&
      s.training.precision == Precision::kFp32) {
    effective.conv_efficiency = *gpu.fp32_conv_efficiency;
  }
  // FP8 recipes keep the attention core and the output layer in 16 bits (SixteenBit()).
  const double sixteen_bit_peak =
      s.training.precision == Precision::kFp8 ? gpu.PeakFlops(Precision::kBf16).value_or(0) : 0;
  return ComputeModel(
      *peak, *memory_Bps, effective,
      MeasuredGemms{gemm_table, gemm_table ? profile : nullptr, ToString(s.training.precision)},
      sixteen_bit_peak);
}

Expected<StepProgram> BuildStepProgram(const Scenario& s, const ModelParams& params) {
  Expected<ComputeModel> model = MakeComputeModel(s, params);
  if (!model.ok()) return model.status();
  const PieceCosts costs = MakePieceCosts(s, *model);
  StepProgram prog;
  for (int stage = 0; stage < s.parallel.pp; ++stage)
    prog.stages.push_back(BuildStage(s, *model, costs, stage));
  const ModelSpec& m = s.model;
  prog.samples = static_cast<double>(s.training.global_batch);
  prog.tokens = prog.samples * TokensPerSample(m);
  const double fwd = ForwardFlopsPerSample(m) * prog.samples;
  prog.model_flops = 3 * fwd;
  double recompute = 0;
  if (m.kind == ModelKind::kTransformer) {
    const double seq = m.seq_len, h = m.hidden;
    const double logits = 2 * seq * h * m.vocab * prog.samples;
    const double scores = 2 * seq * seq * QkWidth(m) * m.layers * prog.samples;  // QK^T, all
    const bool flash = s.training.flash_attention;
    if (s.training.recompute == Recompute::kFull) {  // the layers' forward, not the logits'
      int recomputed = 0;
      for (int stage = 0; stage < s.parallel.pp; ++stage) {
        recomputed += StageLayerShare(s, stage).recomputed_layers;
      }
      recompute = (fwd - logits) * recomputed / m.layers;
    }
    if (Recomputes(s.training, kRecomputeCoreAttn) && !flash) recompute = 2 * scores;
    if (s.training.recompute == Recompute::kSelective) {  // the other modules', per GPU
      const int moe_layers = MoeLayerCount(m, 0, m.layers);
      const double units = s.parallel.tp * s.parallel.cp * prog.samples / s.training.micro_batch;
      recompute += units * ((m.layers - moe_layers) * costs.layer.selective_recompute_flops +
                            moe_layers * costs.moe_layer.selective_recompute_flops);
    }
    if (s.training.recompute == Recompute::kSelectiveOp) {  // wk, wo and w3 (or w2 with GELU)
      const double kv = KvDim(m);
      recompute = 2 * seq * h * (kv + h + m.ffn_hidden) * m.layers * prog.samples;
    }
    if (KeepsProjections(s.training.recompute)) {  // the MLP's up projections (dense count)
      // and the attention core, whose QK^T the flash backward would compute anyway (below)
      const double up = m.ffn_hidden * (m.mlp == MlpKind::kSwiGlu ? 2 : 1);
      const double av = 2 * seq * seq * VWidth(m) * m.layers * prog.samples;
      recompute = 2 * seq * h * up * m.layers * prog.samples + scores + av;
    }
    if (flash) recompute += scores;  // the flash backward computes QK^T again
  }
  prog.hardware_flops = prog.model_flops + recompute;
  return prog;
}

}  // namespace trainsim::sim
