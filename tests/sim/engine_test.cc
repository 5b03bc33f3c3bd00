// The step engine: pipeline bubbles against (p-1)/m, the reduced mode against
// the full simulation, determinism, and configurations that do not fit.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "core/model_spec.h"
#include "core/scenario.h"
#include "sim/fold.h"
#include "sim/memory_model.h"
#include "sim/simulate.h"
#include "sim/workload.h"
#include "tests/test_util.h"

namespace trainsim::sim {
namespace {

Scenario Parse(const std::string& json) {
  Expected<Scenario> s = ParseScenario(json, "test.json", test::BuiltinCatalog());
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

SimulationResult RunScenario(const Scenario& s, SimMode mode) {
  SimulateOptions o;
  o.mode = mode;
  Expected<SimulationResult> r = Simulate(s, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->simulated);
  return *r;
}

// Simulates `s` with the trace on; the names of its events by track.
struct Traced {
  StepResult step;
  std::map<int, std::set<std::string>> names;
};
Traced RunTraced(const Scenario& s) {
  SimulateOptions o;
  o.trace = true;
  Expected<SimulationResult> r = Simulate(s, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  Traced out;
  if (!r.ok()) return out;
  out.step = r->step;
  for (const TraceEvent& e : r->step.trace) out.names[e.stream].insert(e.name);
  return out;
}

// Simulates `s` with `params` and again with `other` (a shortcut turned off):
// the same step within 0.5%, the same breakdown entry by entry and critical stage.
void ExpectSameStep(const Scenario& s, const ModelParams& params, const ModelParams& other,
                    const std::string& what) {
  SimulateOptions o;
  o.params = params;
  Expected<SimulationResult> a = Simulate(s, o);
  o.params = other;
  Expected<SimulationResult> b = Simulate(s, o);
  ASSERT_TRUE(a.ok() && b.ok()) << what;
  const double step = b->step.step_time_s;
  EXPECT_NEAR(a->step.step_time_s, step, 0.005 * step) << what;
  const Breakdown &x = a->step.breakdown, &y = b->step.breakdown;
  for (auto f : {&Breakdown::compute_s, &Breakdown::tp_comm_s, &Breakdown::ep_comm_s,
                 &Breakdown::dp_comm_exposed_s, &Breakdown::weight_gather_exposed_s,
                 &Breakdown::pp_comm_exposed_s, &Breakdown::pipeline_bubble_s,
                 &Breakdown::offload_exposed_s}) {
    EXPECT_NEAR(x.*f, y.*f, 0.005 * step) << what;
  }
  for (int i = 0; i < kStrategyCount; ++i) {
    EXPECT_NEAR(x.strategy_comm_s[i], y.strategy_comm_s[i], 0.005 * step) << what;
  }
  EXPECT_EQ(a->step.critical_stage, b->step.critical_stage) << what;
}

// Eight identical layers, one per stage of a single p4d node: every stage
// does the same work and activations are small, so the step is
// (m + p - 1) microbatch times plus the optimizer (and a few microseconds of
// messages).
std::string UniformPipeline(const std::string& schedule, int microbatches) {
  std::string layers;
  for (int i = 0; i < 8; ++i) {
    layers += std::string(i ? "," : "") +
              R"({"forward_flops": 2e11, "params": 1e6, "activation_bytes": 1e4})";
  }
  return R"({"model": {"layer_list": [)" + layers + R"(]},
    "training": {"global_batch": )" +
         std::to_string(microbatches) + R"(, "precision": "bf16"},
    "cluster": {"instance": "p4d.24xlarge"},
    "parallel": {"pp": 8, "schedule": ")" +
         schedule + R"("}})";
}

TEST(EngineTest, PipelineBubbleMatchesScheduleFormula) {
  for (const std::string schedule : {"gpipe", "1f1b"}) {
    for (int m : {8, 32}) {
      Scenario s = Parse(UniformPipeline(schedule, m));
      Expected<StepProgram> prog = BuildStepProgram(s, ModelParams());
      ASSERT_TRUE(prog.ok());
      const double per_mb = prog->stages[0].compute_per_microbatch_s;
      SimulationResult r = RunScenario(s, SimMode::kReduced);
      const double work = m * per_mb + r.step.breakdown.optimizer_s;
      const double bubble = (r.step.step_time_s - work) / (m * per_mb);
      EXPECT_NEAR(bubble, 7.0 / m, 0.01 * 7.0 / m) << schedule << " m=" << m;
    }
  }
}

// Interleaved 1F1B (Megatron-LM): with v model chunks per GPU the bubble
// shrinks to (pp - 1) / (v m). A transformer with a tiny vocabulary keeps the
// first and last stages (embedding, logits) close to the others, and a hidden
// size at which compute outweighs the pipeline messages (v times more of them
// with interleaving), which the measured bubble includes.
TEST(EngineTest, InterleavedBubbleShrinksWithVirtualStages) {
  for (int v : {1, 2, 4}) {
    const std::string schedule =
        v == 1 ? R"("schedule": "1f1b")"
               : R"("schedule": "interleaved", "virtual_stages": )" + std::to_string(v);
    Scenario s = Parse(R"({"model": {"layers": 32, "hidden": 2048, "heads": 16, "seq_len": 1024,
        "vocab": 64}, "training": {"global_batch": 16},
        "cluster": {"instance": "p4d.24xlarge"},
        "parallel": {"tp": 2, "pp": 4, )" +
                       schedule + "}}");
    SimulationResult r = RunScenario(s, SimMode::kReduced);
    const Breakdown& b = r.step.breakdown;
    const double busy = b.compute_s + b.recompute_s + b.tp_comm_s;
    const double bubble = (r.step.step_time_s - busy - b.optimizer_s) / busy;
    EXPECT_NEAR(bubble, 3.0 / (v * 16), 0.1 * 3.0 / (v * 16)) << "v=" << v;
  }
}

// The reduced mode (one GPU per stage, collectives simulated once and
// reused) against the full simulation of every GPU and message.
TEST(EngineTest, ReducedModeMatchesFullSimulation) {
  const char* cases[] = {
      // tp + pp + dp across two nodes, 1F1B.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 32},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "pp": 2, "dp": 4}})",
      // Pure data parallelism over two nodes, ZeRO-1.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 16, "recompute": "full"},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"zero_stage": 1}})",
      // Interleaved 1F1B: messages wrap from the last stage to the first.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 32},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "pp": 4, "schedule": "interleaved", "virtual_stages": 3}})",
      // A straggling GPU in one TP group of one stage.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 32},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2,
                      "stragglers": [{"gpu": 5, "slowdown": 1.3}]},
          "parallel": {"tp": 2, "pp": 2, "dp": 4}})",
      // ZeRO-2 over two nodes with pipeline stages: reduce-scatter every microbatch.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 32},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "pp": 2, "zero_stage": 2}})",
      // ZeRO-3 / FSDP: per-layer gathers with prefetch, per-layer reduce-scatter.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 16},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "zero_stage": 3}})",
      // Horovod tensor fusion: whatever is ready at each cycle, fused. (With
      // tp 2 the fused hierarchical all-reduces share NVLink with the TP
      // all-reduces, a contention between traffic kinds that the reduced mode
      // does not capture: 1.1% here, model.md section 4.)
      R"({"model": "gpt-1.7b", "training": {"global_batch": 32, "recompute": "full"},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"dp_fusion": "horovod", "cycle_ms": 2}})",
      // Hybrid sharding (FSDP HYBRID_SHARD): gathers and reduce-scatters inside
      // each node's shard group, the gradient shards all-reduced across nodes.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 16},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"zero_stage": 3, "shard_group": 8}})",
      // Hybrid ZeRO-2 with tp: shard groups of 2 DP ranks spread over both nodes.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 32},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "zero_stage": 2, "shard_group": 2}})",
      // Activation and optimizer offload to host memory.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 16, "offload_activations": true,
                                             "offload_optimizer": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "pp": 2, "zero_stage": 1}})",
      // Parameter offload (FSDP CPU offload): each layer's shard from host memory
      // before its gather, its gradient shard to host memory after its reduce-scatter.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 16, "offload_params": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "zero_stage": 3}})",
      // Sequence parallelism, GPipe, hierarchical DP all-reduce.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 16, "sequence_parallel": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 4, "pp": 2, "schedule": "gpipe", "dp_algorithm": "hierarchical"}})",
      // TP communication pipelined with the GEMMs beside it, with full recompute.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 16, "sequence_parallel": true,
                                             "recompute": "full"},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 4, "pp": 2, "tp_overlap": true}})",
      // Expert parallelism: all-to-alls inside a node (ep 2 of tp 4 ranks) and across
      // nodes (ep 4), the experts' gradients over the ranks holding them, ZeRO-1.
      R"({"model": {"layers": 4, "hidden": 1024, "heads": 16, "seq_len": 1024, "vocab": 32000,
                    "mlp": "swiglu", "bias": false, "experts": 8, "experts_per_token": 2,
                    "dense_layers": 1},
          "training": {"global_batch": 16, "moe_imbalance": 1.2},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 4, "pp": 2, "ep": 2, "zero_stage": 1}})",
      R"({"model": {"layers": 4, "hidden": 1024, "heads": 16, "seq_len": 1024, "vocab": 32000,
                    "mlp": "swiglu", "bias": false, "experts": 8, "experts_per_token": 2},
          "training": {"global_batch": 16},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 4, "ep": 4}})",
      // Whole experts (expert_tp 1): EP groups of consecutive GPUs across the TP ranks, inside
      // a node (ep 2 and ep 8 of tp 4) and across nodes (ep 16), no TP exchange around them,
      // their gradients over the GPUs that hold the same experts.
      R"({"model": {"layers": 4, "hidden": 1024, "heads": 16, "seq_len": 1024, "vocab": 32000,
                    "mlp": "swiglu", "bias": false, "experts": 16, "experts_per_token": 2},
          "training": {"global_batch": 16, "sequence_parallel": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 4, "ep": 2, "expert_tp": 1, "zero_stage": 1}})",
      R"({"model": {"layers": 4, "hidden": 1024, "heads": 16, "seq_len": 1024, "vocab": 32000,
                    "mlp": "swiglu", "bias": false, "experts": 16, "experts_per_token": 2},
          "training": {"global_batch": 16, "sequence_parallel": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 4, "pp": 2, "ep": 8, "expert_tp": 1}})",
      R"({"model": {"layers": 4, "hidden": 1024, "heads": 16, "seq_len": 1024, "vocab": 32000,
                    "mlp": "swiglu", "bias": false, "experts": 16, "experts_per_token": 2},
          "training": {"global_batch": 16, "sequence_parallel": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "ep": 16, "expert_tp": 1, "zero_stage": 1}})",
      // FSDP2 with expert parallelism: the experts gathered and reduced over the 4 GPUs that
      // hold them (one in each EP group of 4), the dense weights over all 16.
      R"({"model": {"layers": 4, "hidden": 1024, "heads": 16, "seq_len": 1024, "vocab": 32000,
                    "mlp": "swiglu", "bias": false, "experts": 16, "experts_per_token": 2},
          "training": {"global_batch": 32},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"ep": 4, "zero_stage": 3, "zero_impl": "fsdp2"}})",
      // Context parallelism: K/V rings inside a node (cp 2 and cp 4 of tp 2), pipelined with
      // the attention core; gradients over dp x cp across the nodes, ZeRO-1, recompute. (Rings
      // across nodes: the reduced mode is 3.6-6.8% fast, docs/model.md section 2.)
      R"({"model": {"preset": "gpt-1.7b", "seq_len": 8192},
          "training": {"global_batch": 8, "flash_attention": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "cp": 2, "zero_stage": 1}})",
      R"({"model": {"preset": "gpt-1.7b", "seq_len": 8192},
          "training": {"global_batch": 4, "flash_attention": true, "recompute": "full"},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "cp": 4}})",
  };
  for (const char* json : cases) {
    Scenario s = Parse(json);
    const double reduced = RunScenario(s, SimMode::kReduced).step.step_time_s;
    const double full = RunScenario(s, SimMode::kFull).step.step_time_s;
    EXPECT_NEAR(reduced, full, 0.005 * full) << json;
  }
}

