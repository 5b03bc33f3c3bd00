// Scenario format v1: what each valid input parses to, the exact message of each input that
// must fail, and the ready scenario files.
#include "core/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/model_zoo.h"
#include "tests/test_util.h"

#ifndef TRAINSIM_SOURCE_DIR
#define TRAINSIM_SOURCE_DIR "."
#endif

namespace trainsim {
namespace {

Expected<Scenario> Parse(const std::string& text) {
  return ParseScenario(text, "x.json", test::BuiltinCatalog());
}

// One section per line, so that positions are easy to read off: the model value starts at
// 1:11, training at 2:14, cluster at 3:13 and parallel at 4:14.
std::string Doc(const std::string& model, const std::string& training, const std::string& cluster,
                const std::string& parallel = "{}") {
  return "{\"model\": " + model + ",\n \"training\": " + training + ",\n \"cluster\": " + cluster +
         ",\n \"parallel\": " + parallel + "}";
}

constexpr char kGpt3[] = R"("gpt3-175b")";
constexpr char kBatch1536[] = R"({"global_batch": 1536})";
constexpr char kP4dX128[] = R"({"instance": "p4d.24xlarge", "nodes": 128})";
constexpr char kP4d[] = R"({"instance": "p4d.24xlarge"})";
constexpr char kP3[] = R"({"instance": "p3.16xlarge"})";
constexpr char kTp8Pp8[] = R"({"tp": 8, "pp": 8})";
constexpr char kTwoLayers[] =
    R"({"layer_list": [{"name": "a", "forward_flops": 1e9, "params": 1000,)"
    R"( "activation_bytes": 2e6, "input_bytes": 5e5, "epilogue": "bn-add-relu"},)"
    R"( {"forward_flops": 2e9}], "sample_elems": 3})";
// Explicit dimensions that fit tp 8 and pp 8 (hidden 1024, 16 heads, 16 layers).
std::string Explicit(const std::string& extra) {
  return R"({"layers": 16, "hidden": 1024, "heads": 16, "seq_len": 512, "vocab": 1000)" + extra +
         "}";
}

std::string ModelSummary(const ModelSpec& m) {
  std::ostringstream os;
  os << m.name;
  if (m.kind == ModelKind::kLayerList) {
    os << " list of " << m.layer_list.size() << " sample_elems " << m.sample_elems;
    return os.str();
  }
  os << " L" << m.layers << " h" << m.hidden << " a" << m.heads << "/" << m.kv_heads << " f"
     << m.ffn_hidden << " s" << m.seq_len << " v" << m.vocab
     << (m.mlp == MlpKind::kSwiGlu ? " swiglu" : " gelu") << " bias" << m.bias << " tied"
     << m.tied_embeddings << " pos" << m.learned_positions << " tt" << m.token_types;
  return os.str();
}

// Every parsed field in one line, so that a table row states the whole expected result.
std::string Summary(const Scenario& s) {
  const TrainingConfig& t = s.training;
  const ClusterConfig& c = s.cluster;
  const ParallelConfig& p = s.parallel;
  std::ostringstream os;
  os << s.name << " | " << ModelSummary(s.model) << " | gb" << t.global_batch << " mb"
     << t.micro_batch << " " << ToString(t.precision) << " " << ToString(t.optimizer) << " "
     << ToString(t.recompute) << " sp" << t.sequence_parallel << " fa" << t.flash_attention << " | "
     << c.instance << " x" << c.nodes << " " << ToString(c.pricing) << " over" << c.oversubscription
     << " leaf" << c.nodes_per_leaf << " nics" << s.instance.nics << " profile=" << c.profile
     << " | tp" << p.tp << " pp" << p.pp << " dp" << p.dp << " z" << p.zero_stage << " "
     << ToString(p.schedule) << " " << ToString(p.dp_algorithm) << " bucket"
     << p.bucket_bytes / (1024 * 1024) << "MiB overlap" << p.overlap_dp;
  return os.str();
}

struct ValidCase {
  const char* what;
  std::string text;
  std::string expected;  // Summary() of the result
};

std::vector<ValidCase> ValidCases() {
  const std::string gpt3 = "L96 h12288 a96/96 f49152 s2048 v50257 gelu bias1 tied1 pos1 tt0";
  const std::string defaults = "on-demand over1 leaf32";
  return {
      {"preset with derived dp and every default", Doc(kGpt3, kBatch1536, kP4dX128, kTp8Pp8),
       "x | gpt3-175b " + gpt3 + " | gb1536 mb1 bf16 adam none sp0 fa0 | p4d.24xlarge x128 " +
           defaults + " nics4 profile= | tp8 pp8 dp16 z0 1f1b auto bucket25MiB overlap1"},
      {"no parallel section: pure data parallel",
       R"({"model": "llama2-7b", "training": {"global_batch": 64},)"
       R"( "cluster": {"instance": "p4d.24xlarge"}})",
       "x | llama2-7b L32 h4096 a32/32 f11008 s4096 v32000 swiglu bias0 tied0 pos0 tt0 | gb64 "
       "mb1 bf16 adam none sp0 fa1 | p4d.24xlarge x1 " +
           defaults + " nics4 profile= | tp1 pp1 dp8 z0 1f1b auto bucket25MiB overlap1"},
      {"preset with a seq_len override keeps grouped-query heads",
       Doc(R"({"preset": "llama2-70b", "seq_len": 2048})", R"({"global_batch": 64})",
           R"({"instance": "p5.48xlarge", "nodes": 16})", R"({"tp": 8, "pp": 4, "dp": 4})"),
       "x | llama2-70b L80 h8192 a64/8 f28672 s2048 v32000 swiglu bias0 tied0 pos0 tt0 | gb64 "
       "mb1 bf16 adam none sp0 fa1 | p5.48xlarge x16 " +
           defaults + " nics32 profile= | tp8 pp4 dp4 z0 1f1b auto bucket25MiB overlap1"},
      {"heads override on a multi-head preset moves kv_heads along",
       Doc(R"({"preset": "gpt3-175b", "heads": 64, "layers": 64})", kBatch1536, kP4dX128, kTp8Pp8),
       "x | gpt3-175b L64 h12288 a64/64 f49152 s2048 v50257 gelu bias1 tied1 pos1 tt0 | gb1536 "
       "mb1 bf16 adam none sp0 fa0 | p4d.24xlarge x128 " +
           defaults + " nics4 profile= | tp8 pp8 dp16 z0 1f1b auto bucket25MiB overlap1"},
      {"hidden override on a preset with ffn = 4 * hidden moves ffn_hidden along",
       Doc(R"({"preset": "gpt3-175b", "hidden": 6144})", kBatch1536, kP4dX128, kTp8Pp8),
       "x | gpt3-175b L96 h6144 a96/96 f24576 s2048 v50257 gelu bias1 tied1 pos1 tt0 | gb1536 "
       "mb1 bf16 adam none sp0 fa0 | p4d.24xlarge x128 " +
           defaults + " nics4 profile= | tp8 pp8 dp16 z0 1f1b auto bucket25MiB overlap1"},
      {"explicit dimensions with defaults", Doc(Explicit(""), R"({"global_batch": 8})", kP4d),
       "x | custom L16 h1024 a16/16 f4096 s512 v1000 gelu bias1 tied1 pos1 tt0 | gb8 mb1 bf16 "
       "adam none sp0 fa1 | p4d.24xlarge x1 " +
           defaults + " nics4 profile= | tp1 pp1 dp8 z0 1f1b auto bucket25MiB overlap1"},
      {"explicit dimensions, every field",
       Doc(Explicit(R"(, "name": "mini", "kv_heads": 4, "ffn_hidden": 2816, "mlp": "swiglu",)"
                    R"( "bias": false, "tied_embeddings": false, "learned_positions": false,)"
                    R"( "token_types": 2)"),
           R"({"global_batch": 8})", kP4d, R"({"tp": 4})"),
       "x | mini L16 h1024 a16/4 f2816 s512 v1000 swiglu bias0 tied0 pos0 tt2 | gb8 mb1 bf16 "
       "adam none sp0 fa1 | p4d.24xlarge x1 " +
           defaults + " nics4 profile= | tp4 pp1 dp2 z0 1f1b auto bucket25MiB overlap1"},
      {"layer list split over two pipeline stages",
       Doc(kTwoLayers, R"({"global_batch": 8, "precision": "fp16", "optimizer": "sgd"})", kP3,
           R"({"pp": 2})"),
       "x | custom list of 2 sample_elems 3 | gb8 mb1 fp16 sgd none sp0 fa0 | p3.16xlarge x1 " +
           defaults + " nics1 profile= | tp1 pp2 dp4 z0 1f1b auto bucket25MiB overlap1"},
      {"layer-list preset on V100 in fp32",
       Doc(R"("resnet50")", R"({"global_batch": 2048, "micro_batch": 256, "precision": "fp32"})",
           kP3),
       "x | resnet50 list of 54 sample_elems 150528 | gb2048 mb256 fp32 adam none sp0 fa0 | "
       "p3.16xlarge x1 " +
           defaults + " nics1 profile= | tp1 pp1 dp8 z0 1f1b auto bucket25MiB overlap1"},
      {"every optional field given",
       Doc(kGpt3,
           R"({"global_batch": 1536, "micro_batch": 2, "precision": "fp16", "optimizer": "sgd",)"
           R"( "recompute": "selective", "sequence_parallel": true, "flash_attention": true,)"
           R"( "samples": 1e6})",
           R"({"instance": "p4d.24xlarge", "nodes": 128, "pricing": "sagemaker-spot",)"
           R"( "oversubscription": 2.5, "nodes_per_leaf": 16, "nics": 2, "profile": "p.json"})",
           R"({"tp": 8, "pp": 8, "dp": 16, "zero_stage": 1, "schedule": "gpipe",)"
           R"( "dp_algorithm": "hierarchical", "bucket_mb": 50, "overlap_dp": false})"),
       "x | gpt3-175b " + gpt3 +
           " | gb1536 mb2 fp16 sgd selective sp1 fa1 | p4d.24xlarge x128 sagemaker-spot over2.5 "
           "leaf16 nics2 profile=p.json | tp8 pp8 dp16 z1 gpipe hierarchical bucket50MiB "
           "overlap0"},
      {"version and name",
       R"({"version": 1, "name": "run-1", "model": "bert-large", "training": {"global_batch": 32,)"
       R"( "precision": "tf32", "recompute": "full"}, "cluster": {"instance": "p4d.24xlarge",)"
       R"( "pricing": "spot"}, "parallel": {"dp_algorithm": "tree"}})",
       "run-1 | bert-large L24 h1024 a16/16 f4096 s512 v30522 gelu bias1 tied1 pos1 tt2 | gb32 "
       "mb1 tf32 adam full sp0 fa0 | p4d.24xlarge x1 spot over1 leaf32 nics4 profile= | tp1 pp1 "
       "dp8 z0 1f1b tree bucket25MiB overlap1"},
  };
}

TEST(ScenarioTest, ValidInputsParseToTheExpectedFields) {
  for (const ValidCase& c : ValidCases()) {
    SCOPED_TRACE(c.what);
    Expected<Scenario> s = Parse(c.text);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(Summary(*s), c.expected);
  }
}

// The zoo decides the default (core/model_zoo.cc, docs/formats.md): off for the presets whose
// published runs predate flash attention, on for Llama 2 and for explicit dimensions.
TEST(ScenarioTest, FlashAttentionDefaultsToTheModels) {
  const std::pair<std::string, bool> cases[] = {
      {R"("gpt-1.7b")", false},
      {R"("gpt-1t")", false},
      {R"("gpt3-175b")", false},
      {R"("bert-large")", false},
      {R"("llama2-7b")", true},
      {R"("llama2-13b")", true},
      {R"("llama2-70b")", true},
      {R"("resnet50")", false},
      {R"({"preset": "llama2-7b", "seq_len": 2048})", true},
      {R"({"preset": "gpt-1.7b", "seq_len": 4096})", false},
      {Explicit(""), true},
      {kTwoLayers, false},
  };
  for (const auto& [model, expected] : cases) {
    SCOPED_TRACE(model);
    Expected<Scenario> s = Parse(Doc(model, R"({"global_batch": 8})", kP4d));
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->training.flash_attention, expected);
    // Given, the field wins (false is allowed for every model, true for transformers).
    Expected<Scenario> off =
        Parse(Doc(model, R"({"global_batch": 8, "flash_attention": false})", kP4d));
    ASSERT_TRUE(off.ok()) << off.status().message();
    EXPECT_FALSE(off->training.flash_attention);
  }
  Expected<Scenario> on =
      Parse(Doc(kGpt3, R"({"global_batch": 8, "flash_attention": true})", kP4d));
  ASSERT_TRUE(on.ok()) << on.status().message();
  EXPECT_TRUE(on->training.flash_attention);
}

struct FailCase {
  const char* what;
  std::string text;
  std::string message;  // exact
};

std::string ZooNames() {
  std::string names;
  for (const ModelSpec& m : ModelZoo()) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

std::string CatalogNames() {
  std::string names;
  for (const std::string& n : test::BuiltinCatalog().Names())
    names += (names.empty() ? "" : ", ") + n;
  return names;
}

std::vector<FailCase> JsonAndStructureCases() {
  return {
      {"malformed JSON", R"({"model": "gpt3-175b",})",
       "x.json:1:23: invalid JSON: expected a string key after ',', got '}' (no trailing commas in "
       "JSON)"},
      {"empty input", "", "x.json:1:1: invalid JSON: expected a value, got end of input"},
      {"document not an object", "[1]", "x.json:1:1: the document: expected an object, got array"},
      {"missing model", R"({"training": {"global_batch": 8}, "cluster": {}})",
       "x.json:1:1: missing required field model"},
      {"missing training", R"({"model": "gpt3-175b", "cluster": {}})",
       "x.json:1:1: missing required field training"},
      {"missing cluster", R"({"model": "gpt3-175b", "training": {}})",
       "x.json:1:1: missing required field cluster"},
      {"misspelt top-level field", R"({"model": "gpt3-175b", "trainig": {}, "cluster": {}})",
       "x.json:1:24: unknown field trainig (known: version, name, model, training, cluster, "
       "parallel, search, sweep)"},
      {"unsupported version", R"({"version": 2, "model": "x", "training": {}, "cluster": {}})",
       "x.json:1:13: version: this trainsim reads scenario format version 1, got 2"},
      {"empty name", R"({"name": "", "model": "x", "training": {}, "cluster": {}})",
       "x.json:1:10: name: expected a non-empty string"},
      {"name not a string", R"({"name": 7, "model": "x", "training": {}, "cluster": {}})",
       "x.json:1:10: name: expected a string, got 7"},
      {"training not an object", Doc(kGpt3, "[]", kP4dX128),
       "x.json:2:14: training: expected an object, got array"},
      {"cluster not an object", Doc(kGpt3, kBatch1536, R"("p4d.24xlarge")"),
       "x.json:3:13: cluster: expected an object, got string"},
      {"parallel not an object", Doc(kGpt3, kBatch1536, kP4dX128, "8"),
       "x.json:4:14: parallel: expected an object, got number"},
  };
}

std::vector<FailCase> ModelCases() {
  return {
      {"model of the wrong type", Doc("42", kBatch1536, kP4dX128),
       "x.json:1:11: model: expected a preset name or an object, got 42"},
      {"unknown preset", Doc(R"("gpt-9")", kBatch1536, kP4dX128),
       "x.json:1:11: model: unknown model \"gpt-9\"; known: " + ZooNames()},
      {"unknown preset in the object form", Doc(R"({"preset": "gpt-9"})", kBatch1536, kP4dX128),
       "x.json:1:22: model.preset: unknown model \"gpt-9\"; known: " + ZooNames()},
      {"unknown field in the preset form",
       Doc(R"({"preset": "llama2-70b", "mlp": "gelu"})", kBatch1536, kP4dX128),
       "x.json:1:36: unknown field model.mlp (known: preset, layers, hidden, heads, kv_heads, "
       "ffn_hidden, seq_len, vocab, capacity_factor)"},
      {"dimension override on a layer-list preset",
       Doc(R"({"preset": "resnet50", "layers": 3})", kBatch1536, kP3),
       "x.json:1:44: model.layers: resnet50 is a layer-list model; only transformer presets take "
       "dimension overrides"},
      {"unknown field in the explicit form", Doc(Explicit(R"(, "depth": 3)"), "{}", kP4d),
       "x.json:1:86: unknown field model.depth (known: layers, hidden, heads, kv_heads, "
       "ffn_hidden, seq_len, vocab, name, mlp, bias, tied_embeddings, learned_positions, "
       "token_types, experts, experts_per_token, expert_ffn_hidden, shared_experts, moe_every, "
       "dense_layers, q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, "
       "capacity_factor, router_bias)"},
      {"top-k above the expert count",
       Doc(Explicit(R"(, "experts": 8, "experts_per_token": 9)"), "{}", kP4d),
       "x.json:1:121: model.experts_per_token = 9 exceeds model.experts = 8"},
      {"experts without top-k", Doc(Explicit(R"(, "experts": 8)"), "{}", kP4d),
       "x.json:1:97: model.experts: needs model.experts_per_token (the experts each token goes "
       "through, top-k)"},
      {"an expert field on a dense model",
       Doc(Explicit(R"(, "capacity_factor": 1.25)"), "{}", kP4d),
       "x.json:1:105: model.capacity_factor: only for a mixture of experts (give model.experts)"},
      {"negative capacity factor",
       Doc(R"({"preset": "mixtral-8x7b", "capacity_factor": -1})", kBatch1536, kP4dX128),
       "x.json:1:57: model.capacity_factor: expected a number >= 0, got -1"},
      {"no MoE layer left",
       Doc(Explicit(R"(, "experts": 8, "experts_per_token": 2, "dense_layers": 16)"), "{}", kP4d),
       "x.json:1:140: model.dense_layers = 16 leaves no MoE layer of the 16 layers"},
      {"MLA without its head sizes", Doc(Explicit(R"(, "kv_lora_rank": 16)"), "{}", kP4d),
       "x.json:1:102: model.kv_lora_rank: needs model.qk_nope_head_dim, model.qk_rope_head_dim "
       "and model.v_head_dim"},
      {"an MLA field without MLA", Doc(Explicit(R"(, "v_head_dim": 16)"), "{}", kP4d),
       "x.json:1:100: model.v_head_dim: only for multi-head latent attention (give "
       "model.kv_lora_rank)"},
      {"missing dimension",
       Doc(R"({"layers": 2, "hidden": 64, "heads": 4, "seq_len": 8})", "{}", kP4d),
       "x.json:1:11: missing required field model.vocab"},
      {"zero layers", Doc(R"({"layers": 0})", "{}", kP4d),
       "x.json:1:22: model.layers: expected an integer in [1, 16777216], got 0"},
      {"negative override", Doc(R"({"preset": "gpt3-175b", "heads": -8})", "{}", kP4d),
       "x.json:1:44: model.heads: expected an integer in [1, 16777216], got -8"},
      {"hidden not divisible by heads",
       Doc(R"({"layers": 2, "hidden": 1000, "heads": 16, "seq_len": 8, "vocab": 10})", "{}", kP4d),
       "x.json:1:50: model.hidden = 1000 is not divisible by model.heads = 16"},
      {"heads not divisible by kv_heads", Doc(Explicit(R"(, "kv_heads": 5)"), "{}", kP4d),
       "x.json:1:98: model.heads = 16 is not divisible by model.kv_heads = 5"},
      {"mlp not a known kind", Doc(Explicit(R"(, "mlp": "relu")"), "{}", kP4d),
       "x.json:1:93: model.mlp: expected one of gelu, swiglu, got \"relu\""},
      {"empty layer list", Doc(R"({"layer_list": []})", "{}", kP3),
       "x.json:1:26: model.layer_list: expected a non-empty array of layers, got an empty array"},
      {"layer list not an array", Doc(R"({"layer_list": {}})", "{}", kP3),
       "x.json:1:26: model.layer_list: expected a non-empty array of layers, got {}"},
      {"layer without forward_flops", Doc(R"({"layer_list": [{"name": "a"}]})", "{}", kP3),
       "x.json:1:27: missing required field model.layer_list[0].forward_flops"},
      {"unknown field in a layer",
       Doc(R"({"layer_list": [{"forward_flops": 1}, {"forward_flops": 1, "flops": 2}]})", "{}",
           kP3),
       "x.json:1:70: unknown field model.layer_list[1].flops (known: name, forward_flops, "
       "params, activation_bytes, input_bytes, epilogue)"},
      {"negative layer params",
       Doc(R"({"layer_list": [{"forward_flops": 1, "params": -1}]})", "{}", kP3),
       "x.json:1:58: model.layer_list[0].params: expected a number >= 0, got -1"},
      {"negative layer input_bytes",
       Doc(R"({"layer_list": [{"forward_flops": 1, "input_bytes": -2}]})", "{}", kP3),
       "x.json:1:63: model.layer_list[0].input_bytes: expected a number >= 0, got -2"},
      {"unknown layer epilogue",
       Doc(R"({"layer_list": [{"forward_flops": 1, "epilogue": "relu"}]})", "{}", kP3),
       "x.json:1:60: model.layer_list[0].epilogue: expected one of none, bn, bn-relu, "
       "bn-add-relu, got \"relu\""},
  };
}

std::vector<FailCase> TrainingCases() {
  return {
      {"missing global_batch", Doc(kGpt3, R"({"micro_batch": 1})", kP4dX128),
       "x.json:2:14: missing required field training.global_batch"},
      {"global_batch as a string", Doc(kGpt3, R"({"global_batch": "1536"})", kP4dX128),
       "x.json:2:31: training.global_batch: expected an integer >= 1, got \"1536\""},
      {"zero global_batch", Doc(kGpt3, R"({"global_batch": 0})", kP4dX128),
       "x.json:2:31: training.global_batch: expected an integer >= 1, got 0"},
      {"global_batch 2^62", Doc(kGpt3, R"({"global_batch": 4611686018427387904})", kP4dX128),
       "x.json:2:31: training.global_batch: expected an integer >= 1 and below 9e15 (larger "
       "integers are not exact in a JSON number), got 4611686018427387904"},
      {"fractional micro_batch", Doc(kGpt3, R"({"global_batch": 8, "micro_batch": 1.5})", kP4dX128),
       "x.json:2:49: training.micro_batch: expected an integer >= 1, got 1.5"},
      {"unknown precision", Doc(kGpt3, R"({"global_batch": 8, "precision": "bf17"})", kP4dX128),
       "x.json:2:47: training.precision: expected one of fp32, tf32, fp16, bf16, fp8, got "
       "\"bf17\""},
      {"unknown fp8 scaling",
       Doc(kGpt3, R"({"global_batch": 8, "precision": "fp8", "fp8_scaling": "blockwise"})",
           kP4dX128),
       "x.json:2:69: training.fp8_scaling: expected one of tensorwise, rowwise, got "
       "\"blockwise\""},
      {"fp8 scaling without fp8",
       Doc(kGpt3, R"({"global_batch": 8, "precision": "bf16", "fp8_scaling": "rowwise"})",
           kP4dX128),
       "x.json:2:70: training.fp8_scaling: applies to training.precision \"fp8\" only (it is "
       "\"bf16\")"},
      {"unknown attention kernel",
       Doc(kGpt3, R"({"global_batch": 8, "flash_attention": true, "attention_kernel": "fa3"})",
           kP4dX128),
       "x.json:2:79: training.attention_kernel: expected one of flash, cudnn, got \"fa3\""},
      {"recompute_every without full recompute",
       Doc(kGpt3, R"({"global_batch": 8, "recompute": "selective", "recompute_every": 2})",
           kP4dX128),
       "x.json:2:79: training.recompute_every: applies with training.recompute \"full\" only (it "
       "is \"selective\")"},
      {"recompute_modules without selective recompute",
       Doc(kGpt3, R"({"global_batch": 8, "recompute": "full", "recompute_modules": ["mlp"]})",
           kP4dX128),
       "x.json:2:76: training.recompute_modules: applies with training.recompute \"selective\" "
       "only (it is \"full\")"},
      {"recompute_modules not an array",
       Doc(kGpt3, R"({"global_batch": 8, "recompute": "selective", "recompute_modules": "mlp"})",
           kP4dX128),
       "x.json:2:81: training.recompute_modules: expected a non-empty array of module names, "
       "got \"mlp\""},
      {"recompute_modules empty",
       Doc(kGpt3, R"({"global_batch": 8, "recompute": "selective", "recompute_modules": []})",
           kP4dX128),
       "x.json:2:81: training.recompute_modules: expected a non-empty array of module names, "
       "got an empty array"},
      {"unknown recompute module",
       Doc(kGpt3,
           R"({"global_batch": 8, "recompute": "selective", "recompute_modules": ["mlp", "ffn"]})",
           kP4dX128),
       "x.json:2:89: training.recompute_modules[1]: expected one of \"core_attn\", \"layernorm\", "
       "\"mla_up_proj\", \"mlp\", \"moe\", \"moe_act\", \"shared_experts\", got \"ffn\""},
      {"recompute module twice",
       Doc(kGpt3,
           R"({"global_batch": 8, "recompute": "selective", "recompute_modules": ["mlp", "mlp"]})",
           kP4dX128),
       "x.json:2:89: training.recompute_modules[1]: \"mlp\" is listed twice"},
      {"mla_up_proj without MLA",
       Doc(kGpt3,
           R"({"global_batch": 8, "recompute": "selective", "recompute_modules": ["mla_up_proj"]})",
           kP4dX128),
       "x.json:2:82: training.recompute_modules[0]: \"mla_up_proj\" needs a model with "
       "multi-latent attention (model.kv_lora_rank); gpt3-175b has none"},
      {"moe on a dense model",
       Doc(kGpt3, R"({"global_batch": 8, "recompute": "selective", "recompute_modules": ["moe"]})",
           kP4dX128),
       "x.json:2:82: training.recompute_modules[0]: \"moe\" needs a model with MoE layers "
       "(model.experts); gpt3-175b has none"},
      {"selective_op without flash attention",
       Doc(kGpt3, R"({"global_batch": 8, "recompute": "selective_op", "flash_attention": false})",
           kP4dX128),
       "x.json:2:47: training.recompute: \"selective_op\" keeps no attention scores, so it needs "
       "training.flash_attention true"},
      {"MaxText's remat policy without flash attention",
       Doc(kGpt3,
           R"({"global_batch": 8, "recompute": "save_dot_except_mlp", "flash_attention": false})",
           kP4dX128),
       "x.json:2:47: training.recompute: \"save_dot_except_mlp\" keeps no attention scores, so it "
       "needs training.flash_attention true"},
      {"recompute_every below 1",
       Doc(kGpt3, R"({"global_batch": 8, "recompute": "full", "recompute_every": 0})", kP4dX128),
       "x.json:2:74: training.recompute_every: expected an integer >= 1, got 0"},
      {"unknown gradient reduction dtype",
       Doc(kGpt3, R"({"global_batch": 8, "grad_reduce_dtype": "fp16"})", kP4dX128),
       "x.json:2:55: training.grad_reduce_dtype: expected one of weights, fp32, got \"fp16\""},
      {"attention kernel without flash attention",
       Doc(kGpt3, R"({"global_batch": 8, "attention_kernel": "cudnn"})", kP4dX128),
       "x.json:2:54: training.attention_kernel: applies with training.flash_attention true only "
       "(flash attention is off for this scenario)"},
      {"sequence_parallel not a boolean",
       Doc(kGpt3, R"({"global_batch": 8, "sequence_parallel": "yes"})", kP4dX128),
       "x.json:2:55: training.sequence_parallel: expected true or false, got \"yes\""},
      {"unknown training field", Doc(kGpt3, R"({"global_bach": 8})", kP4dX128),
       "x.json:2:15: unknown field training.global_bach (known: global_batch, micro_batch, "
       "precision, optimizer, optimizer_state, recompute, recompute_every, recompute_modules, "
       "sequence_parallel, "
       "dropout, flash_attention, "
       "attention_kernel, grad_reduce_dtype, fp8_scaling, memory_format, tokens, samples, epochs, "
       "dataset_samples, input_samples_per_s_per_node, "
       "input_prefetch_microbatches, "
       "offload_activations, offload_optimizer, offload_params, moe_imbalance)"},
      {"flash_attention not a boolean",
       Doc(kGpt3, R"({"global_batch": 8, "flash_attention": "yes"})", kP4dX128),
       "x.json:2:53: training.flash_attention: expected true or false, got \"yes\""},
      {"flash_attention with a layer list",
       Doc(kTwoLayers, R"({"global_batch": 8, "precision": "fp16", "flash_attention": true})", kP3),
       "x.json:2:74: training.flash_attention needs a transformer model (a layer-list model has "
       "no attention)"},
      {"tokens and samples both given",
       Doc(kGpt3, R"({"global_batch": 8, "tokens": 3e11, "samples": 1e6})", kP4dX128),
       "x.json:2:61: training.samples: give at most one of training.tokens, training.samples "
       "and training.epochs (training.tokens is given too)"},
      {"epochs without dataset_samples",
       Doc(kGpt3, R"({"global_batch": 8, "epochs": 3})", kP4dX128),
       "x.json:2:44: training.epochs: needs training.dataset_samples (samples in one epoch)"},
      {"dataset_samples without epochs",
       Doc(kGpt3, R"({"global_batch": 8, "dataset_samples": 1000})", kP4dX128),
       "x.json:2:53: training.dataset_samples: only used with training.epochs"},
      {"zero epochs",
       Doc(kGpt3, R"({"global_batch": 8, "epochs": 0, "dataset_samples": 10})", kP4dX128),
       "x.json:2:44: training.epochs: expected a number > 0, got 0"},
      {"tokens for a layer-list model",
       Doc(R"("resnet50")", R"({"global_batch": 8, "tokens": 1e9})", kP3),
       "x.json:2:44: training.tokens: a layer-list model has no tokens; give training.samples or "
       "training.epochs"},
      {"activation offload of a layer-list model",
       Doc(R"("resnet50")",
           R"({"global_batch": 8, "precision": "fp16", "offload_activations": true})", kP3),
       "x.json:2:78: training.offload_activations needs a transformer model (layer-list models "
       "are not split into offloadable layers)"},
      {"parameter offload without ZeRO-3",
       Doc(kGpt3, R"({"global_batch": 1536, "offload_params": true})", kP4dX128, kTp8Pp8),
       "x.json:2:55: training.offload_params needs parallel.zero_stage = 3 (got 0): the "
       "parameters offloaded are ZeRO-3 / FSDP FULL_SHARD shards"},
      {"parameter offload with ZeRO-2",
       Doc(kGpt3, R"({"global_batch": 1536, "offload_params": true})", kP4dX128,
           R"({"tp": 8, "pp": 8, "zero_stage": 2})"),
       "x.json:2:55: training.offload_params needs parallel.zero_stage = 3 (got 2): the "
       "parameters offloaded are ZeRO-3 / FSDP FULL_SHARD shards"},
      {"parameter offload with the optimizer kept on the GPU",
       Doc(kGpt3, R"({"global_batch": 16, "offload_params": true, "offload_optimizer": false})",
           kP4dX128, R"({"tp": 8, "pp": 8, "zero_stage": 3})"),
       "x.json:2:80: training.offload_optimizer = false contradicts training.offload_params = "
       "true: with the parameters in host memory the optimizer step runs on the CPU (leave "
       "offload_optimizer out or set it to true)"},
      {"parameter offload not a boolean",
       Doc(kGpt3, R"({"global_batch": 8, "offload_params": 1})", kP4dX128),
       "x.json:2:52: training.offload_params: expected true or false, got 1"},
      {"precision the GPU lacks",
       Doc(R"("resnet50")", R"({"global_batch": 8, "precision": "bf16"})", kP3),
       "x.json:2:47: training.precision: bf16 is not supported by V100-SXM2-16GB (no peak "
       "figure in the catalog)"},
      {"default precision the GPU lacks", Doc(R"("resnet50")", R"({"global_batch": 8})", kP3),
       "x.json:2:14: training.precision: bf16 (the default) is not supported by V100-SXM2-16GB "
       "(no peak figure in the catalog)"},
      {"global_batch not divisible by dp * micro_batch",
       Doc(kGpt3, R"({"global_batch": 1000, "micro_batch": 3})", kP4dX128, kTp8Pp8),
       "x.json:2:31: training.global_batch = 1000 is not divisible by parallel.dp * "
       "training.micro_batch = 16 * 3 = 48"},
  };
}

// A p4d cluster of two nodes with `stragglers` as written.
std::string WithStragglers(const std::string& stragglers) {
  return Doc(kGpt3, kBatch1536,
             R"({"instance": "p4d.24xlarge", "nodes": 2, "stragglers": )" + stragglers + "}");
}

std::vector<FailCase> ClusterCases() {
  return {
      {"stragglers not an array", WithStragglers("3"),
       "x.json:3:68: cluster.stragglers: expected an array, got number"},
      {"straggler with node and gpu", WithStragglers(R"([{"node": 1, "gpu": 3, "slowdown": 2}])"),
       "x.json:3:69: cluster.stragglers[0]: give exactly one of node and gpu"},
      {"straggler node out of range", WithStragglers(R"([{"node": 2, "slowdown": 2}])"),
       "x.json:3:78: cluster.stragglers[0].node: expected an integer in [0, 1], got 2"},
      {"straggler faster than the rest", WithStragglers(R"([{"gpu": 3, "slowdown": 0.5}])"),
       "x.json:3:92: cluster.stragglers[0].slowdown: expected a number >= 1, got 0.5"},
      {"straggler without slowdown", WithStragglers(R"([{"gpu": 3}])"),
       "x.json:3:69: missing required field cluster.stragglers[0].slowdown"},
      {"missing instance", Doc(kGpt3, kBatch1536, R"({"nodes": 2})"),
       "x.json:3:13: missing required field cluster.instance"},
      {"unknown instance", Doc(kGpt3, kBatch1536, R"({"instance": "p9.xlarge"})"),
       "x.json:3:26: cluster.instance: unknown instance type \"p9.xlarge\"; known: " +
           CatalogNames()},
      {"instance not a string", Doc(kGpt3, kBatch1536, R"({"instance": 5})"),
       "x.json:3:26: cluster.instance: expected a string, got 5"},
      {"zero nodes", Doc(kGpt3, kBatch1536, R"({"instance": "p4d.24xlarge", "nodes": 0})"),
       "x.json:3:51: cluster.nodes: expected an integer in [1, 1000000], got 0"},
      {"unknown pricing",
       Doc(kGpt3, kBatch1536, R"({"instance": "p4d.24xlarge", "pricing": "reserved"})"),
       "x.json:3:53: cluster.pricing: expected one of on-demand, spot, sagemaker, sagemaker-spot, "
       "capacity-block, training-plan, savings-plan-1y, savings-plan-3y, spot-fallback, "
       "spot-elastic, got "
       "\"reserved\""},
      {"oversubscription below 1",
       Doc(kGpt3, kBatch1536, R"({"instance": "p4d.24xlarge", "oversubscription": 0.5})"),
       "x.json:3:62: cluster.oversubscription: expected a number >= 1, got 0.5"},
      {"zero NICs", Doc(kGpt3, kBatch1536, R"({"instance": "p4d.24xlarge", "nics": 0})"),
       "x.json:3:50: cluster.nics: expected an integer >= 1, got 0"},
      {"unknown cluster field",
       Doc(kGpt3, kBatch1536, R"({"instance": "p4d.24xlarge", "gpus": 8})"),
       "x.json:3:42: unknown field cluster.gpus (known: instance, nodes, pricing, "
       "oversubscription, nodes_per_leaf, leaves_per_pod, pod_oversubscription, fabric, nics, "
       "profile, stragglers)"},
      {"unknown fabric", Doc(kGpt3, kBatch1536, R"({"instance": "p4d.24xlarge", "fabric": "x"})"),
       "x.json:3:52: cluster.fabric: unknown fabric \"x\"; known: aws-ultracluster, "
       "dgx-superpod-b200, dgx-superpod-h100"},
      {"pod oversubscription below 1",
       Doc(kGpt3, kBatch1536,
           R"({"instance": "p4d.24xlarge", "leaves_per_pod": 4, "pod_oversubscription": 0})"),
       "x.json:3:87: cluster.pod_oversubscription: expected a number >= 1, got 0"},
      {"pod oversubscription without pods",
       Doc(kGpt3, kBatch1536, R"({"instance": "p4d.24xlarge", "pod_oversubscription": 2})"),
       "x.json:3:66: cluster.pod_oversubscription: needs cluster.leaves_per_pod (the leaves under "
       "one pod's spines)"},
  };
}

constexpr char kMixtral[] = R"({"preset": "mixtral-8x7b", "seq_len": 4096})";

std::vector<FailCase> ParallelCases() {
  return {
      {"cp not splitting the sequence",
       Doc(R"({"preset": "llama3-8b", "seq_len": 1020})", R"({"global_batch": 1024})", kP4dX128,
           R"({"tp": 8, "cp": 4})"),
       "x.json:4:30: parallel.cp = 4 does not split model.seq_len = 1020 into 2 * cp = 8 equal "
       "chunks (the causal load balancing of ring attention)"},
      {"cp without flash attention",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 8, "cp": 2})"),
       "x.json:4:39: parallel.cp = 2 needs training.flash_attention (ring attention runs the "
       "flash kernels on each key/value chunk)"},
      {"cp and tp and pp over the GPUs",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 8, "cp": 2, "dp": 16})"),
       "x.json:4:48: parallel.tp * parallel.pp * parallel.cp * parallel.dp = 8 * 8 * 2 * 16 = 2048 "
       "does not equal the cluster's 1024 GPUs (128 x p4d.24xlarge with 8 GPUs)"},
      {"ep on a dense model", Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 8, "ep": 2})"),
       "x.json:4:39: parallel.ep = 2 needs a mixture-of-experts model (model.experts); "
       "gpt3-175b is dense"},
      {"ep not dividing the experts", Doc(kMixtral, kBatch1536, kP4dX128, R"({"tp": 8, "ep": 3})"),
       "x.json:4:30: parallel.ep = 3 does not divide model.experts = 8"},
      {"ep not dividing dp",
       Doc(kMixtral, kBatch1536, R"({"instance": "p4d.24xlarge", "nodes": 6})",
           R"({"tp": 8, "ep": 4})"),
       "x.json:4:30: parallel.ep = 4 does not divide parallel.dp = 6 (expert-parallel groups are "
       "made of data-parallel ranks; parallel.expert_tp 1 lets them span the tensor-parallel "
       "ranks)"},
      {"ep not dividing a stage's GPUs with whole experts",
       Doc(kMixtral, R"({"global_batch": 1536, "sequence_parallel": true})",
           R"({"instance": "p4d.24xlarge", "nodes": 3})",
           R"({"tp": 2, "pp": 4, "ep": 4, "expert_tp": 1})"),
       "x.json:4:39: parallel.ep = 4 does not divide the 6 GPUs of a pipeline stage (tp x dp x "
       "cp; with expert_tp 1 the expert-parallel groups are consecutive GPUs)"},
      {"expert_tp neither 1 nor tp",
       Doc(kMixtral, kBatch1536, kP4dX128, R"({"tp": 8, "ep": 2, "expert_tp": 4})"),
       "x.json:4:46: parallel.expert_tp = 4 is not modelled: 1 (each expert whole on its GPU) or "
       "parallel.tp = 8 (the default)"},
      {"whole experts under TP without sequence parallelism",
       Doc(kMixtral, kBatch1536, kP4dX128, R"({"tp": 8, "ep": 16, "expert_tp": 1})"),
       "x.json:4:47: parallel.expert_tp = 1 under tensor parallelism needs "
       "training.sequence_parallel = true (each TP rank dispatches its own share of the tokens, "
       "as Megatron-Core requires)"},
      {"expert_tp on a dense model",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "expert_tp": 1})"),
       "x.json:4:37: parallel.expert_tp: only for a mixture-of-experts model (model.experts)"},
      {"ep with FSDP1's ZeRO-3",
       Doc(kMixtral, kBatch1536, kP4dX128, R"({"tp": 8, "ep": 2, "zero_stage": 3})"),
       "x.json:4:30: parallel.ep = 2 with parallel.zero_stage 3 is not modelled: expert "
       "parallelism takes zero_stage 0 or 1 (Megatron-Core's distributed optimizer) or 3 with "
       "parallel.zero_impl fsdp2 (torchtitan's FSDP2, the experts sharded over the GPUs that "
       "hold them)"},
      {"imbalance on a dense model",
       Doc(kGpt3, R"({"global_batch": 1536, "moe_imbalance": 1.3})", kP4dX128, kTp8Pp8),
       "x.json:2:54: training.moe_imbalance: only for a mixture-of-experts model (model.experts)"},
      {"fractional tp", Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 3.5})"),
       "x.json:4:21: parallel.tp: expected an integer in [1, 1048576], got 3.5"},
      {"zero pp", Doc(kGpt3, kBatch1536, kP4dX128, R"({"pp": 0})"),
       "x.json:4:21: parallel.pp: expected an integer in [1, 1048576], got 0"},
      {"negative dp", Doc(kGpt3, kBatch1536, kP4dX128, R"({"dp": -1})"),
       "x.json:4:21: parallel.dp: expected an integer in [1, 1048576], got -1"},
      {"zero stage 4", Doc(kGpt3, kBatch1536, kP4dX128, R"({"zero_stage": 4})"),
       "x.json:4:29: parallel.zero_stage: expected an integer in [0, 3], got 4"},
      {"parameter servers without the algorithm",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 8, "parameter_servers": 2})"),
       "x.json:4:54: parallel.parameter_servers applies only to parallel.dp_algorithm = "
       "\"parameter_server\""},
      {"parameter server with ZeRO",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"tp": 8, "pp": 8, "zero_stage": 1, "dp_algorithm": "parameter_server"})"),
       "x.json:4:47: parallel.zero_stage = 1 cannot be combined with parallel.dp_algorithm = "
       "\"parameter_server\" (servers hold the whole model; use zero_stage 0)"},
      {"more parameter servers than nodes",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"tp": 8, "pp": 8, "dp_algorithm": "parameter_server", "parameter_servers": 129})"),
       "x.json:4:90: parallel.parameter_servers = 129 exceeds the cluster's 128 nodes (servers "
       "run on the nodes' hosts)"},
      {"interleaved without virtual stages",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"pp": 8, "schedule": "interleaved"})"),
       "x.json:4:36: parallel.schedule = \"interleaved\" needs pp >= 2 and virtual_stages >= 2 "
       "(got pp = 8, virtual_stages = 1)"},
      {"virtual stages without interleaving",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"pp": 8, "virtual_stages": 2})"),
       "x.json:4:42: parallel.virtual_stages applies only to parallel.schedule = \"interleaved\""},
      {"more chunks than layers",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"pp": 8, "schedule": "interleaved", "virtual_stages": 13})"),
       "x.json:4:69: parallel.pp * parallel.virtual_stages = 8 * 13 = 104 model chunks, more than "
       "model.layers = 96 (each chunk needs a layer)"},
      {"more chunks than layers with the embedding and loss counted",
       Doc(R"({"preset": "gpt3-175b", "layers": 29})", kBatch1536, kP4dX128,
           R"({"pp": 4, "schedule": "interleaved", "virtual_stages": 8,
               "split_counts_embedding": true, "split_counts_loss": true})"),
       "x.json:4:69: parallel.pp * parallel.virtual_stages = 4 * 8 = 32 model chunks, more than "
       "model.layers = 29 plus the 2 the split counts for the embedding and loss (each chunk needs "
       "a layer)"},
      {"embedding counted in a layer list's split",
       Doc(R"("resnet50")", R"({"global_batch": 2048, "micro_batch": 256, "precision": "fp16"})",
           R"({"instance": "p3.16xlarge"})", R"({"pp": 2, "split_counts_embedding": true})"),
       "x.json:4:50: parallel.split_counts_embedding: applies to a transformer model (a layer "
       "list has no embedding or loss layer to count)"},
      {"microbatches not a multiple of pp",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"pp": 8, "dp": 128, "tp": 1, "schedule": "interleaved", "virtual_stages": 2})"),
       "x.json:2:31: the interleaved schedule needs the microbatches per pipeline (12) to be a "
       "multiple of parallel.pp = 8"},
      {"unknown dp algorithm", Doc(kGpt3, kBatch1536, kP4dX128, R"({"dp_algorithm": "ps"})"),
       "x.json:4:31: parallel.dp_algorithm: expected one of ring, tree, hierarchical, auto, "
       "parameter_server, got "
       "\"ps\""},
      {"zero bucket", Doc(kGpt3, kBatch1536, kP4dX128, R"({"bucket_mb": 0})"),
       "x.json:4:28: parallel.bucket_mb: expected a number > 0, got 0"},
      {"unknown parallel field", Doc(kGpt3, kBatch1536, kP4dX128, R"({"sp": 2})"),
       "x.json:4:15: unknown field parallel.sp (known: tp, pp, dp, zero_stage, zero_impl, "
       "shard_group, ep, expert_tp, "
       "cp, schedule, virtual_stages, split_counts_embedding, split_counts_loss, dp_algorithm, "
       "parameter_servers, dp_fusion, bucket_mb, "
       "cycle_ms, overlap_dp, reshard_after_forward, overlap_param_gather, tp_overlap, "
       "pp_scatter_gather)"},
      {"shard group with ZeRO-1",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 8, "zero_stage": 1, "shard_group": 4})"),
       "x.json:4:65: parallel.shard_group needs parallel.zero_stage 2 or 3 (got 1): it is the "
       "group that shards gradients and optimizer state (stage 2) or also the weights (stage 3)"},
      {"shard group that does not divide dp",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 8, "zero_stage": 3, "shard_group": 3})"),
       "x.json:4:65: parallel.shard_group = 3 must divide parallel.dp = 16 (the data-parallel "
       "group is split into equal shard groups)"},
      {"shard group beyond dp",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"tp": 8, "pp": 8, "zero_stage": 2, "shard_group": 32})"),
       "x.json:4:65: parallel.shard_group = 32 must divide parallel.dp = 16 (the data-parallel "
       "group is split into equal shard groups)"},
      {"shard group of one",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 8, "zero_stage": 3, "shard_group": 1})"),
       "x.json:4:65: parallel.shard_group = 1 shards nothing: use parallel.zero_stage 0 (plain "
       "data parallelism), or a group of 2 or more"},
      {"tp overlap without tensor parallelism",
       Doc(kGpt3, R"({"global_batch": 1536, "sequence_parallel": true})", kP4dX128,
           R"({"tp": 1, "pp": 8, "tp_overlap": true})"),
       "x.json:4:47: parallel.tp_overlap needs parallel.tp > 1"},
      {"tp overlap without sequence parallelism",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 8, "tp_overlap": true})"),
       "x.json:4:47: parallel.tp_overlap needs training.sequence_parallel = true (the overlapped "
       "collectives are its all-gathers and reduce-scatters)"},
      {"a ZeRO-3 implementation without ZeRO-3",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"tp": 8, "pp": 8, "zero_stage": 1, "zero_impl": "deepspeed"})"),
       "x.json:4:63: parallel.zero_impl names the implementation of ZeRO-3: it needs "
       "parallel.zero_stage 3 (got 1; ZeRO-1/2 are modelled as Megatron-Core's distributed "
       "optimizer)"},
      {"an unknown ZeRO-3 implementation",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"tp": 8, "pp": 8, "zero_stage": 3, "zero_impl": "fairscale"})"),
       "x.json:4:63: parallel.zero_impl: expected one of fsdp1, fsdp2, deepspeed, xla, got "
       "\"fairscale\""},
      {"keeping gathered weights without ZeRO-3",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"tp": 8, "pp": 8, "zero_stage": 1, "reshard_after_forward": false})"),
       "x.json:4:75: parallel.reshard_after_forward = false needs parallel.zero_stage 3 (got 1): "
       "it keeps ZeRO-3's gathered weights"},
      {"keeping gathered weights in DeepSpeed",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"tp": 8, "pp": 8, "zero_stage": 3, "zero_impl": "deepspeed",)"
           R"( "reshard_after_forward": false})"),
       "x.json:4:101: parallel.reshard_after_forward = false is PyTorch FSDP's (parallel.zero_impl "
       "fsdp1 or fsdp2; got deepspeed)"},
      {"resharding FSDP2 under a pipeline",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"tp": 8, "pp": 8, "zero_stage": 3, "zero_impl": "fsdp2",)"
           R"( "reshard_after_forward": true})"),
       "x.json:4:97: parallel.reshard_after_forward = true with parallel.zero_impl fsdp2 and "
       "parallel.pp > 1 is not modelled: FSDP2 under a pipeline is modelled as "
       "torch.distributed.pipelining and torchtitan run it, keeping each layer gathered for the "
       "step (leave the field out or set it false)"},
      {"weight gather overlap without a sharded optimizer",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 8, "overlap_param_gather": true})"),
       "x.json:4:57: parallel.overlap_param_gather needs parallel.zero_stage 1 or 2 (got 0): it "
       "overlaps the gather of the weights the sharded optimizer updated"},
      {"cycle time without horovod",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 8, "cycle_ms": 2})"),
       "x.json:4:45: parallel.cycle_ms applies only to parallel.dp_fusion = \"horovod\""},
      {"zero cycle time",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"tp": 8, "pp": 8, "dp_fusion": "horovod", "cycle_ms": 0})"),
       "x.json:4:69: parallel.cycle_ms: expected a number > 0, got 0"},
      {"horovod with ZeRO",
       Doc(kGpt3, kBatch1536, kP4dX128,
           R"({"tp": 8, "pp": 8, "zero_stage": 1, "dp_fusion": "horovod"})"),
       "x.json:4:63: parallel.dp_fusion = \"horovod\" all-reduces whole gradients: it needs "
       "zero_stage 0 and a collective dp_algorithm (not parameter_server)"},
      {"tp does not divide heads", Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 5})"),
       "x.json:4:21: parallel.tp = 5 does not divide model.heads = 96"},
      {"tp does not divide kv_heads", Doc(R"("llama2-70b")", kBatch1536, kP4dX128, R"({"tp": 16})"),
       "x.json:4:21: parallel.tp = 16 does not divide model.kv_heads = 8"},
      {"tp does not divide ffn_hidden",
       Doc(Explicit(R"(, "ffn_hidden": 1000)"), R"({"global_batch": 8})", kP4d, R"({"tp": 16})"),
       "x.json:4:21: parallel.tp = 16 does not divide model.ffn_hidden = 1000"},
      {"pp beyond the layers", Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 1, "pp": 128})"),
       "x.json:4:30: parallel.pp = 128 exceeds model.layers = 96"},
      {"tp on a layer-list model", Doc(kTwoLayers, R"({"global_batch": 8})", kP4d, R"({"tp": 2})"),
       "x.json:4:21: parallel.tp = 2 needs a transformer model; tensor parallelism does not "
       "apply to a layer-list model (use tp = 1)"},
      {"pp beyond the layers of a layer list",
       Doc(kTwoLayers, R"({"global_batch": 8})", kP4d, R"({"pp": 4})"),
       "x.json:4:21: parallel.pp = 4 exceeds the 2 layers of the layer-list model"},
      {"tp * pp * dp not the GPU count",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 8, "dp": 4})"),
       "x.json:4:39: parallel.tp * parallel.pp * parallel.dp = 8 * 8 * 4 = 256 does not equal "
       "the cluster's 1024 GPUs (128 x p4d.24xlarge with 8 GPUs)"},
      {"tp * pp does not divide the GPU count",
       Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 8, "pp": 3})"),
       "x.json:4:30: parallel.tp * parallel.pp = 24 does not divide the cluster's 1024 GPUs"},
      {"tp alone larger than the cluster", Doc(kGpt3, kBatch1536, kP4d, R"({"tp": 16})"),
       "x.json:4:21: parallel.tp * parallel.pp = 16 does not divide the cluster's 8 GPUs"},
  };
}

