// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// Waiting for spot capacity: how long a job waits before N spot instances of
// a type can be had at once (docs/planner.md section 6.10; issue 21, not yet
// used by the plan).
//
// No public source gives the chance that a type's spot pools hold N instances
// at a given time (EC2 spot placement scores answer per account and request,
// and are not published), so the chance comes from the user: `q`, that one
// request for all N succeeds, retried every `s` seconds. Without it the planner
// says that the figure is unknown instead of guessing. Requests are taken as
// independent; the failures before the first success are geometric:
//
//   P(W > k s) = (1 - q)^(k + 1)         E[W] = s (1 - q) / q
//   the p-quantile of W = s max(0, ceil(ln(1 - p) / ln(1 - q)) - 1)
//
// Pure functions, thread-safe.
#pragma once

#include "core/status.h"

namespace trainsim::planner {

struct SpotCapacityWait {
  double mean_s = 0;  // E[W]
  double p50_s = 0;
  double p90_s = 0;
  double p99_s = 0;
};

// InvalidInput naming the field for q outside (0, 1] or a retry interval that
// is not > 0.
Expected<SpotCapacityWait> WaitForSpotCapacity(double success_per_request, double retry_s);

// E[W] = s (1 - q) / q; 0 when q = 1. q in (0, 1], retry_s > 0 (not checked).
double SpotWaitMean_s(double success_per_request, double retry_s);

// One wait drawn from a uniform u in [0, 1): retry_s floor(ln(1 - u) / ln(1 - q))
// (failed requests K before the first success: P(K >= k) = (1 - q)^k); 0 when q = 1.
double SpotWaitDraw_s(double success_per_request, double retry_s, double u);

// The p-quantile (0 < p < 1) of the wait, as above; q in (0, 1], retry_s > 0
// (not checked).
double SpotWaitQuantile_s(double success_per_request, double retry_s, double p);

// The chance that the job has not started after `deadline_s`: (1 - q)^(floor(deadline_s / s) + 1).
double SpotNotStartedBy(double success_per_request, double retry_s, double deadline_s);

}  // namespace trainsim::planner
