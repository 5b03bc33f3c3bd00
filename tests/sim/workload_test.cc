// The step program: splitting a model into stages conserves its work, DP
// buckets carry every gradient once, FLOP accounting follows the model.
#include "sim/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/catalog.h"
#include "core/model_spec.h"
#include "core/scenario.h"
#include "sim/memory_model.h"
#include "tests/test_util.h"

namespace trainsim::sim {
namespace {

Scenario Parse(const std::string& json) {
  const Catalog& catalog = test::BuiltinCatalog();
  Expected<Scenario> s = ParseScenario(json, "test.json", catalog);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

// gpt-1.7b on one p4d node, tp 1, with `parallel` and `training` extras.
Scenario Gpt(const std::string& parallel, const std::string& training = "") {
  return Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 16)" + training +
               R"(}, "cluster": {"instance": "p4d.24xlarge"}, "parallel": {)" + parallel + "}}");
}

StepProgram Build(const Scenario& s) {
  Expected<StepProgram> p = BuildStepProgram(s, ModelParams());
  EXPECT_TRUE(p.ok()) << p.status().message();
  return *p;
}

double TotalComputePerMicrobatch(const StepProgram& p) {
  double sum = 0;
  for (const StageProgram& stage : p.stages) sum += stage.compute_per_microbatch_s;
  return sum;
}

double DpBytes(const StepProgram& p, CollKind kind) {
  double sum = 0;
  for (const StageProgram& stage : p.stages) {
    for (const AsyncItem& c : stage.async[kDpStream]) sum += c.kind == kind ? c.bytes : 0;
  }
  return sum;
}

TEST(WorkloadTest, SplittingIntoStagesConservesCompute) {
  const double one = TotalComputePerMicrobatch(Build(Gpt(R"("pp": 1)")));
  for (int pp : {2, 4, 8}) {
    const double split = TotalComputePerMicrobatch(Build(Gpt(R"("pp": )" + std::to_string(pp))));
    EXPECT_NEAR(split, one, 1e-9 * one) << "pp " << pp;
  }
}

// An uneven split: 10 layers over 4 stages give the first 10 mod 4 = 2 stages 3 layers and
// the other two 2 (docs/memory.md section 1), the work of the whole model conserved. Stages 1
// and 2 hold neither the embedding nor the output layer, so their compute is in the ratio of
// their layers.
TEST(WorkloadTest, AnUnevenSplitGivesTheFirstStagesOneLayerMore) {
  auto ten_layers = [](int pp) {
    return Parse(R"({"model": {"layers": 10, "hidden": 2048, "heads": 16, "seq_len": 2048,
        "vocab": 50304}, "training": {"global_batch": 16}, "cluster": {"instance":
        "p4d.24xlarge"}, "parallel": {"pp": )" +
                 std::to_string(pp) + "}}");
  };
  const StepProgram p = Build(ten_layers(4));
  ASSERT_EQ(p.stages.size(), 4u);
  EXPECT_NEAR(p.stages[1].compute_per_microbatch_s / p.stages[2].compute_per_microbatch_s,
              3.0 / 2.0, 1e-9);
  const double one = TotalComputePerMicrobatch(Build(ten_layers(1)));
  EXPECT_NEAR(TotalComputePerMicrobatch(p), one, 1e-9 * one);
}

// Interleaved chunks split unevenly too: 11 layers in pp 2 x 2 chunks are model chunks of 3, 3,
// 3 and 2 layers, stage 0 holding chunks 0 and 2 (6 layers), stage 1 chunks 1 and 3 (5), as
// without interleaving; every stage's emitted forward work is that of its layers.
TEST(WorkloadTest, InterleavedChunksSplitUnevenly) {
  auto eleven_layers = [](const std::string& parallel) {
    return Parse(R"({"model": {"layers": 11, "hidden": 2048, "heads": 16, "seq_len": 2048,
        "vocab": 50304}, "training": {"global_batch": 16}, "cluster": {"instance":
        "p4d.24xlarge"}, "parallel": {)" +
                 parallel + "}}");
  };
  const StepProgram interleaved =
      Build(eleven_layers(R"("pp": 2, "schedule": "interleaved", "virtual_stages": 2)"));
  const StepProgram plain = Build(eleven_layers(R"("pp": 2)"));
  ASSERT_EQ(interleaved.stages.size(), 2u);
  auto forward_s = [](const StageProgram& stage) {
    double sum = 0;
    for (const Op& op : stage.ops) {
      if (op.kind == OpKind::kCompute && op.phase == OpPhase::kForward) sum += op.seconds;
    }
    return sum;
  };
  for (int stage = 0; stage < 2; ++stage) {
    SCOPED_TRACE(stage);
    const double want = forward_s(plain.stages[stage]);
    EXPECT_NEAR(forward_s(interleaved.stages[stage]), want, 1e-9 * want);
  }
}

TEST(WorkloadTest, DataParallelBucketsCarryEveryGradientOnce) {
  Scenario s = Gpt(R"("pp": 1)");
  StepProgram p = Build(s);
  EXPECT_NEAR(DpBytes(p, CollKind::kAllReduce), 2 * ParameterCount(s.model), 1.0);
  // With ZeRO-1 the same bytes are reduce-scattered, then the weights gathered.
  Scenario z = Gpt(R"("pp": 1, "zero_stage": 1)");
  StepProgram pz = Build(z);
  EXPECT_NEAR(DpBytes(pz, CollKind::kReduceScatter), 2 * ParameterCount(z.model), 1.0);
  EXPECT_NEAR(DpBytes(pz, CollKind::kAllGather), 2 * ParameterCount(z.model), 1.0);
  EXPECT_EQ(DpBytes(pz, CollKind::kAllReduce), 0);
  // Context-parallel ranks are replicas too: with dp 1 x cp 8 the optimizer state is still
  // sharded eight ways, so the updated weights are gathered.
  Scenario cp = Gpt(R"("pp": 1, "cp": 8, "zero_stage": 1)", R"(, "flash_attention": true)");
  ASSERT_EQ(cp.parallel.dp, 1);
  EXPECT_NEAR(DpBytes(Build(cp), CollKind::kAllGather), 2 * ParameterCount(cp.model), 1.0);
}

// parallel.zero_impl: every implementation of ZeRO-3 moves the same bytes; DeepSpeed in more
// collectives (gpt-1.7b's layers of 64M parameters in gathers of at most 5e7 elements: two
// each, more with the embedding or the head), FSDP2 with the GPU's copies on the compute
// stream (the same collectives as FSDP1).
TEST(WorkloadTest, ZeroThreeImplementationsIssueTheirOwnCollectives) {
  auto build = [](const char* impl) {
    return Build(Gpt(std::string(R"("pp": 1, "zero_stage": 3, "zero_impl": ")") + impl + "\""));
  };
  auto count = [](const StepProgram& p, CollKind kind) {
    int n = 0;
    for (const AsyncItem& c : p.stages[0].async[kDpStream]) n += c.kind == kind;
    return n;
  };
  auto compute_s = [](const StepProgram& p) {
    double sum = 0;
    for (const Op& op : p.stages[0].ops) sum += op.kind == OpKind::kCompute ? op.seconds : 0;
    return sum;
  };
  const StepProgram fsdp1 = build("fsdp1"), fsdp2 = build("fsdp2"), ds = build("deepspeed");
  for (CollKind kind : {CollKind::kAllGather, CollKind::kReduceScatter}) {
    EXPECT_NEAR(DpBytes(ds, kind), DpBytes(fsdp1, kind), 1.0);
    EXPECT_NEAR(DpBytes(fsdp2, kind), DpBytes(fsdp1, kind), 1.0);
  }
  const int layers = 24, m = 2;  // gathers: two per layer and microbatch
  EXPECT_EQ(count(fsdp1, CollKind::kAllGather), 2 * m * layers);
  EXPECT_GE(count(ds, CollKind::kAllGather), 2 * count(fsdp1, CollKind::kAllGather));
  EXPECT_EQ(count(ds, CollKind::kReduceScatter), count(fsdp1, CollKind::kReduceScatter));
  EXPECT_EQ(count(fsdp2, CollKind::kAllGather), count(fsdp1, CollKind::kAllGather));
  EXPECT_GT(compute_s(fsdp2), compute_s(fsdp1));
  EXPECT_DOUBLE_EQ(compute_s(ds), compute_s(fsdp1));
}

