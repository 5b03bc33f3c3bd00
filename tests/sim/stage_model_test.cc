// The one stage model (sim/stage_model.h): the layer split, each stage's share, the piece
// costs the simulator and the estimator both read, the layout's groups and the overlap rule.
#include "sim/stage_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/model_spec.h"
#include "core/scenario.h"
#include "sim/memory_model.h"
#include "sim/workload.h"
#include "tests/test_util.h"

namespace trainsim::sim {
namespace {

Scenario Parse(const std::string& json) {
  Expected<Scenario> s = ParseScenario(json, "test.json", test::BuiltinCatalog());
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Scenario();
}

// `model` (a preset, or an object) on `nodes` p5.48xlarge with `parallel` and `training` extras.
Scenario On(const std::string& model, int nodes, const std::string& parallel,
            const std::string& training = "") {
  return Parse(R"({"model": )" + model + R"(, "training": {"global_batch": 64)" + training +
               R"(}, "cluster": {"instance": "p5.48xlarge", "nodes": )" + std::to_string(nodes) +
               R"(}, "parallel": {)" + parallel + "}}");
}

TEST(SplitLayers, CutsContiguouslyWithTheFirstPartsLonger) {
  struct Case {
    int layers, parts;
    std::vector<int> counts;
  };
  for (const Case& c : {Case{10, 4, {3, 3, 2, 2}}, Case{96, 8, {12, 12, 12, 12, 12, 12, 12, 12}},
                        Case{5, 5, {1, 1, 1, 1, 1}}, Case{7, 1, {7}}, Case{126, 16, {}}}) {
    SCOPED_TRACE(std::to_string(c.layers) + " over " + std::to_string(c.parts));
    int next = 0;
    for (int part = 0; part < c.parts; ++part) {
      const LayerRange r = SplitLayers(c.layers, c.parts, part);
      EXPECT_EQ(r.first, next);
      if (!c.counts.empty()) {
        EXPECT_EQ(r.count, c.counts[part]);
      }
      // As even as possible: every part within one layer of the others.
      EXPECT_TRUE(r.count == c.layers / c.parts || r.count == c.layers / c.parts + 1);
      next = r.end();
    }
    EXPECT_EQ(next, c.layers);
  }
}

// Megatron-Core's accounting: the embedding and the loss take a layer's place at the ends, so
// 30 layers over 32 parts leave the first and the last empty, and 10 layers with the embedding
// counted over 4 parts are 2, 3, 3, 2 (11 places: 3, 3, 3, 2).
TEST(SplitLayers, CountsTheEmbeddingAndTheLossWhereAsked) {
  int next = 0;
  for (int part = 0; part < 32; ++part) {
    const LayerRange r = SplitLayers(30, 32, part, 1, 1);
    EXPECT_EQ(r.first, next);
    EXPECT_EQ(r.count, part == 0 || part == 31 ? 0 : 1) << part;
    next = r.end();
  }
  EXPECT_EQ(next, 30);
  const std::vector<int> counts = {2, 3, 3, 2};
  for (int part = 0; part < 4; ++part)
    EXPECT_EQ(SplitLayers(10, 4, part, 1, 0).count, counts[part]);
  EXPECT_EQ(SplitLayers(10, 4, 3, 0, 1).count, 1);  // the loss alone: 3, 3, 3, 1 + loss
}

// A stage's layers are its chunks' (c * pp + stage): 6 layers, pp 2 x 4 chunks, both counted:
// 8 places, one a chunk; stage 0 holds the embedding's chunk and 3 layers, stage 1 the loss's
// and 3. The step simulates with the empty chunks and runs each stage's 3 layers' forward.
TEST(StageLayers, InterleavedChunksWithTheEmbeddingAndLossCounted) {
  const Scenario s = On(R"({"layers": 6, "hidden": 1024, "heads": 16, "seq_len": 1024,
      "vocab": 32000})",
                        1, R"("pp": 2, "dp": 4, "schedule": "interleaved", "virtual_stages": 4,
      "split_counts_embedding": true, "split_counts_loss": true)");
  EXPECT_EQ(StageLayers(s, 0).count, 3);
  EXPECT_EQ(StageLayers(s, 1).count, 3);
  EXPECT_EQ(StageLayerShare(s, 0).layers.count, 3);
  Expected<StepProgram> p = BuildStepProgram(s, ModelParams());
  ASSERT_TRUE(p.ok()) << p.status().message();
  const LayerCost c = TransformerLayerCost(s, MakeComputeModel(s, ModelParams()).value());
  for (int stage = 0; stage < 2; ++stage) {
    double forward = 0;
    for (const Op& op : p->stages[stage].ops) {
      if (op.kind == OpKind::kCompute && op.phase == OpPhase::kForward) forward += op.seconds;
    }
    const PieceCosts costs = MakePieceCosts(s, MakeComputeModel(s, ModelParams()).value());
    const double ends = stage == 0 ? costs.embed_fwd_s : costs.logits_fwd_s;
    const double want = s.microbatches_per_pipeline() * (3 * (c.attn_fwd_s + c.mlp_fwd_s) + ends);
    EXPECT_NEAR(forward, want, 1e-9 * want) << stage;
  }
}

