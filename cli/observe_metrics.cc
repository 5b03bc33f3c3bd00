// `trainsim observe` of SageMaker's instance metrics: CloudWatch exports and Debugger files
// (docs/observe.md section 3f).
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/args.h"
#include "cli/observe_common.h"
#include "core/catalog.h"

namespace trainsim::observe_cli {

namespace {

// GPUs per host: the scenario's instance, or --instance's (SageMaker names it ml.TYPE);
// nullopt when neither is given.
Expected<std::optional<int>> GpusPerHost(const ObserveArgs& a) {
  if (!a.scenario.empty()) {
    Expected<Catalog> catalog = Catalog::LoadDefault(a.catalog);
    if (!catalog.ok()) return catalog.status();
    Expected<Scenario> s = LoadScenarioFile(a.scenario, *catalog);
    if (!s.ok()) return s.status();
    return std::optional<int>(s->instance.gpus);
  }
  Expected<std::optional<InstanceType>> t = InstanceArg(a);
  if (!t.ok()) return t.status();
  return *t ? std::optional<int>((*t)->gpus) : std::optional<int>();
}

void PrintJson(const observe::SystemMetrics& m, const std::optional<int>& gpus,
               const std::optional<observe::GpuUtilizationSummary>& summary) {
  ordered_json series = ordered_json::array();
  for (const observe::MetricSeries& x : m.series) {
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
  ordered_json j = {{"files", m.files},
                    {"source", observe::ToString(m.source)},
                    {"series", series},
                    {"messages", m.messages},
                    {"more_pages", m.more_pages}};
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
}

// Each series' statistics, one line each; returns the width of the host column.
int PrintSeries(const observe::SystemMetrics& m) {
  std::cout << m.files.front()
            << (m.files.size() > 1 ? " (and " + std::to_string(m.files.size() - 1) + " more)" : "")
            << ": " << observe::ToString(m.source) << ", " << m.series.size() << " series\n";
  int host_width = 4;
  for (const observe::MetricSeries& x : m.series) {
    host_width = std::max(host_width, static_cast<int>(x.host.size()));
  }
  std::printf("  %-22s %-*s %-7s %7s %9s %9s %9s %9s  %s\n", "metric", host_width, "host", "device",
              "points", "mean", "median", "min", "max", "first .. last (UTC)");
  for (const observe::MetricSeries& x : m.series) {
    const observe::SeriesStats st = observe::Statistics(x);
    const std::string span =
        st.count ? observe::FormatUtc(st.first_s) + " .. " + observe::FormatUtc(st.last_s) : "-";
    std::printf("  %-22s %-*s %-7s %7d %9.1f %9.1f %9.1f %9.1f  %s%s\n", x.metric.c_str(),
                host_width, x.host.empty() ? "-" : x.host.c_str(),
                x.device.empty() ? "-" : x.device.c_str(), st.count, st.mean, st.median, st.min,
                st.max, span.c_str(), x.partial ? " (partial)" : "");
  }
  for (const std::string& msg : m.messages) std::cout << "  message: " << msg << "\n";
  if (m.more_pages) {
    std::cout << "  the export has a NextToken: later pages are not in the file\n";
  }
  return host_width;
}

// The GPU utilization per GPU of each host, and the hosts' spread.
void PrintUtilization(const observe::GpuUtilizationSummary& summary, const std::optional<int>& gpus,
                      bool debugger, int host_width) {
  std::cout << "GPU utilization per GPU"
            << (gpus && !debugger
                    ? " (GPUUtilization / " + std::to_string(*gpus) + " GPUs per host)"
                    : "")
            << ":\n";
  for (const observe::HostGpuUtilization& h : summary.hosts) {
    std::printf("  %-*s %6.1f%%  (%d points)\n", host_width, h.host.empty() ? "-" : h.host.c_str(),
                h.mean_pct, h.samples);
  }
  std::cout << "  mean " << Fixed(summary.mean_pct, 1) << "%; hosts differ by "
            << Fixed(summary.spread_pct, 1) << " points";
  if (summary.straggler) {
    std::cout << ": " << *summary.straggler
              << " lowest, a straggler? (its GPUs idle more: its input pipeline or CPU work; the "
                 "others wait for it in their collectives)";
  }
  std::cout << "\n";
}

}  // namespace

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
  Expected<std::optional<int>> gpus = GpusPerHost(a);
  if (!gpus.ok()) return Fail(gpus.status());
  const bool has_gpu = std::any_of(m->series.begin(), m->series.end(),
                                   [](const auto& x) { return x.metric == "GPUUtilization"; });
  std::optional<observe::GpuUtilizationSummary> summary;
  if (has_gpu && (debugger || *gpus)) {
    Expected<observe::GpuUtilizationSummary> g = observe::SummarizeGpuUtilization(*m, *gpus);
    if (!g.ok()) return Fail(g.status());
    summary = std::move(*g);
  }
  if (a.json) {
    PrintJson(*m, *gpus, summary);
    return 0;
  }
  const int host_width = PrintSeries(*m);
  if (has_gpu && !summary) {
    std::cout << "GPU utilization: CloudWatch sums GPUUtilization over the instance's GPUs: give "
                 "--instance TYPE to read it per GPU\n";
  }
  if (summary) PrintUtilization(*summary, *gpus, debugger, host_width);
  return 0;
}

}  // namespace trainsim::observe_cli