// The fold (sim/fold.h): a cluster that repeats leaf by leaf, simulated on two
// leaves of each stage, takes the same step (and breakdown) as the whole cluster,
// for each strategy family. Leaves of 2 nodes keep the whole clusters small.
TEST(EngineTest, FoldedClusterMatchesTheWholeCluster) {
  const char* cases[] = {
      // Data parallelism across 4 leaves per stage, 1F1B, ring all-reduce.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 64, "nodes_per_leaf": 8},
          "parallel": {"tp": 8, "pp": 2, "dp_algorithm": "ring"}})",
      // The automatic choice (the tree for small buckets), 8 leaves per stage.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 64, "nodes_per_leaf": 8},
          "parallel": {"tp": 8, "bucket_mb": 4}})",
      // The tree alone, extended in depth: 512 members, 128 simulated (a model of
      // 2 MB gradients per layer: trees of larger buffers are not folded).
      R"({"model": {"layer_list": [
            {"forward_flops": 2e11, "params": 1e6, "activation_bytes": 1e4},
            {"forward_flops": 2e11, "params": 1e6, "activation_bytes": 1e4},
            {"forward_flops": 2e11, "params": 1e6, "activation_bytes": 1e4},
            {"forward_flops": 2e11, "params": 1e6, "activation_bytes": 1e4}]},
          "training": {"global_batch": 512, "precision": "bf16"},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 64, "nodes_per_leaf": 8},
          "parallel": {"dp_algorithm": "tree", "bucket_mb": 4}})",
      // The same tree over pods of 2 leaves: its top levels cross pods.
      R"({"model": {"layer_list": [
            {"forward_flops": 2e11, "params": 1e6, "activation_bytes": 1e4},
            {"forward_flops": 2e11, "params": 1e6, "activation_bytes": 1e4},
            {"forward_flops": 2e11, "params": 1e6, "activation_bytes": 1e4},
            {"forward_flops": 2e11, "params": 1e6, "activation_bytes": 1e4}]},
          "training": {"global_batch": 512, "precision": "bf16"},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 64, "nodes_per_leaf": 8,
                      "leaves_per_pod": 2},
          "parallel": {"dp_algorithm": "tree", "bucket_mb": 4}})",
      // ZeRO-3: per-layer gathers and reduce-scatters over the whole DP group.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 64},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 32, "nodes_per_leaf": 8},
          "parallel": {"tp": 8, "zero_stage": 3}})",
      // Hybrid sharding: shard groups of 2 inside a leaf, all-reduce across them.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 32, "nodes_per_leaf": 8},
          "parallel": {"tp": 4, "zero_stage": 3, "shard_group": 2}})",
      // Interleaved 1F1B: messages wrap from the last stage to the first.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 128, "nodes_per_leaf": 8},
          "parallel": {"tp": 8, "pp": 4, "schedule": "interleaved", "virtual_stages": 3}})",
      // A straggler on a node that the fold does not build.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 64, "nodes_per_leaf": 8,
                      "stragglers": [{"gpu": 200, "slowdown": 1.3}]},
          "parallel": {"tp": 8, "pp": 2}})",
      // A spine oversubscribed 4:1, pipeline messages across leaves.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 64, "nodes_per_leaf": 8,
                      "oversubscription": 4},
          "parallel": {"tp": 8, "pp": 2}})",
      // Horovod tensor fusion (a grid of fused sizes), ZeRO-1 with offload.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 128, "recompute": "full"},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 32, "nodes_per_leaf": 8},
          "parallel": {"tp": 8, "dp_fusion": "horovod", "cycle_ms": 2}})",
      R"({"model": "gpt-1.7b", "training": {"global_batch": 64, "offload_optimizer": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 32, "nodes_per_leaf": 8},
          "parallel": {"tp": 8, "zero_stage": 1}})",
      // Context parallelism over 2 nodes of a leaf, gradients over dp x cp.
      R"({"model": {"preset": "gpt-1.7b", "seq_len": 8192},
          "training": {"global_batch": 32, "flash_attention": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 32, "nodes_per_leaf": 8},
          "parallel": {"tp": 8, "cp": 2, "zero_stage": 1, "dp_algorithm": "ring"}})",
      // Expert parallelism over 4 nodes of a leaf, expert gradients across the leaves.
      R"({"model": {"layers": 4, "hidden": 1024, "heads": 16, "seq_len": 1024, "vocab": 32000,
                    "mlp": "swiglu", "bias": false, "experts": 8, "experts_per_token": 2},
          "training": {"global_batch": 64},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 32, "nodes_per_leaf": 8},
          "parallel": {"tp": 8, "ep": 4, "zero_stage": 1, "dp_algorithm": "ring"}})",
      // Whole experts (expert_tp 1): EP groups of 16 consecutive GPUs (2 nodes, within a leaf).
      R"({"model": {"layers": 4, "hidden": 1024, "heads": 16, "seq_len": 1024, "vocab": 32000,
                    "mlp": "swiglu", "bias": false, "experts": 16, "experts_per_token": 2},
          "training": {"global_batch": 64, "sequence_parallel": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 32, "nodes_per_leaf": 8},
          "parallel": {"tp": 8, "ep": 16, "expert_tp": 1, "zero_stage": 1,
                       "dp_algorithm": "ring"}})",
  };
  for (const char* json : cases) {
    Scenario s = Parse(json);
    Expected<StepProgram> program = BuildStepProgram(s, ModelParams{});
    ASSERT_TRUE(program.ok());
    ASSERT_TRUE(PlanFold(s, SimMode::kReduced, ModelParams{}, &*program).active()) << json;
    ModelParams whole;
    whole.fold = false;
    ExpectSameStep(s, ModelParams{}, whole, json);
  }
}