// parallel.expert_tp 1 ("MoE parallel folding"): each expert whole on its GPU and the EP group
// made of consecutive GPUs across TP ranks, against the default (experts split over tp 4).
// The same expert FLOPs per GPU in fewer, wider GEMMs on a quarter of the rows; no TP exchange
// around the routed experts; four times the expert weights per GPU, their gradients reduced
// over the 4 x 4 / (1 x 4) = 4 GPUs holding the same experts (none by default: dp / ep = 1).
TEST(WorkloadTest, WholeExpertsSpanTheTensorParallelRanks) {
  auto make = [](const char* expert_tp) {
    return Parse(std::string(R"({"model": {"layers": 2, "hidden": 1024, "heads": 16,
        "seq_len": 1024, "vocab": 32000, "mlp": "swiglu", "bias": false, "experts": 8,
        "experts_per_token": 2}, "training": {"global_batch": 16, "sequence_parallel": true},
        "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
        "parallel": {"tp": 4, "dp": 4, "ep": 4, "zero_stage": 1)") +
                 expert_tp + "}}");
  };
  const Scenario split = make(""), whole = make(R"(, "expert_tp": 1)");
  EXPECT_EQ(ShapeOf(split, GroupKind::kEp).stride, 4);
  EXPECT_EQ(ShapeOf(whole, GroupKind::kEp).stride, 1);
  EXPECT_EQ(ShapeOf(whole, GroupKind::kExpertData).members, 4);
  EXPECT_EQ(ShapeOf(whole, GroupKind::kExpertData).stride, 4);
  const ComputeModel cm(1e15, 1e12, ModelParams());
  const LayerCost a = TransformerLayerCost(split, cm, true),
                  b = TransformerLayerCost(whole, cm, true);
  EXPECT_DOUBLE_EQ(a.fwd_flops, b.fwd_flops);
  EXPECT_GT(a.moe_tp_bytes, 0);
  EXPECT_EQ(b.moe_tp_bytes, 0);
  EXPECT_DOUBLE_EQ(a.ep_bytes, b.ep_bytes);
  int tp_split = 0, tp_whole = 0;
  for (const PassStep& step : ForwardPass(split, a)) tp_split += step.kind == PassStep::Kind::kTp;
  for (const PassStep& step : ForwardPass(whole, b)) tp_whole += step.kind == PassStep::Kind::kTp;
  EXPECT_EQ(tp_split, 4);  // the attention's all-gather and reduce-scatter, the routed rows'
  EXPECT_EQ(tp_whole, 2);  // the attention's only
  const double experts = RoutedExpertParameterCount(split.model, 0, 2);
  EXPECT_NEAR(StageExpertParameterCount(split, 0), experts / 16, 1e-6);
  EXPECT_NEAR(StageExpertParameterCount(whole, 0), experts / 4, 1e-6);
  EXPECT_NEAR(StageParameterCount(whole, 0) - StageParameterCount(split, 0),
              experts / 4 - experts / 16, 1e-3);
  const StepProgram p = Build(whole);
  double expert_reduced = 0;
  for (const AsyncItem& c : p.stages[0].async[kDpStream]) {
    const bool expert_scatter =
        c.group == GroupKind::kExpertData && c.kind == CollKind::kReduceScatter;
    expert_reduced += expert_scatter ? c.bytes : 0;
  }
  EXPECT_NEAR(expert_reduced, 2 * experts / 4, 1.0);  // bf16 gradients, once (ZeRO-1)
}

// FSDP2 with expert parallelism (torchtitan): each MoE layer's routed experts are gathered and
// reduced over the GPUs that hold them (the 16 / 4 = 4 of the expert-data group), beside the
// layer's dense weights over all 16: two gathers and one reduce-scatter per layer and
// microbatch, and the experts' state sharded 4 ways, the dense state 16.
TEST(WorkloadTest, Fsdp2ShardsTheExpertsOverTheGpusThatHoldThem) {
  const Scenario s = Parse(R"({"model": {"layers": 4, "hidden": 1024, "heads": 16,
      "seq_len": 1024, "vocab": 32000, "mlp": "swiglu", "bias": false, "experts": 8,
      "experts_per_token": 2}, "training": {"global_batch": 32},
      "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
      "parallel": {"ep": 4, "zero_stage": 3, "zero_impl": "fsdp2"}})");
  const StepProgram p = Build(s);
  int gathers = 0, scatters = 0;
  double gathered = 0;
  for (const AsyncItem& c : p.stages[0].async[kDpStream]) {
    if (c.group != GroupKind::kExpertData) continue;
    gathers += c.kind == CollKind::kAllGather, scatters += c.kind == CollKind::kReduceScatter;
    gathered += c.kind == CollKind::kAllGather ? c.bytes : 0;
  }
  const int layers = 4, m = 2;
  EXPECT_EQ(gathers, 2 * m * layers);
  EXPECT_EQ(scatters, m * layers);
  const double experts = RoutedExpertParameterCount(s.model, 0, layers) / 4;  // on each GPU
  EXPECT_NEAR(gathered, 2 * m * 2 * experts, 1.0);                            // bf16
  const StageShare share = MakeStageShare(s, 0);
  EXPECT_NEAR(share.expert_params, experts, 1e-6);
  EXPECT_NEAR(share.optimizer_params, (share.params - experts) / 16 + experts / 4, 1e-6);
}

// parallel.reshard_after_forward false (FSDP SHARD_GRAD_OP): the forward's gather serves the
// backward, so one gather per layer and microbatch instead of two, the same reductions, and the
// whole model gathered at the turn from forward to backward. Not given, it is true, except for
// FSDP2 under a pipeline.
TEST(WorkloadTest, KeepingGatheredWeightsHalvesTheGathers) {
  const Scenario full = Gpt(R"("pp": 1, "zero_stage": 3)");
  const Scenario kept = Gpt(R"("pp": 1, "zero_stage": 3, "reshard_after_forward": false)");
  EXPECT_TRUE(full.parallel.reshard_after_forward);
  EXPECT_FALSE(Gpt(R"("pp": 2, "dp": 4, "zero_stage": 3, "zero_impl": "fsdp2")")
                   .parallel.reshard_after_forward);
  const StepProgram a = Build(full), b = Build(kept);
  EXPECT_NEAR(DpBytes(b, CollKind::kAllGather), DpBytes(a, CollKind::kAllGather) / 2, 1.0);
  EXPECT_NEAR(DpBytes(b, CollKind::kReduceScatter), DpBytes(a, CollKind::kReduceScatter), 1.0);
  const double params = ParameterCount(full.model);  // bf16 weights, dp 8
  EXPECT_NEAR(ComputeMemory(kept).weights_bytes, 2 * params / 8 + 2 * params, 1.0);
  EXPECT_LT(ComputeMemory(full).weights_bytes, ComputeMemory(kept).weights_bytes);
}

// FSDP2 under a pipeline (torch.distributed.pipelining, torchtitan): every unit of a stage is
// gathered once per step and reduce-scattered once, after the stage's last backward pass; FSDP1
// gathers twice per layer and microbatch. gpt-1.7b, pp 2 x dp 4, 16 samples: 4 microbatches,
// 12 layers per stage.
TEST(WorkloadTest, Fsdp2UnderAPipelineGathersOncePerStep) {
  auto build = [](const char* impl) {
    return Build(
        Gpt(std::string(R"("pp": 2, "dp": 4, "zero_stage": 3, "zero_impl": ")") + impl + "\""));
  };
  const StepProgram fsdp1 = build("fsdp1"), fsdp2 = build("fsdp2");
  const int layers = 12, m = 4;
  for (int stage = 0; stage < 2; ++stage) {
    SCOPED_TRACE(stage);
    auto count = [&](const StepProgram& p, CollKind kind) {
      int n = 0;
      double bytes = 0;
      for (const AsyncItem& c : p.stages[stage].async[kDpStream]) {
        n += c.kind == kind, bytes += c.kind == kind ? c.bytes : 0;
      }
      return std::make_pair(n, bytes);
    };
    const auto [gathers1, gathered1] = count(fsdp1, CollKind::kAllGather);
    const auto [gathers2, gathered2] = count(fsdp2, CollKind::kAllGather);
    const auto [scatters1, scattered1] = count(fsdp1, CollKind::kReduceScatter);
    const auto [scatters2, scattered2] = count(fsdp2, CollKind::kReduceScatter);
    EXPECT_EQ(gathers1, 2 * m * layers);
    EXPECT_EQ(gathers2, layers);
    EXPECT_NEAR(gathered2, gathered1 / (2 * m), 1.0);
    EXPECT_EQ(scatters1, m * layers);
    EXPECT_EQ(scatters2, layers);
    EXPECT_NEAR(scattered2, scattered1 / m, 1.0);
    // Every reduce-scatter is launched after the backward passes of the earlier microbatches.
    const std::vector<Op>& ops = fsdp2.stages[stage].ops;
    size_t first_scatter = ops.size(), last_early_backward = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.kind == OpKind::kLaunch && op.coll == CollKind::kReduceScatter) {
        first_scatter = std::min(first_scatter, i);
      }
      if (op.kind == OpKind::kCompute && op.phase == OpPhase::kBackward && op.microbatch < m - 1) {
        last_early_backward = i;
      }
    }
    EXPECT_GT(first_scatter, last_early_backward);
    EXPECT_LT(first_scatter, ops.size());
  }
  // Memory: the whole stage's weights stay gathered and its gradients accumulate unsharded (in
  // the reduce dtype: fp32 doubles them), against FSDP1's two gathered units and one gradient.
  const Scenario s2 = Gpt(R"("pp": 2, "dp": 4, "zero_stage": 3, "zero_impl": "fsdp2")");
  Scenario fp32 = s2;
  fp32.training.grad_reduce_dtype = GradReduceDtype::kFp32;
  const MemoryBreakdown a = ComputeMemory(s2), b = ComputeMemory(fp32);
  const double stage_params = MakeStageShare(s2, a.worst_stage).params;
  EXPECT_NEAR(a.weights_bytes, 2 * stage_params / 4 + 2 * stage_params, 1.0);
  EXPECT_NEAR(a.gradients_bytes, 2 * stage_params / 4 + 2 * stage_params, 1.0);
  EXPECT_NEAR(b.gradients_bytes - a.gradients_bytes, 2 * stage_params, 1.0);
  EXPECT_GT(a.weights_bytes,
            ComputeMemory(Gpt(R"("pp": 2, "dp": 4, "zero_stage": 3, "zero_impl": "fsdp1")"))
                .weights_bytes);
}

