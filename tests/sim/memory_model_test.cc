#include "sim/memory_model.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/model_spec.h"
#include "core/model_zoo.h"
#include "core/scenario.h"
#include "core/units.h"
#include "tests/test_util.h"

namespace trainsim::sim {
namespace {

// GPT-3 175B (s = 2048, h = 12288, a = 96, v = 50257, 96 layers, tied embeddings) on
// 128 p4d.24xlarge (8 A100 40 GB each): tp 8, pp 8, dp 16, 1F1B, micro batch 1, global batch
// 1536 (m = 1536 / 16 = 96 microbatches per pipeline), bf16, Adam, full recompute, no SP.
Scenario Gpt3OnP4d(int zero_stage) {
  Scenario s;
  s.model = FindModel("gpt3-175b").value();
  s.training.global_batch = 1536;
  s.training.micro_batch = 1;
  s.training.precision = Precision::kBf16;
  s.training.optimizer = Optimizer::kAdam;
  s.training.recompute = Recompute::kFull;
  s.cluster.instance = "p4d.24xlarge";
  s.cluster.nodes = 128;
  s.parallel.tp = 8;
  s.parallel.pp = 8;
  s.parallel.dp = 16;
  s.parallel.zero_stage = zero_stage;
  s.parallel.schedule = Schedule::k1F1B;
  s.instance.name = "p4d.24xlarge";
  s.instance.gpus = 8;
  s.instance.gpu_mem_gib = 40;
  return s;
}

// One GPT-3 175B layer, s = 2048, b = 1, t = 8.
Scenario Gpt3Layer(Recompute recompute, bool sequence_parallel) {
  Scenario s = Gpt3OnP4d(1);
  s.training.recompute = recompute;
  s.training.sequence_parallel = sequence_parallel;
  return s;
}

// A GPT-style model small enough to count by hand: 2 layers, h = 8, a = 2, f = 32, s = 4,
// v = 10, biases + LayerNorm, learned positions, tied embeddings.
//   layer = attention 4h^2 + 4h (288) + MLP 2hf + f + h (552) + 2 LayerNorms 4h (32) = 872
//   input embedding = v h + s h = 80 + 32 = 112; final LayerNorm 2h = 16
//   total = 2 * 872 + 112 + 16 = 1872
ModelSpec TinyGpt() {
  ModelSpec m;
  m.name = "tiny";
  m.layers = 2;
  m.hidden = 8;
  m.heads = 2;
  m.kv_heads = 2;
  m.ffn_hidden = 32;
  m.seq_len = 4;
  m.vocab = 10;
  return m;
}

// A layer-list model whose layers hold the given parameter counts and 100 activation bytes
// per sample each.
ModelSpec LayerList(const std::vector<double>& params) {
  ModelSpec m;
  m.name = "list";
  m.kind = ModelKind::kLayerList;
  for (double p : params) {
    LayerSpec layer;
    layer.name = "layer";
    layer.params = p;
    layer.activation_bytes = 100;
    m.layer_list.push_back(layer);
  }
  return m;
}

Scenario OnOneGpu(const ModelSpec& m) {
  Scenario s;
  s.model = m;
  s.training.global_batch = 8;
  s.parallel.dp = 1;
  s.instance.name = "test-gpu";
  s.instance.gpus = 1;
  s.instance.gpu_mem_gib = 80;
  return s;
}

// --- Activations (Korthikanti et al. 2022, Sec. 4) ---------------------------------------

struct LayerCase {
  Recompute recompute;
  bool sequence_parallel;
  double expected_bytes;
};

// sbh = 2048 * 12288 = 25,165,824; 5as/h = 5 * 96 * 2048 / 12288 = 80; t = 8.
const LayerCase kGpt3LayerCases[] = {
    // sbh (10 + 24/8 + 80/8) = 23 sbh
    {Recompute::kNone, false, 578813952},
    // sbh/8 (34 + 80) = 3,145,728 * 114
    {Recompute::kNone, true, 358612992},
    // sbh (10 + 24/8) = 13 sbh
    {Recompute::kSelective, false, 327155712},
    // sbh 34 / 8 = 3,145,728 * 34
    {Recompute::kSelective, true, 106954752},
    // 2 sbh
    {Recompute::kFull, false, 50331648},
    // 2 sbh / 8
    {Recompute::kFull, true, 6291456},
};

TEST(MemoryModelTest, Gpt3LayerActivationsMatchKorthikanti) {
  for (const LayerCase& c : kGpt3LayerCases) {
    const Scenario s = Gpt3Layer(c.recompute, c.sequence_parallel);
    EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), c.expected_bytes)
        << "recompute " << static_cast<int>(c.recompute) << " sp " << c.sequence_parallel;
  }
}

TEST(MemoryModelTest, Fp32TrainingDoublesActivations) {
  Scenario s = Gpt3Layer(Recompute::kNone, false);
  s.training.precision = Precision::kFp32;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 2 * 578813952.0);
}

TEST(MemoryModelTest, SwiGluStoresTheFusedGateAndUpInput) {
  // SwiGLU stores 6sbf/t in the MLP where GELU stores 4sbf/t: 2 * 2048 * 49152 / 8 more.
  Scenario s = Gpt3Layer(Recompute::kSelective, false);
  s.model.mlp = MlpKind::kSwiGlu;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 327155712.0 + 25165824.0);
}

