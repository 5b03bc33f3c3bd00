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