// parallel.overlap_param_gather: the same bytes are gathered, in buckets launched before the
// first forward pass's layers need them, and nothing is gathered after the optimizer step.
TEST(WorkloadTest, OverlappedWeightGatherRunsBesideTheFirstForwardPass) {
  const Scenario s = Gpt(R"("pp": 1, "zero_stage": 1, "overlap_param_gather": true)");
  const StepProgram p = Build(s);
  EXPECT_NEAR(DpBytes(p, CollKind::kAllGather), 2 * ParameterCount(s.model), 1.0);
  const std::vector<Op>& ops = p.stages[0].ops;
  int gathers_before_compute = 0, gathers = 0;
  bool computed = false;
  for (const Op& op : ops) {
    if (op.kind == OpKind::kCompute) computed = true;
    if (op.kind == OpKind::kLaunch && op.coll == CollKind::kAllGather) {
      ++gathers;
      gathers_before_compute += !computed;
    }
  }
  EXPECT_EQ(gathers_before_compute, 2);  // the first bucket's and the next one's
  EXPECT_GT(gathers, 2);
  // After the optimizer: no launch and no wait.
  auto optimizer = std::find_if(ops.begin(), ops.end(),
                                [](const Op& op) { return op.phase == OpPhase::kOptimizer; });
  ASSERT_NE(optimizer, ops.end());
  EXPECT_EQ(optimizer + 1, ops.end());
  // Without the flag the gather follows the optimizer.
  const StepProgram plain = Build(Gpt(R"("pp": 1, "zero_stage": 1)"));
  EXPECT_EQ(plain.stages[0].ops.back().kind, OpKind::kWait);
}

// With an interleaved pipeline, as Megatron-Core buckets them: only the first chunk of the first
// stage is split into buckets (of the default 25 MiB: gpt-1.7b's layers are larger, so one layer
// each), every other chunk is gathered whole; every stage gathers the bytes of its weights.
TEST(WorkloadTest, OverlappedWeightGatherBucketsOnlyTheFirstChunkOfTheFirstStage) {
  const Scenario s = Gpt(R"("pp": 2, "schedule": "interleaved", "virtual_stages": 2,
      "zero_stage": 1, "overlap_param_gather": true)");
  const StepProgram p = Build(s);
  const StepProgram plain = Build(Gpt(R"("pp": 2, "schedule": "interleaved",
      "virtual_stages": 2, "zero_stage": 1)"));
  ASSERT_EQ(p.stages.size(), 2u);
  for (int stage = 0; stage < 2; ++stage) {
    SCOPED_TRACE(stage);
    double bytes = 0, plain_bytes = 0;
    int gathers = 0;
    for (const AsyncItem& c : p.stages[stage].async[kDpStream]) {
      if (c.kind != CollKind::kAllGather) continue;
      bytes += c.bytes;
      ++gathers;
    }
    for (const AsyncItem& c : plain.stages[stage].async[kDpStream]) {
      if (c.kind == CollKind::kAllGather) plain_bytes += c.bytes;
    }
    EXPECT_NEAR(bytes, plain_bytes, 1.0);
    // 24 layers over 2 stages x 2 chunks: 6 layers a chunk.
    EXPECT_EQ(gathers, stage == 0 ? 6 + 1 : 2);
  }
}

TEST(WorkloadTest, ShardedDataParallelMovesTheBytesOfItsStage) {
  // gpt-1.7b on 8 GPUs (dp 8), 16 samples: 2 microbatches per replica.
  const double grads = 2 * ParameterCount(Gpt(R"("pp": 1)").model);  // bf16
  const double m = 2;
  // ZeRO-2: gradients are sharded, so every microbatch's are reduce-scattered.
  StepProgram z2 = Build(Gpt(R"("pp": 1, "zero_stage": 2)"));
  EXPECT_NEAR(DpBytes(z2, CollKind::kReduceScatter), m * grads, 1.0);
  EXPECT_NEAR(DpBytes(z2, CollKind::kAllGather), grads, 1.0);
  EXPECT_NEAR(DpBytes(Build(Gpt(R"("pp": 1, "zero_stage": 2, "overlap_dp": false)")),
                      CollKind::kReduceScatter),
              m * grads, 1.0);
  // ZeRO-3: the weights are gathered before every forward and every backward,
  // the gradients reduce-scattered after every backward, nothing after the step.
  StepProgram z3 = Build(Gpt(R"("pp": 1, "zero_stage": 3)"));
  EXPECT_NEAR(DpBytes(z3, CollKind::kReduceScatter), m * grads, 1.0);
  EXPECT_NEAR(DpBytes(z3, CollKind::kAllGather), 2 * m * grads, 1.0);
  EXPECT_EQ(DpBytes(z3, CollKind::kAllReduce), 0);
  const Op& last = z3.stages[0].ops.back();
  EXPECT_EQ(last.phase, OpPhase::kOptimizer);
}

// training.grad_reduce_dtype "fp32" reduces a 16-bit run's gradients in 4 bytes per parameter
// (buckets and ZeRO reduce-scatters) while its gathers keep moving 2-byte weights; in fp32
// training the gradients are fp32 already, so nothing changes.
TEST(WorkloadTest, Fp32GradientReductionDoublesTheReducedBytesOnly) {
  const double params = ParameterCount(Gpt(R"("pp": 1)").model);
  const double m = 2;  // microbatches per replica (16 samples over dp 8)
  auto fp32 = [](const std::string& parallel, const std::string& precision = "bf16") {
    return Build(
        Gpt(parallel, R"(, "grad_reduce_dtype": "fp32", "precision": ")" + precision + "\""));
  };
  EXPECT_NEAR(DpBytes(fp32(R"("pp": 1)"), CollKind::kAllReduce), 4 * params, 1.0);
  const StepProgram z1 = fp32(R"("pp": 1, "zero_stage": 1)");
  EXPECT_NEAR(DpBytes(z1, CollKind::kReduceScatter), 4 * params, 1.0);
  EXPECT_NEAR(DpBytes(z1, CollKind::kAllGather), 2 * params, 1.0);
  const StepProgram z3 = fp32(R"("pp": 1, "zero_stage": 3)");
  EXPECT_NEAR(DpBytes(z3, CollKind::kReduceScatter), m * 4 * params, 1.0);
  EXPECT_NEAR(DpBytes(z3, CollKind::kAllGather), 2 * m * 2 * params, 1.0);
  EXPECT_NEAR(DpBytes(fp32(R"("pp": 1)", "fp32"), CollKind::kAllReduce), 4 * params, 1.0);
}

// training.recompute_every k re-runs the forward of every k-th layer only: gpt-1.7b's 24
// layers on one stage, every 2nd: half of full recompute's work, and 12 layers' worth.
TEST(WorkloadTest, RecomputeEveryReRunsEveryKthLayer) {
  auto recompute_s = [](const std::string& training) {
    const StepProgram p = Build(Gpt(R"("pp": 1)", training));
    double sum = 0;
    for (const Op& op : p.stages[0].ops) {
      if (op.kind == OpKind::kCompute && op.phase == OpPhase::kRecompute) sum += op.seconds;
    }
    return sum;
  };
  const double full = recompute_s(R"(, "recompute": "full")");
  ASSERT_GT(full, 0);
  EXPECT_NEAR(recompute_s(R"(, "recompute": "full", "recompute_every": 2)"), full / 2, 1e-9 * full);
  EXPECT_NEAR(recompute_s(R"(, "recompute": "full", "recompute_every": 5)"), full * 4 / 24,
              1e-9 * full);
}