TEST(MemoryModelTest, LayerListHasNoTransformerLayer) {
  EXPECT_EQ(LayerActivationBytes(OnOneGpu(LayerList({10})), 1), 0);
}

// --- Flash attention (docs/memory.md section 3) -------------------------------------------

// GPT-3 layer as above: the 5as^2b/t scores go, 4asb/t bytes of fp32 logsumexp come
// (4 * 96 * 2048 / 8 = 98,304), and selective recompute has nothing left to drop.
TEST(MemoryModelTest, FlashAttentionStoresTheLogsumexpInsteadOfTheScores) {
  const LayerCase cases[] = {
      {Recompute::kNone, false, 327155712 + 98304.0},
      {Recompute::kNone, true, 106954752 + 98304.0},
      {Recompute::kSelective, false, 327155712 + 98304.0},
      {Recompute::kSelective, true, 106954752 + 98304.0},
      {Recompute::kFull, false, 50331648},
      {Recompute::kFull, true, 6291456},
  };
  for (const LayerCase& c : cases) {
    Scenario s = Gpt3Layer(c.recompute, c.sequence_parallel);
    s.training.flash_attention = true;
    EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), c.expected_bytes)
        << "recompute " << static_cast<int>(c.recompute) << " sp " << c.sequence_parallel;
  }
}

// TinyGpt (s 4, h 8, a 2, f 32, b 1, t 1), by hand: replicated 10sbh = 320, split
// 8sbh + 4sbf = 256 + 512 = 768, scores 5as^2b = 160: 1248 without flash attention;
// with it the scores give way to the logsumexp 4asb = 32: 1120, 128 less.
TEST(MemoryModelTest, FlashAttentionDropsExactlyTheScoreTermOfTinyGpt) {
  Scenario off = OnOneGpu(TinyGpt());
  Scenario on = off;
  on.training.flash_attention = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(off, 1), 1248);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(on, 1), 1120);
  // The stage: 2 layers x 1 microbatch in flight + embedding output 2sbh (64) + fp32 logits
  // 4sbv (160).
  EXPECT_DOUBLE_EQ(ComputeMemory(off).activations_bytes, 2 * 1248 + 64 + 160);
  EXPECT_DOUBLE_EQ(ComputeMemory(on).activations_bytes, 2 * 1120 + 64 + 160);
  // Full recompute: stored inputs 2sbh (64) per layer, plus one layer's working set, which
  // with flash attention holds the logsumexp instead of the scores.
  off.training.recompute = on.training.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(ComputeMemory(off).activations_bytes, 2 * 64 + 1248 + 64 + 160);
  EXPECT_DOUBLE_EQ(ComputeMemory(on).activations_bytes, 2 * 64 + 1120 + 64 + 160);
}

// training.dropout false (MPT, most Llama recipes): TinyGpt as above keeps no dropout masks,
// neither the two after attention and MLP (2sbh = 64) nor, without flash attention, the score
// matrix's mask and output (3as^2b = 96): 1248 - 160 = 1088 and 1120 - 64 = 1056.
TEST(MemoryModelTest, DropoutFreeLayersKeepNoMasks) {
  Scenario off = OnOneGpu(TinyGpt());
  off.training.dropout = false;
  Scenario on = off;
  on.training.flash_attention = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(off, 1), 1088);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(on, 1), 1056);
  // Full recompute keeps the layer input only, masks or not.
  off.training.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(off, 1), 64);
}

// torchtitan's op-level policy (recompute "selective_op") on TinyGpt (s 4, h 8, kv 8, f 32,
// b 1, t 1) with flash attention keeps per layer the input 2sbh (64), the outputs of wq, wv,
// the attention and w1, 2sb(h + kv + h + f) (448), of w2, 2sbh (64), and the logsumexp
// 4asb (32): 608; the stage adds one layer's working set (1120, as without recompute).
TEST(MemoryModelTest, OpLevelCheckpointingKeepsEveryOtherMatmulsOutput) {
  Scenario s = OnOneGpu(TinyGpt());
  s.training.flash_attention = true;
  s.training.recompute = Recompute::kSelectiveOp;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 608);
  EXPECT_DOUBLE_EQ(ComputeMemory(s).activations_bytes, 2 * 608 + 1120 + 64 + 160);
}

// MaxText's policies on TinyGpt (s 4, h 8, kv 8, b 1, t 1) with flash attention keep per layer
// the input 2sbh (64), the q, k and v projections' outputs 2sb(h + 2 kv) (192) and the output
// projection's 2sbh (64): 320, and no logsumexp (the attention runs again in the backward);
// "save_dot_except_mlpwi" adds the down projection's output 2sbh (64). The stage adds one
// layer's working set (1120), as op-level checkpointing does.
TEST(MemoryModelTest, MaxTextPoliciesKeepTheProjectionsOutputs) {
  Scenario s = OnOneGpu(TinyGpt());
  s.training.flash_attention = true;
  s.training.recompute = Recompute::kSaveDotExceptMlp;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 320);
  EXPECT_DOUBLE_EQ(ComputeMemory(s).activations_bytes, 2 * 320 + 1120 + 64 + 160);
  s.training.recompute = Recompute::kSaveDotExceptMlpWi;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 384);
}