void ExpectAllFail(const std::vector<FailCase>& cases) {
  for (const FailCase& c : cases) {
    SCOPED_TRACE(c.what);
    Expected<Scenario> s = Parse(c.text);
    ASSERT_FALSE(s.ok()) << "parsed: " << Summary(*s);
    EXPECT_EQ(s.status().code(), Status::Code::kInvalidInput);
    EXPECT_EQ(s.status().message(), c.message);
  }
}

TEST(ScenarioTest, MalformedOrMisshapenDocumentsFail) { ExpectAllFail(JsonAndStructureCases()); }
TEST(ScenarioTest, BadModelsFailAtTheValue) { ExpectAllFail(ModelCases()); }
TEST(ScenarioTest, BadTrainingFailsAtTheValue) { ExpectAllFail(TrainingCases()); }
TEST(ScenarioTest, BadClustersFailAtTheValue) { ExpectAllFail(ClusterCases()); }

TEST(ScenarioTest, StragglersSlowTheirGpus) {
  Expected<Scenario> s =
      ParseScenario(WithStragglers(R"([{"node": 1, "slowdown": 1.25}, {"gpu": 9, "slowdown": 2}])"),
                    "x.json", test::BuiltinCatalog());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->Slowdown(0), 1.0);
  EXPECT_EQ(s->Slowdown(8), 1.25);
  EXPECT_EQ(s->Slowdown(9), 2.0);
  EXPECT_EQ(s->Slowdown(15), 1.25);
}
TEST(ScenarioTest, ImpossibleParallelismFailsAtTheValue) { ExpectAllFail(ParallelCases()); }