// Op-level checkpointing (recompute "selective_op") re-runs a layer's forward but the
// attention core and the GEMMs whose outputs it keeps: with a GELU MLP and fused QKV
// (gpt-1.7b, kv = h) those are wq and wv (2/3 of the QKV GEMM) and w1; with SwiGLU and
// grouped-query attention (llama2-70b, kv = h/8) wq and wv ((h + kv) / (h + 2 kv) of QKV), w1
// (half the fused up projection) and w2. The step emits it once per layer and microbatch.
TEST(WorkloadTest, OpLevelCheckpointingReRunsTheForwardButTheKeptOutputs) {
  for (const char* model : {"gpt-1.7b", "llama2-70b"}) {
    SCOPED_TRACE(model);
    const Scenario s = Parse(std::string(R"({"model": ")") + model +
                             R"(", "training": {"global_batch": 16, "recompute": "selective_op",
        "flash_attention": true}, "cluster": {"instance": "p4d.24xlarge"},
        "parallel": {"tp": 8, "dp": 1}})");
    const ComputeModel cm = MakeComputeModel(s, ModelParams()).value();
    const LayerCost c = TransformerLayerCost(s, cm);
    const double h = s.model.hidden, kv = h / s.model.heads * s.model.kv_heads;
    const bool swiglu = s.model.mlp == MlpKind::kSwiGlu;
    const double kept = c.attn_in_gemm_s * (h + kv) / (h + 2 * kv) +
                        (swiglu ? c.mlp_in_gemm_s / 2 + c.mlp_out_gemm_s : c.mlp_in_gemm_s);
    EXPECT_NEAR(c.op_recompute_s, c.attn_fwd_s + c.mlp_fwd_s - c.core_fwd_s - kept,
                1e-12 * c.op_recompute_s);
    EXPECT_GT(c.op_recompute_s, 0);
    const StepProgram p = Build(s);
    double recompute = 0;
    for (const Op& op : p.stages[0].ops) {
      if (op.kind == OpKind::kCompute && op.phase == OpPhase::kRecompute) recompute += op.seconds;
    }
    const double passes = s.model.layers * s.microbatches_per_pipeline();
    EXPECT_NEAR(recompute, passes * c.op_recompute_s, 1e-9 * recompute);
  }
}

// A small MoE model on one p4d node: 4 layers, the first dense, 8 experts of the dense
// width, top-2, with `extra` model fields.
Scenario Moe(const std::string& extra, const std::string& parallel = R"("tp": 2, "dp": 4)") {
  return Parse(R"({"model": {"layers": 4, "hidden": 1024, "heads": 16, "seq_len": 1024,
      "vocab": 32000, "mlp": "swiglu", "bias": false, "experts": 8, "experts_per_token": 2,
      "dense_layers": 1)" +
               extra +
               R"(}, "training": {"global_batch": 16}, "cluster": {"instance": "p4d.24xlarge"},
      "parallel": {)" +
               parallel + "}}");
}

// An MoE layer's GEMMs: the router (tokens x experts x hidden) and, with every expert as wide
// as the dense MLP, k times the dense MLP's FLOPs (the experts' rows add up to k x tokens);
// a capacity factor pads each expert's rows to c times its even share.
TEST(WorkloadTest, MoeLayersComputeTheRouterAndTheExpertsTokensVisit) {
  const Scenario s = Moe("");
  const ComputeModel cm = MakeComputeModel(s, ModelParams()).value();
  const LayerCost dense = TransformerLayerCost(s, cm), moe = TransformerLayerCost(s, cm, true);
  const double tokens = 1024, h = 1024, t = 2;
  const double dense_mlp = 2 * tokens * h * 4096 * 3 / t, router = 2 * tokens * 8 * h;
  EXPECT_DOUBLE_EQ(moe.fwd_flops - dense.fwd_flops, router + dense_mlp);
  const LayerCost padded = TransformerLayerCost(Moe(R"(, "capacity_factor": 1.25)"), cm, true);
  EXPECT_DOUBLE_EQ(padded.fwd_flops - dense.fwd_flops, router + 1.5 * dense_mlp);
  // The step runs the dense layer once and the MoE layers three times per pass.
  const StepProgram p = Build(s);
  const double per_mb = p.stages[0].compute_per_microbatch_s;
  EXPECT_GT(per_mb, 4 * (dense.attn_fwd_s + dense.mlp_fwd_s + dense.attn_bwd_s + dense.mlp_bwd_s));
  // Gradients: each layer's own parameters, the MoE layers' with every expert.
  double dp_bytes = DpBytes(p, CollKind::kAllReduce);
  EXPECT_NEAR(dp_bytes, ParameterCount(s.model) / t * 2, 1e-6 * dp_bytes);
}

// Megatron-Core's recompute modules on the small MoE model with EP 4: "layernorm" re-runs both
// norms of every layer, "mlp" the dense layer's MLP and "moe" the MoE layers' (their norm and
// residual add aside) with the MLP block's exchanges: the MoE layers' dispatch and combine and
// the TP exchanges run again before each backward. The recomputed GEMMs count in the hardware
// FLOPs.
TEST(WorkloadTest, RecomputeModulesReRunTheirParts) {
  Scenario s = Moe("", R"("tp": 2, "dp": 4, "ep": 4)");
  s.training.recompute = Recompute::kSelective;
  const StepProgram kept = Build(s);
  s.training.recompute_modules = kRecomputeLayernorm | kRecomputeMlp | kRecomputeMoe;
  const ComputeModel cm = MakeComputeModel(s, ModelParams()).value();
  const LayerCost dense = TransformerLayerCost(s, cm), moe = TransformerLayerCost(s, cm, true);
  const double tokens = 1024, h = 1024, e = 2;
  const double norm_s = cm.MemorySeconds(2 * tokens * h * e);
  const double residual_s = cm.MemorySeconds(3 * tokens * h * e);
  for (const LayerCost* c : {&dense, &moe}) {
    EXPECT_DOUBLE_EQ(c->selective_recompute_s, 2 * norm_s);
    EXPECT_DOUBLE_EQ(c->mlp_replay_s, c->mlp_fwd_s - norm_s - residual_s);
  }
  const StepProgram p = Build(s);
  const double m = s.microbatches_per_pipeline();
  double compute = 0;
  int ep = 0, tp = 0;
  for (const Op& op : p.stages[0].ops) {
    if (op.phase != OpPhase::kRecompute) continue;
    if (op.kind == OpKind::kCompute) compute += op.seconds;
    ep += op.kind == OpKind::kEpColl;
    tp += op.kind == OpKind::kTpColl;
  }
  EXPECT_NEAR(compute, m * (4 * 2 * norm_s + dense.mlp_replay_s + 3 * moe.mlp_replay_s),
              1e-9 * compute);
  EXPECT_EQ(ep, m * 3 * 2);  // dispatch and combine of the 3 MoE layers
  // The dense MLP's all-reduce; the MoE layers' routed rows gathered and reduce-scattered.
  EXPECT_EQ(tp, m * (1 + 3 * 2));
  const double units = 2 * 16;  // tp x microbatches of the whole batch
  EXPECT_NEAR(p.hardware_flops - kept.hardware_flops,
              units * (dense.selective_recompute_flops + 3 * moe.selective_recompute_flops),
              1e-9 * p.hardware_flops);
  EXPECT_GT(moe.selective_recompute_flops, dense.selective_recompute_flops);
}

// MoE layers store the experts' input in expert order and the intermediates of every routed
// token; a stage of them holds more than a stage of dense layers.
TEST(WorkloadTest, MoeLayersStoreTheirRoutedTokens) {
  const Scenario s = Moe("");
  const double dense = LayerActivationBytes(s, 4, 0), moe = LayerActivationBytes(s, 4, 4);
  const double sb = 1024, h = 1024, f = 4096, t = 2;
  // Per MoE layer: 2 sb k h + 4 sb E more outside the TP split; the SwiGLU intermediates
  // 6 rows f / t at k = 2 rows per token instead of one.
  EXPECT_DOUBLE_EQ(moe - dense, 2 * sb * 2 * h + 4 * sb * 8 + 6 * sb * f / t);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(s, 4, 2), (dense + moe) / 2);
}

// Expert parallelism: each GPU holds experts / ep of every MoE layer, exchanges its routed
// tokens twice per pass (dispatch and combine) and reduces its experts' gradients over the
// dp / ep ranks that hold the same experts (none with ep = dp), the rest over the whole DP
// group.
TEST(WorkloadTest, ExpertParallelismSplitsTheExpertsAndTheirGradients) {
  const Scenario one = Moe("", R"("tp": 2, "dp": 4)"),
                 two = Moe("", R"("tp": 2, "dp": 4, "ep": 2)");
  const double experts = RoutedExpertParameterCount(one.model, 0, 4) / 2;  // per TP rank
  EXPECT_DOUBLE_EQ(StageExpertParameterCount(two, 0), experts / 2);
  EXPECT_NEAR(StageParameterCount(one, 0) - StageParameterCount(two, 0), experts / 2,
              1e-6 * experts);
  auto reduced = [](const StepProgram& p, GroupKind group) {
    double bytes = 0;
    for (const AsyncItem& c : p.stages[0].async[kDpStream]) bytes += c.group == group ? c.bytes : 0;
    return bytes;
  };
  const StepProgram p = Build(two);
  const double expert = reduced(p, GroupKind::kExpertData), whole = reduced(p, GroupKind::kDp);
  EXPECT_NEAR(expert, experts / 2 * 2, 1e-6 * expert);  // 16-bit gradients
  EXPECT_NEAR(whole + expert, StageParameterCount(two, 0) * 2, 1e-6 * whole);
  EXPECT_EQ(reduced(Build(Moe("", R"("tp": 2, "dp": 4, "ep": 4)")), GroupKind::kExpertData), 0);
  int exchanges = 0;
  for (const Op& op : p.stages[0].ops) exchanges += op.kind == OpKind::kEpColl;
  // 3 MoE layers, forward and backward, 2 each, for each of the 4 microbatches.
  EXPECT_EQ(exchanges, 3 * 2 * 2 * 4);
  const ComputeModel cm = MakeComputeModel(two, ModelParams()).value();
  // Megatron-Core's all-to-all dispatcher under TP 2: each TP rank dispatches its half of the
  // 1024 tokens' 2 routed copies (hidden 1024, 16-bit); the routed rows of all of them are
  // all-gathered over TP afterwards (and reduce-scattered before the combine), with or
  // without EP.
  EXPECT_DOUBLE_EQ(TransformerLayerCost(two, cm, true).ep_bytes, 1024.0 * 2 * 1024 * 2 / 2);
  EXPECT_DOUBLE_EQ(TransformerLayerCost(two, cm, true).moe_tp_bytes, 1024.0 * 2 * 1024 * 2);
  EXPECT_EQ(TransformerLayerCost(one, cm, true).ep_bytes, 0);
  EXPECT_DOUBLE_EQ(TransformerLayerCost(one, cm, true).moe_tp_bytes, 1024.0 * 2 * 1024 * 2);
  EXPECT_EQ(TransformerLayerCost(one, cm, false).moe_tp_bytes, 0);  // dense layers: tp_bytes
  // An MoE layer's MLP exchanges the routed rows, not the dense all-reduce: per microbatch and
  // pass, the attention block's TP all-reduce and the MLP's all-gather + reduce-scatter.
  int gathers = 0;
  for (const Op& op : p.stages[0].ops) {
    gathers += op.kind == OpKind::kTpColl && op.coll == CollKind::kAllGather &&
               op.bytes == 1024.0 * 2 * 1024 * 2;
  }
  EXPECT_EQ(gathers, 3 * 2 * 4);
}

