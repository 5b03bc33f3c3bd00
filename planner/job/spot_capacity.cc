#include "planner/job/spot_capacity.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/json_doc.h"

namespace trainsim::planner {

double SpotWaitMean_s(double q, double retry_s) { return q >= 1 ? 0 : retry_s * (1 - q) / q; }

double SpotWaitDraw_s(double q, double retry_s, double u) {
  if (q >= 1) return 0;
  return retry_s * std::floor(std::log1p(-u) / std::log1p(-q));
}

double SpotWaitQuantile_s(double q, double retry_s, double p) {
  if (q >= 1) return 0;
  // The smallest k with 1 - (1 - q)^(k + 1) >= p. The ratio is rounded to 1e-9 first so that
  // an exact integer computed with a rounding error does not step up a whole retry.
  const double ratio = std::log1p(-p) / std::log1p(-q);
  const double k = std::ceil(std::round(ratio * 1e9) / 1e9) - 1;
  return retry_s * std::max(0.0, k);
}

double SpotNotStartedBy(double q, double retry_s, double deadline_s) {
  return std::pow(1 - q, std::floor(deadline_s / retry_s) + 1);
}

Expected<SpotCapacityWait> WaitForSpotCapacity(double q, double retry_s) {
  if (!(std::isfinite(q) && q > 0 && q <= 1)) {
    return Status::InvalidInput(
        "spot capacity: success_per_request: expected a chance in (0, 1], got " + FormatNumber(q));
  }
  if (!(std::isfinite(retry_s) && retry_s > 0)) {
    return Status::InvalidInput("spot capacity: retry_s: expected a time > 0, got " +
                                FormatNumber(retry_s));
  }
  SpotCapacityWait w;
  w.mean_s = SpotWaitMean_s(q, retry_s);
  w.p50_s = SpotWaitQuantile_s(q, retry_s, 0.5);
  w.p90_s = SpotWaitQuantile_s(q, retry_s, 0.9);
  w.p99_s = SpotWaitQuantile_s(q, retry_s, 0.99);
  return w;
}

}  // namespace trainsim::planner