TEST(ScenarioTest, NameDefaultsToTheFileStem) {
  const std::string text = Doc(kGpt3, kBatch1536, kP4dX128, kTp8Pp8);
  EXPECT_EQ(ParseScenario(text, "dir/gpt3-175b-p4d.json", test::BuiltinCatalog())->name,
            "gpt3-175b-p4d");
  EXPECT_EQ(ParseScenario(text, "<string>", test::BuiltinCatalog())->name, "scenario");
  EXPECT_EQ(ParseScenario(text, "", test::BuiltinCatalog())->name, "scenario");
}

TEST(ScenarioTest, TotalWorkIsKept) {
  Expected<Scenario> tokens =
      Parse(Doc(kGpt3, R"({"global_batch": 1536, "tokens": 3e11})", kP4dX128, kTp8Pp8));
  ASSERT_TRUE(tokens.ok()) << tokens.status().message();
  EXPECT_EQ(tokens->training.tokens, 3e11);
  EXPECT_EQ(tokens->training.samples, 0);
  Expected<Scenario> epochs =
      Parse(Doc(R"("resnet50")",
                R"({"global_batch": 64, "epochs": 90, "dataset_samples": 1281167,)"
                R"( "precision": "fp16"})",
                kP3));
  ASSERT_TRUE(epochs.ok()) << epochs.status().message();
  EXPECT_EQ(epochs->training.epochs, 90);
  EXPECT_EQ(epochs->training.dataset_samples, 1281167);
  EXPECT_EQ(epochs->training.tokens, 0);
}