// Context parallelism: each GPU computes 1 / cp of every sequence (GEMMs, passes, stored
// activations), its queries against every key, and receives every chunk's keys and values.
TEST(WorkloadTest, ContextParallelismSplitsTheSequence) {
  auto scenario = [](int cp) {
    return Parse(R"({"model": {"preset": "llama3-8b", "seq_len": 8192}, "training": {
        "global_batch": 8, "flash_attention": true}, "cluster": {"instance": "p5.48xlarge"},
        "parallel": {"tp": 2, "cp": )" +
                 std::to_string(cp) + "}}");
  };
  const Scenario one = scenario(1), four = scenario(4);
  const ComputeModel cm = MakeComputeModel(one, ModelParams()).value();
  const LayerCost a = TransformerLayerCost(one, cm), b = TransformerLayerCost(four, cm);
  EXPECT_DOUBLE_EQ(b.fwd_flops, a.fwd_flops / 4);  // scores: s/4 queries x s keys
  EXPECT_DOUBLE_EQ(b.core_flops, a.core_flops / 4);
  EXPECT_EQ(a.cp_bytes, 0);
  EXPECT_DOUBLE_EQ(b.cp_bytes, 8192.0 * 2 * 1024 / 2 * 2);  // K and V, 8 KV heads of 128, tp 2
  EXPECT_DOUBLE_EQ(LayerActivationBytes(four, 32), LayerActivationBytes(one, 32) / 4);
  EXPECT_DOUBLE_EQ(TransformerP2pBytes(four), TransformerP2pBytes(one) / 4);
  // Two exchanges per layer and backward pass, one per forward pass (dp 1 x cp 4 slots).
  const StepProgram p = Build(four);
  int exchanges = 0;
  for (const Op& op : p.stages[0].ops) exchanges += op.kind == OpKind::kCpColl;
  EXPECT_EQ(exchanges, 32 * 3 * 8);
}

TEST(WorkloadTest, ZeroThreePrefetchesTheNextLayersWeights) {
  // When the compute stream waits for a layer's gather, the next layer's
  // gather (or, in backward, a reduce-scatter) is already queued behind it,
  // except at the last layer of a forward pass. 24 layers, 2 microbatches.
  StepProgram p = Build(Gpt(R"("pp": 1, "zero_stage": 3)"));
  int launched = 0, prefetched = 0, not_prefetched = 0;
  for (const Op& op : p.stages[0].ops) {
    if (op.kind == OpKind::kLaunch && op.stream == kDpStream) ++launched;
    if (op.kind == OpKind::kWait && op.stream == kDpStream && op.coll == CollKind::kAllGather) {
      (op.upto < launched ? prefetched : not_prefetched) += 1;
    }
  }
  EXPECT_EQ(prefetched, 2 * 23 + 2 * 24);
  EXPECT_EQ(not_prefetched, 2);
}

// Bytes of every item of one async stream of a stage.
double StreamBytes(const StageProgram& stage, AsyncStream stream) {
  double bytes = 0;
  for (const AsyncItem& item : stage.async[stream]) bytes += item.bytes;
  return bytes;
}

TEST(WorkloadTest, OffloadCopiesEveryLayersActivationsOutAndBack) {
  Scenario s = Gpt(R"("pp": 1)", R"(, "offload_activations": true, "offload_optimizer": true)");
  StepProgram p = Build(s);
  const StageProgram& st = p.stages[0];
  const double m = 2, layers = s.model.layers;
  const double out = StreamBytes(st, kToHostStream), in = StreamBytes(st, kFromHostStream);
  // Activations of every layer and microbatch, plus the optimizer's
  // gradients out and weights back (bf16, the whole model: no ZeRO).
  const double acts = m * layers * LayerActivationBytes(s, 1);
  EXPECT_GT(acts, 0);
  EXPECT_NEAR(out, acts + 2 * ParameterCount(s.model), 1.0);
  EXPECT_NEAR(in, acts + 2 * ParameterCount(s.model), 1.0);
}

// Parameter offload: each layer's shard comes from host memory before each of
// its gathers (forward and backward, every microbatch) and its gradient shard
// goes out after each reduce-scatter, 4 bytes per parameter (FSDP keeps the
// shards in fp32 on the CPU). The optimizer's weights stay on the host.
TEST(WorkloadTest, ParameterOffloadCopiesEveryShardInAndEveryGradientShardOut) {
  Scenario s = Gpt(R"("zero_stage": 3)", R"(, "offload_params": true)");  // dp 8, m = 2
  StepProgram p = Build(s);
  const StageProgram& st = p.stages[0];
  const size_t m = 2, layers = s.model.layers;
  const double out = StreamBytes(st, kToHostStream), in = StreamBytes(st, kFromHostStream);
  const double shard = ParameterCount(s.model) * kHostShardBytesPerParam / 8;
  EXPECT_NEAR(in, 2 * m * shard, 1.0);
  EXPECT_NEAR(out, m * shard, 1.0);
  EXPECT_EQ(st.async[kFromHostStream].size(), 2 * m * layers);
  EXPECT_EQ(st.async[kToHostStream].size(), m * layers);
  // Every gather waits for its shard to be on the GPU.
  int gathers = 0;
  for (size_t i = 1; i < st.ops.size(); ++i) {
    const Op& op = st.ops[i];
    if (op.kind != OpKind::kLaunch || op.stream != kDpStream || op.coll != CollKind::kAllGather) {
      continue;
    }
    ++gathers;
    EXPECT_EQ(st.ops[i - 1].kind, OpKind::kWait);
    EXPECT_EQ(st.ops[i - 1].stream, kFromHostStream);
  }
  EXPECT_EQ(gathers, static_cast<int>(2 * m * layers));
}

TEST(WorkloadTest, BucketsAreLaunchedDuringBackwardOnlyWhenOverlapping) {
  // Backward kernels that still run after the first bucket was launched.
  auto backward_after_first_launch = [](const StepProgram& p) {
    int count = 0;
    bool launched = false;
    for (const Op& op : p.stages[0].ops) {
      launched = launched || op.kind == OpKind::kLaunch;
      count += launched && op.kind == OpKind::kCompute && op.phase == OpPhase::kBackward;
    }
    return count;
  };
  EXPECT_GT(backward_after_first_launch(Build(Gpt(R"("pp": 1)"))), 10);
  EXPECT_EQ(backward_after_first_launch(Build(Gpt(R"("pp": 1, "overlap_dp": false)"))), 0);
}

TEST(WorkloadTest, FlopsFollowTheModel) {
  Scenario s = Gpt(R"("pp": 2)", R"(, "recompute": "full")");
  StepProgram p = Build(s);
  const ModelSpec& m = s.model;
  const double fwd = ForwardFlopsPerSample(m) * 16;
  EXPECT_DOUBLE_EQ(p.model_flops, 3 * fwd);
  const double logits = 2.0 * m.seq_len * m.hidden * m.vocab * 16;
  EXPECT_NEAR(p.hardware_flops, 4 * fwd - logits, 1e-9 * p.hardware_flops);
  EXPECT_DOUBLE_EQ(p.tokens, 16.0 * m.seq_len);
}

TEST(WorkloadTest, FullRecomputeAddsOneForwardOfTheLayers) {
  const StepProgram none = Build(Gpt(R"("pp": 1)"));
  const StepProgram full = Build(Gpt(R"("pp": 1)", R"(, "recompute": "full")"));
  double forward = 0;
  for (const Op& op : none.stages[0].ops) {
    if (op.kind == OpKind::kCompute && op.microbatch == 0 && op.phase == OpPhase::kForward) {
      forward += op.seconds;
    }
  }
  const double added =
      full.stages[0].compute_per_microbatch_s - none.stages[0].compute_per_microbatch_s;
  // The layers' forward: all of it but the embedding lookup and the logits.
  EXPECT_GT(added, 0.9 * forward);
  EXPECT_LT(added, forward);
}

