// Simulator speed and memory: wall time and peak RSS of simulating one
// training step of GPT-3-class models on p4d.24xlarge, 8 to 131,072 GPUs, and
// of GPT 1T on 3072 and 8192 GPUs (p4de.24xlarge), with the slope of log(wall)
// against log(GPUs) over the GPT-3 175B rows from 1024 GPUs (issue 16).
// Prints a markdown table, not pass/fail (DESIGN.md section 8).
//
// The 1024-GPU case is scenarios/gpt3-175b-p4d.json itself; the others keep
// tp 8, 96 microbatches per pipeline (global batch = 96 x dp), micro batch 1,
// bf16, Adam, ZeRO 1, full recompute and 1F1B, and change dp (and for 8 to 64
// GPUs pp and the model: GPT-3 175B does not fit on 64 A100 40GB, so smaller
// Megatron presets stand in). A second series, 1024 to 1,048,576 GPUs, runs
// GPT-3 175B with 8 microbatches per pipeline (global batch 8 x dp, as large
// clusters run; the slope is fitted up to 131,072); from 8192 GPUs each case
// runs once, and a size is not run once the one before it took more than
// kLargeMaxS. "nodes built" is what the fold (sim/fold.h) builds of the cluster.
//
// Usage: sim_speed (run it under `taskset -c 0` for the one-core figure).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "core/scenario.h"
#include "sim/fold.h"
#include "sim/simulate.h"
#include "sim/workload.h"

namespace trainsim::bench {
namespace {

using nlohmann::json;

constexpr int kMicrobatchesPerPipeline = 96;
constexpr int kRepetitions = 3;         // reduced mode: the median wall time is reported
constexpr int kFullModeMaxGpus = 128;   // full mode only for the small cases
constexpr double kFullModeMaxS = 60.0;  // stop full mode once one run takes longer
constexpr int kLargeGpus = 8192;        // from here: one run per case, and the cap below
constexpr double kLargeMaxS = 60.0;     // skip larger cases once one takes longer

struct LadderCase {
  int gpus = 0;
  const char* model = "";
  int pp = 1, dp = 1;
  const char* file = nullptr;  // a scenario file to load instead (the 1024-GPU case)
  const char* instance = "p4d.24xlarge";
  int global_batch = 0;          // 0: kMicrobatchesPerPipeline x dp
  const char* fabric = nullptr;  // cluster.fabric (a catalog fabric), or the default
  // An explicit model object instead of the preset `model`, with expert parallelism.
  const char* model_json = nullptr;
  int ep = 1;
  int tp = 8;
};

// Issue 17's MoE row: 64 fine-grained experts (top-2, 1792 wide) in a Mixtral-shaped
// transformer, about 47B parameters.
constexpr char kMoe64[] = R"({"name": "moe-64x1.8k", "layers": 32, "hidden": 4096, "heads": 32,
    "kv_heads": 8, "ffn_hidden": 14336, "seq_len": 4096, "vocab": 32000, "mlp": "swiglu",
    "bias": false, "tied_embeddings": false, "learned_positions": false, "experts": 64,
    "experts_per_token": 2, "expert_ffn_hidden": 1792})";

