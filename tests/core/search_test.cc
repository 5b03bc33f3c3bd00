// The scenario's "search" and "sweep" sections: what valid inputs parse to, the exact message
// of each input that must fail, and how a sweep grid expands into scenarios.
#include "core/search.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/sweep_grid.h"
#include "tests/test_util.h"

#ifndef TRAINSIM_SOURCE_DIR
#define TRAINSIM_SOURCE_DIR "."
#endif

namespace trainsim {
namespace {

std::string CatalogNames() {
  std::string names;
  for (const std::string& n : test::BuiltinCatalog().Names())
    names += (names.empty() ? "" : ", ") + n;
  return names;
}

// GPT-3 on 128 p4d, then one more top-level section on line 5: ` "search": ` puts the
// section's first character at column 12, ` "sweep": ` at column 11.
std::string WithSection(const std::string& key, const std::string& value) {
  return "{\"model\": \"gpt3-175b\",\n"
         " \"training\": {\"global_batch\": 1536},\n"
         " \"cluster\": {\"instance\": \"p4d.24xlarge\", \"nodes\": 128},\n"
         " \"parallel\": {\"tp\": 8, \"pp\": 8},\n"
         " \"" +
         key + "\": " + value + "}";
}
std::string WithSearch(const std::string& search) { return WithSection("search", search); }
std::string WithSweep(const std::string& sweep) { return WithSection("sweep", sweep); }

Expected<PlanningScenario> Parse(const std::string& text) {
  return ParsePlanningScenario(text, "x.json", test::BuiltinCatalog());
}

template <typename T>
std::string List(const std::vector<T>& items) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if constexpr (std::is_enum_v<T>) {
      os << (i ? "," : "") << ToString(items[i]);
    } else {
      os << (i ? "," : "") << items[i];
    }
  }
  os << "]";
  return os.str();
}

std::string Optional(const std::optional<double>& v) {
  std::ostringstream os;
  if (v) os << *v;
  return v ? os.str() : "-";
}

// Every field of the section in one line, so that a table row states the whole result.
std::string Summary(const SearchConfig& c) {
  std::ostringstream os;
  os << "instances=" << List(c.instances) << " nodes=" << c.min_nodes << ".." << c.max_nodes
     << " pricing=" << List(c.pricing) << " spot" << c.spot_allowed << " tp=" << List(c.tp)
     << " pp=" << List(c.pp) << " mb=" << List(c.micro_batch) << " zero=" << List(c.zero_stages)
     << " vs=" << List(c.virtual_stages) << " max_pp" << c.max_pp
     << " recompute=" << List(c.recompute) << " schedules=" << List(c.schedules)
     << " | budget=" << Optional(c.budget_usd) << " deadline=" << Optional(c.deadline_hours) << " "
     << ToString(c.objective) << " w" << c.time_weight << " confirm" << c.confirm_top
     << (c.prefer_validated ? "" : " by-prediction") << " | dataset=" << Optional(c.dataset_bytes)
     << " storage=" << Optional(c.storage_GBps) << " ckpt=" << Optional(c.checkpoint_bytes)
     << " interval=" << Optional(c.checkpoint_interval_s) << " prov=" << Optional(c.provisioning_s)
     << " restart=" << Optional(c.restart_s)
     << " interruptions=" << Optional(c.spot_interruptions_per_month);
  if (c.spot_capacity_chance || c.spot_capacity_retry_s || c.spot_reclaim_wave_nodes != 1) {
    os << " capacity=" << Optional(c.spot_capacity_chance) << "/"
       << Optional(c.spot_capacity_retry_s) << "/" << c.spot_reclaim_wave_nodes;
  }
  if (c.reservation_gap_s) os << " gap=" << *c.reservation_gap_s;
  if (!c.prices.empty()) {
    os << " prices=[";
    for (const auto& [name, p] : c.prices) {
      os << name << ":" << Optional(p.capacity_block_usd_hr) << "/"
         << Optional(p.training_plan_usd_hr) << "/" << Optional(p.savings_plan_1y_usd_hr) << "/"
         << Optional(p.savings_plan_3y_usd_hr);
    }
    os << "]";
  }
  os << " notice" << c.checkpoint_on_notice << " trials" << c.trials << " seed" << c.seed;
  return os.str();
}

const std::string kDefaultSpace =
    "instances=[] nodes=1..64 pricing=[] spot1 tp=[] pp=[] mb=[] zero=[] vs=[] max_pp64 "
    "recompute=[] schedules=[]";
const std::string kDefaultJob =
    "dataset=- storage=- ckpt=- interval=- prov=- restart=- interruptions=- notice0 trials2000 "
    "seed1";

struct ValidCase {
  const char* what;
  std::string search;
  std::string expected;  // Summary() of the result
};