// --- Flash attention (docs/model.md section 2) --------------------------------------------

// One layer with b 1, h 1024, 8 heads, tp 1, bf16 (e 2) on a GPU of 1 PFLOP/s and 1 TB/s:
// GEMMs take 4 us + F / 0.75e15, memory-bound kernels 4 us + B / 0.8e12 (ModelParams).
Scenario FlashLayer(int seq, bool flash) {
  Scenario s;
  s.model.layers = 1;
  s.model.hidden = 1024;
  s.model.heads = s.model.kv_heads = 8;
  s.model.ffn_hidden = 4096;
  s.model.seq_len = seq;
  s.model.vocab = 1000;
  s.training.micro_batch = 1;
  s.training.flash_attention = flash;
  return s;
}

TEST(WorkloadTest, FlashAttentionCoreIsOneFusedKernelEachWay) {
  const ComputeModel cm(1e15, 1e12, ModelParams());
  auto gemm = [](double flops) { return 4e-6 + flops / 0.75e15; };
  auto memory = [](double bytes) { return 4e-6 + bytes / 0.8e12; };
  // s 1024: the kernels are memory-bound on this GPU; s 8192: compute-bound.
  for (int seq : {1024, 8192}) {
    SCOPED_TRACE(seq);
    const double s = seq, h = 1024, a = 8, e = 2;
    const double score = 2 * s * s * h;  // QK^T, and AV the same
    const double q = s * h * e;          // one of Q, K, V, O, dO (kv = h)
    const double logsumexp = 4 * a * s;
    const double softmax = 4 * a * s * s * e, residual = 3 * s * h * e;
    const LayerCost off = TransformerLayerCost(FlashLayer(seq, false), cm);
    const LayerCost on = TransformerLayerCost(FlashLayer(seq, true), cm);
    // Forward: two GEMMs and the softmax/dropout passes, against one kernel reading Q, K, V and
    // writing O and the logsumexp.
    const double off_fwd = gemm(score) + gemm(score) + memory(softmax);
    const double on_fwd = std::max(gemm(2 * score), memory(4 * q + logsumexp));
    EXPECT_NEAR(off.core_fwd_s, off_fwd, 1e-9 * off_fwd);
    EXPECT_NEAR(on.core_fwd_s, on_fwd, 1e-9 * on_fwd);
    EXPECT_NEAR(on.attn_fwd_s - off.attn_fwd_s, on_fwd - off_fwd, 1e-9 * off.attn_fwd_s);
    // Backward: unfused, 4 GEMMs and the softmax passes twice (one kernel with the residual's);
    // flash, 5 GEMMs (2.5x the forward's FLOPs) reading Q, K, V, O, dO, the logsumexp and
    // writing dQ, dK, dV, and the residual's pass alone.
    const double off_bwd = 2 * (gemm(score) + gemm(score)) + memory(2 * softmax + 2 * residual);
    const double on_bwd =
        std::max(gemm(2.5 * 2 * score), memory(8 * q + logsumexp)) + memory(2 * residual);
    EXPECT_NEAR(on.attn_bwd_s - off.attn_bwd_s, on_bwd - off_bwd, 1e-9 * off.attn_bwd_s);
    // Selective recompute re-runs the unfused core only.
    EXPECT_DOUBLE_EQ(off.selective_recompute_s, off.core_fwd_s);
    EXPECT_EQ(on.selective_recompute_s, 0);
    // The MLP and the reported FLOPs do not change.
    EXPECT_DOUBLE_EQ(on.mlp_fwd_s, off.mlp_fwd_s);
    EXPECT_DOUBLE_EQ(on.mlp_bwd_s, off.mlp_bwd_s);
    EXPECT_DOUBLE_EQ(on.fwd_flops, off.fwd_flops);
  }
}

// Without dropout (training.dropout false) the unfused core's softmax is one pass over the
// score matrix, not softmax and dropout: half the bytes, forward and backward.
TEST(WorkloadTest, DropoutFreeSoftmaxIsOnePass) {
  const ComputeModel cm(1e15, 1e12, ModelParams());
  auto memory = [](double bytes) { return 4e-6 + bytes / 0.8e12; };
  const double s = 1024, a = 8, e = 2;
  Scenario off = FlashLayer(1024, false);
  off.training.dropout = false;
  const LayerCost with = TransformerLayerCost(FlashLayer(1024, false), cm);
  const LayerCost without = TransformerLayerCost(off, cm);
  EXPECT_NEAR(with.core_fwd_s - without.core_fwd_s,
              memory(4 * a * s * s * e) - memory(2 * a * s * s * e), 1e-12);
  EXPECT_GT(with.attn_bwd_s, without.attn_bwd_s);
  // Flash attention never stored the scores: nothing changes.
  Scenario flash = FlashLayer(1024, true);
  const double flash_fwd = TransformerLayerCost(flash, cm).attn_fwd_s;
  flash.training.dropout = false;
  EXPECT_DOUBLE_EQ(TransformerLayerCost(flash, cm).attn_fwd_s, flash_fwd);
}

// With an attention efficiency (a GPU's fitted figure), the two flash kernels run their
// FLOPs at it instead of the GEMM efficiency; the weight GEMMs and unfused cores do not change.
TEST(WorkloadTest, FlashKernelsRunAtTheAttentionEfficiency) {
  ModelParams params;
  params.attention_efficiency = 0.4;
  const ComputeModel plain(1e15, 1e12, ModelParams()), fitted(1e15, 1e12, params);
  const double s = 8192, h = 1024, a = 8, e = 2;
  const double score = 2 * s * s * h, q = s * h * e, logsumexp = 4 * a * s;
  // Compute-bound at s 8192: 4 us + F / (0.4 x 1e15).
  const double fwd = std::max(4e-6 + 2 * score / 0.4e15, 4e-6 + (4 * q + logsumexp) / 0.8e12);
  const double bwd = std::max(4e-6 + 5 * score / 0.4e15, 4e-6 + (8 * q + logsumexp) / 0.8e12);
  const LayerCost base = TransformerLayerCost(FlashLayer(8192, true), plain);
  const LayerCost on = TransformerLayerCost(FlashLayer(8192, true), fitted);
  EXPECT_NEAR(on.core_fwd_s, fwd, 1e-9 * fwd);
  EXPECT_NEAR(on.attn_bwd_s - base.attn_bwd_s, bwd - (4e-6 + 5 * score / 0.75e15), 1e-9 * bwd);
  EXPECT_DOUBLE_EQ(on.mlp_fwd_s, base.mlp_fwd_s);
  const LayerCost unfused = TransformerLayerCost(FlashLayer(8192, false), fitted);
  EXPECT_DOUBLE_EQ(unfused.core_fwd_s,
                   TransformerLayerCost(FlashLayer(8192, false), plain).core_fwd_s);
}

// A GPU's fitted figure reaches the compute model with the GEMM one, and
// use_catalog_gemm_efficiency = false drops it (fitting, the assumption).
void ExpectCatalogFigureReachesTheComputeModel(const Scenario& s,
                                               std::optional<double> GpuSpec::*gpu_figure,
                                               std::optional<double> ModelParams::*param) {
  ASSERT_TRUE((s.instance.gpu.*gpu_figure).has_value());
  Expected<ComputeModel> cm = MakeComputeModel(s, ModelParams());
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ(cm->params().*param, s.instance.gpu.*gpu_figure);
  ModelParams assumed;
  assumed.use_catalog_gemm_efficiency = false;
  EXPECT_FALSE((MakeComputeModel(s, assumed)->params().*param).has_value());
}

// H100: the flash-attention figure; A100 80GB: the misaligned-head figure.
TEST(WorkloadTest, CatalogAttentionFiguresReachTheComputeModel) {
  ExpectCatalogFigureReachesTheComputeModel(
      Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 8, "precision": "bf16",
          "flash_attention": true}, "cluster": {"instance": "p5.48xlarge"}})"),
      &GpuSpec::attention_efficiency, &ModelParams::attention_efficiency);
  ExpectCatalogFigureReachesTheComputeModel(
      Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 8, "precision": "bf16"},
          "cluster": {"instance": "dgx-a100-80gb"}})"),
      &GpuSpec::unaligned_gemm_efficiency, &ModelParams::unaligned_gemm_efficiency);
}

