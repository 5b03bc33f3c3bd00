#include "sim/simulate.h"

#include <cmath>
#include <optional>

#include "core/strategy.h"
#include "core/units.h"
#include "sim/fold.h"
#include "sim/isolate.h"
#include "sim/platform.h"
#include "sim/workload.h"

namespace trainsim::sim {
namespace {

using nlohmann::json;

// "cp_comm_exposed_s": a strategy's exchanges in the breakdown.
std::string StrategyCommKey(const Strategy& st) { return std::string(st.name) + "_comm_exposed_s"; }

json BreakdownJson(const Breakdown& b) {
  json out{{"compute_s", b.compute_s},
           {"recompute_s", b.recompute_s},
           {"optimizer_s", b.optimizer_s},
           {"tp_comm_exposed_s", b.tp_comm_s},
           {"ep_comm_exposed_s", b.ep_comm_s},
           {"dp_comm_exposed_s", b.dp_comm_exposed_s},
           {"weight_gather_exposed_s", b.weight_gather_exposed_s},
           {"offload_exposed_s", b.offload_exposed_s},
           {"pp_comm_exposed_s", b.pp_comm_exposed_s},
           {"pipeline_bubble_s", b.pipeline_bubble_s},
           {"data_loading_exposed_s", b.data_wait_s}};
  for (int i = 0; i < kStrategyCount; ++i) {
    out[StrategyCommKey(*kStrategies[i])] = b.strategy_comm_s[i];
  }
  return out;
}

Breakdown BreakdownFromJson(const json& j) {
  Breakdown b;
  b.compute_s = j.at("compute_s");
  b.recompute_s = j.at("recompute_s");
  b.optimizer_s = j.at("optimizer_s");
  b.tp_comm_s = j.at("tp_comm_exposed_s");
  b.ep_comm_s = j.at("ep_comm_exposed_s");
  for (int i = 0; i < kStrategyCount; ++i) {
    b.strategy_comm_s[i] = j.at(StrategyCommKey(*kStrategies[i]));
  }
  b.dp_comm_exposed_s = j.at("dp_comm_exposed_s");
  b.weight_gather_exposed_s = j.at("weight_gather_exposed_s");
  b.offload_exposed_s = j.at("offload_exposed_s");
  b.pp_comm_exposed_s = j.at("pp_comm_exposed_s");
  b.pipeline_bubble_s = j.at("pipeline_bubble_s");
  b.data_wait_s = j.at("data_loading_exposed_s");
  return b;
}

// The step result crosses the process boundary as JSON.
std::string Serialize(const StepResult& r) {
  json events = json::array();
  for (const TraceEvent& e : r.trace)
    events.push_back({e.gpu, e.stream, e.name, e.start_s, e.end_s});
  return json{{"step_time_s", r.step_time_s},
              {"breakdown", BreakdownJson(r.breakdown)},
              {"critical_stage", r.critical_stage},
              {"simulated_gpus", r.simulated_gpus},
              {"distinct_collectives", r.distinct_collectives},
              {"trace", events}}
      .dump();
}

StepResult Deserialize(const std::string& text) {
  json j = json::parse(text);
  StepResult r;
  r.step_time_s = j.at("step_time_s");
  r.breakdown = BreakdownFromJson(j.at("breakdown"));
  r.critical_stage = j.at("critical_stage");
  r.simulated_gpus = j.at("simulated_gpus");
  r.distinct_collectives = j.at("distinct_collectives");
  for (const json& e : j.at("trace")) r.trace.push_back(TraceEvent{e[0], e[1], e[2], e[3], e[4]});
  return r;
}

double GiB(double bytes) { return bytes / kGiB; }

// The microbatch counts a step of `s` is sampled at (docs/model.md section 4,
// "Microbatches"), or none to simulate every microbatch. A step's critical path
// runs down the pipeline, spends each further microbatch at its slowest
// stage and comes back, so its time is a constant plus a time per microbatch:
// three small counts q, 2q and 3q (q = pp for the interleaved schedule, whose
// microbatches come in multiples of pp; else 2) give that line, and checking
// that the three lie on it catches what does not. Not sampled: the trace
// (it shows every microbatch), full mode, Horovod (its cycles quantize time)
// and a rate-limited input pipeline (its prefetch runs out after a few).
std::vector<int64_t> MicrobatchSamples(const Scenario& s, const SimulateOptions& o) {
  if (!o.params.microbatch_line || o.trace || o.mode != SimMode::kReduced ||
      s.parallel.dp_fusion == DpFusion::kHorovod || s.training.input_samples_per_s_per_node > 0) {
    return {};
  }
  const int64_t q = s.parallel.schedule == Schedule::kInterleaved ? s.parallel.pp : 2;
  const int64_t m = s.microbatches_per_pipeline();
  if (m <= 6 * q) return {};  // no faster than every microbatch
  return {q, 2 * q, 3 * q};
}

// `s` with m microbatches per pipeline.
Scenario WithMicrobatches(Scenario s, int64_t m) {
  s.training.global_batch = m * s.parallel.dp * s.training.micro_batch;
  return s;
}

// The step of m microbatches on the line through `runs` at `samples`, if they
// lie on it (relative gap 1e-9 of the step) with the same critical stage.
std::optional<StepResult> OnTheLine(const std::vector<StepResult>& runs,
                                    const std::vector<int64_t>& samples, int64_t m) {
  const StepResult &a = runs[0], &b = runs[1], &c = runs[2];
  if (a.critical_stage != b.critical_stage || b.critical_stage != c.critical_stage) return {};
  const double x0 = samples[0], x1 = samples[1], x2 = samples[2];
  auto extend = [&](double ya, double yb, double yc, double* out) {
    const double slope = (yb - ya) / (x1 - x0);
    if (std::abs(ya + slope * (x2 - x0) - yc) > 1e-9 * c.step_time_s) return false;
    *out = ya + slope * (static_cast<double>(m) - x0);
    return true;
  };
  StepResult r = c;
  r.trace.clear();
  bool ok = extend(a.step_time_s, b.step_time_s, c.step_time_s, &r.step_time_s);
  const Breakdown &p = a.breakdown, &q = b.breakdown, &t = c.breakdown;
  Breakdown& o = r.breakdown;
  for (auto field :
       {&Breakdown::compute_s, &Breakdown::recompute_s, &Breakdown::optimizer_s,
        &Breakdown::tp_comm_s, &Breakdown::ep_comm_s, &Breakdown::dp_comm_exposed_s,
        &Breakdown::weight_gather_exposed_s, &Breakdown::offload_exposed_s,
        &Breakdown::pp_comm_exposed_s, &Breakdown::pipeline_bubble_s, &Breakdown::data_wait_s}) {
    ok = ok && extend(p.*field, q.*field, t.*field, &(o.*field));
  }
  for (int i = 0; i < kStrategyCount; ++i) {
    ok = ok && extend(p.strategy_comm_s[i], q.strategy_comm_s[i], t.strategy_comm_s[i],
                      &o.strategy_comm_s[i]);
  }
  if (!ok) return {};
  return r;
}

}  // namespace

Status CheckSimulationLimits(const Scenario& s, SimMode mode, const ModelParams& params,
                             const StepProgram* program) {
  const std::string gpus = std::to_string(s.total_gpus()) + " GPUs";
  if (s.parallel.dp_algorithm == DpAlgorithm::kParameterServer &&
      s.total_gpus() > kMaxFullModeGpus) {
    return Status::InvalidInput(
        s.name + ": parallel.dp_algorithm: parameter servers are simulated GPU by GPU, at most " +
        std::to_string(kMaxFullModeGpus) + " GPUs; this cluster has " + gpus);
  }
  if (mode == SimMode::kFull && s.total_gpus() > kMaxFullModeGpus) {
    return Status::InvalidInput(
        s.name + ": --full simulates every GPU, at most " + std::to_string(kMaxFullModeGpus) +
        " GPUs in reasonable time; this cluster has " + gpus + " (the default mode simulates it)");
  }
  if (s.model.layers > kMaxLayers) {
    return Status::InvalidInput(s.name + ": model.layers: " + std::to_string(s.model.layers) +
                                " layers are more than the simulator takes on in reasonable "
                                "time: at most " +
                                std::to_string(kMaxLayers) + " (docs/model.md section 4)");
  }
  const Fold fold = PlanFold(s, mode, params, program);
  if (BuiltNodes(s, fold) > kMaxReducedNodes) {
    return Status::InvalidInput(
        s.name + ": cluster.nodes: " + std::to_string(s.cluster.nodes) + " nodes (" + gpus +
        ") are more than the simulator takes on in reasonable time: at most " +
        std::to_string(kMaxReducedNodes) + " nodes unless the cluster folds, and it does not (" +
        fold.why_not +
        "; docs/model.md section 4); `trainsim simulate --estimate` gives the fast "
        "estimator's step instead");
  }
  return Status::Ok();
}

Expected<SimulationResult> Simulate(const Scenario& s, const SimulateOptions& options) {
  if (Status st = CheckSimulationLimits(s, options.mode, options.params); !st.ok()) return st;
  SimulationResult result;
  result.memory = ComputeMemory(s);
  if (!result.memory.fits) return result;
  Expected<StepProgram> program = BuildStepProgram(s, options.params);
  if (!program.ok()) return program.status();
  const StepProgram& prog = *program;
  if (Status st = CheckSimulationLimits(s, options.mode, options.params, &prog); !st.ok()) {
    return st;
  }
  // The sampled steps' programs; the full program if the samples are off the line.
  const std::vector<int64_t> samples = MicrobatchSamples(s, options);
  std::vector<Scenario> sample_scenarios;
  std::vector<StepProgram> sample_programs;
  for (int64_t m : samples) {
    sample_scenarios.push_back(WithMicrobatches(s, m));
    Expected<StepProgram> p = BuildStepProgram(sample_scenarios.back(), options.params);
    if (!p.ok()) return p.status();
    sample_programs.push_back(std::move(*p));
  }
  // Later runs report the same parts again: pass on only what moves forward.
  int reported = -1;
  const ProgressFn progress = [&](const Progress& p) {
    if (p.done < reported || !options.progress) return;
    reported = p.done;
    options.progress(p);
  };
  Expected<std::string> reply = RunIsolated(
      [&]() {
        ConfigureNetworkModel();
        const Fold fold = PlanFold(s, options.mode, options.params, &prog);
        const ClusterShape shape = FoldedShape(s, fold);
        const int built = BuiltNodes(s, fold);
        ReportProgress(
            {0, ProgressUnits(s.parallel.pp),
             "building the platform: " + std::to_string(built) + " nodes" +
                 (built < s.cluster.nodes ? " of " + std::to_string(s.cluster.nodes) + " (folded)"
                                          : "")});
        Platform platform = BuildPlatform(shape, options.params);
        if (!samples.empty()) {
          std::vector<StepResult> runs;
          for (std::size_t k = 0; k < samples.size(); ++k) {
            runs.push_back(RunStep(sample_scenarios[k], sample_programs[k], platform,
                                   options.params, options.mode, false, fold.replicas));
          }
          const std::optional<StepResult> line =
              OnTheLine(runs, samples, s.microbatches_per_pipeline());
          if (line) return Serialize(*line);
        }
        return Serialize(
            RunStep(s, prog, platform, options.params, options.mode, options.trace, fold.replicas));
      },
      options.cancel, progress);
  if (!reply.ok()) return reply.status();
  result.step = Deserialize(*reply);
  result.simulated = true;
  const double t = result.step.step_time_s;
  const double gpus = s.total_gpus();
  result.samples_per_s = prog.samples / t;
  result.tokens_per_s = prog.tokens / t;
  result.model_tflops_per_gpu = prog.model_flops / t / gpus / 1e12;
  result.hardware_tflops_per_gpu = prog.hardware_flops / t / gpus / 1e12;
  const double peak = s.instance.gpu.PeakFlops(s.training.precision).value_or(NAN);
  result.mfu = prog.model_flops / t / gpus / peak;
  return result;
}

json BandJson(const Band& band, const SimulationResult& r) {
  return json{{"coverage", band.coverage},
              {"step_time_s", {r.step.step_time_s / band.hi, r.step.step_time_s / band.lo}},
              {"samples_per_s", {r.samples_per_s * band.lo, r.samples_per_s * band.hi}},
              {"tokens_per_s", {r.tokens_per_s * band.lo, r.tokens_per_s * band.hi}},
              {"family", band.family},
              {"points", band.points},
              {"note", band.note.empty() ? json(nullptr) : json(band.note)}};
}

json ToJson(const Scenario& s, const SimulationResult& r, const Band* band) {
  const MemoryBreakdown& m = r.memory;
  json memory{{"weights_gib", GiB(m.weights_bytes)},
              {"gradients_gib", GiB(m.gradients_bytes)},
              {"optimizer_gib", GiB(m.optimizer_bytes)},
              {"activations_gib", GiB(m.activations_bytes)},
              {"reserve_gib", GiB(m.reserve_bytes)},
              {"total_gib", GiB(m.total_bytes)},
              {"capacity_gib", GiB(m.capacity_bytes)},
              {"host_offload_gib_per_node", GiB(m.host_bytes_per_node)},
              {"worst_stage", m.worst_stage},
              {"fits", m.fits}};
  json out{{"scenario", s.name},
           {"model", s.model.name},
           {"instance", s.instance.name},
           {"nodes", s.cluster.nodes},
           {"gpus", s.total_gpus()},
           {"parallel",
            {{"tp", s.parallel.tp},
             {"pp", s.parallel.pp},
             {"dp", s.parallel.dp},
             {"ep", s.parallel.ep},
             {"zero_stage", s.parallel.zero_stage},
             {"schedule", ToString(s.parallel.schedule)},
             {"dp_algorithm", ToString(s.parallel.dp_algorithm)}}},
           {"microbatches_per_pipeline", s.microbatches_per_pipeline()},
           {"hardware_profile", s.profile ? json{{"file", s.cluster.profile},
                                                 {"device", s.profile->provenance.device},
                                                 {"date", s.profile->provenance.date}}
                                          : json(nullptr)},
           {"memory", memory},
           {"fits", m.fits}};
  for (const Strategy* st : kStrategies)
    out["parallel"][std::string(st->name)] = s.parallel.*st->degree;
  if (s.parallel.shard_group > 0) out["parallel"]["shard_group"] = s.parallel.shard_group;
  if (!r.simulated) {
    for (const char* k : {"step_time_s", "samples_per_s", "tokens_per_s", "model_tflops_per_gpu",
                          "hardware_tflops_per_gpu", "mfu", "breakdown"}) {
      out[k] = nullptr;
    }
    if (band) out["band"] = nullptr;
    return out;
  }
  out["step_time_s"] = r.step.step_time_s;
  out["samples_per_s"] = r.samples_per_s;
  out["tokens_per_s"] = r.tokens_per_s;
  out["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
  out["hardware_tflops_per_gpu"] = r.hardware_tflops_per_gpu;
  out["mfu"] = r.mfu;
  out["breakdown"] = BreakdownJson(r.step.breakdown);
  out["breakdown"]["critical_stage"] = r.step.critical_stage;
  out["simulator"] = {{"simulated_gpus", r.step.simulated_gpus},
                      {"distinct_collectives", r.step.distinct_collectives}};
  if (band) out["band"] = BandJson(*band, r);
  return out;
}

json TraceJson(const SimulationResult& r) {
  // The fixed tracks, then each strategy's: "context parallel (K/V ring)".
  std::vector<std::string> streams = {"compute",
                                      "send activations",
                                      "send gradients",
                                      "data parallel",
                                      "tensor parallel",
                                      "waiting",
                                      "weight gather (ZeRO-3)",
                                      "host memory copies",
                                      "expert parallel (all-to-all)"};
  for (const Strategy* st : kStrategies) {
    streams.push_back(std::string(st->title) + " (" + std::string(st->exchange) + ")");
  }
  json events = json::array();
  std::map<int, bool> gpus;
  for (const TraceEvent& e : r.step.trace) gpus[e.gpu] = true;
  for (const auto& [gpu, unused] : gpus) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", gpu},
                      {"args", {{"name", "GPU " + std::to_string(gpu)}}}});
    for (int tid = 0; tid < kTrackCount; ++tid) {
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", gpu},
                        {"tid", tid},
                        {"args", {{"name", streams[tid]}}}});
    }
  }
  for (const TraceEvent& e : r.step.trace) {
    events.push_back({{"name", e.name},
                      {"ph", "X"},
                      {"pid", e.gpu},
                      {"tid", e.stream},
                      {"ts", std::round(e.start_s * 1e9) / 1e3},
                      {"dur", std::round((e.end_s - e.start_s) * 1e9) / 1e3}});
  }
  return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace trainsim::sim
