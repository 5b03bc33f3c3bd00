// The `trainsim` command as a user runs it: the real binary, started with its stdout and stderr
// captured apart, checked for exit code, output and the exact text of each error.
//
// The binary runs with the repository root as its working directory, so scenario paths are
// given (and expected back in messages) as `tests/cli/data/x.json`.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/calibration.h"
#include "core/error_bands.h"
#include "tests/test_util.h"

#ifndef TRAINSIM_SOURCE_DIR
#define TRAINSIM_SOURCE_DIR "."
#endif
#ifndef TRAINSIM_BINARY
#define TRAINSIM_BINARY "trainsim"
#endif

namespace trainsim {

using trainsim::test::Lines;
using trainsim::test::ReadFile;
namespace {

using nlohmann::json;

constexpr char kData[] = "tests/cli/data/";
constexpr char kGpt3Scenario[] = "scenarios/gpt3-175b-p4d.json";
// gpt-1.7b on 4 x p4d.24xlarge, tp 2 pp 2 dp 8: small, fits, and has pipeline and data-parallel
// traffic.
constexpr char kSmallScenario[] = "tests/cli/data/gpt-1.7b-small.json";

struct RunResult {
  int exit_code = -1;  // 128 + signal number when the process was killed by a signal.
  std::string out;
  std::string err;
};

// Runs `binary args...` in the repository root, stdout and stderr into files under `dir`.
RunResult RunBinary(const std::string& binary, const std::string& dir,
                    const std::vector<std::string>& args) {
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  std::vector<std::string> words = {binary};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid == 0) {  // Only async-signal-safe calls until exec.
    int in = open("/dev/null", O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
        chdir(TRAINSIM_SOURCE_DIR) != 0) {
      _exit(126);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  RunResult r;
  if (pid < 0) {
    ADD_FAILURE() << "fork failed";
    return r;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      ADD_FAILURE() << "waitpid failed";
      return r;
    }
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  return r;
}

RunResult RunTrainsim(const std::string& dir, const std::vector<std::string>& args) {
  return RunBinary(TRAINSIM_BINARY, dir, args);
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "cli_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  RunResult Run(const std::vector<std::string>& args) { return RunTrainsim(dir_, args); }

  // Runs a command that must succeed and print JSON; returns it parsed.
  json RunJson(const std::vector<std::string>& args) {
    RunResult r = Run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json doc = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(doc.is_discarded()) << "not one JSON value:\n" << r.out;
    return doc;
  }

  std::string dir_;
};

// The first column of each row of a table printed under a header line.
std::set<std::string> FirstColumn(const std::string& table) {
  std::set<std::string> names;
  std::vector<std::string> lines = Lines(table);
  for (size_t i = 1; i < lines.size(); ++i) names.insert(lines[i].substr(0, lines[i].find(' ')));
  return names;
}

// Expects the usage text after a one-line reason on stderr, and nothing on stdout.
void ExpectUsageError(const RunResult& r, const std::string& reason) {
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  std::vector<std::string> lines = Lines(r.err);
  ASSERT_GE(lines.size(), 3u) << r.err;
  EXPECT_EQ(lines[0], "trainsim: " + reason);
  EXPECT_EQ(lines[1], "usage:");
  EXPECT_NE(r.err.find("trainsim simulate SCENARIO"), std::string::npos) << r.err;
}

TEST_F(CliTest, ModelsListsThePresets) {
  RunResult r = Run({"models"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::set<std::string> names = FirstColumn(r.out);
  for (const char* model : {"gpt3-175b", "llama2-70b", "bert-large", "resnet50", "llama3.1-405b",
                            "mixtral-8x7b", "deepseek-v3"}) {
    EXPECT_TRUE(names.count(model)) << model << " missing from:\n" << r.out;
  }
  // Experts (routed / per token + shared), total and active parameters.
  EXPECT_NE(r.out.find("256/8+1     671026419200      36625618432"), std::string::npos) << r.out;
}

TEST_F(CliTest, CatalogListShowsEveryAwsTypeAndTheDgx) {
  RunResult r = Run({"catalog", "list"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> listed = FirstColumn(r.out);
  std::vector<std::string> expected = {"p4d.24xlarge", "p5.48xlarge", "p3.16xlarge", "g5.48xlarge",
                                       "dgx-a100-80gb"};
  json aws = json::parse(ReadFile(std::string(TRAINSIM_SOURCE_DIR) + "/instance-catalog/aws.json"));
  ASSERT_FALSE(aws.at("instances").empty());
  for (const json& instance : aws.at("instances")) expected.push_back(instance.at("name"));
  for (const std::string& name : expected) {
    EXPECT_TRUE(listed.count(name)) << name << " missing from:\n" << r.out;
  }
}

TEST_F(CliTest, CatalogShowGivesGpusAndSources) {
  RunResult r = Run({"catalog", "show", "p4d.24xlarge"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_GE(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0], "p4d.24xlarge (AWS)");
  EXPECT_EQ(lines[1], "  gpu              8 x A100-SXM4-40GB, 40 GiB");
  size_t sources = r.out.find("\n  sources\n");
  ASSERT_NE(sources, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("awsdocs_acc", sources), std::string::npos) << r.out;
  // The SageMaker libraries that run on it, from the catalog (with their sources).
  EXPECT_NE(r.out.find("\n  SageMaker libs   smddp-allreduce, smddp-allgather, smp-v2\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("sagemaker_libraries: sm_smp_v2_doc", sources), std::string::npos) << r.out;
}

TEST_F(CliTest, CatalogShowUnknownTypeNamesIt) {
  RunResult r = Run({"catalog", "show", "nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "trainsim: unknown instance type \"nope\"; see `trainsim catalog list`\n");
}

TEST_F(CliTest, SimulateJsonHasTheResultFields) {
  json r = RunJson({"simulate", kGpt3Scenario, "--json"});
  ASSERT_TRUE(r.is_object()) << r.dump(2);
  const double step_s = r.at("step_time_s");
  EXPECT_GT(step_s, 0);
  // 1536 samples of 2048 tokens per step; A100 bf16 peak is 312 TFLOP/s.
  EXPECT_NEAR(r.at("samples_per_s").get<double>(), 1536 / step_s, 1e-9 * 1536 / step_s);
  EXPECT_NEAR(r.at("tokens_per_s").get<double>(), 2048 * 1536 / step_s,
              1e-9 * 2048 * 1536 / step_s);
  const double model_tflops = r.at("model_tflops_per_gpu");
  EXPECT_GT(model_tflops, 0);
  EXPECT_GT(r.at("hardware_tflops_per_gpu").get<double>(), model_tflops);  // Full recompute.
  const double mfu = r.at("mfu");
  EXPECT_GT(mfu, 0);
  EXPECT_LT(mfu, 1);
  EXPECT_NEAR(mfu, model_tflops / 312, 1e-9);

  const json& m = r.at("memory");
  EXPECT_EQ(m.at("fits"), true);
  EXPECT_EQ(m.at("capacity_gib"), 40.0);
  double sum_gib = 0;
  for (const char* part :
       {"weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "reserve_gib"}) {
    EXPECT_GT(m.at(part).get<double>(), 0) << part;
    sum_gib += m.at(part).get<double>();
  }
  EXPECT_NEAR(m.at("total_gib").get<double>(), sum_gib, 1e-9 * sum_gib);
  EXPECT_LE(m.at("total_gib").get<double>(), 40.0);

  const json& b = r.at("breakdown");
  for (const char* part : {"compute_s", "tp_comm_exposed_s", "dp_comm_exposed_s",
                           "pp_comm_exposed_s", "pipeline_bubble_s", "optimizer_s"}) {
    ASSERT_TRUE(b.contains(part)) << part << " missing from " << b.dump(2);
    EXPECT_GE(b.at(part).get<double>(), 0) << part;
  }
}

TEST_F(CliTest, SimulateJsonBreakdownAddsUpToTheStepTime) {
  json r = RunJson({"simulate", kGpt3Scenario, "--json"});
  double sum_s = 0;
  for (const auto& [name, value] : r.at("breakdown").items()) {
    if (name == "critical_stage") continue;
    ASSERT_TRUE(value.is_number()) << name;
    sum_s += value.get<double>();
  }
  const double step_s = r.at("step_time_s");
  EXPECT_NEAR(sum_s, step_s, 1e-6 * step_s) << r.at("breakdown").dump(2);
}

// The prediction's error band (docs/validation.md section 0.7): the same band around every
// figure (step time inverted), from the built-in error-bands file, and the text output says it.
TEST_F(CliTest, SimulateGivesTheErrorBandOfItsFamily) {
  json r = RunJson({"simulate", kGpt3Scenario, "--json"});
  const json& band = r.at("band");
  EXPECT_EQ(band.at("coverage"), 0.8);
  const double step = r.at("step_time_s"), tokens = r.at("tokens_per_s");
  const double lo = band.at("tokens_per_s")[0].get<double>() / tokens;
  const double hi = band.at("tokens_per_s")[1].get<double>() / tokens;
  EXPECT_LT(lo, 1);
  EXPECT_GT(hi, 1);
  EXPECT_NEAR(band.at("step_time_s")[0].get<double>(), step / hi, 1e-9 * step);
  EXPECT_NEAR(band.at("step_time_s")[1].get<double>(), step / lo, 1e-9 * step);
  EXPECT_GE(band.at("points").get<int>(), kMinBandPoints);
  EXPECT_EQ(band.at("family").get<std::string>().rfind("tp-pp / A100", 0), 0u);
  RunResult text = Run({"simulate", kGpt3Scenario});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  80% band             "), std::string::npos) << text.out;
}

TEST_F(CliTest, SimulateJsonIsByteForByteDeterministic) {
  RunResult first = Run({"simulate", kGpt3Scenario, "--json"});
  RunResult second = Run({"simulate", kGpt3Scenario, "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_FALSE(first.out.empty());
  EXPECT_EQ(first.out, second.out);
}

// Beyond what it simulates in reasonable time the command answers at once with the field and
// the limit (sim/simulate.h); --estimate answers for any size with the estimator's step.
TEST_F(CliTest, SimulateRefusesClustersBeyondItsLimitsAtOnce) {
  json scenario = json::parse(ReadFile(std::string(TRAINSIM_SOURCE_DIR) + "/" + kGpt3Scenario));
  scenario["name"] = "huge";
  scenario["cluster"]["nodes"] = 131072;  // 1,048,576 GPUs
  scenario["parallel"]["dp"] = 16384;
  scenario["training"]["global_batch"] = 16384;
  const std::string huge = dir_ + "/huge.json";
  std::ofstream(huge) << scenario.dump();
  // It repeats leaf by leaf: simulated on 2 leaves of each stage (sim/fold.h).
  RunResult folded = Run({"simulate", huge});
  EXPECT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_NE(folded.out.find("step time"), std::string::npos) << folded.out;
  // Leaves of 48 nodes do not divide its stages: it would be built whole.
  scenario["cluster"]["nodes_per_leaf"] = 48;
  const std::string uneven = dir_ + "/uneven.json";
  std::ofstream(uneven) << scenario.dump();
  RunResult r = Run({"simulate", uneven});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "trainsim: huge: cluster.nodes: 131072 nodes (1048576 GPUs) are more than the "
            "simulator takes on in reasonable time: at most 4096 nodes unless the cluster folds, "
            "and it does not (a pipeline stage (16384 nodes) does not fill whole leaves of "
            "cluster.nodes_per_leaf 48; docs/model.md section 4); `trainsim simulate --estimate` "
            "gives the fast estimator's step instead\n");
  EXPECT_EQ(Run({"simulate", kGpt3Scenario, "--full"}).err,
            "trainsim: gpt3-175b-p4d: --full simulates every GPU, at most 128 GPUs in reasonable "
            "time; this cluster has 1024 GPUs (the default mode simulates it)\n");
  // A million layers, tiny ones that fit a 1000-stage pipeline: refused before any work.
  json deep = scenario;
  deep["model"] = {
      {"layers", 1000000}, {"hidden", 64}, {"heads", 1}, {"seq_len", 128}, {"vocab", 1000}};
  deep["parallel"] = {{"tp", 1}, {"pp", 1000}, {"dp", 1}};
  deep["cluster"] = {{"instance", "p4d.24xlarge"}, {"nodes", 125}};
  deep["training"]["global_batch"] = 8;
  const std::string deep_file = dir_ + "/deep.json";
  std::ofstream(deep_file) << deep.dump();
  RunResult d = Run({"simulate", deep_file});
  EXPECT_EQ(d.exit_code, 1);
  EXPECT_EQ(d.err,
            "trainsim: huge: model.layers: 1000000 layers are more than the simulator takes on "
            "in reasonable time: at most 10000 (docs/model.md section 4)\n");
  // A billion nodes: the scenario's own bound.
  json wide = scenario;
  wide["cluster"]["nodes"] = 1000000000;
  const std::string wide_file = dir_ + "/wide.json";
  std::ofstream(wide_file) << wide.dump();
  RunResult w = Run({"simulate", wide_file});
  EXPECT_EQ(w.exit_code, 1);
  EXPECT_NE(w.err.find("cluster.nodes: expected an integer in [1, 1000000], got 1000000000"),
            std::string::npos)
      << w.err;
  // The estimate: the same figures the planner ranks by, in a few milliseconds.
  const json estimate = RunJson({"simulate", uneven, "--estimate", "--json"});
  EXPECT_EQ(estimate["gpus"], 1048576);
  EXPECT_EQ(estimate["estimated"], true);
  EXPECT_GT(estimate["step_time_s"].get<double>(), 0);
  EXPECT_NEAR(estimate["samples_per_s"].get<double>(),
              16384 / estimate["step_time_s"].get<double>(), 1e-9);
  RunResult text = Run({"simulate", uneven, "--estimate"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("estimated step time"), std::string::npos) << text.out;
  RunResult both = Run({"simulate", huge, "--estimate", "--full"});
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_EQ(Lines(both.err)[0], "trainsim: --full and --estimate exclude each other");
}

TEST_F(CliTest, TraceHasComputeSendAndDataParallelTracks) {
  const std::string trace_path = dir_ + "/trace.json";
  RunResult r = Run({"simulate", kSmallScenario, "--json", "--trace", trace_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("trace written to " + trace_path), std::string::npos) << r.err;
  json result = json::parse(r.out);
  ASSERT_EQ(result.at("memory").at("fits"), true);
  json trace = json::parse(ReadFile(trace_path), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(trace.is_discarded()) << "the trace is not JSON";
  ASSERT_TRUE(trace.at("traceEvents").is_array());

  std::map<std::pair<int, int>, std::string> track_names;  // (pid, tid) -> thread name.
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name") {
      track_names[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
    }
  }
  std::set<std::string> busy_tracks;
  std::set<int> busy_gpus;
  double end_us = 0;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const double ts = e.at("ts"), dur = e.at("dur");
    EXPECT_GE(ts, 0);
    EXPECT_GE(dur, 0);
    end_us = std::max(end_us, ts + dur);
    busy_tracks.insert(track_names[{e.at("pid"), e.at("tid")}]);
    busy_gpus.insert(e.at("pid").get<int>());
  }
  EXPECT_TRUE(busy_tracks.count("compute"));
  EXPECT_TRUE(busy_tracks.count("send activations"));
  EXPECT_TRUE(busy_tracks.count("send gradients"));
  EXPECT_TRUE(busy_tracks.count("data parallel"));
  EXPECT_GE(busy_gpus.size(), 2u);  // One per pipeline stage.
  const double step_us = 1e6 * result.at("step_time_s").get<double>();
  EXPECT_NEAR(end_us, step_us, 1e-6 * step_us);
}

struct BadScenario {
  const char* file;     // Under tests/cli/data/.
  const char* message;  // After "trainsim: tests/cli/data/<file>".
};

TEST_F(CliTest, BadScenarioNamesFileLineColumnAndField) {
  const BadScenario cases[] = {
      {"tp-not-dividing-heads.json", ":6:22: parallel.tp = 5 does not divide model.heads = 96"},
      {"unknown-field.json",
       ":7:5: unknown field cluster.gpus (known: instance, nodes, pricing, oversubscription, "
       "nodes_per_leaf, leaves_per_pod, pod_oversubscription, fabric, nics, profile, "
       "stragglers)"},
      {"malformed.json",
       ":4:35: invalid JSON: expected a string key after ',', got '}' (no trailing commas in "
       "JSON)"},
      {"wrong-type.json", ":5:21: training.global_batch: expected an integer >= 1, got \"64\""},
      {"missing-training.json", ":1:1: missing required field training"},
      {"no-such-file.json", ": cannot open file: No such file or directory"},
  };
  for (const BadScenario& c : cases) {
    const std::string path = std::string(kData) + c.file;
    RunResult r = Run({"simulate", path});
    EXPECT_EQ(r.exit_code, 1) << path;
    EXPECT_EQ(r.out, "") << path;
    EXPECT_EQ(r.err, "trainsim: " + path + c.message + "\n");
  }
}

TEST_F(CliTest, UnknownInstanceListsTheKnownOnes) {
  RunResult list = Run({"catalog", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  std::string known;
  for (const std::string& name : FirstColumn(list.out)) known += (known.empty() ? "" : ", ") + name;

  const std::string path = std::string(kData) + "unknown-instance.json";
  RunResult r = Run({"simulate", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "trainsim: " + path +
                       ":5:27: cluster.instance: unknown instance type \"p9.96xlarge\"; known: " +
                       known + "\n");
}

TEST_F(CliTest, AbsoluteScenarioPathIsReportedAsGiven) {
  const std::string path = dir_ + "/bad.json";
  std::ofstream(path) << "{\n  \"model\": \"gpt-1.7b\",\n}\n";
  RunResult r = Run({"simulate", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "trainsim: " + path +
                       ":3:1: invalid JSON: expected a string key after ',', got '}' (no trailing "
                       "commas in JSON)\n");
}

TEST_F(CliTest, ConfigurationThatDoesNotFitFails) {
  // GPT-3 175B on one p4d.24xlarge (tp 8, pp 1): about 350 GiB per 40 GiB GPU.
  const std::string path = std::string(kData) + "gpt3-175b-one-node.json";
  RunResult r = Run({"simulate", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  std::vector<std::string> lines = Lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind("trainsim: " + path + ": the configuration does not fit: ", 0), 0u)
      << r.err;
  EXPECT_NE(r.err.find("GiB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("p4d.24xlarge has 40 GiB per GPU"), std::string::npos) << r.err;
}

TEST_F(CliTest, UnknownOptionPrintsUsage) {
  ExpectUsageError(Run({"simulate", kGpt3Scenario, "--jsno"}), "unknown option --jsno");
}

TEST_F(CliTest, UnknownCommandPrintsUsage) {
  ExpectUsageError(Run({"simualte", kGpt3Scenario}), "unknown command \"simualte\"");
}

TEST_F(CliTest, NoArgumentsPrintsUsage) { ExpectUsageError(Run({}), "no command given"); }

// Every subcommand reads its arguments with the one parser (cli/args.h): --help prints its
// usage on stdout, an option without its value says what it needs.
TEST_F(CliTest, EverySubcommandAnswersHelpAndMissingValues) {
  for (const char* command :
       {"simulate", "plan", "sweep", "launch", "observe", "catalog", "models", "help"}) {
    SCOPED_TRACE(command);
    RunResult r = Run({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("usage:", 0), 0u) << r.out;
    EXPECT_EQ(r.err, "");
  }
  ExpectUsageError(Run({"simulate", kGpt3Scenario, "--trace"}), "--trace needs a file name");
  ExpectUsageError(Run({"catalog", "list", "--json"}), "unknown option --json");
  ExpectUsageError(Run({"models", "extra"}), "models takes no arguments");
  RunResult top = Run({"plan", kGpt3Scenario, "--top", "0"});
  EXPECT_EQ(top.exit_code, 1);
  EXPECT_EQ(Lines(top.err)[0], "trainsim: --top: expected a count from 1 to 100000, got \"0\"");
}

// ---- trainsim-calibrate, and its profile in trainsim simulate

RunResult RunCalibrate(const std::string& dir, const std::vector<std::string>& args) {
  return RunBinary(TRAINSIM_CALIBRATE_BINARY, dir, args);
}

TEST_F(CliTest, CpuCalibrationFeedsASimulationOfThisMachinesCores) {
  const std::string profile = dir_ + "/cpu.json";
  RunResult cal = RunCalibrate(dir_, {"--backend", "cpu", "--quick", "--out", profile});
  ASSERT_EQ(cal.exit_code, 0) << cal.err << cal.out;
  EXPECT_NE(cal.err.find("[gemm 1/"), std::string::npos) << cal.err;  // progress
  EXPECT_NE(cal.err.find("[collectives "), std::string::npos) << cal.err;
  EXPECT_NE(cal.out.find("memory copy"), std::string::npos) << cal.out;  // summary
  EXPECT_NE(cal.out.find("profile written to " + profile), std::string::npos) << cal.out;

  RunResult sim = Run({"simulate", "scenarios/local/cpu-transformer.json", "--profile", profile});
  ASSERT_EQ(sim.exit_code, 0) << sim.err << sim.out;
  EXPECT_NE(sim.out.find("local-cpu"), std::string::npos) << sim.out;
  EXPECT_NE(sim.out.find("hardware profile " + profile), std::string::npos) << sim.out;
  // Without the profile the machine is not in the catalog.
  RunResult bare = Run({"simulate", "scenarios/local/cpu-transformer.json"});
  EXPECT_EQ(bare.exit_code, 1);
  EXPECT_NE(bare.err.find("unknown instance type \"local-cpu\""), std::string::npos) << bare.err;
}

TEST_F(CliTest, CalibrateRejectsBadArgumentsAndAnAbsentGpu) {
  RunResult bad = RunCalibrate(dir_, {"--backend", "tpu"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--backend: expected cuda, cpu or auto, got \"tpu\""), std::string::npos)
      << bad.err;
  RunResult unknown = RunCalibrate(dir_, {"--fast"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("unknown argument \"--fast\"\nusage:"), std::string::npos);
  if (calibrate::ChooseBackend("cuda").ok()) GTEST_SKIP() << "a CUDA device is visible here";
  RunResult cuda = RunCalibrate(dir_, {"--backend", "cuda", "--out", dir_ + "/x.json"});
  EXPECT_EQ(cuda.exit_code, 1);
  EXPECT_NE(cuda.err.find("--backend cuda: "), std::string::npos) << cuda.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/x.json"));
}

TEST_F(CliTest, AProfileOfAnotherGpuIsRefusedByName) {
  const std::string profile = dir_ + "/h100.json";
  std::ofstream(profile) << R"({"version": 1, "gpu": "H100-SXM5-80GB",
                                "provenance": {"device": "NVIDIA H100 80GB HBM3"}})";
  RunResult r = Run({"simulate", kSmallScenario, "--profile", profile});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the profile measured H100-SXM5-80GB (NVIDIA H100 80GB HBM3), but instance"),
            std::string::npos)
      << r.err;
}

TEST_F(CliTest, CtrlCWritesWhatWasMeasuredAsAnIncompleteProfile) {
  const std::string profile = dir_ + "/cut.json";
  const std::string err_path = dir_ + "/calibrate.err";
  pid_t pid = fork();
  if (pid == 0) {
    int out = open("/dev/null", O_WRONLY);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    execl(TRAINSIM_CALIBRATE_BINARY, TRAINSIM_CALIBRATE_BINARY, "--backend", "cpu", "--quick",
          "--out", profile.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  // Interrupt once the collectives have started (the GEMMs and memory are done).
  for (int i = 0; i < 600 && ReadFile(err_path).find("[collectives 3/") == std::string::npos; ++i) {
    usleep(50 * 1000);
  }
  kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << ReadFile(err_path);
  EXPECT_EQ(WEXITSTATUS(status), 2) << ReadFile(err_path);
  EXPECT_NE(ReadFile(err_path).find("interrupted: writing what was measured"), std::string::npos);
  Expected<HardwareProfile> p = LoadHardwareProfile(profile);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_FALSE(p->provenance.complete);
  EXPECT_TRUE(p->gemm_tables.count("fp32"));
  EXPECT_EQ(p->failures.back().first, "calibration");
}

// --- trainsim plan ---------------------------------------------------------

constexpr char kPlanScenario[] = "tests/cli/data/plan-small.json";

TEST_F(CliTest, PlanPrintsTheRecommendationAndWritesThePlan) {
  const std::string out = dir_ + "/p.json";
  RunResult r = Run({"plan", kPlanScenario, "--out", out, "--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Recommendation:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Pareto front"), std::string::npos);
  EXPECT_NE(r.out.find("Scaling of the recommended layout"), std::string::npos);
  // The scaling table's samples/s band: "low-high" under its header.
  const size_t scaling = r.out.find("nodes     samples/s            80% band efficiency");
  ASSERT_NE(scaling, std::string::npos) << r.out;
  const json plan_points = json::parse(ReadFile(out))["scaling"]["points"];
  // Every point simulated (few enough), its estimate beside it.
  for (const json& p : plan_points) {
    EXPECT_TRUE(p["simulated"].get<bool>()) << p;
    EXPECT_GT(p["estimated_samples_per_s"].get<double>(), 0) << p;
  }
  char band[64];
  std::snprintf(band, sizeof band, "%.1f-%.1f",
                plan_points[0]["samples_per_s_band"][0].get<double>(),
                plan_points[0]["samples_per_s_band"][1].get<double>());
  EXPECT_NE(r.out.find(band, scaling), std::string::npos) << band << "\n" << r.out;
  EXPECT_NE(r.err.find("plan: estimated "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("plan written to " + out), std::string::npos);
  const json plan = json::parse(ReadFile(out));
  EXPECT_EQ(plan["kind"], "trainsim-plan");
  EXPECT_EQ(plan["candidates"].size(), 3u);
  EXPECT_TRUE(plan["recommendation"]["meets_constraints"].get<bool>());
  EXPECT_FALSE(plan["recommendation"]["reasons"].empty());
}

TEST_F(CliTest, PlanJsonIsTheWrittenFileAndTheSameEveryRun) {
  const std::string out = dir_ + "/p.json";
  RunResult first = Run({"plan", kPlanScenario, "--json", "--out", out});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, ReadFile(out));
  RunResult second = Run({"plan", kPlanScenario, "--json", "--out", out, "--jobs", "1"});
  EXPECT_EQ(first.out, second.out);
}

// Every way of buying side by side in the options table, and an option asked for without a
// price refused with the field to give.
TEST_F(CliTest, PlanComparesThePricingOptionsAndNamesAMissingPrice) {
  json s = json::parse(ReadFile(std::string(TRAINSIM_SOURCE_DIR) + "/" + kPlanScenario));
  s["search"]["instances"] = {"p4d.24xlarge"};
  s["search"].erase("budget_usd");
  s["search"]["deadline_hours"] = 100;
  s["search"]["pricing"] = {"on-demand",       "spot",          "capacity-block", "training-plan",
                            "savings-plan-3y", "spot-fallback", "spot-elastic"};
  const std::string no_price = dir_ + "/no-price.json";
  std::ofstream(no_price) << s.dump();
  RunResult r = Run({"plan", no_price, "--out", dir_ + "/p.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Lines(r.err).at(0),
            "trainsim: search.pricing[3]: \"training-plan\" has no price for any instance "
            "searched (p4d.24xlarge): give search.prices.\"p4d.24xlarge\".training_plan_usd_hr");
  s["search"]["prices"] = {
      {"p4d.24xlarge", {{"training_plan_usd_hr", 16}, {"savings_plan_3y_usd_hr", 12}}}};
  const std::string priced = dir_ + "/priced.json";
  std::ofstream(priced) << s.dump();
  r = Run({"plan", priced, "--out", dir_ + "/p.json", "--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line :
       {"  capacity-block ", "  training-plan ", "  savings-plan-3y ", "  spot-fallback ",
        "1 d booked for 1 instance, ", "of a 3-year commitment; the rest costs $",
        "of runs fall back to on-demand"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("capacity-block: p4d.24xlarge at $14.75 per instance-hour from the "
                       "catalog (source cb_pricing), valid until 2025-01-01"),
            std::string::npos)
      << r.out;
}

TEST_F(CliTest, PlanErrorsAreClear) {
  const struct {
    std::vector<std::string> args;
    std::string first_line;
  } kCases[] = {
      {{"plan"}, "trainsim: plan needs a scenario file"},
      {{"plan", kPlanScenario, "--top", "0"},
       "trainsim: --top: expected a count from 1 to 100000, got \"0\""},
      {{"plan", kPlanScenario, "--jobs"}, "trainsim: --jobs needs a count from 1 to 100000"},
      {{"plan", kPlanScenario, "--fast"}, "trainsim: unknown option --fast"},
      {{"plan", kPlanScenario, "--out", "/nonexistent-dir/p.json"},
       "trainsim: /nonexistent-dir/p.json: cannot write the plan"},
      {{"plan", "tests/cli/data/gpt-1.7b-small.json", "--out", dir_ + "/w.json"},
       "trainsim: gpt-1.7b-small: planning needs the amount of work: training.tokens, "
       "training.samples or training.epochs"},
  };
  for (const auto& c : kCases) {
    RunResult r = Run(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.first_line;
    EXPECT_EQ(Lines(r.err).at(0), c.first_line);
  }
}

}  // namespace
}  // namespace trainsim