// The fold with a core tier: a non-blocking pod tier adds two switch hops to
// every route between pods, which the folded cluster must keep where the
// whole one has them (FoldedShape places the second kept leaf of a stage over
// several pods in the next pod). Switches 200 times slower than real ones
// make those hops visible: the pods change the part of the step they touch by
// over 5%, and the folded cluster has the whole one's step and parts within
// 0.5% of each part. (Trees are left out: their extension in depth assumes an
// even step per level, which slow switches strain: 0.7% off with switches 20
// times slower, 0.04% at real ones, FoldedClusterMatchesTheWholeCluster.)
TEST(EngineTest, FoldedPodsMatchTheWholeCluster) {
  struct Case {
    const char* json;
    double Breakdown::*part;  // what the pods change
  };
  const Case cases[] = {
      // Stages of 4 leaves over pods of 2: the DP ring crosses pods.
      {R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
           "cluster": {"instance": "p4d.24xlarge", "nodes": 64, "nodes_per_leaf": 8,
                       "leaves_per_pod": 2},
           "parallel": {"tp": 8, "pp": 2, "dp_algorithm": "ring"}})",
       &Breakdown::dp_comm_exposed_s},
      // ZeRO-3 gathers and reduce-scatters crossing pods.
      {R"({"model": "gpt-1.7b", "training": {"global_batch": 64},
           "cluster": {"instance": "p4d.24xlarge", "nodes": 64, "nodes_per_leaf": 8,
                       "leaves_per_pod": 2},
           "parallel": {"tp": 8, "pp": 2, "zero_stage": 3}})",
       &Breakdown::weight_gather_exposed_s},
      // A stage per pod: the pipeline messages cross pods.
      {R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
           "cluster": {"instance": "p4d.24xlarge", "nodes": 64, "nodes_per_leaf": 8,
                       "leaves_per_pod": 4},
           "parallel": {"tp": 8, "pp": 2, "dp_algorithm": "ring"}})",
       &Breakdown::pp_comm_exposed_s},
  };
  ModelParams folded;
  folded.switch_latency_s = 100e-6;
  ModelParams whole = folded;
  whole.fold = false;
  auto run = [](const Scenario& s, const ModelParams& params) {
    SimulateOptions o;
    o.params = params;
    Expected<SimulationResult> r = Simulate(s, o);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->step : StepResult{};
  };
  for (const Case& c : cases) {
    Scenario s = Parse(c.json);
    Expected<StepProgram> program = BuildStepProgram(s, folded);
    ASSERT_TRUE(program.ok());
    ASSERT_TRUE(PlanFold(s, SimMode::kReduced, folded, &*program).active()) << c.json;
    Scenario flat = s;
    flat.cluster.leaves_per_pod = 0;
    const StepResult a = run(s, folded), b = run(s, whole), f = run(flat, folded);
    EXPECT_NEAR(a.step_time_s, b.step_time_s, 0.005 * b.step_time_s) << c.json;
    const double part = b.breakdown.*c.part;
    EXPECT_NEAR(a.breakdown.*c.part, part, 0.005 * part) << c.json;
    EXPECT_GT(part, 1.05 * (f.breakdown.*c.part)) << c.json;
  }
}

