#include "planner/job/interruptions.h"

#include <cmath>

namespace trainsim::planner {

std::optional<double> MonthlyInterruptionFraction(const std::string& bucket, bool* lower_bound) {
  // Spot Advisor buckets ("frequency of interruption", trailing month).
  struct Bucket {
    const char* text;
    double fraction;
    bool open;
  };
  static constexpr Bucket kBuckets[] = {
      {"<5%", 0.025, false},    {"5-10%", 0.075, false}, {"10-15%", 0.125, false},
      {"15-20%", 0.175, false}, {">20%", 0.20, true},
  };
  for (const Bucket& b : kBuckets) {
    if (bucket != b.text) continue;
    if (lower_bound) *lower_bound = b.open;
    return b.fraction;
  }
  return std::nullopt;
}

double InterruptionsPerHour(double monthly_fraction) {
  // P(no interruption in a month) = e^{-rate * 730.5} = 1 - f.
  return -std::log1p(-monthly_fraction) / kHoursPerMonth;
}

double YoungInterval_s(double checkpoint_write_s, double mtbi_s) {
  return std::sqrt(2 * checkpoint_write_s * mtbi_s);
}

double DalyInterval_s(double checkpoint_write_s, double mtbi_s) {
  const double delta = checkpoint_write_s, m = mtbi_s;
  if (delta >= 2 * m) return m;
  const double x = delta / (2 * m);
  return std::sqrt(2 * delta * m) * (1 + std::sqrt(x) / 3 + x / 9) - delta;
}

double ExpectedSegmentInterruptions(double segment_s, double restart_s, double mtbi_s) {
  if (std::isinf(mtbi_s)) return 0;
  // Failed attempts are geometric: E = e^{L/M} - 1. Each is followed by a
  // restart phase with e^{R/M} - 1 failures of its own on average: e^{R/M} per attempt.
  return std::exp(restart_s / mtbi_s) * std::expm1(segment_s / mtbi_s);
}

double ExpectedSegment_s(double segment_s, double restart_s, double mtbi_s) {
  if (std::isinf(mtbi_s)) return segment_s;
  return mtbi_s * ExpectedSegmentInterruptions(segment_s, restart_s, mtbi_s);
}

double ExpectedOnNoticeInterruptions(double progress_s, double restart_s, double mtbi_s) {
  if (std::isinf(mtbi_s)) return 0;
  return progress_s / mtbi_s * std::exp(restart_s / mtbi_s);
}

double ExpectedOnNotice_s(double progress_s, double notice_write_s, double restart_s,
                          double mtbi_s) {
  if (std::isinf(mtbi_s)) return progress_s;
  // A restart phase lasts M (e^{R/M} - 1) on average (a segment of R with no restart).
  const double restart_phase_s = mtbi_s * std::expm1(restart_s / mtbi_s);
  return progress_s + progress_s / mtbi_s * (notice_write_s + restart_phase_s);
}

}  // namespace trainsim::planner
