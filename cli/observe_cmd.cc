#include "cli/observe_cmd.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/catalog.h"
#include "core/error_bands.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "core/scenario.h"
#include "launch/plan_file.h"
#include "observe/chakra.h"
#include "observe/gemm_refit.h"
#include "observe/kineto.h"
#include "observe/nccl_compare.h"
#include "observe/nccl_tests.h"
#include "observe/run_log.h"
#include "observe/sagemaker.h"
#include "observe/trace_comms.h"
#include "observe/trace_refit.h"
#include "planner/sweep_journal.h"
#include "sim/memory_model.h"
#include "sim/model_params.h"
#include "sim/simulate.h"

namespace trainsim {
namespace {

using nlohmann::ordered_json;

const char kUsage[] =
    "usage: trainsim observe FILE... [--format FORMAT] [--log-stream NAME]\n"
    "                        [--op TEST] [--warmup N] [--scenario FILE | --plan FILE]\n"
    "                        [--profile FILE] [--catalog FILE] [--json]\n"
    "                        [--instance TYPE [--refit PROFILE_OUT]]\n"
    "\n"
    "  FILE            a training log (Megatron-LM iteration lines, trainsim-train's\n"
    "                  steps.jsonl, ...), a PyTorch profiler (Kineto) trace, an nccl-tests\n"
    "                  output, a SageMaker job's CloudWatch metrics or log stream export or\n"
    "                  Debugger system-metric files; one run per file\n"
    "  --format F      the files' format (default: detected from their lines):\n"
    "                  megatron, deepspeed, trainsim-local, nccl-tests, kineto, chakra,\n"
    "                  cloudwatch, cloudwatch-logs, debugger\n"
    "  --op TEST       nccl-tests: the test, when the output does not name it\n"
    "  --warmup N      step lines skipped at the start of each log (default 1)\n"
    "  --scenario FILE compare the logs' steady step with the simulated step of this\n"
    "                  scenario (the configuration the run used)\n"
    "  --plan FILE     ... or of this plan's recommendation (trainsim plan --out)\n"
    "  --profile FILE  simulate with this hardware profile\n"
    "  --catalog FILE  extra instance types\n"
    "  --instance TYPE the instance type the run used: nccl-tests rows and a trace's\n"
    "                  sized collectives are set beside the simulated collective\n"
    "  --refit OUT     nccl-tests over 2+ nodes: fit the network efficiency of TYPE to\n"
    "                  the rows of 128 MiB and more and write a profile with it (added\n"
    "                  to --profile's when given); traces: --profile's profile with the\n"
    "                  GEMMs they timed and, with --scenario, the memory-bound rate\n"
    "  --log-stream S  a CloudWatch Logs export of several streams: the one to read\n"
    "  --json          one JSON object on stdout (docs/observe.md)\n";

struct ObserveArgs {
  std::vector<std::string> files;
  std::string format, op, scenario, plan, profile, catalog, instance, refit, log_stream;
  int warmup = 1;
  bool json = false;
};

Expected<ObserveArgs> Parse(int argc, char** argv) {
  ObserveArgs a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) -> Status {
      if (i + 1 >= argc) return Status::InvalidInput(arg + " needs a value");
      *out = argv[++i];
      return Status::Ok();
    };
    Status st = Status::Ok();
    const std::pair<const char*, std::string*> kValues[] = {
        {"--format", &a.format},     {"--op", &a.op},           {"--scenario", &a.scenario},
        {"--plan", &a.plan},         {"--profile", &a.profile}, {"--catalog", &a.catalog},
        {"--instance", &a.instance}, {"--refit", &a.refit},     {"--log-stream", &a.log_stream}};
    const auto named = std::find_if(std::begin(kValues), std::end(kValues),
                                    [&](const auto& v) { return arg == v.first; });
    if (arg == "--json") {
      a.json = true;
    } else if (named != std::end(kValues)) {
      st = value(named->second);
    } else if (arg == "--warmup") {
      std::string v;
      st = value(&v);
      const std::optional<int> n = st.ok() ? ParseIntInRange(v, 0, 1000000) : std::nullopt;
      if (st.ok() && !n) {
        st = Status::InvalidInput("--warmup: expected a whole number from 0 to 1000000, got \"" +
                                  v + "\"");
      }
      a.warmup = n.value_or(a.warmup);
    } else if (arg.rfind("--", 0) == 0) {
      st = Status::InvalidInput("unknown option " + arg);
    } else {
      a.files.push_back(arg);
    }
    if (!st.ok()) return st;
  }
  if (a.files.empty()) return Status::InvalidInput("observe needs at least one file");
  if (!a.scenario.empty() && !a.plan.empty()) {
    return Status::InvalidInput("--scenario and --plan: give one configuration to compare with");
  }
  return a;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Signed(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * fraction);
  return buf;
}

// The configuration the run used, simulated.
struct Prediction {
  Scenario scenario;
  sim::SimulationResult result;
  std::optional<Band> band;
};

Expected<Prediction> Predict(const ObserveArgs& a) {
  Expected<Catalog> catalog = Catalog::LoadDefault(a.catalog);
  if (!catalog.ok()) return catalog.status();
  Prediction p;
  if (!a.scenario.empty()) {
    Expected<Scenario> s = LoadScenarioFile(a.scenario, *catalog, a.profile);
    if (!s.ok()) return s.status();
    p.scenario = std::move(*s);
  } else {
    Expected<launch::LaunchPlan> plan = launch::LoadPlanFile(a.plan, *catalog);
    if (!plan.ok()) return plan.status();
    p.scenario = std::move(plan->scenario);
    if (!a.profile.empty()) {
      return Status::InvalidInput("--profile applies with --scenario (a plan carries its own)");
    }
  }
  Expected<sim::SimulationResult> r = sim::Simulate(p.scenario, sim::SimulateOptions());
  if (!r.ok()) return r.status();
  if (!r->simulated) {
    return Status::InvalidInput(p.scenario.name +
                                " does not fit: " + sim::DescribeShortfall(r->memory, p.scenario));
  }
  p.result = std::move(*r);
  std::string why_not;
  if (const auto bands = DefaultErrorBands(&why_not)) {
    p.band = BandFor(*bands, BandKeyOf(p.scenario));
  }
  return p;
}