// A step of many microbatches, simulated at 2, 4 and 6 (interleaved: pp, 2 pp, 3 pp)
// and extended on their line (simulate.cc MicrobatchSamples), takes the step of every
// microbatch simulated, with the same breakdown, for each strategy family.
TEST(EngineTest, ManyMicrobatchesLieOnTheLineThroughAFew) {
  const char* cases[] = {
      // tp + pp + dp, 1F1B, 48 microbatches.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 192},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "pp": 2, "dp": 4}})",
      // GPipe over 4 stages with full recompute.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 96, "recompute": "full"},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "pp": 4, "schedule": "gpipe"}})",
      // Interleaved 1F1B, 48 microbatches sampled at 4, 8 and 12.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 96},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "pp": 4, "schedule": "interleaved", "virtual_stages": 3}})",
      // ZeRO-2 with pipeline stages: a reduce-scatter every microbatch.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 192},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "pp": 2, "zero_stage": 2}})",
      // ZeRO-3 with gradient accumulation: gathers and reduce-scatters every microbatch.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "zero_stage": 3}})",
      // Hybrid sharding.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 256},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"zero_stage": 3, "shard_group": 8}})",
      // A straggler, and optimizer plus activation offload.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 192},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2,
                      "stragglers": [{"gpu": 5, "slowdown": 1.3}]},
          "parallel": {"tp": 2, "pp": 2, "dp": 4}})",
      R"({"model": "gpt-1.7b", "training": {"global_batch": 192, "offload_activations": true,
                                             "offload_optimizer": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 2, "pp": 2, "zero_stage": 1}})",
      // TP communication pipelined with its GEMMs.
      R"({"model": "gpt-1.7b", "training": {"global_batch": 96, "sequence_parallel": true},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
          "parallel": {"tp": 4, "pp": 2, "tp_overlap": true}})",
  };
  for (const char* json : cases) {
    ModelParams every;
    every.microbatch_line = false;
    ExpectSameStep(Parse(json), ModelParams{}, every, json);
  }
}

// Where the cluster does not repeat leaf by leaf the fold says why and builds it all.
TEST(EngineTest, ClustersThatDoNotRepeatAreNotFolded) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"model": "gpt-1.7b", "training": {"global_batch": 60},
           "cluster": {"instance": "p4d.24xlarge", "nodes": 12, "nodes_per_leaf": 4},
           "parallel": {"tp": 8, "pp": 2}})",
       "a pipeline stage (6 nodes) does not fill whole leaves of cluster.nodes_per_leaf 4"},
      {R"({"model": "gpt-1.7b", "training": {"global_batch": 64},
           "cluster": {"instance": "p4d.24xlarge", "nodes": 16, "nodes_per_leaf": 4},
           "parallel": {"tp": 4, "zero_stage": 3, "shard_group": 16}})",
       "a shard group (parallel.shard_group) crosses a leaf boundary"},
      {R"({"model": "gpt-1.7b", "training": {"global_batch": 64},
           "cluster": {"instance": "p4d.24xlarge", "nodes": 16, "nodes_per_leaf": 8},
           "parallel": {"tp": 8}})",
       "a pipeline stage spans fewer than 4 leaves"},
      {R"({"model": "gpt-1.7b", "training": {"global_batch": 64},
           "cluster": {"instance": "p4d.24xlarge", "nodes": 16, "nodes_per_leaf": 4},
           "parallel": {"tp": 8}})",
       "leaves of 4 nodes are too small to fold"},
      {R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
           "cluster": {"instance": "p4d.24xlarge", "nodes": 32, "nodes_per_leaf": 8},
           "parallel": {"tp": 2}})",
       "the data-parallel all-reduce may run as the hierarchical algorithm, whose tree across "
       "nodes is not extended by the fold"},
      {R"({"model": "gpt-1.7b", "training": {"global_batch": 64},
           "cluster": {"instance": "p4d.24xlarge", "nodes": 32, "nodes_per_leaf": 8},
           "parallel": {"tp": 8, "dp_algorithm": "tree", "bucket_mb": 64}})",
       "tree all-reduces larger than 16 MiB are not extended in depth by the fold"},
      {R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
           "cluster": {"instance": "p4d.24xlarge", "nodes": 64, "nodes_per_leaf": 8,
                       "leaves_per_pod": 2, "pod_oversubscription": 2},
           "parallel": {"tp": 8, "pp": 2, "dp_algorithm": "ring"}})",
       "an oversubscribed pod tier (cluster.pod_oversubscription > 1) is simulated whole"},
      {R"({"model": "gpt-1.7b", "training": {"global_batch": 128},
           "cluster": {"instance": "p4d.24xlarge", "nodes": 96, "nodes_per_leaf": 8,
                       "leaves_per_pod": 3},
           "parallel": {"tp": 8, "pp": 3, "dp_algorithm": "ring"}})",
       "pipeline stages (4 leaves) and pods (cluster.leaves_per_pod 3) do not align"},
  };
  for (const auto& [json, why] : cases) {
    Scenario s = Parse(json);
    Expected<StepProgram> program = BuildStepProgram(s, ModelParams{});
    ASSERT_TRUE(program.ok());
    const Fold f = PlanFold(s, SimMode::kReduced, ModelParams{}, &*program);
    EXPECT_FALSE(f.active()) << json;
    EXPECT_EQ(f.why_not, why);
    EXPECT_EQ(BuiltNodes(s, f), s.cluster.nodes);
  }
}