TEST(MicrobatchesPerPipeline, IsTheBatchOverDataParallelTimesMicroBatch) {
  EXPECT_EQ(MicrobatchesPerPipeline(1536, 16, 1), 96);
  EXPECT_EQ(MicrobatchesPerPipeline(512, 8, 4), 16);
  const Scenario s = On(R"("gpt-1.7b")", 1, R"("tp": 2, "pp": 2)", R"(, "micro_batch": 4)");
  EXPECT_EQ(s.microbatches_per_pipeline(), 64 / (2 * 4));
}

TEST(StageShare, StagesHoldEveryLayerOnceAndZeroShardsTheOptimizer) {
  const Scenario s = On(R"("gpt-1.7b")", 1, R"("pp": 4, "zero_stage": 1)");
  ASSERT_EQ(s.parallel.dp, 2);
  int layers = 0;
  for (int stage = 0; stage < 4; ++stage) {
    const StageShare share = MakeStageShare(s, stage);
    EXPECT_EQ(share.layers.first, layers);
    layers += share.layers.count;
    EXPECT_EQ(share.first(), stage == 0);
    EXPECT_EQ(share.last(), stage == 3);
    EXPECT_DOUBLE_EQ(share.params, StageParameterCount(s, stage));
    EXPECT_DOUBLE_EQ(share.optimizer_params, share.params / 2);  // ZeRO-1 over dp 2
    EXPECT_EQ(share.moe_layers, 0);
  }
  EXPECT_EQ(layers, s.model.layers);
  Scenario unsharded = s;
  unsharded.parallel.zero_stage = 0;
  EXPECT_DOUBLE_EQ(MakeStageShare(unsharded, 1).optimizer_params,
                   MakeStageShare(unsharded, 1).params);
}

TEST(StageShare, CountsMoeAndRecomputedLayers) {
  const Scenario s = On(R"("mixtral-8x7b")", 4, R"("tp": 8, "pp": 2, "ep": 2, "zero_stage": 1)",
                        R"(, "recompute": "full", "recompute_every": 2)");
  int moe = 0;
  for (int stage = 0; stage < 2; ++stage) {
    const StageShare share = MakeStageShare(s, stage);
    moe += share.moe_layers;
    EXPECT_EQ(share.recomputed_layers, share.layers.count / 2);
    // The routed experts' state over the dp / ep ranks that hold them, the rest over dp.
    EXPECT_GT(share.expert_params, 0);
    EXPECT_DOUBLE_EQ(share.optimizer_params, (share.params - share.expert_params) / s.parallel.dp +
                                                 share.expert_params / (s.parallel.dp / 2));
  }
  EXPECT_EQ(moe, MoeLayerCount(s.model, 0, s.model.layers));
}