ordered_json SummaryJson(const observe::RunLog& log, const observe::StepSummary& s) {
  ordered_json j;
  j["file"] = log.file;
  j["format"] = observe::ToString(log.format);
  // DeepSpeed: the *_step_s figures below are seconds per sample (RunLog::per_sample).
  j["per_sample"] = log.per_sample;
  // torchtitan: seconds per token per GPU (RunLog::per_token).
  j["per_token"] = log.per_token;
  j["figure"] = log.figure == observe::StepFigure::kSmoothed       ? "smoothed"
                : log.figure == observe::StepFigure::kRunMean      ? "run_mean"
                : log.figure == observe::StepFigure::kEngineTimers ? "engine_timers"
                                                                   : "logged";
  j["run_mean_step_s"] =
      log.run_mean_step_s ? ordered_json(*log.run_mean_step_s) : ordered_json(nullptr);
  auto opt = [](const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(); };
  if (s.breakdown) {
    const observe::EngineTimes& t = s.breakdown->median_ms;
    j["breakdown"] = {{"samples", s.breakdown->samples},
                      {"warmup_samples", s.breakdown->warmup_samples},
                      {"fwd_ms", opt(t.fwd_ms)},
                      {"bwd_ms", opt(t.bwd_ms)},
                      {"bwd_inner_ms", opt(t.bwd_inner_ms)},
                      {"bwd_allreduce_ms", opt(t.bwd_allreduce_ms)},
                      {"step_ms", opt(t.step_ms)}};
  } else {
    j["breakdown"] = nullptr;
  }
  j["timers_not_read"] =
      log.timers_not_read.empty() ? ordered_json(nullptr) : ordered_json(log.timers_not_read);
  j["memory"] = {{"max_allocated_gib", opt(log.memory.max_allocated_gib)},
                 {"max_reserved_gib", opt(log.memory.max_reserved_gib)}};
  j["step_lines"] = log.steps.size();
  j["samples"] = s.samples;
  j["warmup_samples"] = s.warmup_samples;
  j["other_batch_samples"] = s.other_batch;
  j["first_iteration"] = s.first_iteration;
  j["last_iteration"] = s.last_iteration;
  j["median_step_s"] = s.median_step_s;
  j["mean_step_s"] = s.mean_step_s;
  j["min_step_s"] = s.min_step_s;
  j["max_step_s"] = s.max_step_s;
  j["global_batch"] = s.global_batch ? ordered_json(*s.global_batch) : ordered_json(nullptr);
  j["median_tflops_per_gpu"] =
      s.median_tflops_per_gpu ? ordered_json(*s.median_tflops_per_gpu) : ordered_json(nullptr);
  return j;
}