std::vector<ValidCase> ValidCases() {
  const std::string no_goal = " | budget=- deadline=- min-cost w0.5 confirm100 | ";
  return {
      {"empty section: every default", "{}", kDefaultSpace + no_goal + kDefaultJob},
      {"every field",
       R"({"instances": ["p5.48xlarge", "p4d.24xlarge"], "nodes": {"min": 2, "max": 256},)"
       R"( "pricing": ["on-demand", "spot"], "spot_allowed": true, "tp": [8, 2, 4],)"
       R"( "pp": [1, 2], "micro_batch": [1], "zero_stages": [1, 3], "virtual_stages": [2],)"
       R"( "max_pp": 16, "recompute": ["full", "none"], "schedules": ["gpipe", "interleaved"],)"
       R"( "budget_usd": 2e6, "deadline_hours": 720, "objective": "min-time",)"
       R"( "confirm_top": 5, "prefer_validated": false, "dataset_bytes": 1.2e12,)"
       R"( "storage_GBps": 10,)"
       R"( "checkpoint_bytes": 2.1e12, "checkpoint_interval_s": 3600, "provisioning_s": 900,)"
       R"( "restart_s": 300, "spot_interruptions_per_month": 0.05, "reservation_gap_s": 7200,)"
       R"( "spot_capacity_chance": 0.2, "spot_capacity_retry_s": 900, "spot_reclaim_wave_nodes": 4,)"
       R"( "prices": {"p5.48xlarge": {"capacity_block_usd_hr": 31.5, "training_plan_usd_hr": 33,)"
       R"( "savings_plan_1y_usd_hr": 40, "savings_plan_3y_usd_hr": 25}},)"
       R"( "checkpoint_on_notice": true, "trials": 500, "seed": 42})",
       "instances=[p5.48xlarge,p4d.24xlarge] nodes=2..256 pricing=[on-demand,spot] spot1 "
       "tp=[8,2,4] pp=[1,2] mb=[1] zero=[1,3] vs=[2] max_pp16 recompute=[full,none] "
       "schedules=[gpipe,interleaved] | budget=2e+06 deadline=720 min-time w0.5 confirm5 "
       "by-prediction | "
       "dataset=1.2e+12 storage=10 ckpt=2.1e+12 interval=3600 prov=900 restart=300 "
       "interruptions=0.05 capacity=0.2/900/4 gap=7200 prices=[p5.48xlarge:31.5/33/40/25] notice1 "
       "trials500 seed42"},
      {"a weight of time", R"({"objective": 0.25})",
       kDefaultSpace + " | budget=- deadline=- weighted w0.25 confirm100 | " + kDefaultJob},
      {"weight 1: time only", R"({"objective": 1})",
       kDefaultSpace + " | budget=- deadline=- weighted w1 confirm100 | " + kDefaultJob},
      {"weight 0: cost only", R"({"objective": 0})",
       kDefaultSpace + " | budget=- deadline=- weighted w0 confirm100 | " + kDefaultJob},
      {"no spot: pricing without spot options",
       R"({"spot_allowed": false, "pricing": ["sagemaker", "on-demand"]})",
       "instances=[] nodes=1..64 pricing=[sagemaker,on-demand] spot0 tp=[] pp=[] mb=[] zero=[] "
       "vs=[] max_pp64 recompute=[] schedules=[]" +
           no_goal + kDefaultJob},
      {"only the smallest node count", R"({"nodes": {"min": 8}})",
       "instances=[] nodes=8..64 pricing=[] spot1 tp=[] pp=[] mb=[] zero=[] vs=[] max_pp64 "
       "recompute=[] schedules=[]" +
           no_goal + kDefaultJob},
      {"one node count, and the lowest values allowed",
       R"({"nodes": {"min": 16, "max": 16}, "dataset_bytes": 0, "provisioning_s": 0,)"
       R"( "restart_s": 0, "spot_interruptions_per_month": 0, "seed": 0, "budget_usd": 0.01})",
       "instances=[] nodes=16..16 pricing=[] spot1 tp=[] pp=[] mb=[] zero=[] vs=[] max_pp64 "
       "recompute=[] schedules=[] | budget=0.01 deadline=- min-cost w0.5 confirm100 | "
       "dataset=0 storage=- ckpt=- interval=- prov=0 restart=0 interruptions=0 notice0 "
       "trials2000 seed0"},
      {"empty lists mean the defaults", R"({"instances": [], "tp": [], "pricing": []})",
       kDefaultSpace + no_goal + kDefaultJob},
  };
}

TEST(SearchTest, ValidSectionsParseToTheExpectedFields) {
  for (const ValidCase& c : ValidCases()) {
    SCOPED_TRACE(c.what);
    Expected<PlanningScenario> s = Parse(WithSearch(c.search));
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_TRUE(s->has_search);
    EXPECT_EQ(Summary(s->search), c.expected);
  }
}