TEST(ScenarioTest, NicOverrideReplacesTheCatalogCount) {
  Expected<Scenario> plain = Parse(Doc(kGpt3, kBatch1536, kP4dX128, kTp8Pp8));
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_FALSE(plain->cluster.nics.has_value());
  EXPECT_EQ(plain->instance.nics, test::BuiltinCatalog().Find("p4d.24xlarge")->nics);
  Expected<Scenario> two = Parse(
      Doc(kGpt3, kBatch1536, R"({"instance": "p4d.24xlarge", "nodes": 128, "nics": 2})", kTp8Pp8));
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_EQ(two->cluster.nics, 2);
  EXPECT_EQ(two->instance.nics, 2);
  EXPECT_EQ(two->instance.gpus_per_nic(), 4);
}

// A catalog fabric fills the fabric fields the file leaves out, where it has
// a figure; the file's own values win.
TEST(ScenarioTest, CatalogFabricFillsTheFieldsNotGiven) {
  Expected<Scenario> b200 =
      Parse(Doc(kGpt3, kBatch1536,
                R"({"instance": "p4d.24xlarge", "nodes": 128, "fabric": "dgx-superpod-b200",)"
                R"( "nodes_per_leaf": 16})",
                kTp8Pp8));
  ASSERT_TRUE(b200.ok()) << b200.status().message();
  EXPECT_EQ(b200->cluster.nodes_per_leaf, 16);
  EXPECT_EQ(b200->cluster.leaves_per_pod, 4);
  EXPECT_EQ(b200->cluster.oversubscription, 1.0);
  EXPECT_EQ(b200->cluster.pod_oversubscription, 1.0);
  // Nulls in the catalog leave the scenario's values.
  Expected<Scenario> aws = Parse(Doc(kGpt3, kBatch1536,
                                     R"({"instance": "p4d.24xlarge", "nodes": 128,)"
                                     R"( "fabric": "aws-ultracluster", "oversubscription": 2})",
                                     kTp8Pp8));
  ASSERT_TRUE(aws.ok()) << aws.status().message();
  EXPECT_EQ(aws->cluster.nodes_per_leaf, 32);
  EXPECT_EQ(aws->cluster.leaves_per_pod, 0);
  EXPECT_EQ(aws->cluster.oversubscription, 2.0);
}

