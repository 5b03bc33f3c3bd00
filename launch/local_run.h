// `trainsim launch PLAN --backend local`: runs the plan's structure for real
// on this machine (trainsim-train under mpirun, docs/local-run.md) and sets
// each measured step beside the simulator's prediction for the same
// configuration on this machine's calibration profile.
//
// The plan is for a cluster; the local run keeps its shape where the machine
// allows: pipeline stages (as many as the ranks allow, up to the plan's pp),
// data parallel over the rest, the plan's micro batch (up to 4). The model is
// the plan's when it is small enough to train here, else a small transformer
// (docs/local-run.md, "Sizing").
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/catalog.h"
#include "launch/local/run_config.h"
#include "launch/plan_file.h"
#include "launch/trainer_process.h"

namespace trainsim::launch {

struct LocalOptions {
  int ranks = 2;  // MPI processes (the profile's core count when a profile is given)
  int steps = 30;
  int warmup_steps = 3;
  int checkpoint_every = 10;  // 0 = never
  bool resume = false;
  std::string out_dir = "launch-out";  // the run's files go to OUT/local/
  std::string profile;         // profile from trainsim-calibrate (cpu, or cuda with --device cuda)
  std::string device = "cpu";  // cpu: one rank per core; cuda: one rank per GPU
  // --device cuda: the instance type whose GPU the profile measured, one node
  // (the plan's own type); its GPU count must equal the ranks.
  std::string gpu_instance;
  // Set from any thread, stops the trainer after its step as Ctrl-C does
  // (RunTrainer); the report then says interrupted. Null: Ctrl-C only.
  const std::atomic<bool>* stop = nullptr;
};

// The trainer's run configuration (trainsim-train --config, docs/local-run.md), as sized for a
// plan.
struct LocalRunConfig {
  local::RunConfig config;
  bool scaled_down = false;  // the plan's model was too large and was replaced
};

// The local run for `plan` on `options.ranks` ranks. Fails when the ranks
// cannot hold the layout (ranks < 1).
Expected<LocalRunConfig> SizeLocalRun(const LaunchPlan& plan, const LocalOptions& options);

// The cores a cpu profile measured (its local-cpu instance's "GPUs").
Expected<int> ProfileCores(const std::string& profile);

// The scenario the simulator predicts the local run with: fp32, Adam, tp 1,
// the run's pp and dp, on one node of `instance` -- "local-cpu" from a cpu
// profile (its cores must equal the ranks), or for the cuda backend a catalog
// type with the profile's GPU (its GPU count must equal the ranks). Written
// to `path` (kept beside the run) and loaded from there with the profile.
Expected<Scenario> PredictionScenario(const local::RunConfig& c, const std::string& profile,
                                      const std::string& instance, const std::string& path,
                                      const Catalog& catalog);

// What a local run measured beside what the simulator predicted.
struct LocalReport {
  LocalRunConfig config;
  std::string config_file;                 // OUT/local/config.json
  std::vector<std::string> command;        // the mpirun command that ran
  std::optional<double> predicted_step_s;  // the simulator on the profile
  TrainerResult run;
  std::optional<double> measured_step_s;  // the trainer's median step after warm-up
  std::optional<double> error;            // predicted / measured - 1
};

class LocalObserver : public TrainerObserver {
 public:
  // Before the trainer starts: what runs, and the prediction if there is one.
  virtual void Starting(const LocalReport& report) = 0;
};

// Sizes the run, predicts it (with options.profile), writes OUT/local/config.json,
// runs the trainer under mpirun and compares. Fails on bad options or a
// profile that does not fit the run; a trainer that fails or is interrupted
// is reported in LocalReport::run, not as an error.
Expected<LocalReport> RunLocal(const LaunchPlan& plan, const LocalOptions& options,
                               const Catalog& catalog, LocalObserver* observer);

}  // namespace trainsim::launch