TEST(EngineTest, SameScenarioGivesByteIdenticalJson) {
  Scenario s = Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 32},
      "cluster": {"instance": "p4d.24xlarge", "nodes": 2}, "parallel": {"tp": 2, "pp": 2}})");
  std::string a = ToJson(s, RunScenario(s, SimMode::kReduced)).dump();
  std::string b = ToJson(s, RunScenario(s, SimMode::kReduced)).dump();
  EXPECT_EQ(a, b);
}

// Simulate reports its progress: 2 pp + 2 parts (the platform, each stage's DP collectives,
// each stage's other collectives, the step), in order, naming what it is doing, and within a
// stage's DP collectives each one it measures.
TEST(EngineTest, ProgressCountsThePlatformTheStagesAndTheStep) {
  Scenario s = Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 32},
      "cluster": {"instance": "p4d.24xlarge", "nodes": 2}, "parallel": {"tp": 2, "pp": 2}})");
  std::vector<Progress> seen;
  SimulateOptions o;
  o.progress = [&](const Progress& p) { seen.push_back(p); };
  ASSERT_TRUE(Simulate(s, o).ok());
  std::map<int, std::vector<std::string>> by_part;
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].total, 6);
    if (i > 0) {
      EXPECT_GE(seen[i].done, seen[i - 1].done);
    }
    by_part[seen[i].done].push_back(seen[i].what);
  }
  ASSERT_EQ(by_part.size(), 6u);
  EXPECT_EQ(by_part[0], std::vector<std::string>{"building the platform: 2 nodes"});
  EXPECT_EQ(by_part[1][0], "stage 1 of 2: data-parallel collectives");
  ASSERT_GE(by_part[1].size(), 2u);
  EXPECT_EQ(by_part[1][1].rfind("stage 1 of 2: data-parallel ", 0), 0u) << by_part[1][1];
  EXPECT_NE(by_part[1][1].find(" MiB"), std::string::npos) << by_part[1][1];
  EXPECT_EQ(by_part[4][0], "stage 2 of 2: tensor-parallel, pipeline and host collectives");
  EXPECT_EQ(by_part[5], std::vector<std::string>{"the step"});
}

TEST(EngineTest, BreakdownAddsUpToTheStep) {
  Scenario s = Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 64, "recompute": "full"},
      "cluster": {"instance": "p4d.24xlarge", "nodes": 2}, "parallel": {"tp": 2, "pp": 4}})");
  SimulationResult r = RunScenario(s, SimMode::kReduced);
  const Breakdown& b = r.step.breakdown;
  double sum = b.compute_s + b.recompute_s + b.optimizer_s + b.tp_comm_s + b.dp_comm_exposed_s +
               b.weight_gather_exposed_s + b.offload_exposed_s + b.pp_comm_exposed_s +
               b.pipeline_bubble_s + b.data_wait_s;
  EXPECT_NEAR(sum, r.step.step_time_s, 1e-9 * r.step.step_time_s);
  EXPECT_GT(b.recompute_s, 0);
  EXPECT_GT(b.tp_comm_s, 0);
  EXPECT_GT(b.pipeline_bubble_s, 0);
}

// parallel.tp_overlap: each all-gather / reduce-scatter of sequence parallelism runs
// pipelined with the GEMM beside it, max(G', d) + min(G', d) / tp with the GEMM slowed by
// the collective's share of the GPU, G' = G + s min(d, G / (1 - s)), so the step's TP time is
// what exceeds those GEMMs; compute is unchanged. One stage, one microbatch: every TP
// collective is the same size and takes d (measured without overlap), and the windows are
// the layer's GEMMs (forward in, out; backward twice each).
TEST(EngineTest, TpOverlapPipelinesEachCollectiveWithItsGemm) {
  const std::string base = R"({"model": "gpt-1.7b", "training": {"global_batch": 1,
      "sequence_parallel": true}, "cluster": {"instance": "p4d.24xlarge"},
      "parallel": {"tp": 8)";
  const Scenario plain = Parse(base + "}}"), overlapped = Parse(base + R"(, "tp_overlap": true}})");
  const Breakdown a = RunScenario(plain, SimMode::kReduced).step.breakdown;
  const Breakdown b = RunScenario(overlapped, SimMode::kReduced).step.breakdown;
  const int layers = plain.model.layers, collectives = layers * 2 * 2 * 2;  // blocks, AG+RS, passes
  const double d = a.tp_comm_s / collectives, share = ModelParams().comm_compute_share;
  Expected<ComputeModel> cm = MakeComputeModel(plain, ModelParams());
  ASSERT_TRUE(cm.ok());
  const LayerCost c = TransformerLayerCost(plain, *cm);
  double expected = 0;
  for (double g : {c.attn_in_gemm_s, c.attn_out_gemm_s, c.mlp_in_gemm_s, c.mlp_out_gemm_s}) {
    expected += PipelinedSeconds(g, d, 8, share) - g;          // forward
    expected += PipelinedSeconds(2 * g, d, 8, share) - 2 * g;  // backward
  }
  expected *= layers;
  EXPECT_NEAR(b.tp_comm_s, expected, 1e-6 * a.tp_comm_s);
  EXPECT_LT(b.tp_comm_s, a.tp_comm_s);
  EXPECT_NEAR(b.compute_s, a.compute_s, 1e-9 * a.compute_s);
  EXPECT_DOUBLE_EQ(PipelinedSeconds(3, 1, 4, 0), 3.25);  // the GEMM hides all but a quarter
  EXPECT_DOUBLE_EQ(PipelinedSeconds(1, 3, 4, 0), 3.25);
  // A share of 0.2: the 3 s GEMM beside 1 s of collective becomes 3.2 s; the 1 s GEMM beside
  // 3 s becomes 1 + 0.2 x 1.25.
  EXPECT_DOUBLE_EQ(PipelinedSeconds(3, 1, 4, 0.2), 3.2 + 0.25);
  EXPECT_DOUBLE_EQ(PipelinedSeconds(1, 3, 4, 0.2), 3 + 1.25 / 4);
}

