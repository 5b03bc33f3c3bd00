// ModelSpec: what is being trained, as the simulator and memory model see it.
//
// Transformers are described by their dimensions (the workload generator
// derives GEMM shapes from them). Other models (ResNet-50) are a list of
// layers with per-sample forward FLOPs, parameters and activation bytes.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace trainsim {

enum class ModelKind { kTransformer, kLayerList };
enum class MlpKind { kGelu, kSwiGlu };  // 2 matrices (h->f->h) or 3 (gate, up, down)

// The element-wise kernels that follow a layer's GEMM (convolution) on its output:
// nothing, BatchNorm, BatchNorm + ReLU, or BatchNorm + residual add + ReLU (the last
// convolution of a ResNet bottleneck block).
enum class Epilogue { kNone, kBn, kBnRelu, kBnAddRelu };

struct LayerSpec {
  std::string name;
  double forward_flops = 0;     // per sample
  double params = 0;            // parameter count
  double activation_bytes = 0;  // per sample, stored for backward, at 2 bytes/element
  // Per sample, at 2 bytes/element: the input the layer's GEMM reads (and its input
  // gradient), for its memory traffic; 0 when not given (only the output is counted).
  double input_bytes = 0;
  Epilogue epilogue = Epilogue::kBnRelu;
};

const char* ToString(Epilogue e);
const char* ToString(MlpKind m);  // "gelu", "swiglu": model.mlp

struct ModelSpec {
  std::string name;  // preset name ("gpt3-175b") or "custom"
  ModelKind kind = ModelKind::kTransformer;

  // Transformer dimensions (kind == kTransformer).
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // == heads without grouped-query attention
  int ffn_hidden = 0;
  int seq_len = 0;
  int vocab = 0;
  MlpKind mlp = MlpKind::kGelu;
  bool bias = true;               // linear layers and norms carry biases (GPT/BERT) or not (Llama)
  bool tied_embeddings = true;    // output head shares the input embedding
  bool learned_positions = true;  // learned position table (GPT/BERT) vs rotary (Llama)
  int token_types = 0;            // rows of a segment (token-type) embedding: BERT 2, else 0
  // The default of training.flash_attention for this model: whether its published training
  // used a fused attention that does not store the score matrix. The zoo decides it per
  // preset; explicit dimensions take true (docs/formats.md, "flash_attention").
  bool flash_attention_default = true;

  // Mixture of experts; 0 experts = a dense model. Layer l (from 0) is an MoE
  // layer when l >= dense_layers and (l - dense_layers) % moe_every == 0; its
  // MLP is a router (hidden x experts, no bias) and `experts` expert MLPs of
  // width expert_ffn_hidden (the model's MLP kind), experts_per_token of which
  // each token goes through, plus shared_experts of the same width that every
  // token goes through. The other layers keep a dense MLP of ffn_hidden.
  int experts = 0;
  int experts_per_token = 0;
  int expert_ffn_hidden = 0;
  int shared_experts = 0;
  int moe_every = 1;
  int dense_layers = 0;
  bool router_bias = false;  // a bias per expert on the routing scores (DeepSeek-V3)
  // Tokens an expert takes, as a multiple of its even share (tokens x
  // experts_per_token / experts); beyond it tokens are dropped, and experts
  // compute padded to it (GShard, Switch). 0: dropless (every routed token
  // is computed, as in Mixtral, DeepSeek-V3 and Megatron-Core's default).
  double capacity_factor = 0;

  // Multi-head latent attention (DeepSeek-V2/V3) when kv_lora_rank > 0: K and V
  // come from a kv_lora_rank latent (plus qk_rope_head_dim shared rotary
  // dimensions) projected up per head; Q from a q_lora_rank latent (0: directly
  // from the hidden state). Heads have qk_nope_head_dim + qk_rope_head_dim
  // query/key dimensions and v_head_dim value dimensions.
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;

  // Layer list (kind == kLayerList).
  std::vector<LayerSpec> layer_list;
  int sample_elems = 0;  // input elements per sample (e.g. 3*224*224), for data loading

  // Published total, for tests and `trainsim models`; 0 when none.
  double published_params = 0;
  std::string source;  // where the dimensions come from
};

// Width of the K (and of the V) projection: kv_heads x head size (the hidden size without
// grouped-query attention; kv_heads 0 means "same as heads").
double KvDim(const ModelSpec& m);
// Total trainable parameters.
double ParameterCount(const ModelSpec& m);
// Parameters a token goes through. A dense model: all of them (the usual
// convention). An MoE model, as DeepSeek-V3 counts its "37B activated": the
// router, the experts_per_token routed and the shared experts of each MoE
// layer, everything else but the input embedding (a token reads one row).
double ActiveParameterCount(const ModelSpec& m);
// Whether layer `l` (from 0) has an MoE MLP.
bool IsMoeLayer(const ModelSpec& m, int l);
// MoE layers among layers [first, last).
int MoeLayerCount(const ModelSpec& m, int first, int last);
// Parameters of transformer block `l` (attention + MLP or experts + norms).
double LayerParameterCount(const ModelSpec& m, int l);
// Of blocks [first, last).
double LayersParameterCount(const ModelSpec& m, int first, int last);
// The routed experts' part of that (what expert parallelism splits).
double RoutedExpertParameterCount(const ModelSpec& m, int first, int last);
// Embedding (+ position table) and output head parameters.
double EmbeddingParameterCount(const ModelSpec& m);
// Widths (over all heads) of the attention's queries and keys, and of its
// values: hidden without MLA.
double QkWidth(const ModelSpec& m);
double VWidth(const ModelSpec& m);
// Forward FLOPs for one sample (one sequence for transformers), multiply-add = 2 FLOPs,
// GEMMs only (attention scores included, no recompute). MoE layers count what
// a token goes through (ActiveParameterCount's matrices), dropless.
double ForwardFlopsPerSample(const ModelSpec& m);
// Tokens per sample: seq_len for transformers, 1 for layer lists.
double TokensPerSample(const ModelSpec& m);

// Layers of a model: a transformer's blocks, or a layer list's entries.
inline int LayerCount(const ModelSpec& m) {
  return m.kind == ModelKind::kTransformer ? m.layers : static_cast<int>(m.layer_list.size());
}

// Layers [first, first + count) of a model.
struct LayerRange {
  int first = 0;
  int count = 0;
  int end() const { return first + count; }
};
// The one layer-to-stage split: part `part` (from 0) of `layers` layers cut into `parts`
// contiguous parts as evenly as possible, the first layers % parts parts one layer longer
// (torchtitan and DeepSpeed split so; docs/memory.md section 1). Pipeline stages are the
// parts of the model's layers; with the interleaved schedule, model chunks are the parts of
// pp x virtual_stages.
// With `lead` / `tail` 1 the embedding / the loss takes a layer's place at the start / the end
// of the split (Megatron-Core's account_for_embedding_in_pipeline_split and
// account_for_loss_in_pipeline_split), so the first / last part may hold no layer.
// Inline: the planner's memory pruning splits every candidate.
inline LayerRange SplitLayers(int layers, int parts, int part, int lead = 0, int tail = 0) {
  const int places = layers + lead + tail;
  const int base = places / parts, extra = places % parts;
  const int start = part * base + std::min(part, extra);
  if (lead + tail == 0) return {start, base + (part < extra ? 1 : 0)};
  const int first = std::clamp(start - lead, 0, layers);
  const int end = std::clamp(start + base + (part < extra ? 1 : 0) - lead, 0, layers);
  return {first, end - first};
}

}  // namespace trainsim
