#include "launch/local_run.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/durable_file.h"
#include "sim/simulate.h"

namespace trainsim::launch {
namespace {

using nlohmann::json;

// A plan's transformer trains here as it is when it is about this small.
bool SmallEnough(const ModelSpec& m) {
  return m.kind == ModelKind::kTransformer && m.layers <= 8 && m.hidden <= 1024 &&
         m.seq_len <= 256 && m.vocab <= 32768 && m.ffn_hidden <= 4096;
}

// The largest divisor of `ranks` that is at most `limit`.
int LargestDivisorUpTo(int ranks, int limit) {
  for (int d = std::min(ranks, std::max(1, limit)); d > 1; --d) {
    if (ranks % d == 0) return d;
  }
  return 1;
}

}  // namespace

Expected<LocalRunConfig> SizeLocalRun(const LaunchPlan& plan, const LocalOptions& options) {
  if (options.ranks < 1) {
    return Status::InvalidInput("--ranks: expected at least 1 process, got " +
                                std::to_string(options.ranks));
  }
  const Scenario& s = plan.scenario;
  LocalRunConfig run;
  local::RunConfig& c = run.config;
  // The defaults of a scaled-down model: 4 layers, hidden 512, 8 heads, seq 128, vocab 256.
  c.layers = 4, c.hidden = 512, c.heads = 8, c.ffn_hidden = 2048, c.seq_len = 128, c.vocab = 256;
  if (SmallEnough(s.model)) {
    c.layers = s.model.layers;
    c.hidden = s.model.hidden;
    c.heads = s.model.heads;
    c.ffn_hidden = s.model.ffn_hidden;
    c.seq_len = s.model.seq_len;
    c.vocab = s.model.vocab;
  } else {
    run.scaled_down = true;
  }
  c.pp = LargestDivisorUpTo(options.ranks, std::min(s.parallel.pp, c.layers));
  c.dp = options.ranks / c.pp;
  if (c.layers % c.pp) c.layers += c.pp - c.layers % c.pp;
  c.micro_batch = std::min(s.training.micro_batch, 4);
  // Enough microbatches to fill the pipeline twice (two for data parallel alone).
  const int64_t microbatches = c.pp > 1 ? 2 * c.pp : 2;
  c.global_batch = static_cast<int64_t>(c.dp) * c.micro_batch * microbatches;
  c.lr = 3e-3;
  c.steps = options.steps;
  c.warmup_steps = std::min(options.warmup_steps, std::max(0, options.steps - 1));
  c.checkpoint_every = options.checkpoint_every;
  c.checkpoint_dir = (std::filesystem::path(options.out_dir) / "local" / "checkpoints").string();
  c.resume = options.resume;
  c.backend = options.device == "cuda" ? local::Backend::kCuda : local::Backend::kCpu;
  if (c.backend == local::Backend::kCpu) {
    c.trace_file = (std::filesystem::path(options.out_dir) / "local" / "trace.json").string();
  }
  return run;
}

Expected<int> ProfileCores(const std::string& profile) {
  Expected<HardwareProfile> p = LoadHardwareProfile(profile);
  if (!p.ok()) return p.status();
  const json catalog = json::parse(p->catalog_json, nullptr, false);
  if (p->provenance.backend != "cpu" || !catalog.is_object() || !catalog.contains("instances") ||
      catalog["instances"].empty()) {
    return Status::InvalidInput(profile +
                                ": not a cpu profile (the local run needs one from "
                                "`trainsim-calibrate --backend cpu`)");
  }
  return catalog["instances"][0].value("gpus", 0);
}

Expected<Scenario> PredictionScenario(const local::RunConfig& c, const std::string& profile,
                                      const std::string& instance, const std::string& path,
                                      const Catalog& catalog) {
  const int ranks = c.pp * c.dp;
  if (instance == "local-cpu") {
    Expected<int> cores = ProfileCores(profile);
    if (!cores.ok()) return cores.status();
    if (*cores != ranks) {
      return Status::InvalidInput(profile + ": the profile measured " + std::to_string(*cores) +
                                  " cores, the run uses " + std::to_string(ranks) +
                                  " ranks; run with --ranks " + std::to_string(*cores) +
                                  " for a prediction");
    }
  } else if (const InstanceType* t = catalog.Find(instance); t && t->gpus != ranks) {
    return Status::InvalidInput("a prediction on " + instance + " needs --ranks " +
                                std::to_string(t->gpus) + " (its GPUs), not " +
                                std::to_string(ranks));
  }
  const json scenario = {
      {"version", 1},
      {"name", "local-run"},
      {"model",
       {{"layers", c.layers},
        {"hidden", c.hidden},
        {"heads", c.heads},
        {"ffn_hidden", c.ffn_hidden},
        {"seq_len", c.seq_len},
        {"vocab", c.vocab}}},
      {"training",
       {{"global_batch", c.global_batch},
        {"micro_batch", c.micro_batch},
        {"precision", "fp32"},
        {"optimizer", "adam"},
        {"recompute", "none"},
        {"flash_attention", false}}},  // the local layer stores its softmax (layer.cc)
      {"cluster",
       {{"instance", instance},
        {"profile", std::filesystem::absolute(profile).lexically_normal().string()}}},
      {"parallel", {{"tp", 1}, {"pp", c.pp}, {"dp", c.dp}, {"schedule", "1f1b"}}}};
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (Status st = WriteFileDurably(path, scenario.dump(2) + "\n"); !st.ok()) return st;
  return LoadScenarioFile(path, catalog);
}

Expected<LocalReport> RunLocal(const LaunchPlan& plan, const LocalOptions& options,
                               const Catalog& catalog, LocalObserver* observer) {
  LocalReport report;
  Expected<LocalRunConfig> config = SizeLocalRun(plan, options);
  if (!config.ok()) return config.status();
  report.config = *config;
  const std::filesystem::path dir = std::filesystem::path(options.out_dir) / "local";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::InvalidInput(dir.string() + ": cannot create: " + ec.message());
  if (!options.profile.empty()) {
    const std::string instance = options.device == "cuda" ? options.gpu_instance : "local-cpu";
    Expected<Scenario> s = PredictionScenario(report.config.config, options.profile, instance,
                                              (dir / "scenario.json").string(), catalog);
    if (!s.ok()) return s.status();
    Expected<sim::SimulationResult> r = sim::Simulate(*s, sim::SimulateOptions());
    if (!r.ok()) return r.status();
    if (r->simulated) report.predicted_step_s = r->step.step_time_s;
  }
  report.config_file = (dir / "config.json").string();
  if (Status st =
          WriteFileDurably(report.config_file, local::RunConfigToJson(report.config.config));
      !st.ok()) {
    return st;
  }
  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  report.command = MpirunCommand(options.ranks, TrainerPath(), report.config_file, geteuid() == 0,
                                 cores > 0 ? cores : 1);
  if (observer) observer->Starting(report);
  Expected<TrainerResult> run = RunTrainer(report.command, observer, options.stop);
  if (!run.ok()) return run.status();
  report.run = std::move(*run);
  // The trainer's step lines as it printed them, for `trainsim observe` (docs/observe.md).
  {
    const std::string steps_file = (dir / "steps.jsonl").string();
    std::string lines;
    for (const StepLine& l : report.run.steps) {
      lines += json{{"step", l.step}, {"loss", l.loss}, {"step_s", l.step_s}}.dump() + "\n";
    }
    if (report.run.summary) lines += json{{"summary", *report.run.summary}}.dump() + "\n";
    if (Status st = WriteFileDurably(steps_file, lines); !st.ok()) return st;
  }
  // null when no step ran after warm-up
  if (report.run.summary && report.run.summary->value("median_step_s", json()).is_number()) {
    report.measured_step_s = (*report.run.summary)["median_step_s"].get<double>();
  }
  if (report.measured_step_s && report.predicted_step_s && *report.measured_step_s > 0) {
    report.error = *report.predicted_step_s / *report.measured_step_s - 1;
  }
  return report;
}

}  // namespace trainsim::launch