const std::vector<LadderCase>& Ladder() {
  static const std::vector<LadderCase> ladder = {
      {8, "gpt-7.5b", 1, 1},
      {16, "gpt-18.4b", 2, 1},
      {32, "gpt-39.1b", 4, 1},
      {64, "gpt-39.1b", 8, 1},
      {128, "gpt3-175b", 8, 2},
      {256, "gpt3-175b", 8, 4},
      {512, "gpt3-175b", 8, 8},
      {1024, "gpt3-175b", 8, 16, TRAINSIM_SOURCE_DIR "/scenarios/gpt3-175b-p4d.json"},
      {2048, "gpt3-175b", 8, 32},
      // Issue 3's large cases: Megatron-LM's 1T configuration (Narayanan et
      // al. 2021, Table 1: tp 8, pp 64, batch 3072) on A100 80GB nodes, and
      // the same pipeline with dp 16.
      {3072, "gpt-1t", 64, 6, nullptr, "p4de.24xlarge", 3072},
      {4096, "gpt3-175b", 8, 64},
      {8192, "gpt-1t", 64, 16, nullptr, "p4de.24xlarge", 8192},
      // Issue 16: GPT-3 175B at the scale of 2025-26's largest clusters, 8
      // microbatches per pipeline; the slope is fitted on this series.
      {1024, "gpt3-175b", 8, 16, nullptr, "p4d.24xlarge", 8 * 16},
      {4096, "gpt3-175b", 8, 64, nullptr, "p4d.24xlarge", 8 * 64},
      {8192, "gpt3-175b", 8, 128, nullptr, "p4d.24xlarge", 8 * 128},
      {16384, "gpt3-175b", 8, 256, nullptr, "p4d.24xlarge", 8 * 256},
      {32768, "gpt3-175b", 8, 512, nullptr, "p4d.24xlarge", 8 * 512},
      {65536, "gpt3-175b", 8, 1024, nullptr, "p4d.24xlarge", 8 * 1024},
      {131072, "gpt3-175b", 8, 2048, nullptr, "p4d.24xlarge", 8 * 2048},
      // The same on a DGX B200 SuperPOD's three-tier fabric (pods of 4 leaves of
      // 32 nodes under a core): stages of 16 and 64 leaves over 4 and 16 pods.
      {32768, "gpt3-175b", 8, 512, nullptr, "p4d.24xlarge", 8 * 512, "dgx-superpod-b200"},
      {131072, "gpt3-175b", 8, 2048, nullptr, "p4d.24xlarge", 8 * 2048, "dgx-superpod-b200"},
      // Issue 17: a 64-expert MoE on 1024 H100s, tp 2 pp 4 dp 128, expert parallel 8.
      {1024, "moe-64x1.8k", 4, 128, nullptr, "p5.48xlarge", 1024, nullptr, kMoe64, 8, 2},
      // Beyond the slope's range: the 1,048,576 GPUs of issue 16's table.
      {1048576, "gpt3-175b", 8, 16384, nullptr, "p4d.24xlarge", 8 * 16384},
  };
  return ladder;
}

std::string ScenarioJson(const LadderCase& c) {
  json s = {
      {"version", 1},
      {"name", std::string(c.model) + "-" + std::to_string(c.gpus)},
      {"model", c.model},
      {"training",
       {{"global_batch", c.global_batch > 0 ? c.global_batch : kMicrobatchesPerPipeline * c.dp},
        {"micro_batch", 1},
        {"precision", "bf16"},
        {"optimizer", "adam"},
        {"recompute", "full"}}},
      {"cluster", {{"instance", c.instance}, {"nodes", c.gpus / 8}}},
      {"parallel",
       {{"tp", c.tp}, {"pp", c.pp}, {"dp", c.dp}, {"zero_stage", 1}, {"schedule", "1f1b"}}}};
  if (c.fabric != nullptr) s["cluster"]["fabric"] = c.fabric;
  if (c.model_json != nullptr) {
    s["model"] = json::parse(c.model_json);
    s["parallel"]["ep"] = c.ep;
  }
  return s.dump();
}

Expected<Scenario> BuildScenario(const LadderCase& c, const Catalog& catalog) {
  if (c.file != nullptr) return LoadScenarioFile(c.file, catalog);
  return ParseScenario(ScenarioJson(c), "sim_speed", catalog);
}

double MaxRssMiB(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux: KiB
}

struct Run {
  bool ok = false, fits = false;
  std::string error;
  double step_s = 0, wall_s = 0;
  int simulated_gpus = 0, distinct_collectives = 0;
};

// One Simulate() call, timed. The simulation runs in a forked child
// (sim/isolate.h) that flushes the stdio buffers it inherits: flush first.
Run TimedSimulate(const Scenario& s, sim::SimMode mode) {
  std::fflush(stdout);
  sim::SimulateOptions options;
  options.mode = mode;
  const auto start = std::chrono::steady_clock::now();
  Expected<sim::SimulationResult> r = sim::Simulate(s, options);
  Run run;
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!r.ok()) {
    run.error = r.status().message();
    return run;
  }
  run.ok = true;
  run.fits = r->memory.fits;
  run.step_s = r->step.step_time_s;
  run.simulated_gpus = r->step.simulated_gpus;
  run.distinct_collectives = r->step.distinct_collectives;
  return run;
}

