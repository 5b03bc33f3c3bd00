// Parameter and FLOP counts derived from a ModelSpec's fields.
//
// Transformer conventions (Megatron-LM, Narayanan et al. SC'21, Sec. 5.1 / Appendix):
// - attention: Q and output projections are h x h; K and V are h x kv_dim, where
//   kv_dim = kv_heads * (hidden / heads) (== h without grouped-query attention);
// - MLP: 2 matrices (h x f, f x h) for GELU, 3 (gate, up, down) for SwiGLU;
// - with `bias`: every linear layer has a bias of its output width and norms are LayerNorm
//   (weight + bias, 2h); without: no biases and norms are RMSNorm (weight only, h);
// - two norms per block plus one more outside the blocks (GPT/Llama final norm; BERT's
//   embedding LayerNorm, which has the same size).
// - MoE layers (docs/formats.md, "model"): a router of hidden x experts and the experts' MLPs;
// - MLA (DeepSeek-V2 Sec. 2.1): the latent projections and RMSNorms on the latents.
// Layer lists sum their LayerSpec entries; they have no transformer block or embedding, so
// LayerParameterCount and EmbeddingParameterCount return 0 for them.
#include "core/model_spec.h"

#include <array>
#include <utility>
#include <vector>

namespace trainsim {

double KvDim(const ModelSpec& m) {
  if (m.heads <= 0 || m.kv_heads <= 0) return m.hidden;
  return static_cast<double>(m.kv_heads) * m.hidden / m.heads;
}

namespace {

double MlpMatrices(const ModelSpec& m) { return m.mlp == MlpKind::kSwiGlu ? 3 : 2; }

// One norm's parameters: LayerNorm (weight + bias) with biases, RMSNorm (weight) without.
double NormParams(const ModelSpec& m) { return m.bias ? 2.0 * m.hidden : m.hidden; }

bool Mla(const ModelSpec& m) { return m.kv_lora_rank > 0; }

// The attention's weight matrices as (rows, columns), input to output.
// Standard: Q, K, V and the output projection. MLA (DeepSeek-V2 Sec. 2.1): Q's
// down and up projections (or one from the hidden state), the joint K/V down
// projection with the shared rotary key, K/V's up projection, the output.
// A fixed array, not a vector: the planner counts parameters millions of times.
struct Matrices {
  std::array<std::pair<double, double>, 5> items;
  size_t count = 0;
  void Add(double in, double out) { items[count++] = {in, out}; }
  const std::pair<double, double>* begin() const { return items.data(); }
  const std::pair<double, double>* end() const { return items.data() + count; }
};

Matrices AttentionMatrices(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  Matrices out;
  if (!Mla(m)) {
    out.Add(h, h);
    out.Add(h, KvDim(m));
    out.Add(h, KvDim(m));
    out.Add(h, h);
    return out;
  }
  const double heads = m.heads, qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
  if (m.q_lora_rank > 0) {
    out.Add(h, static_cast<double>(m.q_lora_rank));
    out.Add(static_cast<double>(m.q_lora_rank), heads * qk);
  } else {
    out.Add(h, heads * qk);
  }
  out.Add(h, static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim));
  out.Add(static_cast<double>(m.kv_lora_rank),
          heads * (m.qk_nope_head_dim + static_cast<double>(m.v_head_dim)));
  out.Add(heads * m.v_head_dim, h);
  return out;
}

double AttentionParams(const ModelSpec& m) {
  double params = 0;
  for (const auto& [in, out] : AttentionMatrices(m)) params += in * out;
  if (Mla(m)) {  // RMSNorms on the latents, no biases
    return params + m.kv_lora_rank + (m.q_lora_rank > 0 ? m.q_lora_rank : 0);
  }
  const double h = static_cast<double>(m.hidden), kv = KvDim(m);
  return params + (m.bias ? h + 2 * kv + h : 0);
}

// One MLP of width f.
double MlpParams(const ModelSpec& m, double f) {
  const double h = static_cast<double>(m.hidden);
  const double weights = MlpMatrices(m) * h * f;
  // Biases: one per output column; SwiGLU's gate and up both output f.
  const double biases = m.bias ? (MlpMatrices(m) - 1) * f + h : 0;
  return weights + biases;
}

double ExpertWidth(const ModelSpec& m) {
  return m.expert_ffn_hidden > 0 ? m.expert_ffn_hidden : m.ffn_hidden;
}

double RouterParams(const ModelSpec& m) {
  return (static_cast<double>(m.hidden) + (m.router_bias ? 1 : 0)) * m.experts;
}

// A transformer block: attention, two norms and a dense MLP, or the router and
// every expert.
double BlockParams(const ModelSpec& m, bool moe) {
  const double mlp =
      moe ? RouterParams(m) + (m.experts + m.shared_experts) * MlpParams(m, ExpertWidth(m))
          : MlpParams(m, m.ffn_hidden);
  return AttentionParams(m) + mlp + 2 * NormParams(m);
}

double SumLayers(const ModelSpec& m, double LayerSpec::*field) {
  double total = 0;
  for (const LayerSpec& layer : m.layer_list) total += layer.*field;
  return total;
}

}  // namespace

