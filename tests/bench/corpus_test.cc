// The validation corpus (bench/data/validation/) loads, every training point
// is a scenario the parser accepts, and a malformed corpus is refused with a
// message naming the file and the point.
#include "bench/corpus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "sim/memory_model.h"
#include "tests/test_util.h"

namespace trainsim::bench {
namespace {

namespace fs = std::filesystem;

const std::string kDir = TRAINSIM_SOURCE_DIR "/bench/data/validation";

const Catalog& CorpusCatalog() {
  static const Catalog catalog = [] {
    Expected<Catalog> c = Catalog::LoadDefault(kDir + "/catalog.json");
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? std::move(*c) : Catalog();
  }();
  return catalog;
}

TEST(CorpusTest, LoadsWithFitAndEvaluatePartsFromManySources) {
  Expected<Corpus> corpus = LoadCorpus(kDir);
  ASSERT_TRUE(corpus.ok()) << corpus.status().message();
  std::set<std::string> sources;
  int evaluate = 0;
  for (const CorpusPoint& p : corpus->points) {
    sources.insert(p.source_id);
    evaluate += p.split == "evaluate";
  }
  EXPECT_GE(corpus->points.size(), 60u);
  EXPECT_GE(sources.size(), 8u);
  EXPECT_GT(evaluate, 0);
  EXPECT_FALSE(corpus->fits.empty());
}

// Fields a point may carry that the simulator cannot express yet: the point
// says what was run and is reported "not expressible" (docs/validation.md).
// Interleaved chunks that do not divide the layers (torchtitan's 126 layers over
// 8 x 2 chunks; an uneven split of plain stages is expressible).
const char* const kNotYetExpressible[] = {"parallel.pp * parallel.virtual_stages"};

bool NamesANotYetExpressibleField(const std::string& message) {
  for (const char* field : kNotYetExpressible) {
    if (message.find(field) != std::string::npos) return true;
  }
  return false;
}

TEST(CorpusTest, EveryTrainingPointIsAValidScenario) {
  Expected<Corpus> corpus = LoadCorpus(kDir);
  ASSERT_TRUE(corpus.ok()) << corpus.status().message();
  for (const CorpusPoint& p : corpus->points) {
    if (p.collective) {
      EXPECT_NE(CorpusCatalog().Find(p.collective->instance), nullptr) << p.id;
      continue;
    }
    Expected<Scenario> s = PointScenario(p, CorpusCatalog());
    EXPECT_TRUE(s.ok() || NamesANotYetExpressibleField(s.status().message()))
        << s.status().message();
  }
}

// Every published configuration ran, so the memory model must find that it fits (issue 42).
// These still do not, each with how far over and the mechanisms suspected, not yet confirmed
// (docs/validation.md section 0.4); the list only shrinks, and a point that fits must leave it.
const std::map<std::string, std::string> kRefusedThoughTheyRan = {
    {"dgxc-v24-paxml/gpt3-175b-fp8-128gpu",
     "86.6 GiB; the floor of what the source states is 72.2 GiB against XLA's 71.7 "
     "(docs/validation.md section 0.3.24): which of XLA's buffers share memory is unknown"},
    {"dgxc-v24-paxml/gpt3-175b-fp8-256gpu", "as the 128-GPU row"},
    {"dgxc-v24-paxml/gpt3-175b-fp8-512gpu", "as the 128-GPU row"},
    {"dgxc-v24-paxml/gpt3-175b-fp8-1024gpu", "as the 128-GPU row"},
    {"dgxc-v24-paxml/gpt3-175b-fp8-2048gpu", "as the 128-GPU row"},
};

TEST(CorpusTest, PublishedConfigurationsFit) {
  Expected<Corpus> corpus = LoadCorpus(kDir);
  ASSERT_TRUE(corpus.ok()) << corpus.status().message();
  std::set<std::string> refused;
  for (const CorpusPoint& p : corpus->points) {
    if (p.collective) continue;
    Expected<Scenario> s = PointScenario(p, CorpusCatalog());
    if (!s.ok()) continue;  // not expressible yet (EveryTrainingPointIsAValidScenario)
    const sim::MemoryBreakdown m = sim::ComputeMemory(*s);
    if (m.fits) continue;
    refused.insert(p.id);
    EXPECT_TRUE(kRefusedThoughTheyRan.count(p.id))
        << p.id << " ran as published but " << sim::DescribeShortfall(m, *s);
  }
  for (const auto& [id, why] : kRefusedThoughTheyRan) {
    EXPECT_TRUE(refused.count(id)) << id << " fits now: take it off the list";
  }
}

TEST(CorpusTest, FitPointsAreNamedByTheirParameter) {
  Expected<Corpus> corpus = LoadCorpus(kDir);
  ASSERT_TRUE(corpus.ok()) << corpus.status().message();
  for (const CorpusPoint& p : corpus->points) {
    if (p.split == "evaluate") {
      EXPECT_EQ(p.file.rfind("evaluate/", 0), 0u) << p.id;
    } else {
      EXPECT_EQ(p.file.rfind("fit/" + p.split, 0), 0u) << p.id << " in " << p.file;
    }
  }
}

TEST(CorpusTest, FamiliesSayStrategyGpuAndQuantity) {
  CorpusPoint zero3;
  zero3.scenario = nlohmann::json::parse(
      R"({"cluster": {"instance": "p4d.24xlarge"}, "parallel": {"zero_stage": 3}})");
  EXPECT_EQ(FamilyOf(zero3, CorpusCatalog()), "zero3 / A100 / throughput");
  CorpusPoint megatron;
  megatron.scenario =
      nlohmann::json::parse(R"({"cluster": {"instance": "dgx-h100"}, "parallel": {"tp": 8}})");
  EXPECT_EQ(FamilyOf(megatron, CorpusCatalog()), "tp-pp / H100 / throughput");
  CorpusPoint coll;
  coll.collective = CollectivePoint{"all_gather", 1 << 30, "p5.48xlarge", 4, 0, ""};
  EXPECT_EQ(FamilyOf(coll, CorpusCatalog()), "all_gather / EFA / busbw");
}

// A training point's prediction carries the simulated step and the planner's estimate of the
// same scenario (the estimator-against-simulator table of bench/accuracy): the step is the
// predicted quantity's, and the estimate is within 10% of it on a Megatron-LM row.
TEST(CorpusTest, PredictionCarriesTheStepAndTheEstimatorsStep) {
  Expected<Corpus> corpus = LoadCorpus(kDir);
  ASSERT_TRUE(corpus.ok()) << corpus.status().message();
  const CorpusPoint* row = nullptr;
  for (const CorpusPoint& p : corpus->points) {
    if (p.id == "narayanan2021-table1/gpt-1.7b") row = &p;
  }
  ASSERT_NE(row, nullptr);
  const Prediction pr = Predict(*row, CorpusCatalog(), ParamOverrides());
  ASSERT_TRUE(pr.error.empty()) << pr.error;
  ASSERT_GT(pr.step_s, 0);
  Expected<Scenario> s = PointScenario(*row, CorpusCatalog());
  ASSERT_TRUE(s.ok());
  const double tokens = static_cast<double>(s->training.global_batch) * s->model.seq_len;
  const double gpus = static_cast<double>(s->cluster.nodes) * s->instance.gpus;
  EXPECT_NEAR(pr.value, tokens / pr.step_s / gpus, 1e-9 * pr.value);  // tokens/s per GPU
  EXPECT_NEAR(pr.estimate_step_s / pr.step_s, 1.0, 0.10);
}

// A collective point whose source forced NCCL's ring (collective.algorithm "ring") is simulated
// as the ring. On 2 x p4d a ring all-reduce crosses each node's 4 x 100 Gb/s of EFA once per
// channel and direction with 2(n-1)/n x S per member, so its busbw is the node's network rate at
// the fitted efficiency (50 GB/s x e; protocol latency is 0.4% of a 1 GiB step), while NCCL's own
// choice there (the hierarchical pattern: S per node over the network) goes past it.
TEST(CorpusTest, AForcedRingIsSimulatedAsTheRing) {
  const InstanceType* p4d = CorpusCatalog().Find("p4d.24xlarge");
  ASSERT_NE(p4d, nullptr);
  ASSERT_TRUE(p4d->network_efficiency.has_value());
  const double node_rate_GBps = 4 * 100 / 8.0 * *p4d->network_efficiency;
  CorpusPoint point;
  point.quantity = Quantity::kBusbwGBps;
  point.collective = CollectivePoint{"all_reduce", 1 << 30, "p4d.24xlarge", 2, 0, "ring"};
  const Prediction ring = Predict(point, CorpusCatalog(), ParamOverrides());
  ASSERT_TRUE(ring.error.empty()) << ring.error;
  EXPECT_NEAR(ring.value / node_rate_GBps, 1.0, 0.03);
  point.collective->algorithm = "";
  const Prediction chosen = Predict(point, CorpusCatalog(), ParamOverrides());
  ASSERT_TRUE(chosen.error.empty()) << chosen.error;
  EXPECT_GT(chosen.value, 1.5 * node_rate_GBps);
}

TEST(CorpusTest, StepTimeErrorsAreThroughputErrors) {
  CorpusPoint p;
  p.quantity = Quantity::kStepTimeS;
  p.measured = 2.0;
  EXPECT_DOUBLE_EQ(ThroughputErrorPercent(p, 1.0), 100.0);  // predicted twice as fast
  p.quantity = Quantity::kTokensPerSPerGpu;
  EXPECT_DOUBLE_EQ(ThroughputErrorPercent(p, 1.0), -50.0);
}

// A corpus folder with one evaluate file holding `text`.
std::string CorpusWith(const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("trainsim-corpus-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "evaluate");
  std::ofstream(dir / "evaluate" / "x.json") << text;
  return dir.string();
}

TEST(CorpusTest, MalformedPointsAreRefusedWithFileAndPoint) {
  const std::string ok_point =
      R"({"id": "a", "metric": {"name": "step_time_s", "value": 1}, "scenario": {}})";
  const struct {
    std::string text, message;
  } cases[] = {
      {R"({"points": [{"metric": {"name": "step_time_s", "value": 1}}]})",
       "evaluate/x.json: points[0]: needs a string `id`"},
      {R"({"points": [)" + ok_point + "]}",
       "evaluate/x.json: points[0] (a): needs a `source` with an `id` (on the point or the file)"},
      {R"({"source": {"id": "s"}, "points": [{"id": "a", "metric": {"name": "mfu", "value": 0.5}}]})",
       "evaluate/x.json: points[0] (a): metric \"mfu\" is not comparable: give `compare` as "
       "tokens_per_s_per_gpu, tokens_per_s, samples_per_s, step_time_s or busbw_GBps"},
      {R"({"source": {"id": "s"}, "points": [{"id": "a", "metric": {"name": "busbw_GBps",
         "value": 9}, "collective": {"op": "broadcast", "bytes": 8, "instance": "p5.48xlarge",
         "nodes": 2}}]})",
       "evaluate/x.json: points[0] (a): collective.op \"broadcast\": expected all_reduce, "
       "all_gather or reduce_scatter"},
      {R"({"source": {"id": "s"}, "points": [{"id": "a", "metric": {"name": "busbw_GBps",
         "value": 9}, "collective": {"op": "all_reduce", "bytes": 8, "instance": "p5.48xlarge",
         "nodes": 2, "algorithm": "tree"}}]})",
       "evaluate/x.json: points[0] (a): collective.algorithm \"tree\": expected \"ring\" (the "
       "source set NCCL_ALGO=Ring), or leave it out for NCCL's own choice"},
      {R"({"source": {"id": "s"}, "points": [)" + ok_point + "," + ok_point + "]}",
       "evaluate/x.json: point id \"a\" appears twice"},
      {R"({"source": {"id": "s"}, "points": [{"id": "a", "metric": {"name": "step_time_s",
         "value": 0}, "scenario": {}}]})",
       "evaluate/x.json: points[0] (a): the measured value must be > 0"},
      {R"({"source": {"id": "s"}, "points": [{"id": "a", "metric": {"name": "busbw_GBps",
         "value": 9}, "collective": {"op": 5, "bytes": 8, "instance": "p5.48xlarge",
         "nodes": 2}}]})",
       "evaluate/x.json: points[0]: a field has the wrong type: [json.exception.type_error.302] "
       "type must be string, but is number"},
      {R"([1, 2])", "evaluate/x.json: needs a `points` array"},
  };
  for (const auto& c : cases) {
    Expected<Corpus> corpus = LoadCorpus(CorpusWith(c.text));
    ASSERT_FALSE(corpus.ok()) << c.text;
    EXPECT_EQ(corpus.status().message(), c.message);
  }
}