TEST(SearchTest, NamedStorageImageAndStreamingParse) {
  Expected<PlanningScenario> s = Parse(WithSearch(
      R"({"storage": {"kind": "fsx-lustre", "deployment": "persistent-2", "MBps_per_TiB": 250,)"
      R"( "capacity_TiB": 9.6}, "image_bytes": 2e10, "stream_dataset": true})"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s->search.storage.has_value());
  EXPECT_EQ(s->search.storage->kind, StorageKind::kFsxLustre);
  EXPECT_EQ(s->search.storage->deployment, FsxDeployment::kPersistent2);
  EXPECT_EQ(s->search.storage->MBps_per_TiB, 250);
  EXPECT_EQ(s->search.storage->capacity_TiB, 9.6);
  EXPECT_EQ(s->search.image_bytes, 2e10);
  EXPECT_TRUE(s->search.stream_dataset);
  s = Parse(WithSearch(R"({"storage": {"kind": "s3", "prefixes": 4}})"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->search.storage->kind, StorageKind::kS3);
  EXPECT_EQ(s->search.storage->prefixes, 4);
  EXPECT_EQ(s->search.storage->part_MiB, 8);  // the AWS CLI's default part
  EXPECT_FALSE(Parse(WithSearch("{}"))->search.stream_dataset);
}

TEST(SearchTest, AbsentSectionLeavesTheDefaults) {
  Expected<PlanningScenario> s = ParsePlanningScenario(
      "{\"model\": \"gpt3-175b\", \"training\": {\"global_batch\": 2048},"
      " \"cluster\": {\"instance\": \"p4d.24xlarge\", \"nodes\": 128}}",
      "x.json", test::BuiltinCatalog());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_FALSE(s->has_search);
  EXPECT_EQ(Summary(s->search),
            kDefaultSpace + " | budget=- deadline=- min-cost w0.5 confirm100 | " + kDefaultJob);
  EXPECT_TRUE(s->sweep.empty());
}

struct FailCase {
  const char* what;
  std::string section;  // the search (or sweep) section's text
  std::string message;  // exact
};

// Positions: the section's character at index i is at column 12 + i of line 5.
std::vector<FailCase> SearchFailCases() {
  return {
      {"not an object", "[]", "x.json:5:12: search: expected an object, got array"},
      {"unknown field", R"({"budget": 5})",
       "x.json:5:13: unknown field search.budget (known: instances, nodes, pricing, "
       "spot_allowed, tp, pp, micro_batch, zero_stages, shard_groups, ep, cp, virtual_stages, "
       "max_pp, "
       "recompute, schedules, budget_usd, deadline_hours, objective, confirm_top, "
       "prefer_validated, dataset_bytes, "
       "storage_GBps, checkpoint_bytes, checkpoint_interval_s, provisioning_s, restart_s, "
       "spot_interruptions_per_month, spot_capacity_chance, spot_capacity_retry_s, "
       "reservation_gap_s, warm_pool_keep_alive_s, elastic_reconfigure_s, image_bytes, storage, "
       "stream_dataset, spot_reclaim_wave_nodes, prices, "
       "checkpoint_on_notice, trials, seed)"},
      {"instances not an array", R"({"instances": "p4d.24xlarge"})",
       "x.json:5:26: search.instances: expected an array, got \"p4d.24xlarge\""},
      {"unknown instance type", R"({"instances": ["p4d.24xlarge", "p5.48xlarge", "p9.x"]})",
       "x.json:5:58: search.instances[2]: unknown instance type \"p9.x\"; known: " +
           CatalogNames()},
      {"instance not a string", R"({"instances": [5]})",
       "x.json:5:27: search.instances[0]: expected an instance type name, got 5"},
      {"instance listed twice", R"({"instances": ["p5.48xlarge", "p5.48xlarge"]})",
       "x.json:5:42: search.instances[1]: \"p5.48xlarge\" is listed twice"},
      {"nodes not an object", R"({"nodes": 8})",
       "x.json:5:22: search.nodes: expected an object, got number"},
      {"unknown field in nodes", R"({"nodes": {"mean": 8}})",
       "x.json:5:23: unknown field search.nodes.mean (known: min, max)"},
      {"zero nodes", R"({"nodes": {"min": 0}})",
       "x.json:5:30: search.nodes.min: expected an integer in [1, 100000], got 0"},
      {"too many nodes", R"({"nodes": {"max": 100001}})",
       "x.json:5:30: search.nodes.max: expected an integer in [1, 100000], got 100001"},
      {"max below min", R"({"nodes": {"min": 8, "max": 4}})",
       "x.json:5:40: search.nodes: max = 4 is less than min = 8"},
      {"min above the default max", R"({"nodes": {"min": 128}})",
       "x.json:5:22: search.nodes: max = 64 (the default) is less than min = 128"},
      {"unknown pricing", R"({"pricing": ["spot", "reserved"]})",
       "x.json:5:33: search.pricing[1]: expected one of on-demand, spot, sagemaker, "
       "sagemaker-spot, capacity-block, training-plan, savings-plan-1y, savings-plan-3y, "
       "spot-fallback, spot-elastic, got \"reserved\""},
      {"pricing listed twice", R"({"pricing": ["spot", "spot"]})",
       "x.json:5:33: search.pricing[1]: \"spot\" is listed twice"},
      {"spot pricing without spot",
       R"({"spot_allowed": false, "pricing": ["on-demand",)"
       R"( "sagemaker-spot"]})",
       "x.json:5:61: search.pricing[1]: \"sagemaker-spot\" is a spot option, but "
       "search.spot_allowed is false"},
      {"spot_allowed not a boolean", R"({"spot_allowed": "no"})",
       "x.json:5:29: search.spot_allowed: expected true or false, got \"no\""},
      {"zero tp", R"({"tp": [0]})",
       "x.json:5:20: search.tp[0]: expected an integer in [1, 1048576], got 0"},
      {"fractional tp", R"({"tp": [2, 2.5]})",
       "x.json:5:23: search.tp[1]: expected an integer in [1, 1048576], got 2.5"},
      {"tp listed twice", R"({"tp": [4, 8, 4]})", "x.json:5:26: search.tp[2]: 4 is listed twice"},
      {"pp not an array", R"({"pp": 8})", "x.json:5:19: search.pp: expected an array, got 8"},
      {"negative micro_batch", R"({"micro_batch": [-1]})",
       "x.json:5:29: search.micro_batch[0]: expected an integer >= 1, got -1"},
      {"zero stage 4", R"({"zero_stages": [0, 4]})",
       "x.json:5:32: search.zero_stages[1]: expected an integer in [0, 3], got 4"},
      {"one virtual stage", R"({"virtual_stages": [1]})",
       "x.json:5:32: search.virtual_stages[0]: expected an integer in [2, 1048576], got 1"},
      {"zero max_pp", R"({"max_pp": 0})",
       "x.json:5:23: search.max_pp: expected an integer in [1, 1048576], got 0"},
      {"unknown recompute", R"({"recompute": ["some"]})",
       "x.json:5:27: search.recompute[0]: expected one of none, selective, full, selective_op, "
       "save_dot_except_mlp, save_dot_except_mlpwi, got "
       "\"some\""},
      {"unknown schedule", R"({"schedules": ["1f1b", "zb-h1"]})",
       "x.json:5:35: search.schedules[1]: expected one of gpipe, 1f1b, interleaved, got "
       "\"zb-h1\""},
      {"zero budget", R"({"budget_usd": 0})",
       "x.json:5:27: search.budget_usd: expected a number > 0, got 0"},
      {"deadline as a string", R"({"deadline_hours": "10"})",
       "x.json:5:31: search.deadline_hours: expected a number > 0, got \"10\""},
      {"unknown objective", R"({"objective": "fast"})",
       "x.json:5:26: search.objective: expected \"min-cost\", \"min-time\" or a number in "
       "[0, 1] (the weight of time against cost), got \"fast\""},
      {"weight above 1", R"({"objective": 1.5})",
       "x.json:5:26: search.objective: expected \"min-cost\", \"min-time\" or a number in "
       "[0, 1] (the weight of time against cost), got 1.5"},
      {"zero confirm_top", R"({"confirm_top": 0})",
       "x.json:5:28: search.confirm_top: expected an integer in [1, 1000], got 0"},
      {"prefer_validated not a boolean", R"({"prefer_validated": 1})",
       "x.json:5:33: search.prefer_validated: expected true or false, got 1"},
      {"negative dataset", R"({"dataset_bytes": -1})",
       "x.json:5:30: search.dataset_bytes: expected a number >= 0, got -1"},
      {"zero storage bandwidth", R"({"storage_GBps": 0})",
       "x.json:5:29: search.storage_GBps: expected a number > 0, got 0"},
      {"zero checkpoint", R"({"checkpoint_bytes": 0})",
       "x.json:5:33: search.checkpoint_bytes: expected a number > 0, got 0"},
      {"zero checkpoint interval", R"({"checkpoint_interval_s": 0})",
       "x.json:5:38: search.checkpoint_interval_s: expected a number > 0, got 0"},
      {"negative provisioning", R"({"provisioning_s": -5})",
       "x.json:5:31: search.provisioning_s: expected a number >= 0, got -5"},
      {"negative restart", R"({"restart_s": -1})",
       "x.json:5:26: search.restart_s: expected a number >= 0, got -1"},
      {"every instance interrupted", R"({"spot_interruptions_per_month": 1})",
       "x.json:5:45: search.spot_interruptions_per_month: expected a number in [0, 1), got 1"},
      {"checkpoint_on_notice not a boolean", R"({"checkpoint_on_notice": 1})",
       "x.json:5:37: search.checkpoint_on_notice: expected true or false, got 1"},
      {"no spot capacity at all", R"({"spot_capacity_chance": 0})",
       "x.json:5:37: search.spot_capacity_chance: expected a number in (0, 1], got 0"},
      {"zero spot retry", R"({"spot_capacity_retry_s": 0})",
       "x.json:5:38: search.spot_capacity_retry_s: expected a number > 0, got 0"},
      {"reclaim wave of none", R"({"spot_reclaim_wave_nodes": 0})",
       "x.json:5:40: search.spot_reclaim_wave_nodes: expected an integer in [1, 100000], got 0"},
      {"a warm pool past SageMaker's hour", R"({"warm_pool_keep_alive_s": 3601})",
       "x.json:5:39: search.warm_pool_keep_alive_s: expected a number in [0, 3600], got 3601"},
      {"a storage of no kind", R"({"storage": {"prefixes": 4}})",
       "x.json:5:24: missing required field search.storage.kind"},
      {"a storage of an unknown kind", R"({"storage": {"kind": "ebs"}})",
       "x.json:5:33: search.storage.kind: expected one of fsx-lustre, s3, got \"ebs\""},
      {"FSx without its size",
       R"({"storage": {"kind": "fsx-lustre", "deployment": "scratch-2", "MBps_per_TiB": 200}})",
       "x.json:5:24: missing required field search.storage.capacity_TiB"},
      {"a persistent-2 tier FSx does not offer",
       R"({"storage": {"kind": "fsx-lustre", "deployment": "persistent-2", "MBps_per_TiB": 300,)"
       R"( "capacity_TiB": 4.8}})",
       "x.json:5:93: search.storage.MBps_per_TiB: persistent-2 offers 125, 250, 500, 1000 MB/s "
       "per TiB, got 300"},
      {"an empty FSx",
       R"({"storage": {"kind": "fsx-lustre", "deployment": "scratch-1", "MBps_per_TiB": 200,)"
       R"( "capacity_TiB": 0}})",
       "x.json:5:111: search.storage.capacity_TiB: expected a number > 0, got 0"},
      {"an S3 field on FSx",
       R"({"storage": {"kind": "fsx-lustre", "deployment": "scratch-2", "MBps_per_TiB": 200,)"
       R"( "capacity_TiB": 1.2, "prefixes": 2}})",
       "x.json:5:116: unknown field search.storage.prefixes (known: kind, deployment, "
       "MBps_per_TiB, capacity_TiB)"},
      {"S3 parts of nothing", R"({"storage": {"kind": "s3", "part_MiB": 0}})",
       "x.json:5:51: search.storage.part_MiB: expected a number > 0, got 0"},
      {"both a named storage and a bandwidth", R"({"storage_GBps": 10, "storage": {"kind": "s3"}})",
       "x.json:5:44: search.storage: give the named storage or search.storage_GBps, not both"},
      {"a negative image", R"({"image_bytes": -1})",
       "x.json:5:28: search.image_bytes: expected a number >= 0, got -1"},
      {"a negative reconfiguration", R"({"elastic_reconfigure_s": -1})",
       "x.json:5:38: search.elastic_reconfigure_s: expected a number >= 0, got -1"},
      {"negative reservation gap", R"({"reservation_gap_s": -1})",
       "x.json:5:34: search.reservation_gap_s: expected a number >= 0, got -1"},
      {"prices not an object", R"({"prices": [1]})",
       "x.json:5:23: search.prices: expected an object keyed by instance type, got an array"},
      {"prices of an unknown type", R"({"prices": {"p9.huge": {}}})",
       "x.json:5:24: search.prices.p9.huge: unknown instance type \"p9.huge\"; known: " +
           CatalogNames()},
      {"a zero price", R"({"prices": {"p5.48xlarge": {"training_plan_usd_hr": 0}}})",
       "x.json:5:64: search.prices.p5.48xlarge.training_plan_usd_hr: expected a price > 0 "
       "(USD per instance-hour), got 0"},
      {"an unknown price", R"({"prices": {"p5.48xlarge": {"reserved_usd_hr": 30}}})",
       "x.json:5:40: unknown field search.prices.p5.48xlarge.reserved_usd_hr (known: "
       "capacity_block_usd_hr, training_plan_usd_hr, savings_plan_1y_usd_hr, "
       "savings_plan_3y_usd_hr)"},
      {"zero trials", R"({"trials": 0})",
       "x.json:5:23: search.trials: expected an integer in [1, 1000000], got 0"},
      {"negative seed", R"({"seed": -1})",
       "x.json:5:21: search.seed: expected an integer >= 0, got -1"},
      {"fractional seed", R"({"seed": 1.5})",
       "x.json:5:21: search.seed: expected an integer >= 0, got 1.5"},
  };
}

TEST(SearchTest, BadSectionsFailAtTheValue) {
  for (const FailCase& c : SearchFailCases()) {
    SCOPED_TRACE(c.what);
    Expected<PlanningScenario> s = Parse(WithSearch(c.section));
    ASSERT_FALSE(s.ok()) << "parsed: " << Summary(s->search);
    EXPECT_EQ(s.status().code(), Status::Code::kInvalidInput);
    EXPECT_EQ(s.status().message(), c.message);
    // One parser: the simulator's ParseScenario checks the section too.
    EXPECT_EQ(
        ParseScenario(WithSearch(c.section), "x.json", test::BuiltinCatalog()).status().message(),
        c.message);
  }
}

// ---- sweep ---------------------------------------------------------------------------------

std::string SweepableNames() {
  std::string names;
  for (const std::string& f : SweepableFields()) names += (names.empty() ? "" : ", ") + f;
  return names;
}

std::string Axes(const std::vector<SweepAxis>& axes) {
  std::string out;
  for (const SweepAxis& a : axes) {
    out += (out.empty() ? "" : " ") + a.field + "=" + nlohmann::json(a.values).dump();
  }
  return out;
}

TEST(SweepTest, GridAxesKeepTheFileOrderAndTypes) {
  Expected<PlanningScenario> s = Parse(
      WithSweep(R"({"grid": {"parallel.tp": [8, 4], "cluster.nodes": [64, 128, 256],)"
                R"( "training.precision": ["bf16", "fp16"], "parallel.overlap_dp": [true, false],)"
                R"( "training.tokens": [3e11, 1.5e11]}})"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(Axes(s->sweep),
            "parallel.tp=[8,4] cluster.nodes=[64,128,256] training.precision=[\"bf16\",\"fp16\"] "
            "parallel.overlap_dp=[true,false] training.tokens=[300000000000.0,150000000000.0]");
  EXPECT_FALSE(s->has_search);
}

// Positions: the section's character at index i is at column 11 + i of line 5.
std::vector<FailCase> SweepFailCases() {
  return {
      {"not an object", "[]", "x.json:5:11: sweep: expected an object, got array"},
      {"unknown field", R"({"grids": {}})", "x.json:5:12: unknown field sweep.grids (known: grid)"},
      {"no grid", "{}", "x.json:5:11: missing required field sweep.grid"},
      {"empty grid", R"({"grid": {}})",
       "x.json:5:20: sweep.grid: expected an object of fields and their values, like "
       "{\"cluster.nodes\": [8, 16]}, got {}"},
      {"grid not an object", R"({"grid": [8]})",
       "x.json:5:20: sweep.grid: expected an object of fields and their values, like "
       "{\"cluster.nodes\": [8, 16]}, got an array"},
      {"unknown field path", R"({"grid": {"cluster.nodes": [8], "cluster.gpus": [8]}})",
       "x.json:5:43: sweep.grid: \"cluster.gpus\" cannot be swept; sweepable fields: " +
           SweepableNames()},
      {"the search section", R"({"grid": {"search.budget_usd": [1e6, 2e6]}})",
       "x.json:5:21: sweep.grid: \"search.budget_usd\" cannot be swept; sweepable fields: " +
           SweepableNames()},
      {"the sweep itself", R"({"grid": {"sweep": [1]}})",
       "x.json:5:21: sweep.grid: \"sweep\" cannot be swept; sweepable fields: " + SweepableNames()},
      {"the version", R"({"grid": {"version": [1, 2]}})",
       "x.json:5:21: sweep.grid: \"version\" cannot be swept; sweepable fields: " +
           SweepableNames()},
      {"a model dimension", R"({"grid": {"model.layers": [48, 96]}})",
       "x.json:5:21: sweep.grid: \"model.layers\" cannot be swept; sweepable fields: " +
           SweepableNames()},
      {"an array field", R"({"grid": {"cluster.stragglers": [1]}})",
       "x.json:5:21: sweep.grid: \"cluster.stragglers\" cannot be swept; sweepable fields: " +
           SweepableNames()},
      {"values not an array", R"({"grid": {"cluster.nodes": 8}})",
       "x.json:5:38: sweep.grid[\"cluster.nodes\"]: expected a non-empty array of values, got 8"},
      {"no values", R"({"grid": {"cluster.nodes": []}})",
       "x.json:5:38: sweep.grid[\"cluster.nodes\"]: expected a non-empty array of values, got []"},
      {"a value that is not a scalar", R"({"grid": {"cluster.nodes": [8, [16]]}})",
       "x.json:5:42: sweep.grid[\"cluster.nodes\"][1]: expected a number, a string or a boolean, "
       "got an array"},
      {"a null value", R"({"grid": {"parallel.tp": [null]}})",
       "x.json:5:37: sweep.grid[\"parallel.tp\"][0]: expected a number, a string or a boolean, "
       "got null"},
      {"a value listed twice", R"({"grid": {"cluster.nodes": [8, 16, 8.0]}})",
       "x.json:5:46: sweep.grid[\"cluster.nodes\"][2]: 8.0 is listed twice"},
  };
}

TEST(SweepTest, BadGridsFailAtTheValue) {
  for (const FailCase& c : SweepFailCases()) {
    SCOPED_TRACE(c.what);
    Expected<PlanningScenario> s = Parse(WithSweep(c.section));
    ASSERT_FALSE(s.ok()) << "parsed: " << Axes(s->sweep);
    EXPECT_EQ(s.status().code(), Status::Code::kInvalidInput);
    EXPECT_EQ(s.status().message(), c.message);
  }
}

TEST(SweepTest, ModelSweepsOnlyOverAPresetName) {
  Expected<Scenario> s =
      ParseScenario(R"({"model": {"preset": "gpt3-175b"}, "training": {"global_batch": 2048},)"
                    R"( "cluster": {"instance": "p4d.24xlarge", "nodes": 128},)"
                    R"( "sweep": {"grid": {"model": ["gpt3-175b"]}}})",
                    "x.json", test::BuiltinCatalog());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "x.json:1:146: sweep.grid: \"model\" can be swept only where the scenario's model is "
            "a preset name (here it is an object)");
}

TEST(SweepTest, GridOfMoreThanTheLimitFails) {
  std::string batches, nodes;
  for (int i = 1; i <= 400; ++i) batches += (i > 1 ? ", " : "") + std::to_string(i * 1536);
  for (int i = 1; i <= 251; ++i) nodes += (i > 1 ? ", " : "") + std::to_string(i);
  Expected<PlanningScenario> s =
      Parse(WithSweep(R"({"grid": {"training.global_batch": [)" + batches +
                      R"(], "cluster.nodes": [)" + nodes + "]}}"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "x.json:5:20: sweep.grid: 400 x 251 values give more than 100000 points (the most a "
            "grid may have)");
}

Expected<std::vector<PlanningScenario>> Expand(const std::string& text) {
  return ExpandSweepGridString(text, "x.json", test::BuiltinCatalog());
}

std::vector<std::string> Names(const std::vector<PlanningScenario>& points) {
  std::vector<std::string> names;
  for (const PlanningScenario& p : points) names.push_back(p.scenario.name);
  return names;
}

TEST(SweepTest, GridExpandsRowMajorWithNamedPoints) {
  Expected<std::vector<PlanningScenario>> points =
      Expand(WithSweep(R"({"grid": {"cluster.nodes": [64, 128], "parallel.tp": [4, 8]}})"));
  ASSERT_TRUE(points.ok()) << points.status().message();
  EXPECT_EQ(Names(*points),
            (std::vector<std::string>{
                "x[cluster.nodes=64,parallel.tp=4]", "x[cluster.nodes=64,parallel.tp=8]",
                "x[cluster.nodes=128,parallel.tp=4]", "x[cluster.nodes=128,parallel.tp=8]"}));
  const int expected[][3] = {{64, 4, 16}, {64, 8, 8}, {128, 4, 32}, {128, 8, 16}};  // nodes tp dp
  for (size_t i = 0; i < points->size(); ++i) {
    const Scenario& p = (*points)[i].scenario;
    EXPECT_EQ(p.cluster.nodes, expected[i][0]);
    EXPECT_EQ(p.parallel.tp, expected[i][1]);
    EXPECT_EQ(p.parallel.dp, expected[i][2]) << "dp is derived for each point";
    EXPECT_TRUE((*points)[i].sweep.empty()) << "a point is a plain scenario";
  }
}

TEST(SweepTest, PointsReplaceAPresetNameAndAddAbsentFields) {
  // The base has no parallel section; the grid adds parallel.zero_stage.
  Expected<std::vector<PlanningScenario>> points =
      Expand(R"({"model": "gpt3-175b", "training": {"global_batch": 2048},)"
             R"( "cluster": {"instance": "p4d.24xlarge", "nodes": 128},)"
             R"( "search": {"budget_usd": 1e6},)"
             R"( "sweep": {"grid": {"model": ["llama2-70b", "gpt3-175b"],)"
             R"( "parallel.zero_stage": [1], "training.recompute": ["full"]}}})");
  ASSERT_TRUE(points.ok()) << points.status().message();
  EXPECT_EQ(Names(*points),
            (std::vector<std::string>{
                "x[model=llama2-70b,parallel.zero_stage=1,training.recompute=full]",
                "x[model=gpt3-175b,parallel.zero_stage=1,training.recompute=full]"}));
  EXPECT_EQ((*points)[0].scenario.model.name, "llama2-70b");
  EXPECT_EQ((*points)[1].scenario.model.name, "gpt3-175b");
  for (const PlanningScenario& p : *points) {
    EXPECT_EQ(p.scenario.parallel.zero_stage, 1);
    EXPECT_EQ(p.scenario.training.recompute, Recompute::kFull);
    EXPECT_TRUE(p.has_search) << "each point keeps the search section";
    EXPECT_EQ(p.search.budget_usd, 1e6);
  }
}

TEST(SweepTest, ScenarioWithoutGridExpandsToItself) {
  Expected<std::vector<PlanningScenario>> points = Expand(WithSearch("{}"));
  ASSERT_TRUE(points.ok()) << points.status().message();
  ASSERT_EQ(points->size(), 1u);
  EXPECT_EQ((*points)[0].scenario.name, "x");
  EXPECT_EQ((*points)[0].scenario.cluster.nodes, 128);
}

struct PointFailCase {
  const char* what;
  std::string sweep;
  std::string message;  // exact
};

// A failing point names itself after the position of the value at fault: the grid's value
// when that is the one (line 5), else the baseline's (parallel.pp on line 4).
std::vector<PointFailCase> PointFailCases() {
  return {
      {"grid value at fault", R"({"grid": {"cluster.nodes": [64, 128], "parallel.tp": [8, 5]}})",
       "x.json:5:68: sweep point 2 of 4 (cluster.nodes=64, parallel.tp=5): parallel.tp = 5 does "
       "not divide model.heads = 96"},
      {"value of the wrong type", R"({"grid": {"cluster.nodes": [128, "many"]}})",
       "x.json:5:44: sweep point 2 of 2 (cluster.nodes=many): cluster.nodes: expected an "
       "integer in [1, 1000000], got \"many\""},
      {"the baseline's value at fault", R"({"grid": {"cluster.nodes": [128, 100]}})",
       "x.json:4:30: sweep point 2 of 2 (cluster.nodes=100): parallel.tp * parallel.pp = 64 "
       "does not divide the cluster's 800 GPUs"},
  };
}

TEST(SweepTest, FailingPointNamesItself) {
  for (const PointFailCase& c : PointFailCases()) {
    SCOPED_TRACE(c.what);
    Expected<std::vector<PlanningScenario>> points = Expand(WithSweep(c.sweep));
    ASSERT_FALSE(points.ok());
    EXPECT_EQ(points.status().code(), Status::Code::kInvalidInput);
    EXPECT_EQ(points.status().message(), c.message);
  }
}

TEST(SweepTest, EverySweepableFieldReachesItsReader) {
  // `true` is of the wrong type for every field but the booleans: the message must come from
  // the reader of that very field, never "unknown field". (A boolean may still be refused by
  // its own check: training.offload_params needs ZeRO-3, parallel.tp_overlap tensor
  // parallelism, parallel.overlap_param_gather ZeRO-1/2, which the baseline does not have.)
  for (const std::string& field : SweepableFields()) {
    SCOPED_TRACE(field);
    Expected<std::vector<PlanningScenario>> points =
        Expand(WithSweep(R"({"grid": {")" + field + R"(": [true]}})"));
    if (points.ok()) continue;  // a boolean field
    const std::string& message = points.status().message();
    const bool own_check = message.find("): " + field + " needs ") != std::string::npos;
    EXPECT_TRUE(own_check || message.find("): " + field + ": expected") != std::string::npos)
        << message;
  }
}

TEST(SweepFileTest, PointsNameTheFileStemAndErrorsThePath) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "sweep_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "gpt3-nodes.json").string();
  std::ofstream(path) << WithSweep(R"({"grid": {"cluster.nodes": [64, 128]}})");
  Expected<std::vector<PlanningScenario>> points = ExpandSweepGrid(path, test::BuiltinCatalog());
  ASSERT_TRUE(points.ok()) << points.status().message();
  EXPECT_EQ(Names(*points), (std::vector<std::string>{"gpt3-nodes[cluster.nodes=64]",
                                                      "gpt3-nodes[cluster.nodes=128]"}));
  std::ofstream(path) << WithSweep(R"({"grid": {"parallel.tp": [8, 5]}})");
  points = ExpandSweepGrid(path, test::BuiltinCatalog());
  ASSERT_FALSE(points.ok());
  EXPECT_EQ(points.status().message(),
            path +
                ":5:40: sweep point 2 of 2 (parallel.tp=5): parallel.tp = 5 does not divide "
                "model.heads = 96");
  std::filesystem::remove_all(dir);
}

TEST(SweepFileTest, ErrorWithoutAPositionStillNamesThePoint) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "sweep_test_nf";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "profiles.json").string();
  std::ofstream(path) << WithSweep(R"({"grid": {"cluster.profile": ["missing.json"]}})");
  Expected<std::vector<PlanningScenario>> points = ExpandSweepGrid(path, test::BuiltinCatalog());
  ASSERT_FALSE(points.ok());
  EXPECT_EQ(points.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(points.status().message(),
            path + ": sweep point 1 of 1 (cluster.profile=missing.json): " +
                (dir / "missing.json").string() + ": cannot open file: No such file or directory");
  std::filesystem::remove_all(dir);
}

TEST(SweepFileTest, ReadySweepsExpand) {
  const std::string dir = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/sweeps";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    Expected<std::vector<PlanningScenario>> points =
        ExpandSweepGrid(entry.path().string(), test::BuiltinCatalog());
    ASSERT_TRUE(points.ok()) << points.status().message();
    EXPECT_GE(points->size(), 2u);
    ++files;
  }
  EXPECT_GE(files, 1);
}

TEST(SweepFileTest, ReadyPlansHaveABudgetOrADeadline) {
  for (const char* name :
       {"gpt3-175b-p4d", "llama2-70b-p5", "bert-large-p3", "resnet50-p3", "llama2-7b-finetune"}) {
    SCOPED_TRACE(name);
    Expected<PlanningScenario> s = LoadPlanningScenario(
        std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name + ".json", test::BuiltinCatalog());
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_TRUE(s->has_search);
    EXPECT_TRUE(s->search.budget_usd || s->search.deadline_hours);
  }
}

}  // namespace
}  // namespace trainsim
