#include "core/model_zoo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/model_spec.h"

namespace trainsim {
namespace {

const ModelSpec& Preset(const std::string& name) {
  static const ModelSpec kMissing;
  for (const ModelSpec& m : ModelZoo()) {
    if (m.name == name) return m;
  }
  ADD_FAILURE() << "no preset " << name;
  return kMissing;
}

// Published totals, typed in from the sources (not read from the zoo), with the tolerance
// the printed figure allows.
struct PublishedCount {
  const char* name;
  double published;
  double tolerance;  // absolute, in parameters
};

// Megatron Table 1 prints billions with one decimal: the true count lies within half a unit
// of the last digit, 0.05e9. (gpt-18.4b and gpt-76.1b are 49.8e6 and 49.3e6 away: the bound is
// tight.)
constexpr double kTenthBillion = 0.05e9;
// BERT-large: "340M" has two significant figures (+-5e6), and the paper's figure includes the
// pooler (h*h + h = 1,049,600), which the zoo does not model.
constexpr double kBertTolerance = 5e6 + 1049600;

const PublishedCount kPublished[] = {
    {"gpt-1.7b", 1.7e9, kTenthBillion},
    {"gpt-3.6b", 3.6e9, kTenthBillion},
    {"gpt-7.5b", 7.5e9, kTenthBillion},
    {"gpt-18.4b", 18.4e9, kTenthBillion},
    {"gpt-39.1b", 39.1e9, kTenthBillion},
    {"gpt-76.1b", 76.1e9, kTenthBillion},
    {"gpt-145.6b", 145.6e9, kTenthBillion},
    {"gpt-310.1b", 310.1e9, kTenthBillion},
    {"gpt-529.6b", 529.6e9, kTenthBillion},
    {"gpt-1t", 1008.0e9, kTenthBillion},
    {"gpt3-175b", 175e9, 0.5e9},   // "175B": three significant figures
    {"llama2-7b", 6738415616, 0},  // exact Hugging Face checkpoint counts
    {"llama2-13b", 13015864320, 0},
    {"llama2-70b", 68976648192, 0},
    // Exact counts of the Hugging Face checkpoints' safetensors indexes.
    {"llama3-8b", 8030261248, 0},
    {"llama3-70b", 70553706496, 0},
    {"llama3.1-405b", 405853388800, 0},
    {"llama3.1-8b-128k", 8030261248, 0},
    {"mixtral-8x7b", 46702792704, 0},
    {"mixtral-8x22b", 140630071296, 0},
    {"deepseek-v3", 671026419200, 0},  // the main model, without multi-token prediction
    {"deepseek-v3-128k", 671026419200, 0},
    {"bert-large", 340e6, kBertTolerance},
    {"resnet50", 25557032, 0},  // torchvision.models.resnet50, exact
};

TEST(ModelZooTest, ParameterCountsMatchPublished) {
  for (const PublishedCount& row : kPublished) {
    SCOPED_TRACE(row.name);
    const ModelSpec& m = Preset(row.name);
    EXPECT_EQ(m.published_params, row.published);
    EXPECT_NEAR(ParameterCount(m), row.published, row.tolerance);
  }
}

TEST(ModelZooTest, EveryPresetIsCheckedAndCited) {
  EXPECT_EQ(ModelZoo().size(), std::size(kPublished));
  for (const ModelSpec& m : ModelZoo()) {
    EXPECT_FALSE(m.source.empty()) << m.name;
    EXPECT_GT(m.published_params, 0) << m.name;
  }
}

TEST(ModelZooTest, FixedOrder) {
  std::vector<std::string> names;
  for (const ModelSpec& m : ModelZoo()) names.push_back(m.name);
  const std::vector<std::string> expected = {
      "gpt-1.7b",    "gpt-3.6b",         "gpt-7.5b",         "gpt-18.4b",    "gpt-39.1b",
      "gpt-76.1b",   "gpt-145.6b",       "gpt-310.1b",       "gpt-529.6b",   "gpt-1t",
      "gpt3-175b",   "llama2-7b",        "llama2-13b",       "llama2-70b",   "llama3-8b",
      "llama3-70b",  "llama3.1-405b",    "llama3.1-8b-128k", "mixtral-8x7b", "mixtral-8x22b",
      "deepseek-v3", "deepseek-v3-128k", "bert-large",       "resnet50"};
  EXPECT_EQ(names, expected);
}

TEST(ModelZooTest, FindModelIsExactAndCaseSensitive) {
  ASSERT_TRUE(FindModel("llama2-70b").has_value());
  EXPECT_EQ(FindModel("llama2-70b")->kv_heads, 8);
  EXPECT_EQ(FindModel("unknown-model"), std::nullopt);
  EXPECT_EQ(FindModel("GPT3-175B"), std::nullopt);
  EXPECT_EQ(FindModel("gpt3-175"), std::nullopt);
  EXPECT_EQ(FindModel(""), std::nullopt);
}

// Narayanan et al. SC'21, Sec. 5.1: a layer's forward pass is 24*s*h^2 + 4*s^2*h FLOPs and the
// logits 2*s*h*V, so forward + backward (3x forward) is 72*s*l*h^2*(1 + s/(6h) + V/(12*l*h)).
// Their Eq. 3 adds the recomputed forward of the layers (not the logits): 96 and V/(16*l*h).
TEST(ModelZooTest, GptForwardFlopsMatchMegatronFormula) {
  int checked = 0;
  for (const ModelSpec& m : ModelZoo()) {
    if (m.name.rfind("gpt", 0) != 0) continue;
    SCOPED_TRACE(m.name);
    const double s = m.seq_len, l = m.layers, h = m.hidden, v = m.vocab;
    const double f = ForwardFlopsPerSample(m);
    const double train = 72 * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
    EXPECT_NEAR(3 * f, train, train * 1e-12);
    const double eq3 = 96 * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
    EXPECT_NEAR(4 * f - 2 * s * h * v, eq3, eq3 * 1e-12);
    ++checked;
  }
  EXPECT_EQ(checked, 11);
}

// A model small enough to count by hand: GQA (2 heads, 1 KV head, head_dim 4), SwiGLU,
// no biases (RMSNorm), untied head, rotary positions.
ModelSpec TinyLlama() {
  ModelSpec m;
  m.layers = 2;
  m.hidden = 8;
  m.heads = 2;
  m.kv_heads = 1;
  m.ffn_hidden = 16;
  m.seq_len = 4;
  m.vocab = 10;
  m.mlp = MlpKind::kSwiGlu;
  m.bias = false;
  m.tied_embeddings = false;
  m.learned_positions = false;
  return m;
}

TEST(ModelSpecTest, TinyModelCountedByHand) {
  const ModelSpec m = TinyLlama();
  // Q 64 + K 32 + V 32 + O 64, MLP 3*8*16 = 384, two RMSNorms 16.
  EXPECT_EQ(LayerParameterCount(m, 0), 592);
  EXPECT_EQ(EmbeddingParameterCount(m), 160);       // embedding 80 + output head 80
  EXPECT_EQ(ParameterCount(m), 2 * 592 + 160 + 8);  // + final RMSNorm
  // Per layer: QKV 2*4*8*(8+8) = 1024, scores 256, AV 256, projection 512,
  // MLP 2*4*8*16*3 = 3072; logits 2*4*8*10 = 640.
  EXPECT_EQ(ForwardFlopsPerSample(m), 2 * 5120 + 640);
  EXPECT_EQ(TokensPerSample(m), 4);
}

TEST(ModelSpecTest, BiasesAndLearnedPositionsCounted) {
  ModelSpec m = TinyLlama();
  m.bias = true;  // + Q 8, K 4, V 4, O 8, gate 16, up 16, down 8; norms become LayerNorm
  m.learned_positions = true;  // + 4*8
  m.tied_embeddings = true;    // - 80
  EXPECT_EQ(LayerParameterCount(m, 0), 592 + 64 + 16);
  EXPECT_EQ(ParameterCount(m), 2 * (592 + 64 + 16) + 80 + 32 + 16);
}

TEST(ModelSpecTest, GroupedQueryAttentionReducesParamsAndFlops) {
  const ModelSpec gqa = Preset("llama2-70b");
  ModelSpec mha = gqa;
  mha.kv_heads = mha.heads;
  // K and V shrink from h x h to h x (8 * 128) in each of the 80 layers.
  const double saved = 80.0 * 2 * 8192 * (8192 - 1024);
  EXPECT_EQ(ParameterCount(mha) - ParameterCount(gqa), saved);
  // Each K/V parameter saved is one multiply-add per token: 2 FLOPs x 4096 tokens.
  EXPECT_EQ(ForwardFlopsPerSample(mha) - ForwardFlopsPerSample(gqa), 2.0 * 4096 * saved);
}

// Active parameters, as the model cards state them: Mixtral 8x7B "13B active parameters"
// (Jiang et al., Sec. 2.1: 12.9B with the input embedding, which this count leaves out);
// DeepSeek-V3 "37B activated for each token" (arXiv:2412.19437, abstract).
TEST(ModelSpecTest, ActiveParametersOfMixtureOfExperts) {
  const ModelSpec& mixtral = Preset("mixtral-8x7b");
  // Per layer: attention 41,943,040 + router 32,768 + 2 experts of 176,160,768 + norms 8,192;
  // 32 layers, the output head 131,072,000 and the final norm 4,096.
  EXPECT_EQ(ActiveParameterCount(mixtral), 32.0 * 394305536 + 131072000 + 4096);
  EXPECT_NEAR(ActiveParameterCount(mixtral) + 131072000, 12.9e9, 0.05e9);
  EXPECT_NEAR(ActiveParameterCount(Preset("deepseek-v3")), 37e9, 0.5e9);
  EXPECT_EQ(ActiveParameterCount(Preset("llama3-8b")), ParameterCount(Preset("llama3-8b")));
  // 3 dense layers then 58 MoE layers.
  const ModelSpec& ds = Preset("deepseek-v3");
  EXPECT_EQ(MoeLayerCount(ds, 0, ds.layers), 58);
  EXPECT_FALSE(IsMoeLayer(ds, 2));
  EXPECT_TRUE(IsMoeLayer(ds, 3));
}

// Forward FLOPs of an MoE layer: a token goes through the router and its top-k experts
// (2 FLOPs per parameter), not through every expert.
TEST(ModelSpecTest, MoeForwardFlopsCountTheExpertsATokenVisits) {
  ModelSpec moe = TinyLlama();
  moe.experts = 4;
  moe.experts_per_token = 2;
  moe.expert_ffn_hidden = 8;
  // Per MoE layer and token: router 8*4 = 32, two experts of 3*8*8 = 192 each, so the
  // MLP's 2*(32 + 384) = 832 FLOPs per token against the dense 2*384 = 768.
  EXPECT_EQ(ForwardFlopsPerSample(moe) - ForwardFlopsPerSample(TinyLlama()), 2 * 4 * (832.0 - 768));
  // Parameters: router 32 + four experts of 192 = 800 per layer against 384.
  EXPECT_EQ(ParameterCount(moe) - ParameterCount(TinyLlama()), 2 * (800.0 - 384));
  moe.moe_every = 2;  // layers 0 only
  EXPECT_EQ(ParameterCount(moe) - ParameterCount(TinyLlama()), 800.0 - 384);
  EXPECT_EQ(LayerParameterCount(moe, 0) - LayerParameterCount(moe, 1), 800.0 - 384);
}

TEST(ModelSpecTest, BertLargeMatchesBertModelWithoutPooler) {
  const ModelSpec& m = Preset("bert-large");
  // transformers.BertModel(bert-large-uncased) has 335,141,888 parameters, pooler included.
  EXPECT_EQ(ParameterCount(m) + 1024.0 * 1024 + 1024, 335141888);
}

TEST(ModelSpecTest, ResNet50LayerList) {
  const ModelSpec& m = Preset("resnet50");
  ASSERT_EQ(m.kind, ModelKind::kLayerList);
  EXPECT_EQ(m.layer_list.size(), 54u);  // 49 convs on the main path, 4 projections, fc
  EXPECT_EQ(m.sample_elems, 3 * 224 * 224);
  EXPECT_EQ(TokensPerSample(m), 1);
  // torchvision documents ResNet50_Weights.IMAGENET1K_V1 at "4.09 GFLOPS", counting
  // multiply-adds; 4.09e9 MACs to three significant figures.
  EXPECT_NEAR(ForwardFlopsPerSample(m) / 2, 4.09e9, 0.005e9);

  std::set<std::string> names;
  for (const LayerSpec& layer : m.layer_list) names.insert(layer.name);
  EXPECT_EQ(names.size(), m.layer_list.size());
  // layer2.0.conv2: 3x3, 128 -> 128, stride 2 (v1.5), 56x56 -> 28x28.
  const auto it = std::find_if(m.layer_list.begin(), m.layer_list.end(),
                               [](const LayerSpec& l) { return l.name == "layer2.0.conv2"; });
  ASSERT_NE(it, m.layer_list.end());
  EXPECT_EQ(it->params, 128.0 * 128 * 9 + 2 * 128);
  EXPECT_EQ(it->forward_flops, 2.0 * 128 * 128 * 9 * 28 * 28);
  EXPECT_EQ(it->activation_bytes, 2.0 * 128 * 28 * 28);
  EXPECT_EQ(m.layer_list.front().name, "conv1");
  EXPECT_EQ(m.layer_list.front().forward_flops, 2.0 * 3 * 64 * 49 * 112 * 112);
  EXPECT_EQ(m.layer_list.back().name, "fc");
  EXPECT_EQ(m.layer_list.back().params, 2048.0 * 1000 + 1000);
}

// The element-wise kernels after each conv: BN + ReLU on the main path, BN + add +
// ReLU closing each of the 16 bottleneck blocks, BN alone on the 4 projections,
// none after the classifier; each conv reads its input map (the block input for
// a projection).
TEST(ModelSpecTest, ResNet50EpiloguesAndInputs) {
  const ModelSpec& m = Preset("resnet50");
  std::map<Epilogue, int> count;
  for (const LayerSpec& layer : m.layer_list) ++count[layer.epilogue];
  EXPECT_EQ(count[Epilogue::kBnAddRelu], 16);
  EXPECT_EQ(count[Epilogue::kBn], 4);
  EXPECT_EQ(count[Epilogue::kBnRelu], 33);
  EXPECT_EQ(count[Epilogue::kNone], 1);
  EXPECT_EQ(m.layer_list.back().epilogue, Epilogue::kNone);
  auto layer = [&](const std::string& name) {
    return *std::find_if(m.layer_list.begin(), m.layer_list.end(),
                         [&](const LayerSpec& l) { return l.name == name; });
  };
  EXPECT_EQ(layer("conv1").input_bytes, 2.0 * 3 * 224 * 224);
  EXPECT_EQ(layer("layer2.0.conv2").input_bytes, 2.0 * 128 * 56 * 56);  // stride 2 here
  EXPECT_EQ(layer("layer2.0.downsample.0").input_bytes, 2.0 * 256 * 56 * 56);
  EXPECT_EQ(layer("layer2.0.downsample.0").epilogue, Epilogue::kBn);
  EXPECT_EQ(layer("layer2.0.conv3").epilogue, Epilogue::kBnAddRelu);
  EXPECT_EQ(layer("fc").input_bytes, 2.0 * 2048);
}

}  // namespace
}  // namespace trainsim