// The first 64 KiB of a file ("" when it cannot be read).
std::string Head(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(1 << 16, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

// A SageMaker export's format: --format's, else detected from the file's first bytes.
std::optional<observe::SageMakerFormat> SageMakerFormatOf(const ObserveArgs& a,
                                                          const std::string& file) {
  if (!a.format.empty()) {
    Expected<observe::SageMakerFormat> f = observe::ParseSageMakerFormat(a.format, "--format");
    return f.ok() ? std::optional(*f) : std::nullopt;
  }
  return observe::DetectSageMakerFormat(Head(file));
}

// SageMaker's instance metrics (CloudWatch exports, Debugger files): each series' statistics and
// the GPU utilization per GPU of each host, with the hosts' spread.
int ObserveSystemMetrics(const ObserveArgs& a, observe::SageMakerFormat format) {
  const bool debugger = format == observe::SageMakerFormat::kDebugger;
  if (!debugger && a.files.size() > 1) {
    return Fail(Status::InvalidInput("a CloudWatch metrics export at a time (" + a.files[1] +
                                     ": a second file)"));
  }
  if (!a.plan.empty() || !a.refit.empty() || !a.profile.empty()) {
    return Fail(Status::InvalidInput(
        "SageMaker metrics are read, not simulated: --plan, --profile and --refit do not apply "
        "(--instance or --scenario give the GPUs per host)"));
  }
  Expected<observe::SystemMetrics> m =
      debugger ? observe::LoadDebuggerMetrics(a.files) : observe::LoadCloudWatchMetrics(a.files[0]);
  if (!m.ok()) return Fail(m.status());
  std::optional<int> gpus;  // per host: the instance's (SageMaker names it ml.TYPE)
  std::string instance = a.instance;
  if (!a.scenario.empty()) {
    Expected<Catalog> catalog = Catalog::LoadDefault(a.catalog);
    if (!catalog.ok()) return Fail(catalog.status());
    Expected<Scenario> s = LoadScenarioFile(a.scenario, *catalog);
    if (!s.ok()) return Fail(s.status());
    gpus = s->instance.gpus;
  } else if (!instance.empty()) {
    if (instance.rfind("ml.", 0) == 0) instance = instance.substr(3);
    Expected<Catalog> catalog = Catalog::LoadDefault(a.catalog);
    if (!catalog.ok()) return Fail(catalog.status());
    const InstanceType* t = catalog->Find(instance);
    if (t == nullptr) {
      return Fail(Status::InvalidInput("--instance: unknown instance type \"" + a.instance +
                                       "\" (trainsim catalog list)"));
    }
    gpus = t->gpus;
  }
  const bool has_gpu = std::any_of(m->series.begin(), m->series.end(),
                                   [](const auto& x) { return x.metric == "GPUUtilization"; });
  std::optional<observe::GpuUtilizationSummary> summary;
  std::string why_not;
  if (has_gpu && (debugger || gpus)) {
    Expected<observe::GpuUtilizationSummary> g = observe::SummarizeGpuUtilization(*m, gpus);
    if (!g.ok()) return Fail(g.status());
    summary = std::move(*g);
  } else if (has_gpu) {
    why_not =
        "CloudWatch sums GPUUtilization over the instance's GPUs: give --instance TYPE to "
        "read it per GPU";
  }
  if (a.json) {
    ordered_json series = ordered_json::array();
    for (const observe::MetricSeries& x : m->series) {
      const observe::SeriesStats st = observe::Statistics(x);
      series.push_back({{"metric", x.metric},
                        {"host", x.host},
                        {"device", x.device},
                        {"statistic", x.statistic},
                        {"id", x.id},
                        {"partial", x.partial},
                        {"count", st.count},
                        {"mean", st.mean},
                        {"median", st.median},
                        {"min", st.min},
                        {"max", st.max},
                        {"first", st.count ? observe::FormatUtc(st.first_s) : ""},
                        {"last", st.count ? observe::FormatUtc(st.last_s) : ""}});
    }
    ordered_json j = {{"files", m->files},
                      {"source", observe::ToString(m->source)},
                      {"series", series},
                      {"messages", m->messages},
                      {"more_pages", m->more_pages}};
    if (summary) {
      ordered_json hosts = ordered_json::array();
      for (const observe::HostGpuUtilization& h : summary->hosts) {
        hosts.push_back(
            {{"host", h.host}, {"mean_pct", h.mean_pct}, {"gpus", h.gpus}, {"samples", h.samples}});
      }
      j["gpu_utilization"] = {{"gpus_per_host", gpus ? ordered_json(*gpus) : ordered_json(nullptr)},
                              {"hosts", hosts},
                              {"mean_pct", summary->mean_pct},
                              {"spread_pct", summary->spread_pct},
                              {"straggler", summary->straggler ? ordered_json(*summary->straggler)
                                                               : ordered_json(nullptr)}};
    }
    std::cout << ordered_json{{"sagemaker_metrics", j}}.dump(2) << "\n";
    return 0;
  }
  std::cout << m->files.front()
            << (m->files.size() > 1 ? " (and " + std::to_string(m->files.size() - 1) + " more)"
                                    : "")
            << ": " << observe::ToString(m->source) << ", " << m->series.size() << " series\n";
  int host_width = 4;
  for (const observe::MetricSeries& x : m->series) {
    host_width = std::max(host_width, static_cast<int>(x.host.size()));
  }
  std::printf("  %-22s %-*s %-7s %7s %9s %9s %9s %9s  %s\n", "metric", host_width, "host", "device",
              "points", "mean", "median", "min", "max", "first .. last (UTC)");
  for (const observe::MetricSeries& x : m->series) {
    const observe::SeriesStats st = observe::Statistics(x);
    const std::string span =
        st.count ? observe::FormatUtc(st.first_s) + " .. " + observe::FormatUtc(st.last_s) : "-";
    std::printf("  %-22s %-*s %-7s %7d %9.1f %9.1f %9.1f %9.1f  %s%s\n", x.metric.c_str(),
                host_width, x.host.empty() ? "-" : x.host.c_str(),
                x.device.empty() ? "-" : x.device.c_str(), st.count, st.mean, st.median, st.min,
                st.max, span.c_str(), x.partial ? " (partial)" : "");
  }
  for (const std::string& msg : m->messages) std::cout << "  message: " << msg << "\n";
  if (m->more_pages) {
    std::cout << "  the export has a NextToken: later pages are not in the file\n";
  }
  if (!why_not.empty()) std::cout << "GPU utilization: " << why_not << "\n";
  if (!summary) return 0;
  std::cout << "GPU utilization per GPU"
            << (gpus && !debugger
                    ? " (GPUUtilization / " + std::to_string(*gpus) + " GPUs per host)"
                    : "")
            << ":\n";
  for (const observe::HostGpuUtilization& h : summary->hosts) {
    std::printf("  %-*s %6.1f%%  (%d points)\n", host_width, h.host.empty() ? "-" : h.host.c_str(),
                h.mean_pct, h.samples);
  }
  std::cout << "  mean " << Fixed(summary->mean_pct, 1) << "%; hosts differ by "
            << Fixed(summary->spread_pct, 1) << " points";
  if (summary->straggler) {
    std::cout << ": " << *summary->straggler
              << " lowest, a straggler? (its GPUs idle more: its input pipeline or CPU work; the "
                 "others wait for it in their collectives)";
  }
  std::cout << "\n";
  return 0;
}

std::string Ms(const std::optional<double>& v) { return v ? Fixed(*v, 1) + " ms" : "-"; }

// DeepSpeed's engine timers and the memory a log reports, under its step line.
void PrintLogExtras(const observe::RunLog& log, const observe::StepSummary& s) {
  if (s.breakdown) {
    const observe::EngineTimes& t = s.breakdown->median_ms;
    const double sum = t.fwd_ms.value_or(0) + t.bwd_ms.value_or(0) + t.step_ms.value_or(0);
    std::cout << "  DeepSpeed engine timers, median of " << s.breakdown->samples
              << " steps after the warm-up: fwd " << Ms(t.fwd_ms) << ", bwd " << Ms(t.bwd_ms)
              << " (inner " << Ms(t.bwd_inner_ms) << ", allreduce " << Ms(t.bwd_allreduce_ms)
              << "), step " << Ms(t.step_ms) << "; sum " << Fixed(sum, 1)
              << " ms (data loading and the loop's own code are outside the timers)\n";
  }
  if (!log.timers_not_read.empty())
    std::cout << "  timers not read: " << log.timers_not_read << "\n";
  const observe::LoggedMemory& m = log.memory;
  if (m.max_allocated_gib || m.max_reserved_gib) {
    std::cout << "  memory:";
    if (m.max_allocated_gib) {
      std::cout << " max allocated " << Fixed(*m.max_allocated_gib, 2) << " GiB (line "
                << m.allocated_line << ")";
    }
    if (m.max_reserved_gib) {
      std::cout << (m.max_allocated_gib ? "," : "") << " max reserved "
                << Fixed(*m.max_reserved_gib, 2) << " GiB (line " << m.reserved_line << ")";
    }
    std::cout << "\n";
  }
}

// The largest of the runs' logged memory of one kind (GiB), or nullopt.
std::optional<double> LargestMemory(const std::vector<observe::RunLog>& logs, bool reserved) {
  std::optional<double> out;
  for (const observe::RunLog& l : logs) {
    const std::optional<double>& v =
        reserved ? l.memory.max_reserved_gib : l.memory.max_allocated_gib;
    if (v) out = std::max(out.value_or(0), *v);
  }
  return out;
}

int ObserveLogs(const ObserveArgs& a) {
  std::optional<observe::LogFormat> format;
  if (!a.format.empty()) {
    Expected<observe::LogFormat> f = observe::ParseLogFormat(a.format, "--format");
    if (f.ok()) format = *f;  // checked by ObserveCommand
  }
  std::vector<observe::RunLog> logs;
  std::vector<observe::StepSummary> summaries;
  for (const std::string& file : a.files) {
    Expected<observe::RunLog> log =
        SageMakerFormatOf(a, file) == observe::SageMakerFormat::kCloudWatchLogs
            ? observe::LoadCloudWatchRunLog(file, std::nullopt, a.log_stream)
            : observe::LoadRunLog(file, format);
    if (!log.ok()) {
      return Fail(log.status());
    }
    Expected<observe::StepSummary> s = observe::Summarize(*log, a.warmup);
    if (!s.ok()) {
      return Fail(s.status());
    }
    logs.push_back(std::move(*log));
    summaries.push_back(*s);
  }
  // Several files are several runs of one configuration: the same global batch, and logs that
  // give a step time or all a throughput.
  for (size_t i = 1; i < summaries.size(); ++i) {
    if (logs[i].per_sample != logs[0].per_sample || logs[i].per_token != logs[0].per_token) {
      std::cerr << "trainsim: " << logs[i].file << ": a " << observe::ToString(logs[i].format)
                << " log beside a " << observe::ToString(logs[0].format) << " one (" << logs[0].file
                << "): give the runs of one framework\n";
      return 1;
    }
    if (summaries[i].global_batch != summaries[0].global_batch) {
      std::cerr << "trainsim: " << logs[i].file << ": global batch "
                << (summaries[i].global_batch ? std::to_string(*summaries[i].global_batch) : "?")
                << ", but " << logs[0].file << " ran "
                << (summaries[0].global_batch ? std::to_string(*summaries[0].global_batch) : "?")
                << ": give the runs of one configuration\n";
      return 1;
    }
  }
  // The measured step: the median of the files' medians, each counted once per sample.
  std::vector<std::pair<double, int>> medians;
  int total = 0;
  for (const observe::StepSummary& s : summaries) {
    medians.push_back({s.median_step_s, s.samples});
    total += s.samples;
  }
  std::sort(medians.begin(), medians.end());
  double measured = medians.front().first;
  for (int seen = 0, k = 0; k < static_cast<int>(medians.size()); ++k) {
    seen += medians[k].second;
    if (2 * seen >= total) {
      measured = medians[k].first;
      break;
    }
  }

  std::optional<Prediction> predicted;
  if (!a.scenario.empty() || !a.plan.empty()) {
    Expected<Prediction> p = Predict(a);
    if (!p.ok()) {
      return Fail(p.status());
    }
    const int64_t gb = p->scenario.training.global_batch;
    if (summaries[0].global_batch && *summaries[0].global_batch != gb) {
      std::cerr << "trainsim: " << logs[0].file << ": the run's global batch is "
                << *summaries[0].global_batch << ", the scenario's " << gb
                << ": compare a run with the configuration it ran\n";
      return 1;
    }
    predicted = std::move(*p);
  }
  // A throughput log gives seconds per sample (DeepSpeed: a step is the global batch's worth)
  // or per token per GPU (torchtitan: a step is the global batch's tokens over the GPUs).
  const bool per_sample = logs[0].per_sample, per_token = logs[0].per_token;
  double units_per_step = 0;  // samples, or tokens per GPU, per step
  if (predicted) {
    const Scenario& sc = predicted->scenario;
    units_per_step = per_sample ? static_cast<double>(sc.training.global_batch)
                                : static_cast<double>(sc.training.global_batch) *
                                      TokensPerSample(sc.model) / sc.total_gpus();
  }
  if ((per_sample || per_token) && predicted) measured *= units_per_step;
  const bool throughput = per_sample || per_token;

  if (a.json) {
    ordered_json j;
    j["runs"] = ordered_json::array();
    for (size_t i = 0; i < logs.size(); ++i)
      j["runs"].push_back(SummaryJson(logs[i], summaries[i]));
    if (throughput) {
      j[per_sample ? "measured_samples_per_s" : "measured_tokens_per_s_per_gpu"] =
          predicted ? units_per_step / measured : 1 / measured;
    }
    j["measured_step_s"] =
        throughput && !predicted ? ordered_json(nullptr) : ordered_json(measured);
    if (predicted) {
      const double step = predicted->result.step.step_time_s;
      ordered_json c;
      c["scenario"] = predicted->scenario.name;
      c["predicted_step_s"] = step;
      c["error"] = step / measured - 1;
      const sim::SimulationResult& r = predicted->result;
      c["predicted_samples_per_s"] = r.samples_per_s;
      c["measured_samples_per_s"] = r.samples_per_s * step / measured;
      c["predicted_mfu"] = r.mfu;
      c["measured_mfu"] = r.mfu * step / measured;
      const double gib = 1024.0 * 1024 * 1024;
      c["predicted_memory_gib"] = r.memory.total_bytes / gib;
      c["predicted_memory_without_reserve_gib"] =
          (r.memory.total_bytes - r.memory.reserve_bytes) / gib;
      const std::optional<double> alloc = LargestMemory(logs, false),
                                  reserved = LargestMemory(logs, true);
      c["measured_max_allocated_gib"] = alloc ? ordered_json(*alloc) : ordered_json(nullptr);
      c["measured_max_reserved_gib"] = reserved ? ordered_json(*reserved) : ordered_json(nullptr);
      if (predicted->band) {
        c["band_low_s"] = step / predicted->band->hi;
        c["band_high_s"] = step / predicted->band->lo;
        c["inside_band"] =
            measured >= step / predicted->band->hi && measured <= step / predicted->band->lo;
      }
      j["compare"] = c;
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (size_t i = 0; i < logs.size(); ++i) {
    const observe::StepSummary& s = summaries[i];
    std::cout << logs[i].file << ": " << observe::ToString(logs[i].format) << ", "
              << logs[i].steps.size() << " step lines; " << s.samples << " used (iterations "
              << s.first_iteration << "-" << s.last_iteration << "; " << s.warmup_samples
              << " warm-up"
              << (s.other_batch ? ", " + std::to_string(s.other_batch) + " at another global batch"
                                : "")
              << ")\n";
    if (logs[i].per_sample) {
      std::cout << "  " << Fixed(1 / s.median_step_s, 2) << " samples/s median (the log gives "
                << "a throughput: a step is the global batch's worth)";
    } else if (logs[i].per_token) {
      std::cout << "  " << Fixed(1 / s.median_step_s, 0)
                << " tokens/s/GPU median (the log gives a throughput per GPU: a step is the "
                   "scenario's tokens per step per GPU)";
    } else if (logs[i].figure == observe::StepFigure::kRunMean) {
      std::cout << "  step " << Fixed(s.median_step_s, 3)
                << " s: the Trainer's whole-run mean (train_runtime / steps), warm-up included: "
                   "the log has no per-step figure";
    } else {
      std::cout << "  step " << Fixed(s.median_step_s, 3) << " s median, "
                << Fixed(s.mean_step_s, 3) << " mean, " << Fixed(s.min_step_s, 3) << "-"
                << Fixed(s.max_step_s, 3) << " range";
    }
    if (logs[i].figure == observe::StepFigure::kSmoothed) {
      std::cout << " (tqdm's moving average of the recent steps, not each step's time)";
    }
    if (logs[i].run_mean_step_s && logs[i].figure != observe::StepFigure::kRunMean) {
      std::cout << "; the Trainer's own whole-run mean " << Fixed(*logs[i].run_mean_step_s, 3)
                << " s (warm-up included)";
    }
    if (s.global_batch) std::cout << "; global batch " << *s.global_batch;
    if (s.median_tflops_per_gpu) {
      std::cout << "; " << Fixed(*s.median_tflops_per_gpu, 1)
                << " TFLOP/s/GPU (the framework's count)";
    }
    if (logs[i].figure == observe::StepFigure::kEngineTimers) {
      std::cout << " (DeepSpeed's fwd + bwd + step: no throughput line in the log; a lower bound "
                   "of the step)";
    }
    std::cout << "\n";
    PrintLogExtras(logs[i], s);
  }
  if (!predicted) return 0;
  const double step = predicted->result.step.step_time_s;
  std::cout << "\n"
            << predicted->scenario.name << " simulated against " << total << " measured steps:\n"
            << "  step time            predicted " << Fixed(step, 3) << " s, measured "
            << Fixed(measured, 3) << " s: " << Signed(step / measured - 1)
            << (step < measured ? " (the simulator is faster)" : " (the simulator is slower)")
            << "\n";
  // The same work per step: throughput and MFU scale with the inverse of the step.
  const sim::SimulationResult& r = predicted->result;
  std::cout << "  throughput           predicted " << Fixed(r.samples_per_s, 2)
            << " samples/s, measured " << Fixed(r.samples_per_s * step / measured, 2)
            << " samples/s\n"
            << "  MFU                  predicted " << Fixed(100 * r.mfu, 1) << "%, measured "
            << Fixed(100 * r.mfu * step / measured, 1)
            << "% (the model's FLOPs per step over the measured step)"
            << (r.mfu * step / measured > 1
                    ? "; above 100%: the run did less work per step than the scenario describes "
                      "(check its model, batch and GPUs)"
                    : "")
            << "\n";
  const std::optional<double> alloc = LargestMemory(logs, false),
                              reserved = LargestMemory(logs, true);
  if (alloc || reserved) {
    const double gib = 1024.0 * 1024 * 1024;
    std::cout << "  memory per GPU       predicted " << Fixed(r.memory.total_bytes / gib, 2)
              << " GiB (" << Fixed((r.memory.total_bytes - r.memory.reserve_bytes) / gib, 2)
              << " without the reserve for the CUDA context and fragmentation), measured";
    if (alloc) std::cout << " max allocated " << Fixed(*alloc, 2) << " GiB";
    if (reserved)
      std::cout << (alloc ? "," : "") << " max reserved " << Fixed(*reserved, 2) << " GiB";
    std::cout << " (neither counts the CUDA context)\n";
  }
  if (predicted->band) {
    const double lo = step / predicted->band->hi, hi = step / predicted->band->lo;
    const bool inside = measured >= lo && measured <= hi;
    std::cout << "  " << Fixed(100 * predicted->band->coverage, 0) << "% band             "
              << Fixed(lo, 3) << "-" << Fixed(hi, 3) << " s: the measurement is "
              << (inside ? "inside" : "outside") << " (" << predicted->band->family << ")\n";
  }
  return 0;
}

void PrintCompared(const observe::NcclTestsRun& run, const std::vector<observe::ComparedRow>& rows,
                   const std::string& what) {
  std::cout << run.file << ": " << observe::ToString(*run.op) << "_perf, " << run.ranks
            << " ranks on " << run.nodes << (run.nodes == 1 ? " node" : " nodes") << ", " << what
            << "\n";
  std::printf("  %14s %14s %14s %8s\n", "bytes", "busbw GB/s", "simulated", "error");
  for (const observe::ComparedRow& r : rows) {
    std::printf("  %14.0f %14.2f %14.2f %8s\n", r.bytes, r.measured_busbw_GBps,
                r.simulated_busbw_GBps, r.error ? Signed(*r.error).c_str() : "-");
  }
  if (const std::optional<double> e = observe::MeanFitError(rows)) {
    std::cout << "  mean |error| over the rows of 128 MiB and more: " << Fixed(100 * *e, 1)
              << "%\n";
  }
}

// nccl-tests rows beside the simulated collective on `type`; with --refit, the network fitted
// to them, written into a profile, and the rows again with it.
int CompareAndRefit(const ObserveArgs& a, const std::vector<observe::NcclTestsRun>& runs,
                    const InstanceType& type) {
  const sim::ModelParams params;
  const std::string catalog_eff =
      type.network_efficiency ? Fixed(*type.network_efficiency, 3) : "the default";
  ordered_json j = {{"instance", type.name}, {"runs", ordered_json::array()}};
  auto rows_json = [](const std::vector<observe::ComparedRow>& rows) {
    ordered_json out = ordered_json::array();
    for (const observe::ComparedRow& r : rows) {
      out.push_back({{"bytes", r.bytes},
                     {"busbw_GBps", r.measured_busbw_GBps},
                     {"simulated_busbw_GBps", r.simulated_busbw_GBps},
                     {"error", r.error ? ordered_json(*r.error) : ordered_json(nullptr)}});
    }
    return out;
  };
  auto mean_json = [](const std::vector<observe::ComparedRow>& rows) {
    const std::optional<double> e = observe::MeanFitError(rows);
    return e ? ordered_json(*e) : ordered_json(nullptr);
  };
  for (const observe::NcclTestsRun& run : runs) {
    Expected<std::vector<observe::ComparedRow>> rows = observe::CompareNccl(run, type, params);
    if (!rows.ok()) return Fail(rows.status());
    if (a.json) {
      j["runs"].push_back({{"file", run.file},
                           {"op", observe::ToString(*run.op)},
                           {"ranks", run.ranks},
                           {"nodes", run.nodes},
                           {"rows", rows_json(*rows)},
                           {"mean_fit_error", mean_json(*rows)}});
    } else {
      PrintCompared(
          run, *rows,
          "simulated on " + type.name + " (network efficiency " + catalog_eff + ", the catalog's)");
    }
  }
  if (a.refit.empty()) {
    if (a.json) std::cout << j.dump(2) << "\n";
    return 0;
  }
  Expected<NetworkFit> fit = observe::RefitNetwork(runs, type, params);
  if (!fit.ok()) return Fail(fit.status());
  HardwareProfile profile;
  if (!a.profile.empty()) {
    Expected<HardwareProfile> base = LoadHardwareProfile(a.profile);
    if (!base.ok()) return Fail(base.status());
    if (!base->gpu.empty() && base->gpu != type.gpu.name) {
      return Fail(Status::InvalidInput(a.profile + ": measured " + base->gpu + ", but " +
                                       type.name + " has " + type.gpu.name));
    }
    profile = std::move(*base);
  } else {
    profile.provenance.tool = "trainsim observe";
    profile.provenance.backend = "nccl-tests";
    profile.provenance.device = runs.front().gpu;
    profile.provenance.devices = runs.front().ranks / runs.front().nodes;
    profile.provenance.nodes = fit->nodes;
    profile.provenance.collectives = "nccl-tests";
    profile.not_measured = {"gemm", "memory", "host links", "collectives inside a node"};
  }
  profile.gpu = type.gpu.name;
  profile.network = *fit;
  if (Status st = planner::WriteFileAtomically(a.refit, HardwareProfileToJson(profile)); !st.ok())
    return Fail(st);
  InstanceType refitted = type;
  refitted.network_efficiency = fit->efficiency;
  refitted.protocol_latency_scale = fit->latency_scale;
  ordered_json after = ordered_json::array();
  if (!a.json) {
    std::cout << "\nrefitted: " << type.name << " network efficiency " << Fixed(fit->efficiency, 3)
              << " (was " << catalog_eff << "), mean |error| " << Fixed(100 * fit->mean_error, 1)
              << "% over the rows of 128 MiB and more";
    if (fit->latency_scale) {
      std::cout << "; NCCL protocol latency scale across its network "
                << Fixed(*fit->latency_scale, 3) << " (was "
                << Fixed(params.protocol_latency_scale, 2) << "), mean |error| "
                << Fixed(100 * fit->latency_mean_error, 1) << "% over the smaller rows";
    }
    std::cout << "; profile written to " << a.refit << "\n";
  }
  for (const observe::NcclTestsRun& run : runs) {
    Expected<std::vector<observe::ComparedRow>> rows = observe::CompareNccl(run, refitted, params);
    if (!rows.ok()) return Fail(rows.status());
    if (a.json) {
      after.push_back(
          {{"file", run.file}, {"rows", rows_json(*rows)}, {"mean_fit_error", mean_json(*rows)}});
    } else {
      PrintCompared(run, *rows, "with the refitted network");
    }
  }
  if (a.json) {
    j["refit"] = {
        {"profile", a.refit},
        {"network_efficiency", fit->efficiency},
        {"catalog_network_efficiency",
         type.network_efficiency ? ordered_json(*type.network_efficiency) : ordered_json(nullptr)},
        {"mean_error", fit->mean_error},
        {"protocol_latency_scale",
         fit->latency_scale ? ordered_json(*fit->latency_scale) : ordered_json(nullptr)},
        {"model_protocol_latency_scale", params.protocol_latency_scale},
        {"latency_mean_error",
         fit->latency_scale ? ordered_json(fit->latency_mean_error) : ordered_json(nullptr)},
        {"runs", after}};
    std::cout << j.dump(2) << "\n";
  }
  return 0;
}

int ObserveNccl(const ObserveArgs& a) {
  std::optional<observe::NcclOp> op;
  if (!a.op.empty()) {
    Expected<observe::NcclOp> o = observe::ParseNcclOp(a.op, "--op");
    if (!o.ok()) {
      return Fail(o.status());
    }
    op = *o;
  }
  if (!a.scenario.empty() || !a.plan.empty()) {
    std::cerr << "trainsim: --scenario / --plan compare training logs; for nccl-tests output "
                 "give --instance TYPE\n";
    return 1;
  }
  if (!a.refit.empty() && a.instance.empty()) {
    std::cerr << "trainsim: --refit needs --instance TYPE (the instance the run used)\n";
    return 1;
  }
  std::optional<InstanceType> type;
  if (!a.instance.empty()) {
    Expected<Catalog> catalog = Catalog::LoadDefault(a.catalog);
    if (!catalog.ok()) {
      return Fail(catalog.status());
    }
    const InstanceType* t = catalog->Find(a.instance);
    if (t == nullptr) {
      std::cerr << "trainsim: --instance: unknown instance type \"" << a.instance
                << "\" (trainsim catalog list)\n";
      return 1;
    }
    type = *t;
  }
  std::vector<observe::NcclTestsRun> runs;
  for (const std::string& file : a.files) {
    Expected<observe::NcclTestsRun> run = observe::LoadNcclTests(file, op);
    if (!run.ok()) {
      return Fail(run.status());
    }
    runs.push_back(std::move(*run));
  }
  if (type) return CompareAndRefit(a, runs, *type);
  ordered_json all = ordered_json::array();
  for (observe::NcclTestsRun* run = runs.data(); run != runs.data() + runs.size(); ++run) {
    if (a.json) {
      ordered_json j;
      j["file"] = run->file;
      j["op"] = observe::ToString(*run->op);
      j["ranks"] = run->ranks;
      j["nodes"] = run->nodes;
      j["gpu"] = run->gpu;
      j["rows"] = ordered_json::array();
      for (const observe::NcclRow& r : run->rows) {
        j["rows"].push_back({{"bytes", r.bytes},
                             {"time_us", r.time_us},
                             {"algbw_GBps", r.algbw_GBps},
                             {"busbw_GBps", r.busbw_GBps},
                             {"inplace_time_us", r.inplace_time_us},
                             {"inplace_busbw_GBps", r.inplace_busbw_GBps}});
      }
      j["avg_busbw_GBps"] =
          run->avg_busbw_GBps ? ordered_json(*run->avg_busbw_GBps) : ordered_json(nullptr);
      all.push_back(j);
      continue;
    }
    std::cout << run->file << ": " << observe::ToString(*run->op) << "_perf, " << run->ranks
              << " ranks on " << run->nodes << (run->nodes == 1 ? " node" : " nodes") << " ("
              << run->gpu << "), " << run->rows.size() << " sizes\n";
    std::printf("  %14s %12s %10s %10s\n", "bytes", "time us", "algbw GB/s", "busbw GB/s");
    for (const observe::NcclRow& r : run->rows) {
      std::printf("  %14.0f %12.1f %10.2f %10.2f\n", r.bytes, r.time_us, r.algbw_GBps,
                  r.busbw_GBps);
    }
  }
  if (a.json) std::cout << ordered_json{{"nccl_tests", all}}.dump(2) << "\n";
  return 0;
}

// --refit with traces: the GEMMs they timed into --profile's profile; with --scenario also the
// memory-bound rate, and the step predicted before and after (observe/trace_refit.h).
int RefitFromTrace(const ObserveArgs& a, const std::vector<observe::KinetoTrace>& traces,
                   double measured) {
  if (a.profile.empty()) {
    return Fail(Status::InvalidInput(
        "--refit with a trace needs --profile FILE: the profile whose GEMMs it refits"));
  }
  if (!a.plan.empty()) {
    return Fail(Status::InvalidInput(
        "--refit with a trace takes --scenario FILE (the configuration the run used), not --plan"));
  }
  Expected<HardwareProfile> base = LoadHardwareProfile(a.profile);
  if (!base.ok()) return Fail(base.status());
  std::optional<Prediction> before;
  if (!a.scenario.empty()) {
    Expected<Prediction> p = Predict(a);
    if (!p.ok()) return Fail(p.status());
    before = std::move(*p);
  }
  Expected<observe::TraceRefit> r = observe::RefitFromTraces(traces, a.warmup, *base, a.profile,
                                                             before ? &before->scenario : nullptr);
  if (!r.ok()) return Fail(r.status());
  if (Status st = planner::WriteFileAtomically(a.refit, HardwareProfileToJson(r->profile));
      !st.ok())
    return Fail(st);
  std::optional<Prediction> after;
  if (before) {
    ObserveArgs with = a;
    with.profile = a.refit;
    Expected<Prediction> p = Predict(with);
    if (!p.ok()) return Fail(p.status());
    after = std::move(*p);
  }
  std::string files;
  for (const observe::KinetoTrace& t : traces) files += (files.empty() ? "" : ", ") + t.file;
  if (a.json) {
    ordered_json j;
    j["profile"] = a.refit;
    j["dtype"] = r->dtype;
    j["gemm_shapes"] = r->gemm_shapes;
    j["gemm_samples"] = r->gemm_samples;
    j["measured_step_s"] = measured;
    if (r->memory) {
      j["memory"] = {{"measured_other_kernels_s", r->memory->measured_other_s},
                     {"simulated_memory_bound_s", r->memory->simulated_s},
                     {"rate_GBps", r->memory->rate_GBps},
                     {"refitted_GBps", r->memory->refitted_GBps}};
      j["predicted_step_s"] = before->result.step.step_time_s;
      j["refitted_step_s"] = after->result.step.step_time_s;
    }
    std::cout << ordered_json{{"refit", j}}.dump(2) << "\n";
    return 0;
  }
  std::cout << "refitted " << r->dtype << " GEMMs: " << r->gemm_shapes << " shapes from "
            << r->gemm_samples << " timed in " << files << " (steps after " << a.warmup
            << " warm-up)\n";
  if (!r->memory) {
    std::cout << "the memory-bound rate is not refitted: give --scenario FILE (the configuration "
                 "the run used) to set its simulated work beside the trace's\n"
              << "profile written to " << a.refit << "\n";
    return 0;
  }
  const observe::MemoryFit& m = *r->memory;
  std::cout << "refitted the memory-bound rate: the trace's other kernels take "
            << Fixed(m.measured_other_s, 4)
            << " s per step (median), the simulated memory-bound work " << Fixed(m.simulated_s, 4)
            << " s at " << Fixed(m.rate_GBps, 2) << " GB/s: " << Fixed(m.refitted_GBps, 2)
            << " GB/s\nprofile written to " << a.refit << "\n";
  const double b = before->result.step.step_time_s, f = after->result.step.step_time_s;
  std::cout << "  step time            measured " << Fixed(measured, 4) << " s; predicted "
            << Fixed(b, 4) << " s with " << a.profile << " (" << Signed(b / measured - 1) << "), "
            << Fixed(f, 4) << " s with the refit (" << Signed(f / measured - 1) << ")\n";
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

int ObserveKineto(const ObserveArgs& a) {
  std::vector<observe::KinetoTrace> traces;
  std::vector<const char*> formats;  // per trace: "Kineto" or "Chakra"
  for (const std::string& file : a.files) {
    const bool chakra =
        a.format == "chakra" || (a.format.empty() && observe::LooksLikeChakra(Head(file)));
    Expected<observe::KinetoTrace> t =
        chakra ? observe::LoadChakraTrace(file) : observe::LoadKinetoTrace(file);
    if (!t.ok()) {
      return Fail(t.status());
    }
    traces.push_back(std::move(*t));
    formats.push_back(chakra ? "Chakra" : "Kineto");
  }
  if (Status st = CheckOneRun(traces); !st.ok()) return Fail(st);
  Expected<observe::SteadySteps> steady = observe::Steady(traces, a.warmup);
  if (!steady.ok()) return Fail(steady.status());
  const double wall = steady->wall_s, comm = steady->exposed_comm_s;
  const double compute = steady->compute_s, idle = steady->idle_s;
  const double* kinds = steady->mean_kernel_s;
  if (!a.refit.empty()) return RefitFromTrace(a, traces, wall);
  std::optional<Prediction> predicted;
  if (!a.scenario.empty() || !a.plan.empty()) {
    Expected<Prediction> p = Predict(a);
    if (!p.ok()) {
      return Fail(p.status());
    }
    predicted = std::move(*p);
  }
  std::optional<InstanceType> type;  // places the collectives' groups on nodes
  if (predicted) {
    if (Status st = observe::CheckTracesFit(traces, predicted->scenario); !st.ok()) {
      return Fail(st);
    }
    type = predicted->scenario.instance;
  } else if (!a.instance.empty()) {
    Expected<Catalog> catalog = Catalog::LoadDefault(a.catalog);
    if (!catalog.ok()) return Fail(catalog.status());
    const InstanceType* t = catalog->Find(a.instance);
    if (t == nullptr) {
      return Fail(Status::InvalidInput("--instance: unknown instance type \"" + a.instance +
                                       "\" (trainsim catalog list)"));
    }
    type = *t;
  }
  const InstanceType* on = type ? &*type : nullptr;
  if (a.json) {
    ordered_json j;
    j["traces"] = ordered_json::array();
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
      j["traces"].push_back({{"file", t.file},
                             {"events", t.events},
                             {"kernels", t.kernels},
                             {"device_pid", t.device_pid},
                             {"steps", steps}});
    }
    j["measured_step_s"] = wall;
    j["measured_exposed_comm_s"] = comm;
    j["measured_compute_s"] = compute;
    j["measured_idle_s"] = idle;
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
    return 0;
  }
  for (const observe::KinetoTrace& t : traces) {
    std::cout << t.file << ": " << formats[&t - traces.data()] << " trace, " << t.events
              << " events, " << t.kernels << " GPU kernels, " << t.steps.size()
              << " steps (device pid " << t.device_pid << ")\n";
  }
  std::cout << "  " << steady->steps << " steps after " << a.warmup << " warm-up: step "
            << Fixed(wall, 4) << " s median; per step on average GEMM " << Fixed(kinds[0], 4)
            << " s, attention " << Fixed(kinds[1], 4) << " s, other kernels " << Fixed(kinds[3], 4)
            << " s, communication " << Fixed(kinds[2], 4) << " s of which exposed "
            << Fixed(comm, 4) << " s (median)\n";
  if (!predicted) {
    TraceCollectivesReport(traces, a.warmup, on, true);
    return 0;
  }
  const double step = predicted->result.step.step_time_s;
  const sim::Breakdown& bd = predicted->result.step.breakdown;
  std::cout << "\n" << predicted->scenario.name << " simulated (seconds per step, medians):\n";
  std::printf("  %-22s %10s %10s %8s\n", "", "predicted", "measured", "error");
  auto row = [&](const char* name, double p, double m) {
    std::printf("  %-22s %10.4f %10.4f %8s\n", name, p, m, m > 0 ? Signed(p / m - 1).c_str() : "-");
  };
  row("step", step, wall);
  const observe::StepParts parts = observe::PartsOf(bd);
  row("compute", parts.compute_s, compute);
  row("exposed communication", parts.exposed_comm_s, comm);
  row("idle (bubbles, waits)", parts.idle_s, idle);
  std::printf("  %-22s %9.1f%% %9.1f%%\n", "MFU", 100 * predicted->result.mfu,
              100 * predicted->result.mfu * step / wall);
  TraceCollectivesReport(traces, a.warmup, on, true);
  return 0;
}

// A Kineto trace is JSON with a "traceEvents" array near its start.
bool LooksLikeKineto(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(1 << 16, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const size_t brace = head.find_first_not_of(" \t\r\n");
  return brace != std::string::npos && head[brace] == '{' &&
         head.find("\"traceEvents\"") != std::string::npos;
}

// An nccl-tests output has its column header ("... time   algbw   busbw #wrong ...").
bool LooksLikeNcclTests(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  for (int n = 0; n < 2000 && std::getline(in, line); ++n) {
    if (line.find("algbw") != std::string::npos && line.find("busbw") != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

int ObserveCommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  Expected<ObserveArgs> a = Parse(argc, argv);
  if (!a.ok()) {
    std::cerr << "trainsim: " << a.status().message() << "\n" << kUsage;
    return 1;
  }
  if (a->format == "nccl-tests" || (a->format.empty() && LooksLikeNcclTests(a->files[0]))) {
    return ObserveNccl(*a);
  }
  if (a->format == "kineto" || a->format == "chakra" ||
      (a->format.empty() &&
       (LooksLikeKineto(a->files[0]) || observe::LooksLikeChakra(Head(a->files[0]))))) {
    return ObserveKineto(*a);
  }
  const std::optional<observe::SageMakerFormat> sagemaker = SageMakerFormatOf(*a, a->files[0]);
  if (sagemaker == observe::SageMakerFormat::kCloudWatch ||
      sagemaker == observe::SageMakerFormat::kDebugger) {
    return ObserveSystemMetrics(*a, *sagemaker);
  }
  if (!a->format.empty() && !sagemaker) {
    if (Expected<observe::LogFormat> f = observe::ParseLogFormat(a->format, "--format"); !f.ok()) {
      std::cerr << "trainsim: " << f.status().message()
                << " (or nccl-tests, kineto, chakra, cloudwatch, cloudwatch-logs, debugger)\n";
      return 1;
    }
  }
  if (!a->log_stream.empty() && sagemaker != observe::SageMakerFormat::kCloudWatchLogs) {
    std::cerr << "trainsim: --log-stream applies to a CloudWatch Logs export "
                 "(--format cloudwatch-logs)\n";
    return 1;
  }
  if (!a->op.empty()) {
    std::cerr << "trainsim: --op applies to nccl-tests output (--format nccl-tests)\n";
    return 1;
  }
  return ObserveLogs(*a);
}

}  // namespace trainsim