// Megatron-Core's recompute modules (recompute "selective", training.recompute_modules) on
// TinyGpt (s 4, h 8, f 32, b 1, t 1, GELU, dropout) with flash attention, 1120 bytes a layer
// kept without recompute: the default, the attention core, drops nothing there; "mlp" drops
// the MLP's intermediates 4sbf (512), "layernorm" the QKV and MLP inputs 4sbh (128). The stage
// adds the dropped bytes of one layer, what its recompute materialises again.
TEST(MemoryModelTest, RecomputeModulesDropWhatTheyRecompute) {
  Scenario s = OnOneGpu(TinyGpt());
  s.training.flash_attention = true;
  s.training.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 1120);
  EXPECT_DOUBLE_EQ(ComputeMemory(s).activations_bytes, 2 * 1120 + 64 + 160);
  s.training.recompute_modules = kRecomputeMlp;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 1120 - 512);
  EXPECT_DOUBLE_EQ(ComputeMemory(s).activations_bytes, 2 * 608 + 512 + 64 + 160);
  s.training.recompute_modules = kRecomputeLayernorm;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 1120 - 128);
  s.training.recompute_modules = kRecomputeLayernorm | kRecomputeMlp;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 1120 - 128 - 512);
  // Without flash attention the scores (5 a s sb = 160) go only with "core_attn".
  s.training.flash_attention = false;
  Scenario none = s;
  none.training.recompute = Recompute::kNone;
  s.training.recompute_modules = kRecomputeMlp;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), LayerActivationBytes(none, 1) - 512);
  s.training.recompute_modules = kRecomputeMlp | kRecomputeCoreAttn;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), LayerActivationBytes(none, 1) - 512 - 160);
}

// The MoE and MLA modules on an MoE layer of TinyGpt with 4 experts of f 16, 2 per token and a
// shared one (sb k = 8 routed rows, 12 in all) and MLA attention of 2 heads (q/k 4 + 2 rotary
// wide, v 4: QkWidth 12, VWidth 8): "moe" drops the MLP's intermediates 4 x 12 x 16 (768), the
// routed inputs 2 x 8 x h (128) and the router's fp32 probabilities 4 sb E (64); "moe_act" the
// routed rows' activation output 2 x 8 x 16 (256); "shared_experts" the shared rows'
// intermediates 4 sb 16 (256); "mla_up_proj" the queries, keys and values 2 sb (2 x 12 + 8)
// (256), keeping the output projection's input.
TEST(MemoryModelTest, MoeAndMlaRecomputeModules) {
  ModelSpec m = TinyGpt();
  m.experts = 4;
  m.experts_per_token = 2;
  m.expert_ffn_hidden = 16;
  m.shared_experts = 1;
  m.q_lora_rank = 6;
  m.kv_lora_rank = 4;
  m.qk_nope_head_dim = 4;
  m.qk_rope_head_dim = 2;
  m.v_head_dim = 4;
  Scenario s = OnOneGpu(m);
  s.training.flash_attention = true;
  s.training.recompute = Recompute::kSelective;
  const double kept = LayerActivationBytes(s, 1, 1);
  auto dropped = [&](unsigned modules) {
    s.training.recompute_modules = modules;
    return kept - LayerActivationBytes(s, 1, 1);
  };
  EXPECT_DOUBLE_EQ(dropped(kRecomputeMoe), 768 + 128 + 64);
  EXPECT_DOUBLE_EQ(dropped(kRecomputeMoeAct), 256);
  EXPECT_DOUBLE_EQ(dropped(kRecomputeSharedExperts), 256);
  EXPECT_DOUBLE_EQ(dropped(kRecomputeMoeAct | kRecomputeSharedExperts), 512);
  EXPECT_DOUBLE_EQ(dropped(kRecomputeMoe | kRecomputeMoeAct), 768 + 128 + 64);
  EXPECT_DOUBLE_EQ(dropped(kRecomputeMlaUpProj), 256);
  EXPECT_DOUBLE_EQ(dropped(kRecomputeMlp), 0);  // no dense layer here
}

// training.recompute_every 2 recomputes every second layer of a stage: of TinyGpt's two, the
// second keeps only its input (64), the first everything (1248), and the second's recompute
// needs its working set (1248). With 3 no layer is recomputed: both keep everything and there
// is no working set.
TEST(MemoryModelTest, RecomputeEveryKeepsTheSkippedLayersWhole) {
  Scenario s = OnOneGpu(TinyGpt());
  s.training.recompute = Recompute::kFull;
  s.training.recompute_every = 2;
  EXPECT_EQ(RecomputedLayers(s.training, 2), 1);
  EXPECT_FALSE(RecomputesLayer(s.training, 0));
  EXPECT_TRUE(RecomputesLayer(s.training, 1));
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 2), (64 + 1248) / 2.0);
  EXPECT_DOUBLE_EQ(ComputeMemory(s).activations_bytes, 64 + 1248 + 1248 + 64 + 160);
  s.training.recompute_every = 3;
  EXPECT_EQ(RecomputedLayers(s.training, 2), 0);
  EXPECT_DOUBLE_EQ(ComputeMemory(s).activations_bytes, 2 * 1248 + 64 + 160);
}

TEST(MemoryModelTest, FlashAttentionKeepsGroupedKeysAndValuesNarrow) {
  // kv_heads 1 of 2: K and V are 2sb kv = 32 bytes each instead of 64, so the split term is
  // 2sb(2h + 2kv) + 4sbf = 192 + 512; without flash attention they are expanded (1248).
  ModelSpec m = TinyGpt();
  m.kv_heads = 1;
  Scenario s = OnOneGpu(m);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 1248);
  s.training.flash_attention = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 320 + 192 + 512 + 32);
}