TEST(PieceCosts, ContextParallelRanksEmbedAndScoreTheirShareOfTheSequence) {
  // Each GPU of a CP group of 2 over 8192 tokens embeds, projects to the vocabulary and scores
  // 4096 of them: the same figures as a 4096-token sequence without CP. The estimator and the
  // simulator read these one figures.
  const Scenario cp2 = On(R"({"preset": "llama3-8b", "seq_len": 8192})", 1, R"("cp": 2)");
  const Scenario cp1 = On(R"({"preset": "llama3-8b", "seq_len": 4096})", 1, R"("cp": 1)");
  Expected<ComputeModel> cm2 = MakeComputeModel(cp2, ModelParams());
  Expected<ComputeModel> cm1 = MakeComputeModel(cp1, ModelParams());
  ASSERT_TRUE(cm2.ok() && cm1.ok());
  const PieceCosts a = MakePieceCosts(cp2, *cm2), b = MakePieceCosts(cp1, *cm1);
  EXPECT_EQ(a.cp, 2);
  EXPECT_GT(a.embed_fwd_s, 0);
  EXPECT_DOUBLE_EQ(a.embed_fwd_s, b.embed_fwd_s);
  EXPECT_DOUBLE_EQ(a.logits_fwd_s, b.logits_fwd_s);
  EXPECT_DOUBLE_EQ(a.logits_bwd_s, b.logits_bwd_s);
}

TEST(PieceCosts, LayerListsCarryEveryLayerAndTheirLargestMessage) {
  const Scenario s = Parse(R"({"model": "resnet50", "training": {"global_batch": 256,
      "micro_batch": 32, "precision": "fp16"}, "cluster": {"instance": "p3.16xlarge"},
      "parallel": {}})");
  Expected<ComputeModel> cm = MakeComputeModel(s, ModelParams());
  ASSERT_TRUE(cm.ok());
  const PieceCosts c = MakePieceCosts(s, *cm);
  ASSERT_EQ(c.layers.size(), s.model.layer_list.size());
  double largest = 0;
  for (int stage = 0; stage < 2; ++stage) {
    Scenario two = s;
    two.parallel.pp = 2;
    largest = std::max(largest, StageP2pBytes(two, MakeStageShare(two, stage)));
  }
  EXPECT_GE(c.p2p_bytes, largest);
  EXPECT_GT(largest, 0);
}

TEST(ShapeOf, GroupsFollowTheRankLayout) {
  // 4 nodes x 8 GPUs: tp 2, dp 16 in shard groups of 4.
  const Scenario s = On(R"("gpt-1.7b")", 4, R"("tp": 2, "zero_stage": 3, "shard_group": 4)");
  ASSERT_EQ(s.parallel.dp, 16);
  struct Case {
    GroupKind kind;
    int members, stride, per_node;
  };
  for (const Case& c : {Case{GroupKind::kTp, 2, 1, 2}, Case{GroupKind::kDp, 16, 2, 4},
                        Case{GroupKind::kShard, 4, 2, 4}, Case{GroupKind::kAcrossShards, 4, 8, 1},
                        Case{GroupKind::kEp, 1, 2, 1}, Case{GroupKind::kCp, 1, 2, 1}}) {
    SCOPED_TRACE(static_cast<int>(c.kind));
    const GroupShape g = ShapeOf(s, c.kind);
    EXPECT_EQ(g.members, c.members);
    EXPECT_EQ(g.stride, c.stride);
    EXPECT_EQ(g.PerNode(8), c.per_node);
  }
  const Scenario moe = On(R"("mixtral-8x7b")", 4, R"("tp": 4, "ep": 2)");
  ASSERT_EQ(moe.parallel.dp, 8);
  EXPECT_EQ(ShapeOf(moe, GroupKind::kExpertData).members, 4);
  EXPECT_EQ(ShapeOf(moe, GroupKind::kExpertData).stride, 8);
  EXPECT_EQ(ShapeOf(moe, GroupKind::kExpertData).PerNode(8), 1);
}

TEST(StretchedComputeSeconds, IsTheShareOfTheCollectiveOrOfTheStretchedCompute) {
  // The collective ends first: the compute lost its share for the collective's time.
  EXPECT_DOUBLE_EQ(StretchedComputeSeconds(1.0, 10.0, 0.2), 0.2);
  // The compute ends first: at 0.8 of the GPU it takes 1 / 0.8 s, 0.25 s more.
  EXPECT_DOUBLE_EQ(StretchedComputeSeconds(10.0, 1.0, 0.2), 0.25);
  EXPECT_DOUBLE_EQ(StretchedComputeSeconds(5.0, 1.0, 0.0), 0.0);
  // PipelinedSeconds applies it to the GEMM a TP collective is pipelined with.
  EXPECT_DOUBLE_EQ(PipelinedSeconds(1.0, 10.0, 1, 0.2), 10.0 + 1.25);
}

