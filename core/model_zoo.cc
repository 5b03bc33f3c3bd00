// Model zoo presets. Dimensions are copied from the cited papers; parameter counts are
// computed by ParameterCount (core/model_spec.cc) and checked against `published_params`
// in tests/core/model_zoo_test.cc.
#include "core/model_zoo.h"

#include <string>
#include <utility>

namespace trainsim {
namespace {

constexpr char kMegatronSource[] =
    "Narayanan et al., 'Efficient Large-Scale Language Model Training on GPU Clusters Using "
    "Megatron-LM', SC'21 (arXiv:2104.04473), Table 1";
constexpr char kLlama2Source[] =
    "Touvron et al., 'Llama 2: Open Foundation and Fine-Tuned Chat Models' (arXiv:2307.09288), "
    "Table 1 and Sec. 2.2; exact counts of the Hugging Face meta-llama/Llama-2-*-hf checkpoints";

// A GPT model as in Megatron-LM: GELU MLP with f = 4h, biases, LayerNorm, learned positions,
// output head tied to the input embedding.
ModelSpec Gpt(std::string name, int layers, int hidden, int heads, int vocab, double published,
              std::string source) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.seq_len = 2048;
  m.vocab = vocab;
  m.published_params = published;
  m.source = std::move(source);
  // Megatron-LM's SC'21 runs (2021) and GPT-3 (2020) predate flash attention (2022): their
  // published figures are for attention that stores the score matrix.
  m.flash_attention_default = false;
  return m;
}

ModelSpec MegatronGpt(std::string name, int layers, int hidden, int heads, double published) {
  return Gpt(std::move(name), layers, hidden, heads, 51200, published, kMegatronSource);
}

// Llama 2: SwiGLU MLP, no biases, RMSNorm, rotary positions, untied output head.
ModelSpec Llama2(std::string name, int layers, int hidden, int heads, int kv_heads, int ffn,
                 double published) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.seq_len = 4096;
  m.vocab = 32000;
  m.mlp = MlpKind::kSwiGlu;
  m.bias = false;
  m.tied_embeddings = false;
  m.learned_positions = false;
  m.published_params = published;
  m.source = kLlama2Source;
  // Llama 2 keeps Llama 1's training setup (Llama 2 Sec. 2.2), whose attention is xformers'
  // memory-efficient causal attention with FlashAttention's backward, which does not store
  // the attention weights (Touvron et al. 2023, arXiv:2302.13971, Sec. 2.4).
  m.flash_attention_default = true;
  return m;
}

constexpr char kLlama3Source[] =
    "Llama Team, 'The Llama 3 Herd of Models' (arXiv:2407.21783), Table 3; dimensions of the "
    "Hugging Face meta-llama/Llama-3.1-{8B,70B,405B} config.json; totals of their safetensors "
    "indexes (8,030,261,248, 70,553,706,496 and 405,853,388,800 parameters)";

// Llama 3 / 3.1: Llama 2's block with grouped-query attention everywhere, a vocabulary of
// 128,256 and 8,192-token pre-training sequences (Llama 3 Sec. 3.4.1; the 128K context is a
// later stage, the -128k presets).
ModelSpec Llama3(std::string name, int layers, int hidden, int heads, int ffn, double published,
                 int seq_len = 8192) {
  ModelSpec m = Llama2(std::move(name), layers, hidden, heads, 8, ffn, published);
  m.vocab = 128256;
  m.seq_len = seq_len;
  m.source = kLlama3Source;
  // Llama 3 trains with flash attention (Llama 3 Sec. 3.3.2 mentions its use with CP).
  m.flash_attention_default = true;
  return m;
}

constexpr char kMixtralSource[] =
    "Jiang et al., 'Mixtral of Experts' (arXiv:2401.04088), Table 1; dimensions of the Hugging "
    "Face mistralai/Mixtral-8x7B-v0.1 and Mixtral-8x22B-v0.1 config.json; totals of their "
    "safetensors indexes (46,702,792,704 and 140,630,071,296 parameters)";

// Mixtral: Mistral's block (SwiGLU, RMSNorm, rotary, GQA 8) with every MLP an MoE of 8
// experts, top-2, dropless; untied head, vocabulary 32,000 (8x7B) or 32,768 (8x22B).
ModelSpec Mixtral(std::string name, int layers, int hidden, int heads, int ffn, int vocab,
                  double published) {
  ModelSpec m = Llama2(std::move(name), layers, hidden, heads, 8, ffn, published);
  m.vocab = vocab;
  m.seq_len = 32768;
  m.experts = 8;
  m.experts_per_token = 2;
  m.expert_ffn_hidden = ffn;
  m.source = kMixtralSource;
  return m;
}