// Each kind of activity has its own track; the compute stream's waits (the
// pipeline bubble among them) are visible as such.
TEST(EngineTest, TraceSeparatesActivitiesByKind) {
  Scenario s = Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 32},
      "cluster": {"instance": "p4d.24xlarge", "nodes": 2}, "parallel": {"tp": 2, "pp": 2}})");
  auto names = RunTraced(s).names;
  EXPECT_TRUE(names[kTrackCompute].count("forward"));
  EXPECT_TRUE(names[kTrackCompute].count("backward"));
  EXPECT_TRUE(names[kTrackTp].count("tp all_reduce"));
  EXPECT_TRUE(names[kTrackSendForward].count("send activation"));
  EXPECT_TRUE(names[kTrackSendBackward].count("send gradient"));
  EXPECT_TRUE(names[kTrackWait].count("waiting for activation"));
  bool dp_with_algorithm = false;
  for (const std::string& n : names[kTrackDp]) dp_with_algorithm |= n.find("dp all_reduce (") == 0;
  EXPECT_TRUE(dp_with_algorithm);
}

// ZeRO-3's weight gathers and the offload copies show on their own tracks
// and in their own breakdown entries.
TEST(EngineTest, ShardingAndOffloadHaveTheirOwnTracksAndBreakdown) {
  Scenario s = Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 16,
      "offload_activations": true, "offload_optimizer": true},
      "cluster": {"instance": "p4d.24xlarge", "nodes": 2}, "parallel": {"zero_stage": 3}})");
  const Traced r = RunTraced(s);
  auto names = r.names;
  EXPECT_TRUE(names[kTrackWeightGather].count("dp all_gather (ring)"));
  EXPECT_TRUE(names[kTrackDp].count("dp reduce_scatter (ring)"));
  EXPECT_TRUE(names[kTrackHostCopy].count("activations to host"));
  EXPECT_TRUE(names[kTrackHostCopy].count("activations from host"));
  EXPECT_TRUE(names[kTrackHostCopy].count("gradients to host"));
  EXPECT_TRUE(names[kTrackHostCopy].count("weights from host"));
  const Breakdown& b = r.step.breakdown;
  // The first layer's gather cannot be hidden; the optimizer's copies are not overlapped.
  EXPECT_GT(b.weight_gather_exposed_s, 0);
  EXPECT_GT(b.offload_exposed_s, 0);
}

// Hybrid sharding over the 8 GPUs of each p4d node: the weight gathers and
// gradient reduce-scatters stay inside the node (NVSwitch), so the gather the
// first layer waits for takes what it takes on one node alone; the gradient
// shards (1/8 of each reduce-scatter's bytes) are all-reduced across the nodes.
TEST(EngineTest, HybridShardingGathersInsideTheShardGroup) {
  const auto scenario = [](int nodes, const std::string& shard) {
    return Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": )" +
                 std::to_string(8 * nodes) +
                 R"(}, "cluster": {"instance": "p4d.24xlarge", "nodes": )" + std::to_string(nodes) +
                 R"(}, "parallel": {"zero_stage": 3)" + shard + "}}");
  };
  const Scenario hybrid = scenario(2, R"(, "shard_group": 8)");
  Expected<StepProgram> prog = BuildStepProgram(hybrid, ModelParams());
  ASSERT_TRUE(prog.ok());
  const std::vector<AsyncItem>& items = prog->stages[0].async[kDpStream];
  int gathers = 0, scatters = 0, across = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const AsyncItem& c = items[i];
    if (c.kind == CollKind::kAllGather) {
      EXPECT_EQ(c.group, GroupKind::kShard);
      ++gathers;
    } else if (c.kind == CollKind::kReduceScatter) {
      EXPECT_EQ(c.group, GroupKind::kShard);
      ASSERT_LT(i + 1, items.size());  // each reduce-scatter is followed by its all-reduce
      EXPECT_EQ(items[i + 1].kind, CollKind::kAllReduce);
      EXPECT_EQ(items[i + 1].group, GroupKind::kAcrossShards);
      EXPECT_DOUBLE_EQ(items[i + 1].bytes, c.bytes / 8);
      ++scatters;
    } else if (c.kind == CollKind::kAllReduce) {
      ++across;
    }
  }
  EXPECT_GT(gathers, 0);
  EXPECT_EQ(scatters, across);

  Traced two = RunTraced(hybrid), one = RunTraced(scenario(1, ""));
  EXPECT_TRUE(two.names[kTrackWeightGather].count("dp all_gather in shard group (ring)"));
  EXPECT_TRUE(two.names[kTrackDp].count("dp reduce_scatter in shard group (ring)"));
  bool across_traced = false;
  for (const std::string& n : two.names[kTrackDp]) {
    across_traced |= n.find("dp all_reduce across shard groups (") == 0;
  }
  EXPECT_TRUE(across_traced);
  EXPECT_NEAR(two.step.breakdown.weight_gather_exposed_s,
              one.step.breakdown.weight_gather_exposed_s,
              0.01 * one.step.breakdown.weight_gather_exposed_s);
}