// Context parallelism: each layer stores its half of the sequence (cp 2), and the layer that
// runs holds the keys and values of the whole sequence gathered from the CP group and then
// their gradients: 2 (K/V, dK/dV) x s b (4) x 2 kv (16) x 2 bytes = 256 bytes, on top of
// the 2 layers, the embedding output (2 x sb/cp x h x 2 bytes = 32) and the fp32 logits
// (4 x sb/cp x v = 80) of the one microbatch in flight.
TEST(MemoryModelTest, ContextParallelHoldsOneLayersGatheredKeysAndValues) {
  Scenario s = OnOneGpu(TinyGpt());
  s.training.flash_attention = true;
  s.parallel.cp = 2;
  ASSERT_EQ(InflightMicrobatches(s, 0), 1);
  const double layers = 2 * LayerActivationBytes(s, 2);
  EXPECT_DOUBLE_EQ(ComputeMemory(s).activations_bytes, layers + 32 + 80 + 256);
  s.parallel.cp = 1;  // the same layers hold twice the tokens, and nothing is gathered
  EXPECT_DOUBLE_EQ(2 * LayerActivationBytes(s, 2), 2 * layers);
  EXPECT_DOUBLE_EQ(ComputeMemory(s).activations_bytes, 2 * layers + 64 + 160);
}

TEST(MemoryModelTest, Fp32DoublesAllButTheFp32Logsumexp) {
  Scenario s = OnOneGpu(TinyGpt());
  s.training.flash_attention = true;
  s.training.precision = Precision::kFp32;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 1), 2 * (1120 - 32) + 32);
}

// Issue 14: GPT 1.7B dimensions (24 layers, h 2048, 16 heads, s 4096, v 51200) on one
// DGX H100, dp 8, micro batch 2, no recompute, bf16. Each layer's scores are
// 5 x 16 x 4096^2 x 2 = 2.5 GiB: 60 GiB for the 24 layers, which do not fit in 80 GiB.
TEST(MemoryModelTest, Gpt17bOnDgxH100FitsOnlyWithFlashAttention) {
  auto parse = [](const std::string& flash) {
    Expected<Scenario> s = ParseScenario(
        R"({"model": {"layers": 24, "hidden": 2048, "heads": 16, "seq_len": 4096, "vocab": 51200},)"
        R"( "training": {"global_batch": 16, "micro_batch": 2, "precision": "bf16",)"
        R"( "recompute": "none", "flash_attention": )" +
            flash +
            R"(},)"
            R"( "cluster": {"instance": "dgx-h100"}, "parallel": {"dp": 8}})",
        "issue14.json", test::BuiltinCatalog());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return *s;
  };
  const MemoryBreakdown off = ComputeMemory(parse("false"));
  const MemoryBreakdown on = ComputeMemory(parse("true"));
  EXPECT_FALSE(off.fits) << off.total_bytes / kGiB;
  EXPECT_TRUE(on.fits) << on.total_bytes / kGiB;
  // 24 layers x (5as^2b - 4asb), the only difference.
  EXPECT_DOUBLE_EQ(off.activations_bytes - on.activations_bytes,
                   24 * (5.0 * 16 * 4096 * 4096 * 2 - 4.0 * 16 * 4096 * 2));
}

// --- Parameters and bytes per parameter --------------------------------------------------

struct StageParamsCase {
  int tp, pp;
  bool tied;
  std::vector<double> expected;  // per stage
};

const StageParamsCase kTinyStageCases[] = {
    {1, 1, true, {1872}},         {1, 1, false, {1952}},  // + untied head v h = 80
    {1, 2, true, {984, 968}},      // 872 + 112 | 872 + embedding copy 80 + norm 16
    {2, 2, true, {492, 484}},      // the same over tp 2
    {1, 3, true, {984, 872, 96}},  // layers 1, 1, 0 | last: 80 + 16
};

TEST(MemoryModelTest, StageParametersOfTinyGpt) {
  for (const StageParamsCase& c : kTinyStageCases) {
    Scenario s = OnOneGpu(TinyGpt());
    s.model.tied_embeddings = c.tied;
    s.parallel.tp = c.tp;
    s.parallel.pp = c.pp;
    for (int stage = 0; stage < c.pp; ++stage) {
      EXPECT_DOUBLE_EQ(StageParameterCount(s, stage), c.expected[stage])
          << "tp " << c.tp << " pp " << c.pp << " tied " << c.tied << " stage " << stage;
    }
  }
}

TEST(MemoryModelTest, LayerListSplitsContiguouslyAndEvenly) {
  // 5 layers over 2 stages: layers 0-2 on stage 0, 3-4 on stage 1.
  Scenario s = OnOneGpu(LayerList({1, 2, 4, 8, 16}));
  s.parallel.pp = 2;
  EXPECT_DOUBLE_EQ(StageParameterCount(s, 0), 7);
  EXPECT_DOUBLE_EQ(StageParameterCount(s, 1), 24);
}

struct BytesCase {
  Precision precision;
  Optimizer optimizer;
  double weights, gradients, optimizer_state;  // bytes per parameter
};