// Reduced mode, kRepetitions times; the run with the median wall time.
Run MedianReducedRun(const Scenario& s) {
  std::vector<Run> runs;
  const int repetitions = s.total_gpus() >= kLargeGpus ? 1 : kRepetitions;
  for (int i = 0; i < repetitions; ++i) {
    runs.push_back(TimedSimulate(s, sim::SimMode::kReduced));
    if (!runs.back().ok || !runs.back().fits) return runs.back();
  }
  std::sort(runs.begin(), runs.end(),
            [](const Run& a, const Run& b) { return a.wall_s < b.wall_s; });
  return runs[runs.size() / 2];
}

struct Row {
  LadderCase c;
  int nodes = 0, tp = 0, pp = 0, dp = 0;
  int built = 0;  // nodes the simulation builds (sim/fold.h)
  long long global_batch = 0;
  std::string model;
  Run reduced, full;
  bool full_run = false;
  bool skipped = false;         // a smaller GPT-3 case took longer than kLargeMaxS
  double children_rss_mib = 0;  // running max over all simulation children so far
  std::string error;
};

Row MeasureReduced(const LadderCase& c, const Catalog& catalog) {
  Row row;
  row.c = c;
  Expected<Scenario> s = BuildScenario(c, catalog);
  if (!s.ok()) {
    row.error = s.status().message();
    return row;
  }
  row.nodes = s->cluster.nodes;
  row.tp = s->parallel.tp;
  row.pp = s->parallel.pp;
  row.dp = s->parallel.dp;
  row.global_batch = s->training.global_batch;
  row.model = s->model.name;
  Expected<sim::StepProgram> program = sim::BuildStepProgram(*s, sim::ModelParams{});
  row.built = sim::BuiltNodes(*s, sim::PlanFold(*s, sim::SimMode::kReduced, sim::ModelParams{},
                                                program.ok() ? &*program : nullptr));
  row.reduced = MedianReducedRun(*s);
  row.children_rss_mib = MaxRssMiB(RUSAGE_CHILDREN);
  if (!row.reduced.ok) row.error = row.reduced.error;
  if (row.reduced.ok && !row.reduced.fits) row.error = "does not fit in GPU memory";
  return row;
}

// Full mode for the small cases, after every reduced run so that the RSS
// column above stays the reduced mode's.
void MeasureFull(std::vector<Row>* rows, const Catalog& catalog) {
  for (Row& row : *rows) {
    if (row.c.gpus > kFullModeMaxGpus || !row.error.empty()) continue;
    Expected<Scenario> s = BuildScenario(row.c, catalog);
    if (!s.ok()) continue;
    row.full = TimedSimulate(*s, sim::SimMode::kFull);
    row.full_run = true;
    if (row.full.wall_s > kFullModeMaxS) break;
  }
}