// A fit file names a known parameter and, for a GPU's or an instance's figure, its target; the
// simulator's own figures (one for every scenario) take none.
TEST(CorpusTest, MalformedFitFilesAreRefusedWithTheFile) {
  const struct {
    std::string text, message;
  } cases[] = {
      {R"({"parameter": "magic", "points": []})", "fit/y.json: unknown parameter \"magic\""},
      {R"({"parameter": "gemm_efficiency", "points": []})",
       "fit/y.json: `target` names the GPU(s) or instance the parameter belongs to"},
      {R"({"parameter": "comm_compute_share", "target": "A100-SXM4-80GB", "points": []})",
       "fit/y.json: `comm_compute_share` is one figure for every scenario: no `target`"},
  };
  for (const auto& c : cases) {
    const std::string dir = CorpusWith(R"({"points": []})");
    fs::create_directories(fs::path(dir) / "fit");
    std::ofstream(fs::path(dir) / "fit" / "y.json") << c.text;
    Expected<Corpus> corpus = LoadCorpus(dir);
    ASSERT_FALSE(corpus.ok()) << c.text;
    EXPECT_EQ(corpus.status().message(), c.message);
  }
}

TEST(CorpusTest, TrialValuesAreParsedByParameterAndTarget) {
  ParamOverrides o;
  ASSERT_TRUE(ParseOverride("hbm_efficiency=0.5", &o).ok());
  ASSERT_TRUE(ParseOverride("gemm_efficiency@A100-SXM4-80GB=0.7", &o).ok());
  ASSERT_TRUE(ParseOverride("comm_compute_share=0", &o).ok());
  EXPECT_EQ(o.values.at("hbm_efficiency").at(""), 0.5);
  EXPECT_EQ(o.values.at("gemm_efficiency").at("A100-SXM4-80GB"), 0.7);
  EXPECT_EQ(o.values.at("comm_compute_share").at(""), 0.0);
}