const BytesCase kBytesCases[] = {
    {Precision::kBf16, Optimizer::kAdam, 2, 2, 12},  // master 4 + m 4 + v 4: 16 in all
    {Precision::kFp16, Optimizer::kAdam, 2, 2, 12},
    {Precision::kFp8, Optimizer::kAdam, 2, 2, 12},  // fp8 GEMMs, bf16 weights
    {Precision::kFp32, Optimizer::kAdam, 4, 4, 8},  // m + v; the weights are the master
    {Precision::kTf32, Optimizer::kAdam, 4, 4, 8},
    {Precision::kBf16, Optimizer::kSgd, 2, 2, 8},  // master + momentum
    {Precision::kFp32, Optimizer::kSgd, 4, 4, 4},  // momentum
};

// training.optimizer_state: bf16 moments keep the fp32 master copy (4 + 2 + 2 bytes per
// parameter with Adam), all-bf16 state halves both (2 + 2 + 2); SGD keeps one moment.
TEST(MemoryModelTest, Bf16OptimizerStateShrinksMasterAndMoments) {
  Scenario s = OnOneGpu(LayerList({1000}));
  s.training.precision = Precision::kBf16;
  const struct {
    OptimizerState state;
    Optimizer optimizer;
    double bytes;
  } cases[] = {{OptimizerState::kFp32, Optimizer::kAdam, 12},
               {OptimizerState::kBf16Moments, Optimizer::kAdam, 8},
               {OptimizerState::kBf16, Optimizer::kAdam, 6},
               {OptimizerState::kBf16Moments, Optimizer::kSgd, 6},
               {OptimizerState::kBf16, Optimizer::kSgd, 4}};
  for (const auto& c : cases) {
    SCOPED_TRACE(ToString(c.state));
    s.training.optimizer_state = c.state;
    s.training.optimizer = c.optimizer;
    EXPECT_DOUBLE_EQ(ComputeMemory(s).optimizer_bytes, 1000 * c.bytes);
    EXPECT_DOUBLE_EQ(CheckpointBytesPerParam(s), 2 + c.bytes);
  }
}

TEST(MemoryModelTest, BytesPerParameter) {
  for (const BytesCase& c : kBytesCases) {
    Scenario s = OnOneGpu(LayerList({1000}));
    s.training.precision = c.precision;
    s.training.optimizer = c.optimizer;
    const MemoryBreakdown m = ComputeMemory(s);
    EXPECT_DOUBLE_EQ(m.weights_bytes, 1000 * c.weights) << static_cast<int>(c.precision);
    EXPECT_DOUBLE_EQ(m.gradients_bytes, 1000 * c.gradients) << static_cast<int>(c.precision);
    EXPECT_DOUBLE_EQ(m.optimizer_bytes, 1000 * c.optimizer_state) << static_cast<int>(c.precision);
  }
}

TEST(MemoryModelTest, TinyGptWeightsAndOptimizer) {
  const MemoryBreakdown m = ComputeMemory(OnOneGpu(TinyGpt()));
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2 * 1872);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 2 * 1872);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 12 * 1872);
}

TEST(MemoryModelTest, ZeroOneShardsOnlyTheOptimizerOverDp) {
  Scenario s = Gpt3OnP4d(0);
  const MemoryBreakdown plain = ComputeMemory(s);
  s.parallel.zero_stage = 1;
  const MemoryBreakdown sharded = ComputeMemory(s);
  EXPECT_DOUBLE_EQ(sharded.optimizer_bytes, plain.optimizer_bytes / 16);
  EXPECT_DOUBLE_EQ(sharded.weights_bytes, plain.weights_bytes);
  EXPECT_DOUBLE_EQ(sharded.gradients_bytes, plain.gradients_bytes);
  EXPECT_DOUBLE_EQ(sharded.activations_bytes, plain.activations_bytes);
}

TEST(MemoryModelTest, ZeroTwoAlsoShardsGradients) {
  Scenario s = Gpt3OnP4d(1);
  const MemoryBreakdown one = ComputeMemory(s);
  s.parallel.zero_stage = 2;
  const MemoryBreakdown two = ComputeMemory(s);
  EXPECT_DOUBLE_EQ(two.gradients_bytes, one.gradients_bytes / 16);
  EXPECT_DOUBLE_EQ(two.optimizer_bytes, one.optimizer_bytes);
  EXPECT_DOUBLE_EQ(two.weights_bytes, one.weights_bytes);
}

// ZeRO-3 / FSDP: each GPU keeps 1/dp of its stage's weights, plus a gathered
// unit and the prefetched next one; the gradients of one unit are whole
// while they are reduce-scattered. The worst stage of GPT-3 on pp 8 is the
// first (embedding joined to its first layer).
TEST(MemoryModelTest, ZeroThreeShardsWeightsAndHoldsTwoGatheredUnits) {
  Scenario s = Gpt3OnP4d(2);
  const MemoryBreakdown two = ComputeMemory(s);
  s.parallel.zero_stage = 3;
  const MemoryBreakdown three = ComputeMemory(s);
  ASSERT_EQ(three.worst_stage, two.worst_stage);
  const int stage = three.worst_stage;
  const double layer = LayerParameterCount(s.model, 0) / 8;
  const double outside = StageParameterCount(s, stage) - 12 * layer;  // 96 layers / pp 8
  const double unit = 2 * (layer + outside);                          // bf16 bytes
  EXPECT_NEAR(three.weights_bytes, two.weights_bytes / 16 + 2 * unit, 1.0);
  EXPECT_NEAR(three.gradients_bytes, two.gradients_bytes + unit, 1.0);
  EXPECT_LT(three.total_bytes, two.total_bytes);
}