void PrintHeader() {
  std::printf(
      "## Simulator speed: one training step, GPT on p4d.24xlarge (1T: p4de.24xlarge)\n\n"
      "tp 8, micro batch 1, %d microbatches per pipeline, bf16, Adam, ZeRO 1, full recompute,\n"
      "1F1B. 8-64 GPUs use smaller presets: GPT-3 175B does not fit on 64 A100 40GB\n"
      "(16 B of weights, gradients and Adam state per parameter x 175e9 = 2.8 TB > 64 x 40 GiB).\n"
      "The 3072- and 8192-GPU rows are GPT 1T with pp 64 and 512 microbatches per pipeline.\n"
      "The rows with global batch 8 x dp are the large series (8 microbatches per pipeline).\n"
      "wall s: Simulate() in reduced mode (default), median of %d (one run from 8192 GPUs),\n"
      "steady_clock.\n"
      "peak RSS: getrusage(RUSAGE_CHILDREN).ru_maxrss after the case, i.e. the largest\n"
      "simulation child so far (the ladder runs small to large, so it is this case's peak\n"
      "unless a smaller case used more). The child shares the parent's pages copy-on-write\n"
      "and counts only those it touches; the workload and memory model are built in the\n"
      "parent (RUSAGE_SELF below), so parent + child bounds the total. Full mode (every GPU\n"
      "and message simulated) runs "
      "after all reduced cases, for <= %d GPUs.\n\n"
      "| GPUs | nodes | nodes built | model | tp/pp/dp | global batch | simulated step s | "
      "GPUs simulated | distinct collectives | wall s | peak RSS MiB | full-mode step s | "
      "full-mode wall s |\n"
      "|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      kMicrobatchesPerPipeline, kRepetitions, kFullModeMaxGpus);
}

void PrintRow(const Row& r) {
  if (r.skipped) {  // the case as asked: 8 GPUs per node, tp 8
    std::printf("| %d | %d | - | %s | 8/%d/%d | %d | ", r.c.gpus, r.c.gpus / 8, r.c.model, r.c.pp,
                r.c.dp, r.c.global_batch);
  } else {
    std::printf("| %d | %d | %d | %s%s%s | %d/%d/%d | %lld | ", r.c.gpus, r.nodes, r.built,
                r.model.c_str(), r.c.fabric ? ", " : "", r.c.fabric ? r.c.fabric : "", r.tp, r.pp,
                r.dp, r.global_batch);
  }
  if (r.skipped) {
    std::printf("not run: the size before took more than %.0f s | - | - | - | - | - | - |\n",
                kLargeMaxS);
    return;
  }
  if (!r.error.empty()) {
    std::printf("%s | - | - | %.2f | %.0f | - | - |\n", r.error.c_str(), r.reduced.wall_s,
                r.children_rss_mib);
    return;
  }
  std::printf("%.3f | %d | %d | %.2f | %.0f | ", r.reduced.step_s, r.reduced.simulated_gpus,
              r.reduced.distinct_collectives, r.reduced.wall_s, r.children_rss_mib);
  if (!r.full_run) {
    std::printf("- | %s |\n", r.c.gpus > kFullModeMaxGpus ? "not run" : "skipped");
  } else if (!r.full.ok) {
    std::printf("- | failed: %s |\n", r.full.error.c_str());
  } else {
    std::printf("%.3f | %.2f |\n", r.full.step_s, r.full.wall_s);
  }
}

int Main() {
  Expected<Catalog> catalog = Catalog::LoadBuiltin(Catalog::DefaultDir());
  if (!catalog.ok()) {
    std::fprintf(stderr, "sim_speed: %s\n", catalog.status().message().c_str());
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<Row> rows;
  bool too_slow = false;  // the last large GPT-3 case took longer than kLargeMaxS
  for (const LadderCase& c : Ladder()) {
    if (c.gpus >= kLargeGpus && too_slow) {
      Row skipped;
      skipped.c = c;
      skipped.skipped = true;
      rows.push_back(skipped);
      continue;
    }
    std::fprintf(stderr, "sim_speed: %s on %d GPUs\n", c.model, c.gpus);
    rows.push_back(MeasureReduced(c, *catalog));
    if (c.gpus >= kLargeGpus) too_slow = rows.back().reduced.wall_s > kLargeMaxS;
  }
  MeasureFull(&rows, *catalog);
  PrintHeader();
  for (const Row& r : rows) PrintRow(r);
  // Least-squares slope of log(wall) on log(GPUs) over the second series.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, largest = 0;
  for (const Row& r : rows) {
    if (r.model != "gpt3-175b" || r.global_batch != 8LL * r.dp || r.skipped || !r.error.empty() ||
        r.c.gpus > 131072 || r.c.fabric != nullptr)
      continue;
    const double x = std::log(r.c.gpus), y = std::log(r.reduced.wall_s);
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
    largest = r.c.gpus;
  }
  if (n >= 2) {
    std::printf(
        "\nslope of log(wall s) against log(GPUs), GPT-3 175B, 8 microbatches, 1024 to %.0f GPUs "
        "(%.0f rows): "
        "%.2f\n",
        largest, n, (n * sxy - sx * sy) / (n * sxx - sx * sx));
  }
  std::printf("\nbench process itself (RUSAGE_SELF): peak RSS %.0f MiB\n", MaxRssMiB(RUSAGE_SELF));
  std::printf("total bench wall time %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace
}  // namespace trainsim::bench

int main() { return trainsim::bench::Main(); }