TEST(CorpusTest, BadTrialValuesAreRefusedWithWhatWasExpected) {
  const struct {
    std::string text, message;
  } cases[] = {
      {"hbm_efficiency",
       "--set hbm_efficiency: expected PARAMETER=VALUE or "
       "PARAMETER@TARGET=VALUE with a finite number >= 0"},
      {"hbm_efficiency=fast",
       "--set hbm_efficiency=fast: expected PARAMETER=VALUE or "
       "PARAMETER@TARGET=VALUE with a finite number >= 0"},
      {"hbm_efficiency=-1",
       "--set hbm_efficiency=-1: expected PARAMETER=VALUE or "
       "PARAMETER@TARGET=VALUE with a finite number >= 0"},
      {"hbm_efficiency=inf",
       "--set hbm_efficiency=inf: expected PARAMETER=VALUE or "
       "PARAMETER@TARGET=VALUE with a finite number >= 0"},
      {"magic=1", "--set magic=1: unknown parameter \"magic\""},
      {"hbm_efficiency@H100-SXM5-80GB=0.5",
       "--set hbm_efficiency@H100-SXM5-80GB=0.5: hbm_efficiency takes no @TARGET"},
      {"gemm_efficiency=0.5", "--set gemm_efficiency=0.5: gemm_efficiency needs @GPU or @INSTANCE"},
  };
  for (const auto& c : cases) {
    ParamOverrides o;
    const Status st = ParseOverride(c.text, &o);
    ASSERT_FALSE(st.ok()) << c.text;
    EXPECT_EQ(st.message(), c.message);
    EXPECT_TRUE(o.values.empty()) << c.text;
  }
}

}  // namespace
}  // namespace trainsim::bench