// A pass as "kind:collective" words: "C" for compute, "tp:ag", "cp:rs", "ep:a2a".
std::string Shape(const LayerPass& pass) {
  std::string out;
  for (const PassStep& st : pass) {
    if (!out.empty()) out += " ";
    if (st.kind == PassStep::Kind::kCompute) {
      out += "C";
      continue;
    }
    out += st.kind == PassStep::Kind::kTp ? "tp:" : st.kind == PassStep::Kind::kCp ? "cp:" : "ep:";
    out += st.coll == CollKind::kAllGather       ? "ag"
           : st.coll == CollKind::kReduceScatter ? "rs"
           : st.coll == CollKind::kAllReduce     ? "ar"
                                                 : "a2a";
  }
  return out;
}

PieceCosts Costs(const Scenario& s) {
  Expected<ComputeModel> cm = MakeComputeModel(s, ModelParams{});
  EXPECT_TRUE(cm.ok()) << cm.status().message();
  return MakePieceCosts(s, *cm);
}

TEST(LayerPass, TensorParallelBlocksAndTheirOverlapWindows) {
  const Scenario plain = On(R"("gpt-1.7b")", 1, R"("tp": 8)");
  const LayerCost c = Costs(plain).layer;
  EXPECT_EQ(Shape(ForwardPass(plain, c)), "C tp:ar C tp:ar");
  EXPECT_EQ(Shape(BackwardPass(plain, c)), "C tp:ar C tp:ar");

  const Scenario sp =
      On(R"("gpt-1.7b")", 1, R"("tp": 8, "tp_overlap": true)", R"(, "sequence_parallel": true)");
  const LayerCost k = Costs(sp).layer;
  const LayerPass fwd = ForwardPass(sp, k);
  ASSERT_EQ(Shape(fwd), "tp:ag C tp:rs tp:ag C tp:rs");
  // Forward: each collective beside its block's first or last GEMM, moved out of the compute.
  const PassStep* f = fwd.begin();
  EXPECT_EQ(f[0].seconds, k.attn_in_gemm_s);
  EXPECT_EQ(f[1].seconds, k.attn_fwd_s - k.attn_in_gemm_s - k.attn_out_gemm_s);
  EXPECT_EQ(f[2].seconds, k.attn_out_gemm_s);
  EXPECT_EQ(f[5].seconds, k.mlp_out_gemm_s);
  // Backward: the blocks in reverse, each GEMM twice.
  const LayerPass bwd = BackwardPass(sp, k);
  ASSERT_EQ(Shape(bwd), "tp:ag C tp:rs tp:ag C tp:rs");
  const PassStep* b = bwd.begin();
  EXPECT_EQ(b[0].seconds, 2 * k.mlp_out_gemm_s);
  EXPECT_EQ(b[2].seconds, 2 * k.mlp_in_gemm_s);
  EXPECT_EQ(b[5].seconds, 2 * k.attn_in_gemm_s);
  EXPECT_EQ(b[0].bytes, k.tp_bytes);
}

TEST(LayerPass, ContextRingAroundTheCoreAndExpertExchanges) {
  const Scenario cp = On(R"("llama3-8b")", 1, R"("cp": 4)");
  const LayerCost c = Costs(cp).layer;
  const LayerPass fwd = ForwardPass(cp, c);
  ASSERT_EQ(Shape(fwd), "C cp:ag C");
  EXPECT_EQ(fwd.begin()[1].seconds, c.core_fwd_s);  // pipelined with the core
  EXPECT_EQ(fwd.begin()[1].bytes, c.cp_bytes);
  EXPECT_EQ(Shape(BackwardPass(cp, c)), "C cp:ag cp:rs C");

  const Scenario moe = On(R"("mixtral-8x7b")", 2, R"("tp": 2, "ep": 8)");
  const PieceCosts pc = Costs(moe);
  EXPECT_EQ(Shape(ForwardPass(moe, pc.moe_layer)), "C tp:ar ep:a2a tp:ag C tp:rs ep:a2a");
  EXPECT_EQ(Shape(BackwardPass(moe, pc.moe_layer)), "ep:a2a tp:ag C tp:rs ep:a2a C tp:ar");
  EXPECT_STREQ(ForwardPass(moe, pc.moe_layer).begin()[2].what, "dispatch");
}