TEST(ScenarioTest, LayerListKeepsEachLayer) {
  Expected<Scenario> s = Parse(Doc(kTwoLayers, R"({"global_batch": 8})", kP4d));
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::vector<LayerSpec>& layers = s->model.layer_list;
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].name, "a");
  EXPECT_EQ(layers[0].forward_flops, 1e9);
  EXPECT_EQ(layers[0].params, 1000);
  EXPECT_EQ(layers[0].activation_bytes, 2e6);
  EXPECT_EQ(layers[0].input_bytes, 5e5);
  EXPECT_EQ(layers[0].epilogue, Epilogue::kBnAddRelu);
  EXPECT_EQ(layers[1].name, "layer1");
  EXPECT_EQ(layers[1].params, 0);
  EXPECT_EQ(layers[1].input_bytes, 0);
  EXPECT_EQ(layers[1].epilogue, Epilogue::kBnRelu);  // the default
  EXPECT_EQ(s->model.sample_elems, 3);
}

// FSDP's CPUOffload(offload_params=True) runs the optimizer on the CPU too:
// parameter offload implies optimizer offload; neither is on by default.
TEST(ScenarioTest, ParameterOffloadImpliesOptimizerOffload) {
  Expected<Scenario> plain = Parse(Doc(kGpt3, kBatch1536, kP4dX128, kTp8Pp8));
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_FALSE(plain->training.offload_params);
  EXPECT_FALSE(plain->training.offload_optimizer);
  for (const char* training : {R"({"global_batch": 1536, "offload_params": true})",
                               R"({"global_batch": 1536, "offload_params": true,)"
                               R"( "offload_optimizer": true})"}) {
    Expected<Scenario> s =
        Parse(Doc(kGpt3, training, kP4dX128, R"({"tp": 8, "pp": 8, "zero_stage": 3})"));
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_TRUE(s->training.offload_params);
    EXPECT_TRUE(s->training.offload_optimizer);
  }
}

