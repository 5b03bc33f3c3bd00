// One call that simulates a scenario's training step: memory check, workload,
// platform, step simulation (in a child process, see isolate.h), and the
// derived figures of DESIGN.md section 2 "Outputs".
#pragma once

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error_bands.h"
#include "core/scenario.h"
#include "sim/engine.h"
#include "sim/isolate.h"
#include "sim/memory_model.h"
#include "sim/model_params.h"

namespace trainsim::sim {

struct SimulateOptions {
  SimMode mode = SimMode::kReduced;
  bool trace = false;
  ModelParams params;
  // Raised from another thread: the simulation stops within about 100 ms and
  // Simulate returns Status::Cancelled (RunIsolated kills its process).
  const std::atomic<bool>* cancel = nullptr;
  // Called on the calling thread as the simulation reports its progress (the
  // platform, each stage's collectives, the step: engine.h ProgressUnits).
  ProgressFn progress;
};

struct SimulationResult {
  MemoryBreakdown memory;
  bool simulated = false;  // false when the configuration does not fit
  StepResult step;
  double samples_per_s = 0, tokens_per_s = 0;
  double model_tflops_per_gpu = 0, hardware_tflops_per_gpu = 0, mfu = 0;
};

// The largest clusters Simulate takes on (docs/model.md section 4, "Limits"):
// beyond them it answers at once with an error naming the field and the limit,
// never a run of minutes or hours. Measured on one core (2026-11-26, GPT-3
// 175B, tp 8, pp 8, `taskset -c 0 trainsim simulate`): the reduced mode took
// 36 s at 4096 nodes (most of it building the platform, which grows as the
// square of the nodes); full mode, which simulates every GPU, 33 s at 128
// GPUs (bench/sim_speed). Parameter-server scenarios always run in full mode.
inline constexpr int kMaxReducedNodes = 4096;
inline constexpr int kMaxFullModeGpus = 128;
// The work also grows with the layers (each stage's are built and costed): 10,000 layers took
// 0.8 s on a 1000-stage pipeline, 100,000 5 s and 1,000,000 more than 30 s and 1.3 GB
// (2026-11-27, `trainsim simulate`, hidden 64); the largest published models have about 130.
inline constexpr int kMaxLayers = 10000;
// Ok, or the InvalidInput error Simulate gives for `s` in `mode`.
// With `program`, as Simulate checks it (the fold may depend on the program).
Status CheckSimulationLimits(const Scenario& s, SimMode mode, const ModelParams& params = {},
                             const StepProgram* program = nullptr);

Expected<SimulationResult> Simulate(const Scenario& s, const SimulateOptions& options);

// The `simulate --json` object. Deterministic: same input, same bytes. With
// `band` (core/error_bands.h) it carries "band": the step time and
// throughputs at the band's ends, its coverage, family, points and note.
nlohmann::json ToJson(const Scenario& s, const SimulationResult& r, const Band* band = nullptr);
// The "band" object alone (the figures of a simulated result).
nlohmann::json BandJson(const Band& band, const SimulationResult& r);
// Chrome trace / Perfetto JSON: one process per GPU, one thread per stream.
nlohmann::json TraceJson(const SimulationResult& r);

}  // namespace trainsim::sim