// DeepSpeed's ZeRO-3 gathers per submodule (docs/framework-facts.md section 1): beside its
// shard a GPU holds the parameters kept within the reuse distance (1e9) and the prefetch bucket
// (5e7), and beside its gradient shard the largest submodule's gradient and the contiguous
// reduce bucket (5e8), all in bf16. On GPT-3 175B with tp 8 a stage holds 2.7e9 parameters;
// its largest submodule is the embedding table or head, 50257 x 12288 / 8. A layer of 1T at
// tp 1 (fc1 25600 x 102400) is larger than the reuse distance: then it is what is held, where
// FSDP holds two whole layers (3 x fc1 each, and the embedding with the first).
TEST(MemoryModelTest, DeepSpeedHoldsSubmodulesAndBucketsNotLayers) {
  Scenario s = Gpt3OnP4d(2);
  const MemoryBreakdown two = ComputeMemory(s);
  s.parallel.zero_stage = 3;
  s.parallel.zero_impl = ZeroImpl::kDeepSpeed;
  const MemoryBreakdown ds = ComputeMemory(s);
  ASSERT_EQ(ds.worst_stage, two.worst_stage);
  const double sub = 50257.0 * 12288 / 8;
  EXPECT_NEAR(ds.weights_bytes, two.weights_bytes / 16 + 2 * (1e9 + 5e7), 1.0);
  EXPECT_NEAR(ds.gradients_bytes, two.gradients_bytes + 2 * (sub + 5e8), 1.0);
  Scenario t = s;
  t.model = FindModel("gpt-1t").value();
  t.parallel.tp = 1, t.parallel.pp = 1, t.parallel.dp = 1024;
  t.training.global_batch = 1024;
  t.parallel.zero_impl = ZeroImpl::kDeepSpeed;
  const MemoryBreakdown big = ComputeMemory(t);
  const double fc1 = 25600.0 * 4 * 25600;
  EXPECT_NEAR(big.weights_bytes, 2 * ParameterCount(t.model) / 1024 + 2 * (fc1 + 5e7),
              1e-9 * big.weights_bytes);
  t.parallel.zero_impl = ZeroImpl::kFsdp1;  // two whole layers of 3 x fc1 there
  const double shard = 2 * ParameterCount(t.model) / 1024;
  EXPECT_GT(ComputeMemory(t).weights_bytes - shard, 4 * (big.weights_bytes - shard));
}

// Hybrid sharding: the state ZeRO shards is divided by the shard group (4 of
// dp 16 here), not by dp; the gathered units are whole either way.
TEST(MemoryModelTest, HybridShardingDividesByTheShardGroup) {
  for (int stage : {2, 3}) {
    SCOPED_TRACE(stage);
    Scenario s = Gpt3OnP4d(stage);
    const MemoryBreakdown whole = ComputeMemory(s);
    s.parallel.shard_group = 4;
    const MemoryBreakdown hybrid = ComputeMemory(s);
    Scenario one = Gpt3OnP4d(1);
    one.parallel.zero_stage = 0;
    const MemoryBreakdown plain = ComputeMemory(one);
    EXPECT_DOUBLE_EQ(hybrid.optimizer_bytes, plain.optimizer_bytes / 4);
    EXPECT_DOUBLE_EQ(whole.optimizer_bytes, plain.optimizer_bytes / 16);
    if (stage == 2) {
      EXPECT_DOUBLE_EQ(hybrid.gradients_bytes, plain.gradients_bytes / 4);
    } else {
      // Shards of 1/4 instead of 1/16 of the weights, plus the same two units.
      EXPECT_NEAR(hybrid.weights_bytes - whole.weights_bytes,
                  plain.weights_bytes / 4 - plain.weights_bytes / 16, 1.0);
    }
  }
}

TEST(MemoryModelTest, OffloadMovesOptimizerStateAndActivationsToTheHost) {
  Scenario s = Gpt3OnP4d(1);
  s.training.recompute = Recompute::kNone;
  s.instance.ram_gib = 1152;  // p4d.24xlarge
  const MemoryBreakdown plain = ComputeMemory(s);
  s.training.offload_optimizer = true;
  s.training.offload_activations = true;
  const MemoryBreakdown off = ComputeMemory(s);
  EXPECT_EQ(off.optimizer_bytes, 0);
  // Four layers of one microbatch stay on the GPU (two on the way out, two
  // back); GPT-3 on pp 8 has 12 layers per stage and stage 0 holds 8
  // microbatches under 1F1B.
  const double layer = LayerActivationBytes(s, 1);
  EXPECT_LT(off.activations_bytes, plain.activations_bytes - 12 * 8 * layer + 4 * layer + 1);
  EXPECT_NEAR(off.host_bytes_per_node,
              8 * (plain.optimizer_bytes + 12 * InflightMicrobatches(s, 0) * layer), 1.0);
  EXPECT_TRUE(off.fits);
  s.instance.ram_gib = 64;  // too little host memory for what is offloaded
  const MemoryBreakdown small = ComputeMemory(s);
  EXPECT_FALSE(small.fits);
  EXPECT_NE(DescribeShortfall(small, s).find("GiB of host memory per node"), std::string::npos);
}

