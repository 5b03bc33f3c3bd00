// `trainsim observe` as a user runs it: the real binary from the repository root, its JSON
// checked against `trainsim simulate --json` of the same scenario, and its refusals.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/hardware_profile.h"
#include "tests/test_util.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Result {
  int exit_code = -1;
  std::string out, err;
};

Result Trainsim(const std::string& args) {
  const std::string dir = fs::temp_directory_path() / ("observe_cli." + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string cmd = "cd '" + std::string(TRAINSIM_SOURCE_DIR) + "' && '" + TRAINSIM_BINARY +
                          "' " + args + " >'" + dir + "/out' 2>'" + dir + "/err'";
  const int st = std::system(cmd.c_str());
  Result r;
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = test::ReadFile(dir + "/out");
  r.err = test::ReadFile(dir + "/err");
  fs::remove_all(dir);
  return r;
}

constexpr char kLog[] = "tests/observe/data/megatron-synthetic.log";
constexpr char kScenario[] = "tests/observe/data/megatron-synthetic.scenario.json";

TEST(ObserveCli, ComparesTheSteadyStepWithTheSimulatedOne) {
  const Result r =
      Trainsim(std::string("observe ") + kLog + " --scenario " + kScenario + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  const Result sim = Trainsim(std::string("simulate ") + kScenario + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const double predicted = json::parse(sim.out)["step_time_s"].get<double>();
  EXPECT_EQ(j["runs"][0]["samples"], 4);
  EXPECT_DOUBLE_EQ(j["measured_step_s"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["compare"]["predicted_step_s"].get<double>(), predicted);
  EXPECT_DOUBLE_EQ(j["compare"]["error"].get<double>(), predicted / 2.0 - 1);
  EXPECT_TRUE(j["compare"].contains("inside_band"));
  // Throughput and MFU scale with the inverse of the step: the same work per step.
  const json simj = json::parse(sim.out);
  EXPECT_DOUBLE_EQ(j["compare"]["predicted_mfu"].get<double>(), simj["mfu"].get<double>());
  EXPECT_NEAR(j["compare"]["measured_mfu"].get<double>(),
              simj["mfu"].get<double>() * predicted / 2.0, 1e-12);
  EXPECT_NEAR(j["compare"]["measured_samples_per_s"].get<double>(), 512 / 2.0, 1e-9);
  // The same in words.
  const Result text = Trainsim(std::string("observe ") + kLog + " --scenario " + kScenario);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("megatron-synthetic simulated against 4 measured steps:"),
            std::string::npos)
      << text.out;
  // The synthetic log's step is shorter than the scenario's work allows: said.
  EXPECT_NE(text.out.find("above 100%: the run did less work per step than the scenario"),
            std::string::npos)
      << text.out;
}

// A DeepSpeed log gives a throughput; with a scenario its step is the global batch's worth.
TEST(ObserveCli, DeepSpeedThroughputBesideTheScenario) {
  const Result r = Trainsim("observe tests/observe/data/deepspeed-synthetic.log --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["measured_samples_per_s"].get<double>(), 128.0);
  EXPECT_EQ(j["runs"][0]["per_sample"], true);
  EXPECT_TRUE(j["measured_step_s"].is_null());
  const Result c = Trainsim(std::string("observe tests/observe/data/deepspeed-synthetic.log ") +
                            "--scenario " + kScenario + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const json k = json::parse(c.out);
  EXPECT_DOUBLE_EQ(k["measured_step_s"].get<double>(), 512 / 128.0);  // global batch 512
  EXPECT_DOUBLE_EQ(k["compare"]["error"].get<double>(),
                   k["compare"]["predicted_step_s"].get<double>() / 4.0 - 1);
}

TEST(ObserveCli, NcclTestsOutputIsDetected) {
  const Result r = Trainsim("observe tests/observe/data/nccl-tests-p5-2node.txt --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out)["nccl_tests"][0];
  EXPECT_EQ(j["op"], "all_reduce");
  EXPECT_EQ(j["ranks"], 16);
  EXPECT_EQ(j["nodes"], 2);
  EXPECT_EQ(j["rows"].size(), 9u);
}

// The network refitted from the nccl-tests rows, written as a profile that simulate takes.
TEST(ObserveCli, RefitWritesAProfileTheSimulatorTakes) {
  const std::string out =
      fs::temp_directory_path() / ("refit." + std::to_string(getpid()) + ".json");
  const Result r = Trainsim(
      "observe tests/observe/data/nccl-tests-p5-2node.txt --instance "
      "p5.48xlarge --refit " +
      out + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["runs"][0]["rows"].size(), 9u);
  EXPECT_TRUE(j["runs"][0]["rows"][0]["error"].is_null());  // measured 0.00
  const double e = j["refit"]["network_efficiency"].get<double>();
  EXPECT_NEAR(e, 0.94, 0.05);
  EXPECT_LT(j["refit"]["protocol_latency_scale"].get<double>(),
            j["refit"]["model_protocol_latency_scale"].get<double>());
  // The 2 KiB row (simulated 70% slow with the model's latency) comes closer.
  EXPECT_LT(std::fabs(j["refit"]["runs"][0]["rows"][2]["error"].get<double>()),
            std::fabs(j["runs"][0]["rows"][2]["error"].get<double>()));
  const json profile = json::parse(test::ReadFile(out));
  EXPECT_EQ(profile["network"]["instance"], "p5.48xlarge");
  EXPECT_EQ(profile["gpu"], "H100-SXM5-80GB");
  const Result sim = Trainsim("simulate scenarios/llama2-70b-p5.json --profile " + out);
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
  fs::remove(out);
  EXPECT_EQ(Trainsim("observe tests/observe/data/nccl-tests-p5-2node.txt --refit x.json").err,
            "trainsim: --refit needs --instance TYPE (the instance the run used)\n");
}

// A Kineto trace is detected; its steps' median wall and exposed communication (the steps of
// kineto_test.cc: 1000 and 900 us, 200 and 110 us exposed).
TEST(ObserveCli, KinetoTraceSteps) {
  const Result r = Trainsim("observe tests/observe/data/kineto-synthetic.json --warmup 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["traces"][0]["steps"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["measured_step_s"].get<double>(), 950e-6);
  EXPECT_DOUBLE_EQ(j["measured_exposed_comm_s"].get<double>(), 155e-6);
  // The trace is of an H100; the scenario's p4d has A100s.
  const Result other = Trainsim(std::string("observe tests/observe/data/kineto-synthetic.json ") +
                                "--scenario " + kScenario);
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_EQ(other.err,
            "trainsim: tests/observe/data/kineto-synthetic.json: traced on NVIDIA H100 80GB "
            "HBM3, but p4d.24xlarge has A100-SXM4-40GB: compare a trace with the hardware it ran "
            "on\n");
  const Result warm = Trainsim("observe tests/observe/data/kineto-synthetic.json --warmup 2");
  EXPECT_EQ(warm.exit_code, 1);
  EXPECT_EQ(warm.err,
            "trainsim: tests/observe/data/kineto-synthetic.json: no step after the warm-up of 2: "
            "profile more steps, or lower --warmup\n");
}

// The trace's collectives with their sizes (kineto_test.cc), placed on p5 nodes of 8 GPUs: the
// all-reduce's ranks 3, 11, ..., 59 span 8 nodes; the reduce-scatter's group, not recorded,
// packs one node. Each row simulated as nccl-tests would run it.
TEST(ObserveCli, TraceCollectivesBesideTheSimulated) {
  const Result r = Trainsim(
      "observe tests/observe/data/kineto-synthetic.json --warmup 0 --instance p5.48xlarge --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json c = json::parse(r.out)["collectives"];
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0]["op"], "all_reduce");
  EXPECT_EQ(c[0]["ranks"], 8);
  EXPECT_EQ(c[0]["nodes"], 8);
  EXPECT_DOUBLE_EQ(c[0]["rows"][0]["bytes"].get<double>(), 32.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(c[0]["rows"][0]["time_us"].get<double>(), 300);
  // busbw = 32 MiB / 300 us x 2 (8 - 1) / 8
  EXPECT_NEAR(c[0]["rows"][0]["busbw_GBps"].get<double>(), 33554432 / 300e-6 / 1e9 * 1.75, 1e-9);
  EXPECT_GT(c[0]["rows"][0]["simulated_busbw_GBps"].get<double>(), 0);
  EXPECT_EQ(c[1]["op"], "reduce_scatter");
  EXPECT_EQ(c[1]["nodes"], 1);
  // Without an instance the groups are not placed: no node count, nothing simulated.
  const json bare = json::parse(
      Trainsim("observe tests/observe/data/kineto-synthetic.json --warmup 0 --json").out);
  EXPECT_TRUE(bare["collectives"][0]["nodes"].is_null());
  EXPECT_FALSE(bare["collectives"][0]["rows"][0].contains("simulated_busbw_GBps"));
}

// A trace that contradicts the configuration or the profile is refused: another job size,
// traces of two runs, a profile of another GPU, a refit against a plan.
TEST(ObserveCli, TracesThatContradictAreRefused) {
  const std::string dir =
      fs::temp_directory_path() / ("observe_contradict." + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string text = test::ReadFile(std::string(TRAINSIM_SOURCE_DIR) +
                                    "/tests/observe/data/kineto-synthetic.json");
  auto replace = [](std::string s, const std::string& from, const std::string& to) {
    return s.replace(s.find(from), from.size(), to);
  };
  const std::string a100 = dir + "/a100.json", small = dir + "/small.json";
  std::ofstream(a100) << replace(text, "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB");
  std::ofstream(small) << replace(text, "\"world_size\": 64", "\"world_size\": 8");
  const Result size = Trainsim("observe " + a100 + " --scenario " + kScenario);
  EXPECT_EQ(size.exit_code, 1);
  EXPECT_EQ(size.err, "trainsim: " + a100 +
                          ": traced in a job of 64 ranks, but megatron-synthetic runs on 8 GPUs: "
                          "compare a trace with the configuration it ran\n");
  const Result two = Trainsim("observe tests/observe/data/kineto-synthetic.json " + small);
  EXPECT_EQ(two.exit_code, 1);
  EXPECT_EQ(two.err, "trainsim: " + small +
                         ": a job of 8 ranks, tests/observe/data/kineto-synthetic.json of 64: "
                         "give the traces of one run (one cluster) at a time\n");
  HardwareProfile profile;
  profile.provenance.backend = "cuda";
  profile.provenance.device = "NVIDIA A100-SXM4-40GB";
  profile.gpu = "A100-SXM4-40GB";
  const std::string p = dir + "/a100-profile.json";
  std::ofstream(p) << HardwareProfileToJson(profile);
  const Result other = Trainsim("observe tests/observe/data/kineto-synthetic.json --profile " + p +
                                " --refit " + dir + "/out.json");
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_EQ(other.err,
            "trainsim: tests/observe/data/kineto-synthetic.json: traced on NVIDIA "
            "H100 80GB HBM3, but " +
                p +
                " was measured on NVIDIA A100-SXM4-40GB: refit a profile of the "
                "hardware the trace ran on\n");
  const Result plan = Trainsim("observe tests/observe/data/kineto-synthetic.json --profile " + p +
                               " --plan x.plan.json --refit " + dir + "/out.json");
  EXPECT_EQ(plan.exit_code, 1);
  EXPECT_EQ(plan.err,
            "trainsim: --refit with a trace takes --scenario FILE (the configuration the run "
            "used), not --plan\n");
  EXPECT_FALSE(fs::exists(dir + "/out.json"));
  fs::remove_all(dir);
}

// SageMaker exports, detected from their first bytes: a CloudWatch get-metric-data export
// (GPUUtilization summed over 8 GPUs per host: 700% and 560% are 87.5% and 70% per GPU, 17.5
// points apart: algo-2 the straggler), Debugger files of two hosts joined, and a training job's
// log stream read as the Megatron-LM log it holds (sagemaker_test.cc has the formats).
TEST(ObserveCli, SageMakerExports) {
  const std::string d = "tests/observe/data/";
  const Result cw = Trainsim("observe " + d + "cloudwatch-get-metric-data.json --instance " +
                             "ml.p4d.24xlarge --json");
  ASSERT_EQ(cw.exit_code, 0) << cw.err;
  const json g = json::parse(cw.out)["sagemaker_metrics"]["gpu_utilization"];
  EXPECT_EQ(g["gpus_per_host"], 8);
  EXPECT_DOUBLE_EQ(g["mean_pct"].get<double>(), 78.75);
  EXPECT_EQ(g["straggler"], "llama-pretrain-2026-11-27-07-50-12-345/algo-2");
  // Without the instance the sum is not divided: said, not guessed.
  const Result bare = Trainsim("observe " + d + "cloudwatch-get-metric-data.json");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_NE(bare.out.find("give --instance TYPE to read it per GPU"), std::string::npos);
  const Result dbg = Trainsim("observe " + d + "debugger-1795766400.algo-1.json " + d +
                              "debugger-1795766400.algo-2.json --json");
  ASSERT_EQ(dbg.exit_code, 0) << dbg.err;
  const json dj = json::parse(dbg.out)["sagemaker_metrics"];
  EXPECT_EQ(dj["source"], "debugger");
  EXPECT_EQ(dj["gpu_utilization"]["hosts"].size(), 2u);
  const Result log = Trainsim("observe " + d + "logs-get-log-events-megatron.json --json");
  ASSERT_EQ(log.exit_code, 0) << log.err;
  const json lj = json::parse(log.out);
  EXPECT_EQ(lj["runs"][0]["format"], "megatron");
  EXPECT_DOUBLE_EQ(lj["measured_step_s"].get<double>(), 2.0);
  // An export of two hosts' streams is one run per stream.
  const Result two = Trainsim("observe " + d + "logs-filter-log-events-2hosts.json");
  EXPECT_EQ(two.exit_code, 1);
  EXPECT_NE(two.err.find("events of 2 log streams"), std::string::npos) << two.err;
  const Result one = Trainsim("observe " + d + "logs-filter-log-events-2hosts.json --log-stream " +
                              "llama-pretrain-2026-11-27-07-50-12-345/algo-2-1795765812 --json");
  EXPECT_EQ(one.exit_code, 0) << one.err;
  const Result misplaced = Trainsim("observe " + std::string(kLog) + " --log-stream x");
  EXPECT_EQ(misplaced.exit_code, 1);
  EXPECT_EQ(misplaced.err,
            "trainsim: --log-stream applies to a CloudWatch Logs export (--format "
            "cloudwatch-logs)\n");
}

// torchtitan prints tokens per second per GPU: a step is the scenario's tokens per step per GPU
// (global batch x sequence length / GPUs) at that rate.
TEST(ObserveCli, TorchtitanThroughputBecomesAStep) {
  const Result r =
      Trainsim("observe tests/observe/data/torchtitan-synthetic.log --json --scenario " +
               std::string(kScenario));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_TRUE(j["runs"][0]["per_token"].get<bool>());
  // The scenario's tokens per step per GPU, from its simulation.
  const json sim = json::parse(Trainsim(std::string("simulate ") + kScenario + " --json").out);
  const double tokens_per_gpu = sim["tokens_per_s"].get<double>() /
                                sim["samples_per_s"].get<double>() * 512 /
                                sim["gpus"].get<double>();
  EXPECT_NEAR(j["measured_step_s"].get<double>(),
              j["runs"][0]["median_step_s"].get<double>() * tokens_per_gpu, 1e-9);
  EXPECT_NEAR(j["measured_tokens_per_s_per_gpu"].get<double>(),
              1 / j["runs"][0]["median_step_s"].get<double>(), 1e-6);
}

// DeepSpeed's engine timers beside its throughput, and the memory logs report beside the
// simulated memory (run_log_deepspeed_test.cc has the figures).
TEST(ObserveCli, EngineTimersAndMemory) {
  const Result r = Trainsim("observe tests/observe/data/deepspeed-timers-synthetic.log --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json run = json::parse(r.out)["runs"][0];
  EXPECT_DOUBLE_EQ(run["breakdown"]["fwd_ms"].get<double>(), 600);
  EXPECT_DOUBLE_EQ(run["breakdown"]["step_ms"].get<double>(), 80);
  EXPECT_DOUBLE_EQ(run["memory"]["max_allocated_gib"].get<double>(), 19.61);
  EXPECT_EQ(run["figure"], "logged");
  const Result only =
      Trainsim("observe tests/observe/data/deepspeed-timers-only-synthetic.log --json");
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_EQ(json::parse(only.out)["runs"][0]["figure"], "engine_timers");
  const Result c =
      Trainsim(std::string("observe ") + kLog + " --scenario " + kScenario + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const json cmp = json::parse(c.out)["compare"];
  EXPECT_GT(cmp["predicted_memory_gib"].get<double>(),
            cmp["predicted_memory_without_reserve_gib"].get<double>());
  EXPECT_TRUE(cmp["measured_max_allocated_gib"].is_number());
}

// A Chakra execution trace is detected from its bytes and read as a trace (chakra_test.cc).
TEST(ObserveCli, ChakraTrace) {
  const Result r = Trainsim("observe tests/observe/data/chakra-synthetic.0.et --warmup 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["traces"][0]["steps"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["traces"][0]["steps"][0]["wall_s"].get<double>(), 1000e-6);
}

TEST(ObserveCli, RefusalsExitOneWithTheReason) {
  struct Case {
    std::string args, first_line;
  };
  const Case kCases[] = {
      {"observe", "trainsim: observe needs at least one file"},
      {std::string("observe ") + kLog + " --scenario tests/launch/data/tp-pp-spot.json",
       "trainsim: tests/observe/data/megatron-synthetic.log: the run's global batch is 512, the "
       "scenario's 64: compare a run with the configuration it ran"},
      {std::string("observe ") + kLog + " --format hf",
       "trainsim: --format: unknown log format \"hf\"; expected megatron, deepspeed, "
       "trainsim-local, torchtitan or hf-trainer (or nccl-tests, kineto, chakra, cloudwatch, "
       "cloudwatch-logs, debugger)"},
      {std::string("observe ") + kLog + " --format deepspeed",
       "trainsim: tests/observe/data/megatron-synthetic.log: no DeepSpeed throughput line "
       "(\"global_step=G, ..., CurrSamplesPerSec=S, ...\")"},
      {std::string("observe ") + kLog + " --warmup 9",
       "trainsim: tests/observe/data/megatron-synthetic.log: 5 step lines, none after the "
       "warm-up of 5: log more steps, or lower --warmup"},
      {std::string("observe ") + kLog + " --scenario a.json --plan b.json",
       "trainsim: --scenario and --plan: give one configuration to compare with"},
      {"observe README.md --format trainsim-local",
       "trainsim: README.md: no trainsim-train step line ({\"step\": N, \"loss\": L, \"step_s\": "
       "S})"},
  };
  for (const Case& c : kCases) {
    const Result r = Trainsim(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args;
    EXPECT_EQ(r.err.substr(0, r.err.find('\n')), c.first_line) << c.args;
  }
  EXPECT_EQ(Trainsim("observe --help").exit_code, 0);
}

}  // namespace
}  // namespace trainsim
