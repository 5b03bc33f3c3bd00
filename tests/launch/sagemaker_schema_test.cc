// The SageMaker files of real bundles checked against what SageMaker accepts: the
// CreateTrainingJob request against botocore's own SageMaker service model (its
// ParamValidator), launch.py's distribution and HyperPod's smp_config.json against the
// parameters the SMP v1 and v2 documentation lists (tests/launch/tools/check_sagemaker_bundle.py).
// Skipped, with the reason, where python3 or botocore is missing (Debian: python3-botocore).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "launch/bundle.h"
#include "launch/bundle_writer.h"
#include "tests/test_util.h"

namespace trainsim::launch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/launch/data/";
const std::string kChecker =
    std::string(TRAINSIM_SOURCE_DIR) + "/tests/launch/tools/check_sagemaker_bundle.py";

struct Outcome {
  int status = -1;
  std::string output;
};

Outcome RunChecker(const std::vector<std::string>& folders) {
  std::string cmd = "python3 '" + kChecker + "'";
  for (const std::string& f : folders) cmd += " '" + f + "'";
  Outcome o;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return o;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) o.output.append(buf, n);
  const int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

json& Config(json& plan) {
  return plan["candidates"][plan["recommendation"]["candidate"].get<int>()]["config"];
}

class SagemakerSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "schema_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  // The bundle of `plan_file` with `edit` applied to its JSON, written to root/name.
  std::string Write(const std::string& name, const std::string& plan_file,
                    const std::function<void(json&)>& edit) {
    json j = json::parse(test::ReadFile(kData + plan_file));
    edit(j);
    Expected<LaunchPlan> plan = ParsePlan(j.dump(), name + ".json", test::BuiltinCatalog());
    EXPECT_TRUE(plan.ok()) << name << ": " << plan.status().message();
    if (!plan.ok()) return root_ + "/missing";
    LaunchOptions o;
    o.job_name = "job-1";
    o.s3_uri = "s3://my-bucket/runs";
    Expected<Bundle> b = MakeBundle(*plan, o);
    EXPECT_TRUE(b.ok()) << name << ": " << b.status().message();
    if (!b.ok()) return root_ + "/missing";
    const std::string out = root_ + "/" + name;
    EXPECT_TRUE(WriteBundle(out, *b).ok());
    return out;
  }

  std::string root_;
};

TEST_F(SagemakerSchemaTest, EveryDistributionIsAcceptedByBotocoreAndTheSmpDocs) {
  auto none = [](json&) {};
  const std::vector<std::string> folders = {
      Write("dp-smddp", "small.plan.json", none),
      Write("smp-v1-spot", "tp-pp-spot.plan.json", none),
      Write("smp-v2-tp", "small.plan.json",
            [](json& j) {
              Config(j)["tp"] = 2;
              Config(j)["dp"] = 4;
              j["scenario_json"]["training"]["offload_activations"] = true;
            }),
      Write("smp-v2-moe", "small.plan.json",
            [](json& j) {
              j["scenario_json"]["model"]["experts"] = 8;
              j["scenario_json"]["model"]["experts_per_token"] = 2;
              Config(j)["ep"] = 4;
            }),
      Write("smp-v2-cp", "small.plan.json",
            [](json& j) {
              Config(j)["instance"] = "p5.48xlarge";
              Config(j)["cp"] = 2;
              Config(j)["tp"] = 2;
              Config(j)["dp"] = 2;
              Config(j)["zero_stage"] = 0;
              j["scenario_json"]["training"]["flash_attention"] = true;
            }),
      Write("smp-v2-hybrid", "small.plan.json",
            [](json& j) {
              j["scenario_json"]["parallel"] = {{"zero_stage", 3}, {"shard_group", 4}};
              Config(j)["zero_stage"] = 3;
              Config(j)["shard_group"] = 4;
            }),
      Write("parameter-server", "small.plan.json",
            [](json& j) {
              Config(j)["zero_stage"] = 0;
              j["scenario_json"]["parallel"] = {{"dp_algorithm", "parameter_server"}};
            }),
  };
  const Outcome r = RunChecker(folders);
  if (r.status == 77 || r.status == 127) GTEST_SKIP() << "no check: " << r.output;
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find(": 7 bundles, 0 with errors"), std::string::npos) << r.output;
}

// The checker fails on what SageMaker would refuse: a request member of the wrong type, and a
// parameter SMP v2 does not have.
TEST_F(SagemakerSchemaTest, TheCheckerRefusesWhatSagemakerWould) {
  const std::string dir = Write("bad", "small.plan.json", [](json& j) {
    Config(j)["tp"] = 2;
    Config(j)["dp"] = 4;
  });
  const std::string request = dir + "/sagemaker/create_training_job.json";
  json r = json::parse(test::ReadFile(request));
  r["ResourceConfig"]["InstanceCount"] = "1";
  std::ofstream(request) << r.dump(2);
  std::ofstream(dir + "/hyperpod/smp_config.json") << R"({"pipeline_parallel_degree": 2})";
  const Outcome o = RunChecker({dir});
  if (o.status == 77 || o.status == 127) GTEST_SKIP() << "no check: " << o.output;
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_NE(o.output.find("ResourceConfig.InstanceCount"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("not SMP v2 parameters: ['pipeline_parallel_degree']"), std::string::npos)
      << o.output;
}

}  // namespace
}  // namespace trainsim::launch