bool IsMoeLayer(const ModelSpec& m, int l) {
  return m.experts > 0 && l >= m.dense_layers && (l - m.dense_layers) % m.moe_every == 0;
}

int MoeLayerCount(const ModelSpec& m, int first, int last) {
  if (m.experts == 0) return 0;  // dense: no layer is (IsMoeLayer)
  int n = 0;
  for (int l = first; l < last; ++l) n += IsMoeLayer(m, l);
  return n;
}

double LayerParameterCount(const ModelSpec& m, int l) {
  if (m.kind != ModelKind::kTransformer) return 0;
  return BlockParams(m, IsMoeLayer(m, l));
}

double LayersParameterCount(const ModelSpec& m, int first, int last) {
  if (m.kind != ModelKind::kTransformer) return 0;
  const int moe = MoeLayerCount(m, first, last);
  return (last - first - moe) * BlockParams(m, false) + (moe > 0 ? moe * BlockParams(m, true) : 0);
}

double RoutedExpertParameterCount(const ModelSpec& m, int first, int last) {
  if (m.kind != ModelKind::kTransformer || m.experts == 0) return 0;
  return MoeLayerCount(m, first, last) * static_cast<double>(m.experts) *
         MlpParams(m, ExpertWidth(m));
}

double EmbeddingParameterCount(const ModelSpec& m) {
  if (m.kind != ModelKind::kTransformer) return 0;
  const double h = static_cast<double>(m.hidden);
  double params = static_cast<double>(m.vocab) * h;                    // token embedding
  if (m.learned_positions) params += m.seq_len * h;                    // position table
  params += static_cast<double>(m.token_types) * h;                    // segment embedding (BERT)
  if (!m.tied_embeddings) params += static_cast<double>(m.vocab) * h;  // output head
  return params;
}

double ParameterCount(const ModelSpec& m) {
  if (m.kind == ModelKind::kLayerList) return SumLayers(m, &LayerSpec::params);
  return LayersParameterCount(m, 0, m.layers) + EmbeddingParameterCount(m) + NormParams(m);
}

double ActiveParameterCount(const ModelSpec& m) {
  if (m.kind == ModelKind::kLayerList || m.experts == 0) return ParameterCount(m);
  const double idle = m.experts - m.experts_per_token;  // routed experts a token skips
  const double input_embedding = static_cast<double>(m.vocab) * m.hidden;
  return ParameterCount(m) - MoeLayerCount(m, 0, m.layers) * idle * MlpParams(m, ExpertWidth(m)) -
         (m.tied_embeddings ? 0 : input_embedding);
}

double QkWidth(const ModelSpec& m) {
  if (!Mla(m)) return m.hidden;
  return static_cast<double>(m.heads) * (m.qk_nope_head_dim + m.qk_rope_head_dim);
}

double VWidth(const ModelSpec& m) {
  return Mla(m) ? static_cast<double>(m.heads) * m.v_head_dim : m.hidden;
}

double ForwardFlopsPerSample(const ModelSpec& m) {
  if (m.kind == ModelKind::kLayerList) return SumLayers(m, &LayerSpec::forward_flops);
  const double s = m.seq_len, h = static_cast<double>(m.hidden);
  double projections = 0;  // the attention's weight matrices, per token
  for (const auto& [in, out] : AttentionMatrices(m)) projections += in * out;
  const double attention = 2 * s * projections + 2 * s * s * QkWidth(m)  // Q K^T
                           + 2 * s * s * VWidth(m);                      // softmax(...) V
  const double dense_mlp = 2 * s * h * m.ffn_hidden * MlpMatrices(m);
  const double moe_mlp =  // router, then the routed and shared experts a token goes through
      2 * s * h * m.experts +
      2 * s * h * ExpertWidth(m) * MlpMatrices(m) * (m.experts_per_token + m.shared_experts);
  const int moe = MoeLayerCount(m, 0, m.layers);
  const double logits = 2 * s * h * m.vocab;
  return m.layers * attention + (m.layers - moe) * dense_mlp + moe * moe_mlp + logits;
}

double TokensPerSample(const ModelSpec& m) {
  return m.kind == ModelKind::kTransformer ? m.seq_len : 1;
}

const char* ToString(MlpKind m) { return m == MlpKind::kSwiGlu ? "swiglu" : "gelu"; }

const char* ToString(Epilogue e) {
  switch (e) {
    case Epilogue::kNone:
      return "none";
    case Epilogue::kBn:
      return "bn";
    case Epilogue::kBnRelu:
      return "bn-relu";
    case Epilogue::kBnAddRelu:
      return "bn-add-relu";
  }
  return "?";
}

}  // namespace trainsim