// Offloaded, the optimizer step runs on the host: its gradients go out and
// its weights come back over PCIe (two GPUs of a p4d share a PCIe switch and
// its root link), and the CPU sweeps the whole node's optimizer state.
TEST(EngineTest, OptimizerOffloadCostsCopiesAndTheHostStep) {
  Scenario s = Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 8,
      "offload_optimizer": true}, "cluster": {"instance": "p4d.24xlarge"},
      "parallel": {"zero_stage": 1}})");
  const StepResult r = RunScenario(s, SimMode::kReduced).step;
  const ModelParams params;
  const double shard = ParameterCount(s.model) / 8;  // ZeRO-1 over dp 8
  const double host_step = shard * 32 * 8 / (params.host_optimizer_GBps * 1e9);
  EXPECT_NEAR(r.breakdown.optimizer_s, host_step, 1e-6 * host_step);
  const double pcie = s.instance.pcie_GBps_per_dir * 1e9 / 2;
  const double copies = 2 * (shard * 2 / pcie);
  EXPECT_NEAR(r.breakdown.offload_exposed_s, copies, 0.01 * copies);
}

// Parameter offload over one replica (tp 8 on one p4d, dp 1): each layer's
// weights (its tp slice) come whole from host memory, 4 bytes per parameter,
// at the PCIe rate / 2 (two GPUs share a switch's root link). A layer computes
// longer than a copy takes, so what shows is what nothing hides: the first
// layer's copy of each pass (unit 0 holds the embedding, the last unit only
// its layer) and unit 0's gradient going out before the CPU step, less the
// embedding's backward, which runs after unit 0's gradient copy starts.
TEST(EngineTest, ParameterOffloadExposesTheFirstCopyOfEachPass) {
  auto scenario = [](const std::string& offload) {
    return Parse(R"({"model": {"layers": 2, "hidden": 4096, "heads": 32, "seq_len": 2048,
        "vocab": 1024}, "training": {"global_batch": 32, "micro_batch": 32)" +
                 offload + R"(}, "cluster": {"instance": "p4d.24xlarge"},
        "parallel": {"tp": 8, "zero_stage": 3}})");
  };
  const Scenario s = scenario(R"(, "offload_params": true)");
  const Traced r = RunTraced(s);
  EXPECT_TRUE(r.names.at(kTrackHostCopy).count("weight shard from host"));
  EXPECT_TRUE(r.names.at(kTrackHostCopy).count("gradient shard to host"));
  const double rate = s.instance.pcie_GBps_per_dir * 1e9 / 2;
  auto copy = [&](double params) { return params * 4 / rate; };
  const double layer = LayerParameterCount(s.model, 0) / 8;
  const double unit0 = StageParameterCount(s, 0) - layer;
  Expected<ComputeModel> cm = MakeComputeModel(s, ModelParams());
  ASSERT_TRUE(cm.ok());
  const double embed_bwd = cm->MemorySeconds(2 * 32 * 2048 * 4096 * 2.0);
  const double exposed = copy(unit0) + copy(layer) + copy(unit0) - embed_bwd;
  const Breakdown& b = r.step.breakdown;
  EXPECT_NEAR(b.offload_exposed_s, exposed, 0.01 * exposed);
  // Against optimizer offload alone (the same CPU step, whose copies come at
  // the end), the step differs by exactly the difference in exposed copies.
  const StepResult opt =
      RunScenario(scenario(R"(, "offload_optimizer": true)"), SimMode::kReduced).step;
  EXPECT_NEAR(opt.breakdown.optimizer_s, b.optimizer_s, 1e-9);
  EXPECT_NEAR(r.step.step_time_s - opt.step_time_s,
              b.offload_exposed_s - opt.breakdown.offload_exposed_s, 1e-6 * opt.step_time_s);
}

// With one parameter server for four nodes, its node's NIC carries every
// worker's gradients in and weights out: the step slows and the exposed
// data-parallel time grows, against a server on every node.
TEST(EngineTest, FewParameterServersAreABottleneck) {
  auto step = [](int servers) {
    Scenario s = Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 16},
        "cluster": {"instance": "p4d.24xlarge", "nodes": 4},
        "parallel": {"tp": 8, "dp_algorithm": "parameter_server", "parameter_servers": )" +
                       std::to_string(servers) + "}}");
    return RunScenario(s, SimMode::kReduced).step;
  };
  const StepResult one = step(1), four = step(4);
  EXPECT_GT(one.breakdown.dp_comm_exposed_s, 2 * four.breakdown.dp_comm_exposed_s);
  EXPECT_GT(one.step_time_s, four.step_time_s);
  EXPECT_EQ(one.simulated_gpus, 32);  // always simulated in full
}

// Horovod fuses, at each cycle, the gradients handed over since the last
// one: a long cycle fuses more layers into fewer, larger all-reduces, and a
// gradient waits up to a cycle before its reduction starts.
TEST(EngineTest, HorovodFusesWhatIsReadyEachCycle) {
  struct Run {
    int reductions = 0;
    double first_start_s = 1e9;
    StepResult step;
  };
  auto run = [](const std::string& cycle_ms) {
    Scenario s = Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 16},
        "cluster": {"instance": "p4d.24xlarge", "nodes": 2},
        "parallel": {"tp": 8, "dp_fusion": "horovod", "cycle_ms": )" +
                       cycle_ms + "}}");
    Run out;
    out.step = RunTraced(s).step;
    for (const TraceEvent& e : out.step.trace) {
      if (e.stream != kTrackDp) continue;
      ++out.reductions;
      out.first_start_s = std::min(out.first_start_s, e.start_s);
    }
    return out;
  };
  const Run short_cycle = run("0.01"), long_cycle = run("50"), huge_cycle = run("500");
  // 26 items of about 16 MB (24 layers, the embedding and the head over tp 8)
  // fit in 4 buffers of 128 MiB at the fewest.
  EXPECT_EQ(long_cycle.reductions, 4);
  EXPECT_GT(short_cycle.reductions, long_cycle.reductions);
  EXPECT_GT(long_cycle.step.breakdown.dp_comm_exposed_s,
            short_cycle.step.breakdown.dp_comm_exposed_s);
  // Nothing is reduced before the first cycle boundary.
  EXPECT_GE(huge_cycle.first_start_s, 0.5 - 1e-9);
}

