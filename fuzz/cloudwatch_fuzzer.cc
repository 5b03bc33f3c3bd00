// CloudWatch metric exports (observe/sagemaker.h ParseCloudWatchMetrics: get-metric-data and
// get-metric-statistics JSON) and what is made of them (Statistics, SummarizeGpuUtilization,
// FormatUtc).
//
// Checks:
// - every error starts "fuzz.json:L:C: " at a line and column the input has (a value at
//   fault, with its field path), or is the documented whole-file error "fuzz.json: not a
//   CloudWatch metric export: ...";
// - an export read has series, each with its points in time order; each series' statistics
//   keep min <= median <= max and min <= mean <= max;
// - round trip of the times: every point's time written by FormatUtc (milliseconds, UTC)
//   reads back with ParseIsoTime to the same time within half a millisecond (where the year
//   has four digits, as ParseIsoTime requires);
// - SummarizeGpuUtilization reads any export read, with and without a GPU count.
#include <cmath>
#include <string>

#include "fuzz/fuzz_util.h"
#include "observe/sagemaker.h"

namespace {

using trainsim::Expected;
using trainsim::fuzz::Check;
using namespace trainsim::observe;

constexpr char kFile[] = "fuzz.json";

void CheckSeries(const MetricSeries& s) {
  for (size_t i = 1; i < s.points.size(); ++i) {
    Check(s.points[i - 1].time_s <= s.points[i].time_s, "points out of time order", s.metric);
  }
  const SeriesStats st = Statistics(s);
  if (st.count == 0) return;
  Check(st.min <= st.median && st.median <= st.max, "a median outside min..max", s.metric);
  // The mean of finite values can overflow to infinity; only a finite mean is bounded.
  if (std::isfinite(st.mean)) {
    const double slack = 1e-9 * std::max(std::fabs(st.min), std::fabs(st.max));
    Check(st.min - slack <= st.mean && st.mean <= st.max + slack, "a mean outside min..max",
          s.metric);
  }
  for (const TimedValue& p : s.points) {
    const std::string utc = FormatUtc(p.time_s);
    if (utc.size() < 4 || !std::isdigit(static_cast<unsigned char>(utc[0])) || utc[4] != '-') {
      continue;  // outside years 0000-9999
    }
    const std::optional<double> back = ParseIsoTime(utc);
    Check(back.has_value(), "a time FormatUtc writes that ParseIsoTime refuses", utc);
    Check(std::fabs(*back - p.time_s) <= 5e-4 + 1e-12 * std::fabs(p.time_s),
          "a time written and read back moves", utc);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = trainsim::fuzz::Text(data, size);
  Expected<SystemMetrics> m = ParseCloudWatchMetrics(text, kFile);
  if (!m.ok()) {
    trainsim::fuzz::CheckLocatedOrWholeFile(m.status().message(), kFile, text);
    return 0;
  }
  Check(!m->series.empty(), "an export read without a series");
  for (const MetricSeries& s : m->series) CheckSeries(s);
  for (std::optional<int> gpus : {std::optional<int>(), std::optional<int>(8)}) {
    Expected<GpuUtilizationSummary> g = SummarizeGpuUtilization(*m, gpus);
    if (g.ok()) Check(!g->hosts.empty(), "a GPU utilization summary of no host");
  }
  return 0;
}