namespace trainsim::bench {
namespace {

// instance-catalog/error-bands.json is what `accuracy --write-bands` makes of today's corpus
// and catalog: a change to either (a new point, a refitted figure) without regenerating it
// fails here. Every sample is an evaluate point, keyed as its family says.
TEST(CorpusTest, TheErrorBandsFileIsOfTodaysCorpus) {
  Expected<ErrorBands> bands = LoadErrorBands(DefaultErrorBandsPath());
  ASSERT_TRUE(bands.ok()) << bands.status().message();
  Expected<std::string> now = BandInputsFingerprint(kDir, Catalog::DefaultDir());
  ASSERT_TRUE(now.ok()) << now.status().message();
  EXPECT_EQ(bands->corpus_fingerprint, *now)
      << "regenerate: ./build/bench/accuracy --jobs 2 --write-bands "
         "instance-catalog/error-bands.json";
  Expected<Corpus> corpus = LoadCorpus(kDir);
  ASSERT_TRUE(corpus.ok()) << corpus.status().message();
  std::map<std::string, const CorpusPoint*> by_id;
  for (const CorpusPoint& p : corpus->points) by_id[p.id] = &p;
  for (const BandSample& s : bands->samples) {
    auto it = by_id.find(s.id);
    ASSERT_NE(it, by_id.end()) << s.id;
    EXPECT_EQ(it->second->split, "evaluate") << s.id;
    EXPECT_EQ(it->second->source_id, s.source) << s.id;
    EXPECT_EQ(FamilyOf(*it->second, CorpusCatalog()),
              s.key.strategy + " / " + s.key.gpu + " / throughput")
        << s.id;
  }
}

}  // namespace
}  // namespace trainsim::bench
