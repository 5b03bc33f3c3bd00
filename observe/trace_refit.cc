#include "observe/trace_refit.h"

#include <algorithm>
#include <memory>

#include "core/strategy.h"
#include "observe/gemm_refit.h"
#include "observe/run_log.h"
#include "sim/model_params.h"
#include "sim/simulate.h"

namespace trainsim::observe {
namespace {

// The simulated compute per step of `s` with `profile` at a memory-bound rate of `GBps`.
Expected<double> ComputeAtMemoryRate(Scenario s, const HardwareProfile& profile, double GBps) {
  HardwareProfile p = profile;
  p.memory_GBps = GBps;
  s.profile = std::make_shared<const HardwareProfile>(std::move(p));
  Expected<sim::SimulationResult> r = sim::Simulate(s, sim::SimulateOptions());
  if (!r.ok()) return r.status();
  return PartsOf(r->step.breakdown).compute_s;
}

std::string Files(const std::vector<KinetoTrace>& traces) {
  std::string out;
  for (const KinetoTrace& t : traces) out += (out.empty() ? "" : ", ") + t.file;
  return out;
}

}  // namespace

Expected<SteadySteps> Steady(const std::vector<KinetoTrace>& traces, int warmup) {
  std::vector<double> walls, exposed, computes, idles;
  SteadySteps out;
  for (const KinetoTrace& t : traces) {
    for (size_t i = std::min<size_t>(std::max(0, warmup), t.steps.size()); i < t.steps.size();
         ++i) {
      walls.push_back(t.steps[i].wall_s);
      exposed.push_back(t.steps[i].exposed_comm_s);
      computes.push_back(t.steps[i].compute_s);
      idles.push_back(t.steps[i].idle_s);
      for (int k = 0; k < 4; ++k) out.mean_kernel_s[k] += t.steps[i].kernel_s[k];
    }
  }
  if (walls.empty()) {
    return Status::InvalidInput((traces.empty() ? std::string("the traces") : traces[0].file) +
                                ": no step after the warm-up of " + std::to_string(warmup) +
                                ": profile more steps, or lower --warmup");
  }
  out.steps = static_cast<int>(walls.size());
  for (double& k : out.mean_kernel_s) k /= out.steps;
  out.wall_s = Median(walls);
  out.compute_s = Median(computes);
  out.exposed_comm_s = Median(exposed);
  out.idle_s = Median(idles);
  return out;
}

StepParts PartsOf(const sim::Breakdown& b) {
  StepParts p;
  p.compute_s = b.compute_s + b.recompute_s + b.optimizer_s;
  double strategies = 0;
  for (double s : b.strategy_comm_s) strategies += s;
  p.exposed_comm_s = b.tp_comm_s + b.ep_comm_s + strategies + b.dp_comm_exposed_s +
                     b.weight_gather_exposed_s + b.pp_comm_exposed_s;
  p.idle_s = b.pipeline_bubble_s + b.data_wait_s + b.offload_exposed_s;
  return p;
}

Status CheckTracesFit(const std::vector<KinetoTrace>& traces, const Scenario& s) {
  const std::string& gpu = s.instance.gpu.name;
  const std::string family = gpu.substr(0, gpu.find('-'));
  for (const KinetoTrace& t : traces) {
    if (!t.device.empty() && t.device.find(family) == std::string::npos) {
      return Status::InvalidInput(t.file + ": traced on " + t.device + ", but " + s.instance.name +
                                  " has " + gpu + ": compare a trace with the hardware it ran on");
    }
    if (t.world_size > 0 && t.world_size != s.total_gpus()) {
      return Status::InvalidInput(t.file + ": traced in a job of " + std::to_string(t.world_size) +
                                  " ranks, but " + s.name + " runs on " +
                                  std::to_string(s.total_gpus()) +
                                  " GPUs: compare a trace with the configuration it ran");
    }
  }
  return Status::Ok();
}

Expected<TraceRefit> RefitFromTraces(const std::vector<KinetoTrace>& traces, int warmup,
                                     const HardwareProfile& base, const std::string& base_name,
                                     const Scenario* scenario) {
  if (traces.empty()) return Status::InvalidInput("no trace to refit from");
  const KinetoTrace& first = traces.front();
  if (!first.device.empty() && !base.provenance.device.empty() &&
      first.device != base.provenance.device) {
    return Status::InvalidInput(first.file + ": traced on " + first.device + ", but " + base_name +
                                " was measured on " + base.provenance.device +
                                ": refit a profile of the hardware the trace ran on");
  }
  TraceRefit out;
  out.dtype = "fp32";  // the cpu backend's, and trainsim-train's
  if (base.provenance.backend != "cpu") {
    if (!scenario) {
      return Status::InvalidInput(
          "--refit: which precision the trace's GEMMs ran in: give --scenario FILE");
    }
    out.dtype = ToString(scenario->training.precision);
  }
  if (scenario) {
    if (Status st = CheckTracesFit(traces, *scenario); !st.ok()) return st;
  }
  Expected<GemmRefit> g = RefitGemms(traces, warmup, base, out.dtype);
  if (!g.ok()) return g.status();
  out.profile = std::move(g->profile);
  out.gemm_shapes = g->shapes;
  out.gemm_samples = g->samples;
  if (!scenario) return out;
  MemoryFit m;
  m.rate_GBps = out.profile.memory_GBps.value_or(scenario->instance.gpu.hbm_GBps.value_or(0) *
                                                 sim::ModelParams().hbm_efficiency);
  Expected<double> at = ComputeAtMemoryRate(*scenario, out.profile, m.rate_GBps);
  if (!at.ok()) return at.status();
  Expected<double> twice = ComputeAtMemoryRate(*scenario, out.profile, 2 * m.rate_GBps);
  if (!twice.ok()) return twice.status();
  m.simulated_s = 2 * (*at - *twice);
  m.measured_other_s = MedianKernelSeconds(traces, warmup, KernelKind::kOther);
  int steps = 0;
  for (const KinetoTrace& t : traces) {
    steps += static_cast<int>(t.steps.size()) -
             std::min<int>(std::max(0, warmup), static_cast<int>(t.steps.size()));
  }
  Expected<HardwareProfile> p = RefitMemoryRate(out.profile, m.rate_GBps, m.simulated_s,
                                                m.measured_other_s, steps, Files(traces));
  if (!p.ok()) return p.status();
  out.profile = std::move(*p);
  m.refitted_GBps = *out.profile.memory_GBps;
  out.memory = m;
  return out;
}

}  // namespace trainsim::observe
