#include "calibrate/measure.h"

#include <algorithm>

namespace trainsim::calibrate {

Timing Summarize(std::vector<double> times_s) {
  Timing t;
  if (times_s.empty()) return t;
  std::sort(times_s.begin(), times_s.end());
  const size_t n = times_s.size();
  t.repetitions = static_cast<int>(n);
  t.median_s = n % 2 ? times_s[n / 2] : 0.5 * (times_s[n / 2 - 1] + times_s[n / 2]);
  t.min_s = times_s.front();
  t.max_s = times_s.back();
  return t;
}

double BusBandwidthFactor(const std::string& op, int ranks) {
  if (ranks <= 0) return 0;
  const double n = ranks;
  if (op == "all_reduce") return 2 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter") return (n - 1) / n;
  return 1;  // broadcast, reduce, send_recv
}

}  // namespace trainsim::calibrate