// The data-parallel collectives both readers take from the stage model: which collective over
// which group, for plain, sharded and hybrid-sharded layouts and the routed experts.
TEST(DpCalls, GradientsAndWeightsByZeroStageAndHybridGroups) {
  const Scenario plain = On(R"("gpt-1.7b")", 2, R"("tp": 1)");
  GradientCalls r = GradientReduction(plain, 100);
  ASSERT_EQ(r.count, 1);
  EXPECT_EQ(r.calls[0].kind, CollKind::kAllReduce);
  EXPECT_EQ(r.calls[0].group, GroupKind::kDp);
  EXPECT_EQ(ExpertGradientReduction(plain, 8).kind, CollKind::kAllReduce);

  const Scenario zero3 = On(R"("gpt-1.7b")", 2, R"("zero_stage": 3)");
  r = GradientReduction(zero3, 100);
  ASSERT_EQ(r.count, 1);
  EXPECT_EQ(r.calls[0].kind, CollKind::kReduceScatter);
  EXPECT_EQ(r.calls[0].group, GroupKind::kDp);  // no hybrid groups: the whole DP group
  EXPECT_EQ(WeightGather(zero3, 5).group, GroupKind::kDp);
  EXPECT_EQ(ExpertGradientReduction(zero3, 8).kind, CollKind::kReduceScatter);

  // Hybrid: shard groups of 8 over 16 ranks; the reduced shard, 1/8, across the two groups.
  const Scenario hybrid = On(R"("gpt-1.7b")", 2, R"("zero_stage": 3, "shard_group": 8)");
  r = GradientReduction(hybrid, 100);
  ASSERT_EQ(r.count, 2);
  EXPECT_EQ(r.calls[0].group, GroupKind::kShard);
  EXPECT_EQ(r.calls[0].bytes, 100);
  EXPECT_EQ(r.calls[1].kind, CollKind::kAllReduce);
  EXPECT_EQ(r.calls[1].group, GroupKind::kAcrossShards);
  EXPECT_EQ(r.calls[1].bytes, 12.5);
  EXPECT_EQ(WeightGather(hybrid, 5).group, GroupKind::kShard);
  EXPECT_EQ(ExpertWeightGather(hybrid, 5).group, GroupKind::kExpertData);
}

// Each step names its block, so that a reader can sum a pass block by block (the estimator's
// TP sums): "a" attention, "m" MLP, "s" the shared experts' block nested in an MoE MLP.
std::string Blocks(const LayerPass& pass) {
  std::string out;
  for (const PassStep& st : pass) {
    out += st.inner ? 's' : st.block == PassStep::Block::kAttention ? 'a' : 'm';
  }
  return out;
}

TEST(LayerPass, StepsNameTheirBlock) {
  const Scenario moe =
      On(R"("deepseek-v3")", 2, R"("tp": 8, "pp": 2)", R"(, "sequence_parallel": true)");
  const LayerCost c = Costs(moe).moe_layer;
  const LayerPass fwd = ForwardPass(moe, c);
  ASSERT_EQ(Shape(fwd), "tp:ag C tp:rs tp:ag tp:ag C tp:rs tp:rs");
  EXPECT_EQ(Blocks(fwd), "aaamsssm");
  const LayerPass bwd = BackwardPass(moe, c);
  EXPECT_EQ(Blocks(bwd), "msssmaaa");
  const Scenario cp = On(R"("llama3-8b")", 1, R"("cp": 4)");
  EXPECT_EQ(Blocks(ForwardPass(cp, Costs(cp).layer)), "aam");
}

}  // namespace
}  // namespace trainsim::sim