// A synchronous step runs at the pace of its slowest GPU: one slow node in a
// data-parallel job slows every replica's step by about its factor.
TEST(EngineTest, AStragglerSlowsTheWholeSynchronousStep) {
  auto step = [](const std::string& stragglers) {
    Scenario s = Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 16,
        "recompute": "full"}, "cluster": {"instance": "p4d.24xlarge", "nodes": 2,
        "stragglers": )" +
                       stragglers + R"(}, "parallel": {"zero_stage": 1}})");
    return RunScenario(s, SimMode::kReduced).step;
  };
  const StepResult even = step("[]");
  const StepResult slow = step(R"([{"node": 1, "slowdown": 1.5}])");
  const double compute = even.breakdown.compute_s + even.breakdown.recompute_s;
  EXPECT_NEAR(slow.step_time_s - even.step_time_s, 0.5 * compute, 0.05 * compute);
}

// An input pipeline slower than the GPUs becomes the bottleneck: the step
// then takes the time the loader needs for its microbatches beyond the
// prefetched ones, and the breakdown shows it; a fast one costs nothing.
TEST(EngineTest, SlowInputPipelineBoundsTheStep) {
  auto run = [](double rate) {
    Scenario s = Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 64,
        "recompute": "full", "input_samples_per_s_per_node": )" +
                       std::to_string(rate) + R"(},
        "cluster": {"instance": "p4d.24xlarge"}, "parallel": {"zero_stage": 1}})");
    return RunScenario(s, SimMode::kReduced).step;
  };
  const StepResult fast = run(1e9);
  EXPECT_LT(fast.breakdown.data_wait_s, 1e-9);
  // 8 replicas on the node, 8 microbatches each, 2 prefetched: microbatch k
  // (k >= 2) is ready at (k - 1) x 8 samples / rate. At 4 samples/s the last
  // one arrives at 12 s, far later than the GPUs need it; then its forward and
  // backward, the DP exchange and the optimizer end the step.
  const StepResult slow = run(4);
  const Breakdown& b = slow.breakdown;
  const double last_microbatch = (b.compute_s + b.recompute_s) / 8;
  EXPECT_GT(b.data_wait_s, 0.5 * slow.step_time_s);
  EXPECT_NEAR(slow.step_time_s, 12.0 + last_microbatch + b.dp_comm_exposed_s + b.optimizer_s,
              0.01 * slow.step_time_s);
}

TEST(EngineTest, ConfigurationThatDoesNotFitIsNotSimulated) {
  Scenario s = Parse(R"({"model": "gpt3-175b", "training": {"global_batch": 8},
      "cluster": {"instance": "p4d.24xlarge"}, "parallel": {"tp": 8}})");
  Expected<SimulationResult> r = Simulate(s, SimulateOptions());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->memory.fits);
  EXPECT_FALSE(r->simulated);
  EXPECT_TRUE(ToJson(s, *r)["step_time_s"].is_null());
}

TEST(EngineTest, MoreDataParallelReplicasAddCommunicationNotCompute) {
  auto scenario = [](int nodes) {
    return Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": )" +
                 std::to_string(8 * nodes) +
                 R"(, "recompute": "full"}, "cluster": {"instance": "p4d.24xlarge", "nodes": )" +
                 std::to_string(nodes) + R"(}, "parallel": {"zero_stage": 1}})");
  };
  // Free overlap: the collectives' share of the GPU (ModelParams::comm_compute_share) would
  // slow the compute they run beside, and more of it with more replicas.
  SimulateOptions o;
  o.params.comm_compute_share = 0;
  Expected<SimulationResult> one = Simulate(scenario(1), o), four = Simulate(scenario(4), o);
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_NEAR(one->step.breakdown.compute_s, four->step.breakdown.compute_s, 1e-9);
  EXPECT_GT(four->step.step_time_s, one->step.step_time_s);
}

// A data-parallel collective takes comm_compute_share of the GPU it runs on
// (ModelParams): the compute beside it runs at 1 - share of its rate. Two
// layers on dp 8: the last one's gradients (40 MB, over the 25 MiB bucket)
// are all-reduced while the first layer's backward, far longer, computes; the
// first layer's few gradients go last, with no compute beside them. So the
// step grows by share x the first all-reduce's duration, and that growth is
// compute time, in both modes.
TEST(EngineTest, ACollectiveTakesItsShareOfTheComputeItOverlaps) {
  const Scenario s = Parse(R"({"model": {"layer_list": [
        {"forward_flops": 2e13, "params": 1e3, "activation_bytes": 1e4},
        {"forward_flops": 1e9, "params": 2e7, "activation_bytes": 1e4}]},
      "training": {"global_batch": 8, "precision": "bf16"},
      "cluster": {"instance": "p4d.24xlarge"}, "parallel": {"dp": 8}})");
  for (SimMode mode : {SimMode::kReduced, SimMode::kFull}) {
    SCOPED_TRACE(mode == SimMode::kFull ? "full" : "reduced");
    SimulateOptions o;
    o.mode = mode;
    o.trace = true;
    o.params.comm_compute_share = 0;
    Expected<SimulationResult> free = Simulate(s, o);
    o.params.comm_compute_share = 0.2;
    Expected<SimulationResult> shared = Simulate(s, o);
    ASSERT_TRUE(free.ok() && shared.ok());
    std::vector<double> reductions;  // rank 0's all-reduces, in order
    for (const TraceEvent& e : free->step.trace) {
      if (e.gpu == 0 && e.stream == kTrackDp) reductions.push_back(e.end_s - e.start_s);
    }
    ASSERT_EQ(reductions.size(), 2u);
    const double grown = 0.2 * reductions[0];
    EXPECT_NEAR(shared->step.step_time_s - free->step.step_time_s, grown, 1e-6 * grown);
    EXPECT_NEAR(shared->step.breakdown.compute_s - free->step.breakdown.compute_s, grown,
                1e-6 * grown);
  }
}

}  // namespace
}  // namespace trainsim::sim
