// A trace's steady step beside the simulated one, and a profile refitted from the trace
// (docs/observe.md sections 3a and 3c). Shared by `trainsim observe` and the GUI's Timeline page.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/hardware_profile.h"
#include "core/scenario.h"
#include "observe/kineto.h"
#include "sim/engine.h"

namespace trainsim::observe {

// The steady state of traces: their steps after `warmup`, pooled.
struct SteadySteps {
  int steps = 0;
  double wall_s = 0, compute_s = 0, exposed_comm_s = 0, idle_s = 0;  // medians
  double mean_kernel_s[4] = {0, 0, 0, 0};                            // per KernelKind
};
// Fails when no step is left after the warm-up (the message names the first file).
Expected<SteadySteps> Steady(const std::vector<KinetoTrace>& traces, int warmup);

// The simulated step in the trace's categories: compute = compute + recompute + optimizer;
// exposed communication = TP, EP and CP collectives (which block) + the exposed DP, weight-gather
// and pipeline waits; idle = pipeline bubble + input waits + exposed offload copies.
struct StepParts {
  double compute_s = 0, exposed_comm_s = 0, idle_s = 0;
};
StepParts PartsOf(const sim::Breakdown& b);

// Refused: a trace of another device than the scenario's instance has ("traced on NVIDIA H100
// 80GB HBM3, but p4d.24xlarge has A100-SXM4-40GB"), or of a job of another size than its GPUs.
Status CheckTracesFit(const std::vector<KinetoTrace>& traces, const Scenario& s);

struct MemoryFit {
  double measured_other_s = 0;  // the traces' other kernels per step (median)
  double simulated_s = 0;       // the simulated memory-bound work per step at rate_GBps
  double rate_GBps = 0;         // the profile's (or the catalog's effective) rate before
  double refitted_GBps = 0;
};
struct TraceRefit {
  HardwareProfile profile;
  std::string dtype;
  int gemm_shapes = 0, gemm_samples = 0;
  std::optional<MemoryFit> memory;  // with a scenario
};

// `base` refitted from the traces' steps after `warmup`: their GEMM shapes (RefitGemms; the dtype
// fp32 for a cpu profile, else the scenario's precision) and, with `scenario` (the configuration
// the run used, simulated with the GEMM-refitted profile), the memory-bound rate
// (RefitMemoryRate: the scenario's compute is affine in 1 / rate, so simulated at the rate and at
// twice it gives the memory-bound work's seconds). Refused: a trace of another device than
// `base` was measured on, a non-cpu profile without a scenario, and CheckTracesFit's cases.
Expected<TraceRefit> RefitFromTraces(const std::vector<KinetoTrace>& traces, int warmup,
                                     const HardwareProfile& base, const std::string& base_name,
                                     const Scenario* scenario);

}  // namespace trainsim::observe
