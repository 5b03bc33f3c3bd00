#include "sim/simulate.h"

#include <cmath>

#include "sim/fold.h"
#include "sim/isolate.h"
#include "sim/platform.h"
#include "sim/workload.h"

namespace trainsim::sim {
namespace {

using nlohmann::json;

json BreakdownJson(const Breakdown& b) {
  return json{{"compute_s", b.compute_s},
              {"recompute_s", b.recompute_s},
              {"optimizer_s", b.optimizer_s},
              {"tp_comm_exposed_s", b.tp_comm_s},
              {"dp_comm_exposed_s", b.dp_comm_exposed_s},
              {"weight_gather_exposed_s", b.weight_gather_exposed_s},
              {"offload_exposed_s", b.offload_exposed_s},
              {"pp_comm_exposed_s", b.pp_comm_exposed_s},
              {"pipeline_bubble_s", b.pipeline_bubble_s},
              {"data_loading_exposed_s", b.data_wait_s}};
}

Breakdown BreakdownFromJson(const json& j) {
  Breakdown b;
  b.compute_s = j.at("compute_s");
  b.recompute_s = j.at("recompute_s");
  b.optimizer_s = j.at("optimizer_s");
  b.tp_comm_s = j.at("tp_comm_exposed_s");
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

double GiB(double bytes) { return bytes / (1024.0 * 1024 * 1024); }

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
  Expected<std::string> reply = RunIsolated(
      [&]() {
        ConfigureNetworkModel();
        const Fold fold = PlanFold(s, options.mode, options.params, &prog);
        ClusterShape shape{s.instance, s.cluster.nodes, s.cluster.oversubscription,
                           s.cluster.nodes_per_leaf, FoldedNodes(s, fold)};
        const int built = BuiltNodes(s, fold);
        ReportProgress({0, ProgressUnits(s.parallel.pp),
                        "building the platform: " + std::to_string(built) + " nodes" +
                            (built < s.cluster.nodes
                                 ? " of " + std::to_string(s.cluster.nodes) + " (folded)"
                                 : "")});
        Platform platform = BuildPlatform(shape, options.params);
        return Serialize(RunStep(s, prog, platform, options.params, options.mode, options.trace));
      },
      options.cancel, options.progress);
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
  static const char* kStreams[kTrackCount] = {
      "compute",         "send activations", "send gradients",         "data parallel",
      "tensor parallel", "waiting",          "weight gather (ZeRO-3)", "host memory copies"};
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
                        {"args", {{"name", kStreams[tid]}}}});
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