TEST(ScenarioTest, DerivedQuantities) {
  Expected<Scenario> s = Parse(Doc(kGpt3, R"({"global_batch": 1536, "micro_batch": 2})", kP4dX128,
                                   R"({"tp": 8, "pp": 8, "bucket_mb": 0.5})"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->total_gpus(), 1024);
  EXPECT_EQ(s->parallel.dp, 16);
  EXPECT_EQ(s->microbatches_per_pipeline(), 48);
  EXPECT_EQ(s->parallel.bucket_bytes, 512 * 1024);
}

TEST(ScenarioTest, OverriddenPresetDropsThePublishedTotal) {
  Expected<Scenario> s =
      Parse(Doc(R"({"preset": "llama2-70b", "seq_len": 2048})", R"({"global_batch": 64})", kP4d));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->model.published_params, 0);
  Expected<Scenario> plain =
      Parse(Doc(R"({"preset": "llama2-70b"})", R"({"global_batch": 64})", kP4d));
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->model.published_params, FindModel("llama2-70b")->published_params);
}

TEST(ScenarioTest, ToStringUsesTheFileSpelling) {
  EXPECT_STREQ(ToString(Precision::kFp32), "fp32");
  EXPECT_STREQ(ToString(Precision::kTf32), "tf32");
  EXPECT_STREQ(ToString(Precision::kFp16), "fp16");
  EXPECT_STREQ(ToString(Precision::kBf16), "bf16");
  EXPECT_STREQ(ToString(Precision::kFp8), "fp8");
  EXPECT_STREQ(ToString(Schedule::kGpipe), "gpipe");
  EXPECT_STREQ(ToString(Schedule::k1F1B), "1f1b");
  EXPECT_STREQ(ToString(Schedule::kInterleaved), "interleaved");
  EXPECT_STREQ(ToString(Recompute::kNone), "none");
  EXPECT_STREQ(ToString(Recompute::kSelective), "selective");
  EXPECT_STREQ(ToString(Recompute::kFull), "full");
  EXPECT_STREQ(ToString(DpAlgorithm::kRing), "ring");
  EXPECT_STREQ(ToString(DpAlgorithm::kTree), "tree");
  EXPECT_STREQ(ToString(DpAlgorithm::kHierarchical), "hierarchical");
  EXPECT_STREQ(ToString(DpAlgorithm::kAuto), "auto");
  EXPECT_STREQ(ToString(Pricing::kOnDemand), "on-demand");
  EXPECT_STREQ(ToString(Pricing::kSpot), "spot");
  EXPECT_STREQ(ToString(Pricing::kSagemaker), "sagemaker");
  EXPECT_STREQ(ToString(Pricing::kSagemakerSpot), "sagemaker-spot");
  EXPECT_STREQ(ToString(Optimizer::kSgd), "sgd");
  EXPECT_STREQ(ToString(Optimizer::kAdam), "adam");
}

