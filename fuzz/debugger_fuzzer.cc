// SageMaker Debugger system-metric files (observe/sagemaker.h ParseDebuggerMetrics: one JSON
// object per line).
//
// Checks:
// - every error starts "fuzz.json:L:C: " at a line and column the input has (the line of the
//   file, not of the JSON line parsed alone), or is the documented whole-file error
//   "fuzz.json: no line; ...";
// - a file read has series, each with its points in time order, and each series' statistics
//   keep min <= median <= max;
// - SummarizeGpuUtilization reads any file read, with and without a GPU count.
#include <string>

#include "fuzz/fuzz_util.h"
#include "observe/sagemaker.h"

namespace {

using trainsim::Expected;
using trainsim::fuzz::Check;
using namespace trainsim::observe;

constexpr char kFile[] = "fuzz.json";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = trainsim::fuzz::Text(data, size);
  Expected<SystemMetrics> m = ParseDebuggerMetrics(text, kFile);
  if (!m.ok()) {
    trainsim::fuzz::CheckLocatedOrWholeFile(m.status().message(), kFile, text);
    return 0;
  }
  Check(!m->series.empty() && m->source == MetricSource::kDebugger, "a file read without series");
  for (const MetricSeries& s : m->series) {
    for (size_t i = 1; i < s.points.size(); ++i) {
      Check(s.points[i - 1].time_s <= s.points[i].time_s, "points out of time order", s.metric);
    }
    const SeriesStats st = Statistics(s);
    Check(st.count == 0 || (st.min <= st.median && st.median <= st.max),
          "a median outside min..max", s.metric);
  }
  for (std::optional<int> gpus : {std::optional<int>(), std::optional<int>(8)}) {
    Expected<GpuUtilizationSummary> g = SummarizeGpuUtilization(*m, gpus);
    if (g.ok()) Check(!g->hosts.empty(), "a GPU utilization summary of no host");
  }
  return 0;
}