// DeepSeek-V3 (arXiv:2412.19437, Sec. 4.2 and the Hugging Face deepseek-ai/DeepSeek-V3
// config.json): 61 layers, the first 3 dense (FFN 18,432), the other 58 MoE with 256 routed
// experts of 2,048 (top 8) and 1 shared; MLA with 128 heads, Q latent 1,536, KV latent 512,
// head dimensions 128 + 64 rotary (query, key) and 128 (value); vocabulary 129,280, untied.
// The router carries a bias per expert (its auxiliary-loss-free balancing, Sec. 2.1.2).
// 671,026,419,200 parameters: the main model of the checkpoint, without the multi-token
// prediction module (14B more, Sec. 4.2). Pre-training sequences of 4,096 tokens (Sec.
// 4.2), extended to 128K later (the -128k preset).
ModelSpec DeepSeekV3(std::string name, int seq_len) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = 61;
  m.hidden = 7168;
  m.heads = 128;
  m.kv_heads = 128;
  m.ffn_hidden = 18432;
  m.seq_len = seq_len;
  m.vocab = 129280;
  m.mlp = MlpKind::kSwiGlu;
  m.bias = false;
  m.tied_embeddings = false;
  m.learned_positions = false;
  m.experts = 256;
  m.experts_per_token = 8;
  m.expert_ffn_hidden = 2048;
  m.shared_experts = 1;
  m.dense_layers = 3;
  m.router_bias = true;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_nope_head_dim = 128;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  m.published_params = 671026419200;
  m.source =
      "DeepSeek-AI, 'DeepSeek-V3 Technical Report' (arXiv:2412.19437), Sec. 4.2; dimensions of "
      "the Hugging Face deepseek-ai/DeepSeek-V3 config.json; 671,026,419,200 main-model "
      "parameters of its checkpoint";
  m.flash_attention_default = true;
  return m;
}

// BERT-large. Counted: word + position + token-type embeddings, the embedding LayerNorm
// (ParameterCount's "extra" norm) and the 24 encoder layers. Not counted: the pooler
// (h*h + h = 1,049,600, which BertModel includes: 335,141,888 in all) and the pre-training
// heads (MLM transform, NSP), whose output matrix is tied to the word embedding.
ModelSpec BertLarge() {
  ModelSpec m;
  m.name = "bert-large";
  m.layers = 24;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.seq_len = 512;
  m.vocab = 30522;
  m.token_types = 2;
  m.flash_attention_default = false;  // 2018-2019, before flash attention (2022)
  m.published_params = 340e6;
  m.source =
      "Devlin et al., 'BERT: Pre-training of Deep Bidirectional Transformers for Language "
      "Understanding', NAACL 2019 (arXiv:1810.04805), Sec. 3 (BERT-LARGE, 340M)";
  return m;
}

// Output side of a k x k convolution or pooling window with padding k/2.
int OutSize(int size, int k, int stride) { return (size + 2 * (k / 2) - k) / stride + 1; }

// A bias-free k x k convolution followed by BatchNorm (gamma and beta: 2 params per channel)
// and `epilogue`'s other element-wise kernels, on a size x size input. FLOPs = 2 * MACs;
// activation = output elements, input = input elements, both at 2 bytes.
LayerSpec ConvBn(std::string name, int in, int out, int k, int stride, int size,
                 Epilogue epilogue) {
  const double out_elems =
      static_cast<double>(out) * OutSize(size, k, stride) * OutSize(size, k, stride);
  LayerSpec layer;
  layer.name = std::move(name);
  layer.params = static_cast<double>(in) * out * k * k + 2.0 * out;
  layer.forward_flops = 2.0 * in * k * k * out_elems;
  layer.activation_bytes = 2 * out_elems;
  layer.input_bytes = 2.0 * in * size * size;
  layer.epilogue = epilogue;
  return layer;
}

// Builds a convolutional network layer by layer, tracking the current feature map.
class ConvNetBuilder {
 public:
  ConvNetBuilder(int channels, int size) : channels_(channels), size_(size) {}

  // A conv + BN (+ `epilogue`) that consumes the current map and produces the next one.
  void Conv(std::string name, int out, int k, int stride, Epilogue epilogue = Epilogue::kBnRelu) {
    layers_.push_back(ConvBn(std::move(name), channels_, out, k, stride, size_, epilogue));
    channels_ = out;
    size_ = OutSize(size_, k, stride);
  }

  // A pooling window: no parameters, no GEMM.
  void Pool(int k, int stride) { size_ = OutSize(size_, k, stride); }

  // Bottleneck block, ResNet v1.5 (the stride sits on the 3x3 conv), with a 1x1 projection
  // shortcut (conv + BN, no ReLU) when the shape changes. The shortcut is added to conv3's
  // BN output before the block's last ReLU; the projection is listed after conv3, as in
  // torchvision's module order (the element-wise traffic does not depend on the order).
  void Bottleneck(const std::string& prefix, int width, int stride) {
    const int in = channels_, in_size = size_;
    Conv(prefix + ".conv1", width, 1, 1);
    Conv(prefix + ".conv2", width, 3, stride);
    Conv(prefix + ".conv3", 4 * width, 1, 1, Epilogue::kBnAddRelu);
    if (stride != 1 || in != 4 * width) {
      layers_.push_back(
          ConvBn(prefix + ".downsample.0", in, 4 * width, 1, stride, in_size, Epilogue::kBn));
    }
  }