// ---- files -------------------------------------------------------------------------------

std::string ScenarioDir() { return std::string(TRAINSIM_SOURCE_DIR) + "/scenarios"; }

TEST(ScenarioFileTest, MissingFileIsNotFound) {
  Expected<Scenario> s = LoadScenarioFile("/nonexistent/x.json", test::BuiltinCatalog());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(s.status().message(),
            "/nonexistent/x.json: cannot open file: No such file or directory");
}

TEST(ScenarioFileTest, ErrorsNameTheFilePath) {
  const std::string path = ::testing::TempDir() + "/scenario_test_bad.json";
  std::ofstream(path) << Doc(kGpt3, kBatch1536, kP4dX128, R"({"tp": 5})");
  Expected<Scenario> s = LoadScenarioFile(path, test::BuiltinCatalog());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), path + ":4:21: parallel.tp = 5 does not divide model.heads = 96");
  std::filesystem::remove(path);
}

TEST(ScenarioFileTest, ProfilePathIsRelativeToTheScenarioFile) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "scenario_test_profile";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "run.json").string();
  std::ofstream(path) << Doc(
      kGpt3, kBatch1536,
      R"({"instance": "p4d.24xlarge", "nodes": 128, "profile": "../profiles/p4d.json"})", kTp8Pp8);
  // The profile is looked for beside the scenario's folder (and loaded: here
  // it is missing, which is an error naming the resolved path).
  Expected<Scenario> s = LoadScenarioFile(path, test::BuiltinCatalog());
  ASSERT_FALSE(s.ok());
  const std::string resolved = (dir.parent_path() / "profiles/p4d.json").lexically_normal();
  EXPECT_EQ(s.status().message().rfind(resolved + ": cannot open file", 0), 0u)
      << s.status().message();
  std::filesystem::remove_all(dir);
}

TEST(ScenarioFileTest, EveryReadyScenarioParses) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ScenarioDir())) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    Expected<Scenario> s = LoadScenarioFile(entry.path().string(), test::BuiltinCatalog());
    EXPECT_TRUE(s.ok()) << s.status().message();
    ++files;
  }
  EXPECT_GE(files, 5);
}

TEST(ScenarioFileTest, DefaultScenarioIsGpt3On128P4d) {
  Expected<Scenario> s =
      LoadScenarioFile(ScenarioDir() + "/gpt3-175b-p4d.json", test::BuiltinCatalog());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(Summary(*s),
            "gpt3-175b-p4d | gpt3-175b L96 h12288 a96/96 f49152 s2048 v50257 gelu bias1 tied1 "
            "pos1 tt0 | gb1536 mb1 bf16 adam full sp0 fa0 | p4d.24xlarge x128 on-demand over1 "
            "leaf32 nics4 profile= | tp8 pp8 dp16 z1 1f1b auto bucket25MiB overlap1");
  EXPECT_EQ(s->training.tokens, 300e9);
}

}  // namespace
}  // namespace trainsim
