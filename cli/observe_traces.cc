// `trainsim observe` of Kineto and Chakra traces: the steady step and its parts beside the
// prediction, the sized collectives, and the profile refitted from them (docs/observe.md
// sections 3a-3e).
#include <cstdio>
#include <iostream>

#include "cli/args.h"
#include "cli/observe_common.h"
#include "core/catalog.h"
#include "core/durable_file.h"
#include "core/hardware_profile.h"
#include "observe/chakra.h"
#include "observe/file_kind.h"
#include "observe/kineto.h"
#include "observe/nccl_compare.h"
#include "observe/trace_comms.h"
#include "observe/trace_refit.h"

namespace trainsim::observe_cli {
namespace {

// A trace refit and the step predicted before and after it (with --scenario).
struct TraceRefitRun {
  observe::TraceRefit refit;
  std::optional<Prediction> before, after;
};

// --refit with traces: the GEMMs they timed into --profile's profile; with --scenario also the
// memory-bound rate, and the step predicted before and after (observe/trace_refit.h). The
// refitted profile is written to --refit.
Expected<TraceRefitRun> RunTraceRefit(const ObserveArgs& a,
                                      const std::vector<observe::KinetoTrace>& traces) {
  if (a.profile.empty()) {
    return Status::InvalidInput(
        "--refit with a trace needs --profile FILE: the profile whose GEMMs it refits");
  }
  if (!a.plan.empty()) {
    return Status::InvalidInput(
        "--refit with a trace takes --scenario FILE (the configuration the run used), not --plan");
  }
  Expected<HardwareProfile> base = LoadHardwareProfile(a.profile);
  if (!base.ok()) return base.status();
  TraceRefitRun run;
  if (!a.scenario.empty()) {
    Expected<Prediction> p = Predict(a);
    if (!p.ok()) return p.status();
    run.before = std::move(*p);
  }
  Expected<observe::TraceRefit> r = observe::RefitFromTraces(
      traces, a.warmup, *base, a.profile, run.before ? &run.before->scenario : nullptr);
  if (!r.ok()) return r.status();
  run.refit = std::move(*r);
  if (Status st = WriteFileDurably(a.refit, HardwareProfileToJson(run.refit.profile)); !st.ok()) {
    return st;
  }
  if (run.before) {
    ObserveArgs with = a;
    with.profile = a.refit;
    Expected<Prediction> p = Predict(with);
    if (!p.ok()) return p.status();
    run.after = std::move(*p);
  }
  return run;
}

void PrintRefitJson(const ObserveArgs& a, const TraceRefitRun& run, double measured) {
  const observe::TraceRefit& r = run.refit;
  ordered_json j;
  j["profile"] = a.refit;
  j["dtype"] = r.dtype;
  j["gemm_shapes"] = r.gemm_shapes;
  j["gemm_samples"] = r.gemm_samples;
  j["measured_step_s"] = measured;
  if (r.memory) {
    j["memory"] = {{"measured_other_kernels_s", r.memory->measured_other_s},
                   {"simulated_memory_bound_s", r.memory->simulated_s},
                   {"rate_GBps", r.memory->rate_GBps},
                   {"refitted_GBps", r.memory->refitted_GBps}};
    j["predicted_step_s"] = run.before->result.step.step_time_s;
    j["refitted_step_s"] = run.after->result.step.step_time_s;
  }
  std::cout << ordered_json{{"refit", j}}.dump(2) << "\n";
}

void PrintRefit(const ObserveArgs& a, const std::vector<observe::KinetoTrace>& traces,
                const TraceRefitRun& run, double measured) {
  const observe::TraceRefit& r = run.refit;
  std::string files;
  for (const observe::KinetoTrace& t : traces) files += (files.empty() ? "" : ", ") + t.file;
  std::cout << "refitted " << r.dtype << " GEMMs: " << r.gemm_shapes << " shapes from "
            << r.gemm_samples << " timed in " << files << " (steps after " << a.warmup
            << " warm-up)\n";
  if (!r.memory) {
    std::cout << "the memory-bound rate is not refitted: give --scenario FILE (the configuration "
                 "the run used) to set its simulated work beside the trace's\n"
              << "profile written to " << a.refit << "\n";
    return;
  }
  const observe::MemoryFit& m = *r.memory;
  std::cout << "refitted the memory-bound rate: the trace's other kernels take "
            << Fixed(m.measured_other_s, 4)
            << " s per step (median), the simulated memory-bound work " << Fixed(m.simulated_s, 4)
            << " s at " << Fixed(m.rate_GBps, 2) << " GB/s: " << Fixed(m.refitted_GBps, 2)
            << " GB/s\nprofile written to " << a.refit << "\n";
  const double b = run.before->result.step.step_time_s, f = run.after->result.step.step_time_s;
  std::cout << "  step time            measured " << Fixed(measured, 4) << " s; predicted "
            << Fixed(b, 4) << " s with " << a.profile << " (" << Signed(b / measured - 1) << "), "
            << Fixed(f, 4) << " s with the refit (" << Signed(f / measured - 1) << ")\n";
}

int RefitFromTrace(const ObserveArgs& a, const std::vector<observe::KinetoTrace>& traces,
                   double measured) {
  Expected<TraceRefitRun> run = RunTraceRefit(a, traces);
  if (!run.ok()) return Fail(run.status());
  if (a.json) {
    PrintRefitJson(a, *run, measured);
  } else {
    PrintRefit(a, traces, *run, measured);
  }
  return 0;
}

// The traces' sized collectives as nccl-tests rows, beside the simulated collective where the
// instance type is known (its GPUs per node place the groups); printed, or as JSON.
ordered_json TraceCollectivesReport(const std::vector<observe::KinetoTrace>& traces, int warmup,
                                    const InstanceType* type, bool print) {
  ordered_json all = ordered_json::array();
  const std::vector<observe::TraceCollectives> runs =
      observe::CollectivesOfTraces(traces, warmup, type ? type->gpus : 0);
  if (runs.empty()) return all;
  if (print) {
    std::cout << "\ncollectives with recorded sizes (median kernel time over the steps after the "
                 "warm-up)"
              << (type ? ", simulated on " + type->name : std::string()) << ":\n";
    std::printf("  %-15s %6s %6s %14s %8s %12s %11s %11s %8s\n", "op", "ranks", "nodes", "bytes",
                "kernels", "time us", "busbw GB/s", "simulated", "error");
  }
  for (const observe::TraceCollectives& tc : runs) {
    std::optional<std::vector<observe::ComparedRow>> compared;
    if (type && tc.run.nodes > 0) {
      Expected<std::vector<observe::ComparedRow>> c =
          observe::CompareNccl(tc.run, *type, sim::ModelParams());
      if (c.ok()) compared = std::move(*c);
    }
    ordered_json rows = ordered_json::array();
    for (size_t i = 0; i < tc.run.rows.size(); ++i) {
      const observe::NcclRow& r = tc.run.rows[i];
      ordered_json row = {{"bytes", r.bytes},
                          {"kernels", tc.samples[i]},
                          {"time_us", r.time_us},
                          {"busbw_GBps", r.busbw_GBps}};
      std::string sim = "-", err = "-";
      if (compared) {
        const observe::ComparedRow& c = (*compared)[i];
        row["simulated_busbw_GBps"] = c.simulated_busbw_GBps;
        row["error"] = c.error ? ordered_json(*c.error) : ordered_json(nullptr);
        sim = Fixed(c.simulated_busbw_GBps, 2);
        if (c.error) err = Signed(*c.error);
      }
      rows.push_back(row);
      if (print) {
        std::printf("  %-15s %6d %6s %14.0f %8d %12.1f %11.2f %11s %8s\n",
                    observe::ToString(*tc.run.op), tc.run.ranks,
                    tc.run.nodes > 0 ? std::to_string(tc.run.nodes).c_str() : "-", r.bytes,
                    tc.samples[i], r.time_us, r.busbw_GBps, sim.c_str(), err.c_str());
      }
    }
    all.push_back({{"op", observe::ToString(*tc.run.op)},
                   {"ranks", tc.run.ranks},
                   {"nodes", tc.run.nodes > 0 ? ordered_json(tc.run.nodes) : ordered_json(nullptr)},
                   {"rows", rows}});
  }
  return all;
}

// Several traces are one run's (its ranks, or repeated profiles): the same device and job size.
Status CheckOneRun(const std::vector<observe::KinetoTrace>& traces) {
  for (const observe::KinetoTrace& t : traces) {
    const observe::KinetoTrace& f = traces.front();
    if (t.device != f.device) {
      return Status::InvalidInput(
          t.file + ": traced on " + (t.device.empty() ? "an unnamed device" : t.device) + ", " +
          f.file + " on " + (f.device.empty() ? "an unnamed device" : f.device) +
          ": give the traces of one run (one cluster) at a time");
    }
    if (t.world_size != f.world_size) {
      return Status::InvalidInput(t.file + ": a job of " + std::to_string(t.world_size) +
                                  " ranks, " + f.file + " of " + std::to_string(f.world_size) +
                                  ": give the traces of one run (one cluster) at a time");
    }
  }
  return Status::Ok();
}

// Each file's trace (Chakra or Kineto, by --format or the file's first bytes) and the format's
// name, in the order given.
Status LoadTraces(const ObserveArgs& a, std::vector<observe::KinetoTrace>* traces,
                  std::vector<const char*>* formats) {
  for (const std::string& file : a.files) {
    const bool chakra = a.format == "chakra" ||
                        (a.format.empty() && observe::LooksLikeChakra(observe::FileHead(file)));
    Expected<observe::KinetoTrace> t =
        chakra ? observe::LoadChakraTrace(file) : observe::LoadKinetoTrace(file);
    if (!t.ok()) return t.status();
    traces->push_back(std::move(*t));
    formats->push_back(chakra ? "Chakra" : "Kineto");
  }
  return CheckOneRun(*traces);
}

ordered_json TracesJson(const std::vector<observe::KinetoTrace>& traces) {
  ordered_json out = ordered_json::array();
  for (const observe::KinetoTrace& t : traces) {
    ordered_json steps = ordered_json::array();
    for (const observe::TraceStep& s : t.steps) {
      steps.push_back({{"step", s.step},
                       {"wall_s", s.wall_s},
                       {"gemm_s", s.kernel_s[0]},
                       {"attention_s", s.kernel_s[1]},
                       {"comm_s", s.kernel_s[2]},
                       {"other_s", s.kernel_s[3]},
                       {"exposed_comm_s", s.exposed_comm_s},
                       {"compute_s", s.compute_s},
                       {"idle_s", s.idle_s}});
    }
    out.push_back({{"file", t.file},
                   {"events", t.events},
                   {"kernels", t.kernels},
                   {"device_pid", t.device_pid},
                   {"steps", steps}});
  }
  return out;
}

void PrintJson(const ObserveArgs& a, const std::vector<observe::KinetoTrace>& traces,
               const observe::SteadySteps& steady, const std::optional<Prediction>& predicted,
               const InstanceType* on) {
  const double wall = steady.wall_s;
  ordered_json j;
  j["traces"] = TracesJson(traces);
  j["measured_step_s"] = wall;
  j["measured_exposed_comm_s"] = steady.exposed_comm_s;
  j["measured_compute_s"] = steady.compute_s;
  j["measured_idle_s"] = steady.idle_s;
  j["collectives"] = TraceCollectivesReport(traces, a.warmup, on, false);
  if (predicted) {
    const double step = predicted->result.step.step_time_s;
    const sim::Breakdown& bd = predicted->result.step.breakdown;
    j["compare"] = {{"scenario", predicted->scenario.name},
                    {"predicted_step_s", step},
                    {"error", step / wall - 1},
                    {"predicted_compute_s", observe::PartsOf(bd).compute_s},
                    {"predicted_exposed_comm_s", observe::PartsOf(bd).exposed_comm_s},
                    {"predicted_idle_s", observe::PartsOf(bd).idle_s},
                    {"predicted_mfu", predicted->result.mfu},
                    {"measured_mfu", predicted->result.mfu * step / wall}};
  }
  std::cout << j.dump(2) << "\n";
}

// Each trace's line and the steady step's parts.
void PrintSteady(const ObserveArgs& a, const std::vector<observe::KinetoTrace>& traces,
                 const std::vector<const char*>& formats, const observe::SteadySteps& steady) {
  for (size_t i = 0; i < traces.size(); ++i) {
    const observe::KinetoTrace& t = traces[i];
    std::cout << t.file << ": " << formats[i] << " trace, " << t.events << " events, " << t.kernels
              << " GPU kernels, " << t.steps.size() << " steps (device pid " << t.device_pid
              << ")\n";
  }
  const double* kinds = steady.mean_kernel_s;
  std::cout << "  " << steady.steps << " steps after " << a.warmup << " warm-up: step "
            << Fixed(steady.wall_s, 4) << " s median; per step on average GEMM "
            << Fixed(kinds[0], 4) << " s, attention " << Fixed(kinds[1], 4) << " s, other kernels "
            << Fixed(kinds[3], 4) << " s, communication " << Fixed(kinds[2], 4)
            << " s of which exposed " << Fixed(steady.exposed_comm_s, 4) << " s (median)\n";
}

// The predicted step and its parts beside the measured ones.
void PrintComparison(const observe::SteadySteps& steady, const Prediction& predicted) {
  const double wall = steady.wall_s;
  const double step = predicted.result.step.step_time_s;
  std::cout << "\n" << predicted.scenario.name << " simulated (seconds per step, medians):\n";
  std::printf("  %-22s %10s %10s %8s\n", "", "predicted", "measured", "error");
  auto row = [&](const char* name, double p, double m) {
    std::printf("  %-22s %10.4f %10.4f %8s\n", name, p, m, m > 0 ? Signed(p / m - 1).c_str() : "-");
  };
  row("step", step, wall);
  const observe::StepParts parts = observe::PartsOf(predicted.result.step.breakdown);
  row("compute", parts.compute_s, steady.compute_s);
  row("exposed communication", parts.exposed_comm_s, steady.exposed_comm_s);
  row("idle (bubbles, waits)", parts.idle_s, steady.idle_s);
  std::printf("  %-22s %9.1f%% %9.1f%%\n", "MFU", 100 * predicted.result.mfu,
              100 * predicted.result.mfu * step / wall);
}

}  // namespace

int ObserveTraces(const ObserveArgs& a) {
  std::vector<observe::KinetoTrace> traces;
  std::vector<const char*> formats;  // per trace: "Kineto" or "Chakra"
  if (Status st = LoadTraces(a, &traces, &formats); !st.ok()) return Fail(st);
  Expected<observe::SteadySteps> steady = observe::Steady(traces, a.warmup);
  if (!steady.ok()) return Fail(steady.status());
  if (!a.refit.empty()) return RefitFromTrace(a, traces, steady->wall_s);
  std::optional<Prediction> predicted;
  if (!a.scenario.empty() || !a.plan.empty()) {
    Expected<Prediction> p = Predict(a);
    if (!p.ok()) return Fail(p.status());
    predicted = std::move(*p);
  }
  std::optional<InstanceType> type;  // places the collectives' groups on nodes
  if (predicted) {
    if (Status st = observe::CheckTracesFit(traces, predicted->scenario); !st.ok()) {
      return Fail(st);
    }
    type = predicted->scenario.instance;
  } else {
    Expected<std::optional<InstanceType>> t = InstanceArg(a);
    if (!t.ok()) return Fail(t.status());
    type = std::move(*t);
  }
  const InstanceType* on = type ? &*type : nullptr;
  if (a.json) {
    PrintJson(a, traces, *steady, predicted, on);
    return 0;
  }
  PrintSteady(a, traces, formats, *steady);
  if (predicted) PrintComparison(*steady, *predicted);
  TraceCollectivesReport(traces, a.warmup, on, true);
  return 0;
}

}  // namespace trainsim::observe_cli