  // Global average pooling, then a fully connected layer with bias.
  void Classifier(int classes) {
    LayerSpec fc;
    fc.name = "fc";
    fc.params = static_cast<double>(channels_) * classes + classes;
    fc.forward_flops = 2.0 * channels_ * classes;
    fc.activation_bytes = 2.0 * classes;
    fc.input_bytes = 2.0 * channels_;
    fc.epilogue = Epilogue::kNone;
    layers_.push_back(fc);
  }

  std::vector<LayerSpec> Take() { return std::move(layers_); }

 private:
  int channels_;
  int size_;
  std::vector<LayerSpec> layers_;
};

// ResNet-50 v1.5 at 224 x 224, 1000 classes. Layer names follow torchvision.
ModelSpec ResNet50() {
  ConvNetBuilder net(3, 224);
  net.Conv("conv1", 64, 7, 2);
  net.Pool(3, 2);
  const int blocks[] = {3, 4, 6, 3};
  const int widths[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int b = 0; b < blocks[stage]; ++b) {
      const int stride = (stage > 0 && b == 0) ? 2 : 1;
      net.Bottleneck("layer" + std::to_string(stage + 1) + "." + std::to_string(b), widths[stage],
                     stride);
    }
  }
  net.Classifier(1000);

  ModelSpec m;
  m.name = "resnet50";
  m.kind = ModelKind::kLayerList;
  m.flash_attention_default = false;  // no attention
  m.layer_list = net.Take();
  m.sample_elems = 3 * 224 * 224;
  m.published_params = 25557032;
  m.source =
      "He et al., 'Deep Residual Learning for Image Recognition', CVPR 2016 (arXiv:1512.03385), "
      "Table 1; v1.5 stride placement as in NVIDIA DeepLearningExamples; parameter count of "
      "torchvision.models.resnet50";
  return m;
}

std::vector<ModelSpec> BuildZoo() {
  return {
      MegatronGpt("gpt-1.7b", 24, 2304, 24, 1.7e9),
      MegatronGpt("gpt-3.6b", 30, 3072, 32, 3.6e9),
      MegatronGpt("gpt-7.5b", 36, 4096, 32, 7.5e9),
      MegatronGpt("gpt-18.4b", 40, 6144, 48, 18.4e9),
      MegatronGpt("gpt-39.1b", 48, 8192, 64, 39.1e9),
      MegatronGpt("gpt-76.1b", 60, 10240, 80, 76.1e9),
      MegatronGpt("gpt-145.6b", 80, 12288, 96, 145.6e9),
      MegatronGpt("gpt-310.1b", 96, 16384, 128, 310.1e9),
      MegatronGpt("gpt-529.6b", 105, 20480, 128, 529.6e9),
      MegatronGpt("gpt-1t", 128, 25600, 160, 1008.0e9),
      Gpt("gpt3-175b", 96, 12288, 96, 50257, 175e9,
          "Brown et al., 'Language Models are Few-Shot Learners', NeurIPS 2020 "
          "(arXiv:2005.14165), Table 2.1"),
      Llama2("llama2-7b", 32, 4096, 32, 32, 11008, 6738415616),
      Llama2("llama2-13b", 40, 5120, 40, 40, 13824, 13015864320),
      Llama2("llama2-70b", 80, 8192, 64, 8, 28672, 68976648192),
      Llama3("llama3-8b", 32, 4096, 32, 14336, 8030261248),
      Llama3("llama3-70b", 80, 8192, 64, 28672, 70553706496),
      Llama3("llama3.1-405b", 126, 16384, 128, 53248, 405853388800),
      Llama3("llama3.1-8b-128k", 32, 4096, 32, 14336, 8030261248, 131072),
      Mixtral("mixtral-8x7b", 32, 4096, 32, 14336, 32000, 46702792704),
      Mixtral("mixtral-8x22b", 56, 6144, 48, 16384, 32768, 140630071296),
      DeepSeekV3("deepseek-v3", 4096),
      DeepSeekV3("deepseek-v3-128k", 131072),
      BertLarge(),
      ResNet50(),
  };
}

}  // namespace

const std::vector<ModelSpec>& ModelZoo() {
  static const std::vector<ModelSpec>* const zoo = new std::vector<ModelSpec>(BuildZoo());
  return *zoo;
}

std::optional<ModelSpec> FindModel(std::string_view name) {
  for (const ModelSpec& m : ModelZoo()) {
    if (m.name == name) return m;
  }
  return std::nullopt;
}

}  // namespace trainsim