// cuDNN's fused attention (training.attention_kernel "cudnn") runs the flash kernels at the
// GPU's cuDNN figure: on H100 4 us + F / (e_cudnn x 989 TFLOP/s) for a compute-bound kernel,
// where the flash kernel takes e_flash; the weight GEMMs do not change, and a GPU without the
// figure (A100) keeps its flash-kernel rate.
TEST(WorkloadTest, CudnnAttentionRunsAtTheCudnnEfficiency) {
  auto scenario = [](const char* instance, const char* kernel) {
    return Parse(std::string(R"({"model": "gpt-1.7b", "training": {"global_batch": 8,
        "flash_attention": true, "attention_kernel": ")") +
                 kernel + R"("}, "cluster": {"instance": ")" + instance + R"("}})");
  };
  const Scenario cudnn = scenario("p5.48xlarge", "cudnn"), flash = scenario("p5.48xlarge", "flash");
  const GpuSpec& gpu = cudnn.instance.gpu;
  ASSERT_TRUE(gpu.cudnn_attention_efficiency && gpu.attention_efficiency && gpu.bf16_flops);
  ASSERT_NE(*gpu.cudnn_attention_efficiency, *gpu.attention_efficiency);
  Expected<ComputeModel> c = MakeComputeModel(cudnn, ModelParams());
  Expected<ComputeModel> f = MakeComputeModel(flash, ModelParams());
  ASSERT_TRUE(c.ok() && f.ok());
  const double flops = 1e13, overhead = ModelParams().kernel_overhead_s;
  EXPECT_NEAR(c->AttentionSeconds(flops, 0),
              overhead + flops / (*gpu.cudnn_attention_efficiency * *gpu.bf16_flops), 1e-15);
  EXPECT_NEAR(f->AttentionSeconds(flops, 0),
              overhead + flops / (*gpu.attention_efficiency * *gpu.bf16_flops), 1e-15);
  const LayerCost lc = TransformerLayerCost(cudnn, *c), lf = TransformerLayerCost(flash, *f);
  EXPECT_LT(lc.core_fwd_s, lf.core_fwd_s);
  EXPECT_DOUBLE_EQ(lc.attn_in_gemm_s, lf.attn_in_gemm_s);
  EXPECT_DOUBLE_EQ(lc.mlp_fwd_s, lf.mlp_fwd_s);
  const Scenario a100 = scenario("dgx-a100-80gb", "cudnn");
  ASSERT_FALSE(a100.instance.gpu.cudnn_attention_efficiency);
  EXPECT_EQ(MakeComputeModel(a100, ModelParams())->params().attention_efficiency,
            a100.instance.gpu.attention_efficiency);
}

// A head size that is not a multiple of 8 elements misaligns the attention core's 16-bit rows:
// with the GPU's unaligned figure its two batched GEMMs run at that fraction of the peak, both
// ways; aligned heads, flash kernels, fp32 cores and the weight GEMMs keep the GEMM efficiency.
TEST(WorkloadTest, UnalignedHeadsRunTheAttentionCoreAtTheUnalignedEfficiency) {
  ModelParams params;
  params.unaligned_gemm_efficiency = 0.05;
  const ComputeModel plain(1e15, 1e12, ModelParams()), fitted(1e15, 1e12, params);
  auto gemm = [](double flops) { return 4e-6 + flops / 0.75e15; };
  auto unaligned = [](double flops) { return 4e-6 + flops / 0.05e15; };
  Scenario s = FlashLayer(1024, false);
  s.model.hidden = 1000;  // 8 heads of 125 elements
  const double seq = 1024, h = 1000;
  const double score = 2 * seq * seq * h;  // QK^T, and AV the same
  const LayerCost base = TransformerLayerCost(s, plain), slow = TransformerLayerCost(s, fitted);
  EXPECT_NEAR(slow.core_fwd_s - base.core_fwd_s, 2 * (unaligned(score) - gemm(score)),
              1e-9 * slow.core_fwd_s);
  EXPECT_NEAR(slow.attn_bwd_s - base.attn_bwd_s, 4 * (unaligned(score) - gemm(score)),
              1e-9 * slow.attn_bwd_s);
  EXPECT_DOUBLE_EQ(slow.selective_recompute_s, slow.core_fwd_s);
  EXPECT_DOUBLE_EQ(slow.mlp_fwd_s, base.mlp_fwd_s);
  EXPECT_DOUBLE_EQ(slow.attn_in_gemm_s, base.attn_in_gemm_s);
  s.model.hidden = 1024;  // 128 elements: aligned
  EXPECT_DOUBLE_EQ(TransformerLayerCost(s, fitted).core_fwd_s,
                   TransformerLayerCost(s, plain).core_fwd_s);
  s.model.hidden = 1000;
  s.training.flash_attention = true;
  EXPECT_DOUBLE_EQ(TransformerLayerCost(s, fitted).core_fwd_s,
                   TransformerLayerCost(s, plain).core_fwd_s);
  s.training.flash_attention = false;
  s.training.precision = Precision::kFp32;
  EXPECT_DOUBLE_EQ(TransformerLayerCost(s, fitted).core_fwd_s,
                   TransformerLayerCost(s, plain).core_fwd_s);
}

TEST(WorkloadTest, FlashAttentionRecomputesScoresOnlyInHardwareFlops) {
  const std::string flash = R"(, "flash_attention": true)";
  const Scenario s = Gpt(R"("pp": 1)", flash);
  const ModelSpec& m = s.model;
  const double fwd = ForwardFlopsPerSample(m) * 16;
  const double scores = 2.0 * m.seq_len * m.seq_len * m.hidden * m.layers * 16;  // QK^T
  const double logits = 2.0 * m.seq_len * m.hidden * m.vocab * 16;
  const StepProgram none = Build(s);
  EXPECT_DOUBLE_EQ(none.model_flops, 3 * fwd);
  EXPECT_NEAR(none.hardware_flops, 3 * fwd + scores, 1e-9 * none.hardware_flops);
  // Selective recompute has nothing to re-run: the same step as none.
  const StepProgram selective = Build(Gpt(R"("pp": 1)", flash + R"(, "recompute": "selective")"));
  EXPECT_DOUBLE_EQ(selective.hardware_flops, none.hardware_flops);
  EXPECT_DOUBLE_EQ(selective.stages[0].compute_per_microbatch_s,
                   none.stages[0].compute_per_microbatch_s);
  const StepProgram full = Build(Gpt(R"("pp": 1)", flash + R"(, "recompute": "full")"));
  EXPECT_NEAR(full.hardware_flops, 4 * fwd - logits + scores, 1e-9 * full.hardware_flops);
  // Without flash attention, selective recompute re-runs both score GEMMs.
  const StepProgram unfused = Build(Gpt(R"("pp": 1)", R"(, "recompute": "selective")"));
  EXPECT_NEAR(unfused.hardware_flops, 3 * fwd + 2 * scores, 1e-9 * unfused.hardware_flops);
}

// Sequence parallelism runs the norms and the dropout + residual passes on 1/t of the sequence;
// the GEMMs, the attention core and the activation (already split over the FFN width) do not
// change.
TEST(WorkloadTest, SequenceParallelShardsTheNormAndResidualPasses) {
  const ComputeModel cm(1e15, 1e12, ModelParams());
  auto memory = [](double bytes) { return 4e-6 + bytes / 0.8e12; };
  Scenario s = FlashLayer(1024, false);
  s.parallel.tp = 4;
  const double t = 4, tokens = 1024, h = 1024, e = 2;
  const double norm = 2 * tokens * h * e, residual = 3 * tokens * h * e;
  const LayerCost full = TransformerLayerCost(s, cm);
  s.training.sequence_parallel = true;
  const LayerCost sp = TransformerLayerCost(s, cm);
  const double fwd_saved =
      memory(norm) - memory(norm / t) + memory(residual) - memory(residual / t);
  EXPECT_NEAR(full.attn_fwd_s - sp.attn_fwd_s, fwd_saved, 1e-12);
  EXPECT_NEAR(full.mlp_fwd_s - sp.mlp_fwd_s, fwd_saved, 1e-12);
  const double softmax = 4 * (8 / t) * tokens * tokens * e;  // 8 heads, 1 sequence of 1024
  EXPECT_NEAR(full.attn_bwd_s - sp.attn_bwd_s,
              memory(2 * norm) - memory(2 * norm / t) + memory(2 * softmax + 2 * residual) -
                  memory(2 * softmax + 2 * residual / t),
              1e-12);
  EXPECT_DOUBLE_EQ(sp.core_fwd_s, full.core_fwd_s);
  EXPECT_DOUBLE_EQ(sp.attn_in_gemm_s, full.attn_in_gemm_s);
}

// TF32 GEMMs (A100) run at the GPU's TF32 GEMM efficiency times the TF32 peak; bf16 keeps the
// 16-bit-fitted GEMM efficiency, and use_catalog_gemm_efficiency = false drops both.
TEST(WorkloadTest, Tf32GemmsRunAtTheirOwnEfficiency) {
  auto a100 = [](const char* precision) {
    return Parse(std::string(R"({"model": "gpt-1.7b", "training": {"global_batch": 8,
        "precision": ")") +
                 precision + R"("}, "cluster": {"instance": "p4d.24xlarge"}})");
  };
  const Scenario tf32 = a100("tf32"), bf16 = a100("bf16");
  const GpuSpec& gpu = tf32.instance.gpu;
  ASSERT_TRUE(gpu.tf32_gemm_efficiency && gpu.gemm_efficiency && gpu.tf32_flops);
  ASSERT_NE(*gpu.tf32_gemm_efficiency, *gpu.gemm_efficiency);
  const double flops = 1e12, overhead = ModelParams().kernel_overhead_s;
  EXPECT_NEAR(MakeComputeModel(tf32, ModelParams())->GemmSeconds(flops),
              overhead + flops / (*gpu.tf32_gemm_efficiency * *gpu.tf32_flops), 1e-15);
  EXPECT_NEAR(MakeComputeModel(bf16, ModelParams())->GemmSeconds(flops),
              overhead + flops / (*gpu.gemm_efficiency * *gpu.bf16_flops), 1e-15);
  ModelParams assumed;
  assumed.use_catalog_gemm_efficiency = false;
  EXPECT_NEAR(MakeComputeModel(tf32, assumed)->GemmSeconds(flops),
              overhead + flops / (assumed.gemm_efficiency * *gpu.tf32_flops), 1e-15);
}

