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
// Layer lists sum their LayerSpec entries; they have no transformer block or embedding, so
// LayerParameterCount and EmbeddingParameterCount return 0 for them.
#include "core/model_spec.h"

namespace trainsim {

double KvDim(const ModelSpec& m) {
  if (m.heads <= 0 || m.kv_heads <= 0) return m.hidden;
  return static_cast<double>(m.kv_heads) * m.hidden / m.heads;
}

namespace {

double MlpMatrices(const ModelSpec& m) { return m.mlp == MlpKind::kSwiGlu ? 3 : 2; }

// One norm's parameters: LayerNorm (weight + bias) with biases, RMSNorm (weight) without.
double NormParams(const ModelSpec& m) { return m.bias ? 2.0 * m.hidden : m.hidden; }

double AttentionParams(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden), kv = KvDim(m);
  const double weights = h * h + 2 * h * kv + h * h;  // Q, K, V, output projection
  const double biases = m.bias ? h + 2 * kv + h : 0;
  return weights + biases;
}

double MlpParams(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden), f = m.ffn_hidden;
  const double weights = MlpMatrices(m) * h * f;
  // Biases: one per output column; SwiGLU's gate and up both output f.
  const double biases = m.bias ? (MlpMatrices(m) - 1) * f + h : 0;
  return weights + biases;
}

double SumLayers(const ModelSpec& m, double LayerSpec::*field) {
  double total = 0;
  for (const LayerSpec& layer : m.layer_list) total += layer.*field;
  return total;
}

}  // namespace

double LayerParameterCount(const ModelSpec& m) {
  if (m.kind != ModelKind::kTransformer) return 0;
  return AttentionParams(m) + MlpParams(m) + 2 * NormParams(m);
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
  return m.layers * LayerParameterCount(m) + EmbeddingParameterCount(m) + NormParams(m);
}

double ForwardFlopsPerSample(const ModelSpec& m) {
  if (m.kind == ModelKind::kLayerList) return SumLayers(m, &LayerSpec::forward_flops);
  const double s = m.seq_len, h = static_cast<double>(m.hidden), kv = KvDim(m), f = m.ffn_hidden;
  const double qkv = 2 * s * h * (h + 2 * kv);
  const double scores = 2 * s * s * h;   // Q K^T over all query heads
  const double context = 2 * s * s * h;  // softmax(...) V
  const double projection = 2 * s * h * h;
  const double mlp = 2 * s * h * f * MlpMatrices(m);
  const double logits = 2 * s * h * m.vocab;
  return m.layers * (qkv + scores + context + projection + mlp) + logits;
}

double TokensPerSample(const ModelSpec& m) {
  return m.kind == ModelKind::kTransformer ? m.seq_len : 1;
}

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