// Parameter offload (FSDP CPUOffload(offload_params=True)): the GPU keeps the
// gathered units only; the persistent shards of weights and gradients join
// the optimizer state in host memory. GPT-3 175B, tp 8, pp 1, dp 128.
TEST(MemoryModelTest, ParameterOffloadMovesTheShardsToTheHost) {
  Scenario s = Gpt3OnP4d(3);
  s.parallel.pp = 1;
  s.parallel.dp = 128;
  s.instance.ram_gib = 1152;  // p4d.24xlarge
  s.training.offload_optimizer = true;
  const MemoryBreakdown opt = ComputeMemory(s);
  s.training.offload_params = true;
  const MemoryBreakdown par = ComputeMemory(s);
  const double params = StageParameterCount(s, 0);
  const double shard = 2 * params / 128;  // bf16 weights (and gradients) over dp 128
  const double layer = LayerParameterCount(s.model, 0) / 8;
  const double unit = 2 * (params - 95 * layer);  // a layer + the embedding and final norm
  EXPECT_NEAR(opt.weights_bytes - par.weights_bytes, shard, 1.0);
  EXPECT_NEAR(opt.gradients_bytes - par.gradients_bytes, shard, 1.0);
  EXPECT_NEAR(par.weights_bytes, 2 * unit, 1.0);  // the unit computing and the prefetched one
  EXPECT_NEAR(par.gradients_bytes, unit, 1.0);    // the unit being reduced
  EXPECT_EQ(opt.optimizer_bytes, 0);
  EXPECT_EQ(par.optimizer_bytes, 0);
  EXPECT_EQ(par.activations_bytes, opt.activations_bytes);
  EXPECT_NEAR(opt.total_bytes - par.total_bytes, 1.05 * 2 * shard, 1.0);  // with the 5% reserve
  // Host: 16 bytes per parameter of each GPU's shard (FSDP: fp32 weights 4,
  // fp32 gradients 4, Adam's m and v 8; the GPU accounting's 2 + 2 + 12), 8 GPUs.
  EXPECT_NEAR(par.host_bytes_per_node, 8 * 16 * params / 128, 1.0);
  EXPECT_NEAR(par.host_bytes_per_node - opt.host_bytes_per_node, 8 * 2 * shard, 1.0);
}

// Issue 14: GPT-3 175B with FSDP (ZeRO-3) and full recompute on 16
// p4d.24xlarge (dp 128, micro batch 1, global batch 128) fits with its
// parameters offloaded, and not with everything on the GPUs.
TEST(MemoryModelTest, Gpt3On16P4dFitsWithParameterOffload) {
  auto memory = [](const std::string& offload) {
    Expected<Scenario> s = ParseScenario(
        R"({"model": "gpt3-175b", "training": {"global_batch": 128, "micro_batch": 1,
            "recompute": "full")" +
            offload + R"(},
            "cluster": {"instance": "p4d.24xlarge", "nodes": 16},
            "parallel": {"dp": 128, "zero_stage": 3}})",
        "x.json", test::BuiltinCatalog());
    EXPECT_TRUE(s.ok()) << s.status().message();
    return std::make_pair(ComputeMemory(*s), *s);
  };
  const auto [off, s_off] = memory(R"(, "offload_params": true)");
  EXPECT_TRUE(off.fits) << DescribeShortfall(off, s_off);
  EXPECT_LT(off.total_bytes, 40 * kGiB);
  EXPECT_GT(off.host_bytes_per_node, 100 * kGiB);  // 8 x 16 B x 175e9 / 128 = 163 GiB
  EXPECT_LT(off.host_bytes_per_node, off.host_capacity_bytes);
  const auto [on, s_on] = memory("");
  EXPECT_FALSE(on.fits);
  EXPECT_EQ(DescribeShortfall(on, s_on).rfind("needs ", 0), 0u) << DescribeShortfall(on, s_on);
}

// --- Pipeline in-flight microbatches (Narayanan et al. 2021) -----------------------------

struct InflightCase {
  Schedule schedule;
  int pp, virtual_stages;
  int64_t microbatches;
  int stage;
  double expected;
};

const InflightCase kInflightCases[] = {
    {Schedule::k1F1B, 4, 1, 8, 0, 4},   // min(pp - 0, m)
    {Schedule::k1F1B, 4, 1, 8, 3, 1},   // the last stage holds one
    {Schedule::k1F1B, 4, 1, 2, 0, 2},   // fewer microbatches than stages
    {Schedule::kGpipe, 4, 1, 8, 0, 8},  // all m, on every stage
    {Schedule::kGpipe, 4, 1, 8, 3, 8},
    // (2 (4 - 1) + (2 - 1) 4 + 1) / 2 = 11 / 2 = pp (1 + (pp - 1) / (pp v)) (Korthikanti Sec. 4)
    {Schedule::kInterleaved, 4, 2, 8, 0, 5.5},
    {Schedule::kInterleaved, 4, 2, 8, 3, 2.5},  // (0 + 4 + 1) / 2
    {Schedule::kInterleaved, 4, 2, 2, 0, 2},    // capped at m v = 4 chunks
};

TEST(MemoryModelTest, InflightMicrobatchesBySchedule) {
  for (const InflightCase& c : kInflightCases) {
    Scenario s = OnOneGpu(LayerList({1, 1, 1, 1}));
    s.parallel.schedule = c.schedule;
    s.parallel.pp = c.pp;
    s.parallel.virtual_stages = c.virtual_stages;
    s.training.global_batch = c.microbatches;  // dp 1, micro batch 1
    EXPECT_DOUBLE_EQ(InflightMicrobatches(s, c.stage), c.expected)
        << "schedule " << static_cast<int>(c.schedule) << " stage " << c.stage;
  }
}

