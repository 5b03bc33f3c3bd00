// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// Interruption rates and checkpoint intervals: pure formulas, no state.
//
// Rates: the EC2 Spot Advisor's "frequency of interruption" bucket (the
// fraction of an instance type's spot instances reclaimed over the trailing
// month) becomes a Poisson rate per instance-hour. A job on N instances is
// interrupted N times as often: its mean time between interruptions (MTBI) is
// M = 1 / (N * rate).
//
// Intervals: the Young (1974) and Daly (2006) rules for the computation
// between two checkpoints, given the checkpoint write time and M.
//
// Closed forms: the expected wall time and expected number of interruptions
// of one stretch of work under Poisson failures at rate 1/M that strike at any
// time, restarts included. See docs/planner.md section 6 for the derivations.
//
// Every function is pure and thread-safe. Arguments are not checked: the
// caller (EstimateJob) validates them; "mtbi_s" may be +infinity (no failures).
#pragma once

#include <optional>
#include <string>

namespace trainsim::planner {

// Hours in the Spot Advisor's month: 365.25 * 24 / 12.
inline constexpr double kHoursPerMonth = 730.5;
// Seconds between the spot interruption notice and the reclaim
// (reference/aws-instances-sources.json, _spot_and_billing.spot_interruption_notice_seconds).
inline constexpr double kSpotNotice_s = 120;

// The monthly fraction of instances reclaimed for a Spot Advisor bucket:
// "<5%" 0.025, "5-10%" 0.075, "10-15%" 0.125, "15-20%" 0.175 (midpoints of the
// closed buckets); ">20%" 0.20 with *lower_bound set (an open bucket: the
// figure is a floor, never an invented upper value; say "at least"). For the
// closed buckets *lower_bound is cleared. Unknown text: nullopt, *lower_bound
// untouched. lower_bound may be null.
std::optional<double> MonthlyInterruptionFraction(const std::string& bucket, bool* lower_bound);

// The Poisson rate per instance-hour under which an instance is interrupted at
// least once in a month of kHoursPerMonth hours with probability
// monthly_fraction: -ln(1 - f) / 730.5. Domain 0 <= f < 1; f = 0 gives 0.
double InterruptionsPerHour(double monthly_fraction);

// Young 1974 ("A first order approximation to the optimum checkpoint
// interval", CACM 17(9)): tau = sqrt(2 delta M). delta = checkpoint write
// seconds, M = job MTBI seconds. Returns work seconds between checkpoints.
double YoungInterval_s(double checkpoint_write_s, double mtbi_s);

// Daly 2006 ("A higher order estimate of the optimum checkpoint interval for
// restart dumps", FGCS 22(3)): for delta < 2M,
//   tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / 2M) + (1/9) (delta / 2M)] - delta,
// else tau = M.
double DalyInterval_s(double checkpoint_write_s, double mtbi_s);

// Expected wall seconds to finish a segment of segment_s seconds (work plus
// its checkpoint write) that restarts from its beginning after each failure,
// each failure followed by a restart of restart_s that itself starts over when
// a failure strikes it (Daly 2006):  M e^{R/M} (e^{L/M} - 1).
// mtbi_s = infinity gives segment_s.
double ExpectedSegment_s(double segment_s, double restart_s, double mtbi_s);

// Expected failures while finishing that segment: e^{R/M} (e^{L/M} - 1)
// = ExpectedSegment_s / M (failures come at rate 1/M over the whole time).
double ExpectedSegmentInterruptions(double segment_s, double restart_s, double mtbi_s);

// Expected wall seconds of a run that never loses work (checkpoint on the
// spot notice): progress_s seconds of work and scheduled writes, failures at
// rate 1/M during it, each costing a notice write of notice_write_s and a
// restart as above:  W + (W/M) (delta + M (e^{R/M} - 1)).
double ExpectedOnNotice_s(double progress_s, double notice_write_s, double restart_s,
                          double mtbi_s);

// Expected failures of that run: (W/M) e^{R/M}.
double ExpectedOnNoticeInterruptions(double progress_s, double restart_s, double mtbi_s);

}  // namespace trainsim::planner