// Rowwise FP8 scaling: the weight GEMMs run at the GPU's rowwise figure times the FP8 peak; the
// attention core and output layer (16 bits) and tensorwise scaling do not change, and
// use_catalog_gemm_efficiency = false drops the figure.
TEST(WorkloadTest, RowwiseFp8GemmsRunAtTheRowwiseEfficiency) {
  auto h100 = [](const char* scaling) {
    return Parse(std::string(R"({"model": "gpt-1.7b", "training": {"global_batch": 8,
        "precision": "fp8", "fp8_scaling": ")") +
                 scaling + R"("}, "cluster": {"instance": "p5.48xlarge"}})");
  };
  const Scenario rowwise = h100("rowwise"), tensorwise = h100("tensorwise");
  const GpuSpec& gpu = rowwise.instance.gpu;
  ASSERT_TRUE(gpu.fp8_rowwise_gemm_efficiency && gpu.gemm_efficiency && gpu.fp8_flops);
  Expected<ComputeModel> row = MakeComputeModel(rowwise, ModelParams());
  Expected<ComputeModel> tensor = MakeComputeModel(tensorwise, ModelParams());
  ASSERT_TRUE(row.ok() && tensor.ok());
  const double flops = 1e12, overhead = ModelParams().kernel_overhead_s;
  EXPECT_NEAR(row->GemmSeconds(flops),
              overhead + flops / (*gpu.fp8_rowwise_gemm_efficiency * *gpu.fp8_flops), 1e-15);
  EXPECT_NEAR(tensor->GemmSeconds(flops),
              overhead + flops / (*gpu.gemm_efficiency * *gpu.fp8_flops), 1e-15);
  EXPECT_DOUBLE_EQ(row->SixteenBit().GemmSeconds(flops), tensor->SixteenBit().GemmSeconds(flops));
  const LayerCost r = TransformerLayerCost(rowwise, *row),
                  t = TransformerLayerCost(tensorwise, *tensor);
  EXPECT_DOUBLE_EQ(r.core_fwd_s, t.core_fwd_s);
  EXPECT_GT(r.attn_in_gemm_s, t.attn_in_gemm_s);
  ModelParams assumed;
  assumed.use_catalog_gemm_efficiency = false;
  EXPECT_FALSE(MakeComputeModel(rowwise, assumed)->params().fp8_rowwise_gemm_efficiency);
}

// FP8 training converts the linear layers only: the attention core (flash or
// not) and the output layer run at the 16-bit peak, the weight GEMMs at the
// fp8 peak. On H100 (989 / 1979 TFLOP/s) the core is the bf16 core exactly.
TEST(WorkloadTest, Fp8KeepsTheAttentionCoreAndOutputLayerInSixteenBits) {
  for (bool flash : {false, true}) {
    SCOPED_TRACE(flash);
    auto h100 = [&](const char* precision) {
      return Parse(std::string(R"({"model": "gpt-1.7b", "training": {"global_batch": 8,
          "precision": ")") +
                   precision + R"(", "flash_attention": )" + (flash ? "true" : "false") +
                   R"(}, "cluster": {"instance": "p5.48xlarge"}, "parallel": {"tp": 8}})");
    };
    const Scenario fp8 = h100("fp8"), bf16 = h100("bf16");
    Expected<ComputeModel> cm8 = MakeComputeModel(fp8, ModelParams());
    Expected<ComputeModel> cm16 = MakeComputeModel(bf16, ModelParams());
    ASSERT_TRUE(cm8.ok() && cm16.ok());
    const LayerCost c8 = TransformerLayerCost(fp8, *cm8), c16 = TransformerLayerCost(bf16, *cm16);
    EXPECT_DOUBLE_EQ(c8.core_fwd_s, c16.core_fwd_s);
    // The rest of the forward: the weight GEMMs at twice the rate, the memory-bound kernels the
    // same (fp8 activations are stored as 16-bit), plus the casts of the GEMMs' inputs to fp8
    // (read 2 bytes, write 1 per element): QKV and MLP-up read b s h, the projection b s h / t,
    // MLP-down b s f / t.
    const double gemm_flops = c16.fwd_flops - c16.core_flops;  // QKV, projection, MLP
    const double e = cm16->params().gemm_efficiency;           // H100's, from the catalog
    const double saved = gemm_flops / (e * 989.4e12) - gemm_flops / (e * 1978.9e12);
    const ModelSpec& m = fp8.model;
    const double tokens = fp8.training.micro_batch * m.seq_len, t = 8;
    const double cast = cm8->MemorySeconds(3 * tokens * (m.hidden + m.hidden / t)) +
                        cm8->MemorySeconds(3 * tokens * (m.hidden + m.ffn_hidden / t));
    EXPECT_NEAR(c16.attn_fwd_s + c16.mlp_fwd_s - (c8.attn_fwd_s + c8.mlp_fwd_s), saved - cast,
                1e-6 * saved);
    // MLP backward: both gradient GEMMs at the fp8 rate, the output gradient (b s h) and the
    // up projection's (b s f / t) cast to fp8, the two inputs' fp8 copies transposed (read 1,
    // write 1).
    const double mlp_flops = 2 * tokens * m.hidden * m.ffn_hidden * 2 / t;
    const double mlp_saved = 2 * (mlp_flops / (e * 989.4e12) - mlp_flops / (e * 1978.9e12));
    const double mlp_in = tokens * (m.hidden + m.ffn_hidden / t);
    const double mlp_out = tokens * (m.ffn_hidden / t + m.hidden);
    EXPECT_NEAR(c16.mlp_bwd_s - c8.mlp_bwd_s,
                mlp_saved - cm8->MemorySeconds(3 * mlp_out + 2 * mlp_in), 1e-6 * mlp_saved);
    EXPECT_DOUBLE_EQ(cm8->SixteenBit().GemmSeconds(1e12), cm16->GemmSeconds(1e12));
  }
}

// A GPU's fitted GEMM efficiency (catalog) replaces the assumed one.
// A pipeline send carries one microbatch's activation, b x s x h x 2 bytes in 16 bits:
// 1/tp of it per TP rank with the scatter/gather optimisation (the default), all of it
// without (parallel.pp_scatter_gather false, Megatron-LM before the optimisation).
TEST(WorkloadTest, PipelineSendsSplitOverTheTensorParallelGroup) {
  auto send_bytes = [](const std::string& extra) {
    const StepProgram p = Build(Gpt(R"("tp": 4, "pp": 2)" + extra, R"(, "micro_batch": 2)"));
    for (const Op& op : p.stages[0].ops) {
      if (op.kind == OpKind::kSend) return op.bytes;
    }
    return 0.0;
  };
  const ModelSpec m = Gpt(R"("pp": 1)").model;
  const double activation = 2.0 * m.seq_len * m.hidden * 2;
  EXPECT_DOUBLE_EQ(send_bytes(""), activation / 4);
  EXPECT_DOUBLE_EQ(send_bytes(R"(, "pp_scatter_gather": false)"), activation);
}

TEST(WorkloadTest, CatalogGemmEfficiencyReplacesTheAssumption) {
  Scenario s = Gpt(R"("pp": 1)");
  ASSERT_TRUE(s.instance.gpu.gemm_efficiency.has_value());
  ModelParams assumed;
  assumed.use_catalog_gemm_efficiency = false;
  ModelParams same = assumed;
  same.gemm_efficiency = *s.instance.gpu.gemm_efficiency;
  const double catalog = Build(s).stages[0].compute_per_microbatch_s;
  const double with_assumption = BuildStepProgram(s, assumed)->stages[0].compute_per_microbatch_s;
  const double with_same_value = BuildStepProgram(s, same)->stages[0].compute_per_microbatch_s;
  EXPECT_DOUBLE_EQ(catalog, with_same_value);
  EXPECT_NE(catalog, with_assumption);
}

// A figure the catalog keeps null (no source gives it) stops the simulation with a message
// that says which and what to do (here a GPU whose memory bandwidth is removed).
TEST(WorkloadTest, MissingCatalogFigureIsAnError) {
  Scenario s =
      Parse(R"({"model": "bert-large", "training": {"global_batch": 8, "precision": "fp16"},
      "cluster": {"instance": "p3dn.24xlarge"}, "parallel": {"dp": 8}})");
  ASSERT_TRUE(BuildStepProgram(s, ModelParams()).ok());
  s.instance.gpu.hbm_GBps.reset();
  Expected<StepProgram> p = BuildStepProgram(s, ModelParams());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "the catalog has no memory bandwidth for V100-SXM2-32GB (not confirmed by a source); "
            "give a hardware profile");
}

}  // namespace
}  // namespace trainsim::sim