TEST(MemoryModelTest, GpipeHoldsAllMicrobatchesAndOneFOneBHoldsPp) {
  // 4 layers of 100 B/sample over pp 4; micro batch 2; m = 32 / 2 = 16.
  Scenario s = OnOneGpu(LayerList({1, 1, 1, 1}));
  s.parallel.pp = 4;
  s.training.micro_batch = 2;
  s.training.global_batch = 32;
  s.parallel.schedule = Schedule::k1F1B;
  const MemoryBreakdown one_f_one_b = ComputeMemory(s);
  EXPECT_EQ(one_f_one_b.worst_stage, 0);
  EXPECT_DOUBLE_EQ(one_f_one_b.inflight_microbatches, 4);
  EXPECT_DOUBLE_EQ(one_f_one_b.activations_bytes, 100 * 2 * 4);
  s.parallel.schedule = Schedule::kGpipe;
  const MemoryBreakdown gpipe = ComputeMemory(s);
  EXPECT_DOUBLE_EQ(gpipe.inflight_microbatches, 16);
  EXPECT_DOUBLE_EQ(gpipe.activations_bytes, 100 * 2 * 16);
}

// --- Reserve, fit, and the GPT-3 175B boundary -------------------------------------------

TEST(MemoryModelTest, ReserveIsOneGibPlusFivePercent) {
  const MemoryBreakdown m = ComputeMemory(OnOneGpu(LayerList({1000})));
  const double others =
      m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes;
  EXPECT_DOUBLE_EQ(m.reserve_bytes, kGiB + 0.05 * others);
  EXPECT_DOUBLE_EQ(m.total_bytes, others + m.reserve_bytes);
  EXPECT_DOUBLE_EQ(m.capacity_bytes, 80 * kGiB);
}

// Stage 0 is the worst stage: it holds the input embedding and min(8, 96) = 8 microbatches.
//   params = 12 layers * (12h^2 + 13h = 1,812,099,072) / 8 = 2,718,148,608
//          + (v h + s h = 617,558,016 + 25,165,824) / 8 = 80,340,480      -> 2,798,489,088
//   weights = gradients = 2 B * params = 5,596,978,176
//   optimizer = 12 B * params = 33,581,869,056; with ZeRO-1 / 16 = 2,098,866,816
//   activations = 12 layers * 8 * 2sbh (50,331,648) = 4,831,838,208
//               + one recomputed layer, 23 sbh      =   578,813,952
//               + embedding output 8 * 2sbh         =   402,653,184   -> 5,813,305,344
constexpr double kWeights = 5596978176;
constexpr double kActivations = 5813305344;

TEST(MemoryModelTest, Gpt3On128P4dFitsWithZeroOne) {
  const MemoryBreakdown m = ComputeMemory(Gpt3OnP4d(1));
  // others = 2 * 5,596,978,176 + 2,098,866,816 + 5,813,305,344 = 19,106,128,512
  // reserve = 2^30 + 0.05 * others = 2,029,048,249.6; total = 21,135,176,761.6 (19.7 GiB)
  EXPECT_EQ(m.worst_stage, 0);
  EXPECT_DOUBLE_EQ(m.inflight_microbatches, 8);
  EXPECT_NEAR(m.weights_bytes, kWeights, 1);
  EXPECT_NEAR(m.gradients_bytes, kWeights, 1);
  EXPECT_NEAR(m.optimizer_bytes, 2098866816, 1);
  EXPECT_NEAR(m.activations_bytes, kActivations, 1);
  EXPECT_NEAR(m.reserve_bytes, 2029048249.6, 1);
  EXPECT_NEAR(m.total_bytes, 21135176761.6, 1);
  EXPECT_DOUBLE_EQ(m.capacity_bytes, 40 * kGiB);
  EXPECT_TRUE(m.fits);
}

TEST(MemoryModelTest, Gpt3On128P4dDoesNotFitWithoutZero) {
  const Scenario s = Gpt3OnP4d(0);
  const MemoryBreakdown m = ComputeMemory(s);
  // others = 2 * 5,596,978,176 + 33,581,869,056 + 5,813,305,344 = 50,589,130,752
  // reserve = 2^30 + 0.05 * others = 3,603,198,361.6; total = 54,192,329,113.6 (50.47 GiB)
  EXPECT_NEAR(m.optimizer_bytes, 33581869056, 1);
  EXPECT_NEAR(m.total_bytes, 54192329113.6, 1);
  EXPECT_FALSE(m.fits);
  // GiB: 5.21, 5.21, 31.28, 5.41, 3.36; total 50.47.
  EXPECT_EQ(DescribeShortfall(m, s),
            "needs 50.5 GiB per GPU on stage 0 (weights 5.2, gradients 5.2, optimizer 31.3, "
            "activations 5.4, reserve 3.4) but p4d.24xlarge has 40 GiB per GPU");
}

TEST(MemoryModelTest, LastStageCanBeTheWorst) {
  // A 1,000,000-parameter layer on the second of 2 stages; GPipe, so both stages hold the
  // same activations: stage 1 is the worst.
  Scenario s = OnOneGpu(LayerList({10, 1000000}));
  s.parallel.pp = 2;
  s.parallel.schedule = Schedule::kGpipe;
  const MemoryBreakdown m = ComputeMemory(s);
  EXPECT_EQ(m.worst_stage, 1);
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2000000);
}

}  // namespace
}  // namespace trainsim::sim
