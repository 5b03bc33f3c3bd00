#include "planner/pricing.h"

#include <algorithm>
#include <limits>

#include "core/units.h"
#include "planner/interruptions.h"
#include "sim/memory_model.h"

namespace trainsim::planner {
namespace {

bool IsSpot(Pricing p) { return p == Pricing::kSpot || p == Pricing::kSagemakerSpot; }

// The nodes' network, bytes per second each: the path to storage.
double NodeNetBps(const InstanceType& t) { return t.nics * t.nic_gbps / 8 * 1e9; }

// Aggregate storage bandwidth for `nodes` nodes writing or reading at once.
double StorageBps(const Scenario& s, const SearchConfig& q) {
  double bps = s.cluster.nodes * NodeNetBps(s.instance);
  if (q.storage_GBps) bps = std::min(bps, *q.storage_GBps * 1e9);
  return bps;
}

}  // namespace

std::optional<double> PriceUsdHr(const InstanceType& t, Pricing p) {
  switch (p) {
    case Pricing::kOnDemand:
      return t.price_on_demand_usd_hr;
    case Pricing::kSpot:
      if (!t.price_on_demand_usd_hr || !t.spot_discount) return std::nullopt;
      return *t.price_on_demand_usd_hr * (1 - *t.spot_discount);
    case Pricing::kSagemaker:
    case Pricing::kSagemakerSpot:
      if (p == Pricing::kSagemakerSpot && !t.spot_discount) return std::nullopt;
      return t.price_sagemaker_usd_hr;
  }
  return std::nullopt;
}

std::optional<double> SpotRatePerHour(const Scenario& s, const SearchConfig& q, bool* lower_bound) {
  *lower_bound = false;
  if (q.spot_interruptions_per_month) return InterruptionsPerHour(*q.spot_interruptions_per_month);
  if (!s.instance.spot_interruption_bucket) return std::nullopt;
  std::optional<double> f =
      MonthlyInterruptionFraction(*s.instance.spot_interruption_bucket, lower_bound);
  if (!f) return std::nullopt;
  return InterruptionsPerHour(*f);
}

double CheckpointBytes(const Scenario& s, const SearchConfig& q) {
  if (q.checkpoint_bytes) return *q.checkpoint_bytes;
  return ParameterCount(s.model) * sim::CheckpointBytesPerParam(s);
}

std::optional<double> DatasetBytes(const Scenario& s, const SearchConfig& q) {
  if (q.dataset_bytes) return *q.dataset_bytes;
  if (s.training.tokens > 0) return s.training.tokens * (s.model.vocab > 65535 ? 4 : 2);
  return std::nullopt;
}

std::optional<PricingInputs> MakeJobInputs(const Scenario& s, const SearchConfig& q, double step_s,
                                           double steps, Pricing p) {
  std::optional<double> price = PriceUsdHr(s.instance, p);
  // Unpriced on-demand (reference systems) still has a time; other options need a price.
  if (!price && p != Pricing::kOnDemand) return std::nullopt;
  PricingInputs out;
  out.price_usd_hr = price;
  JobInputs& in = out.job;
  in.pricing = p;
  in.price_usd_hr = price;
  in.work_s = step_s * steps;
  in.nodes = s.cluster.nodes;
  const double storage = StorageBps(s, q);
  in.checkpoint_write_s = CheckpointBytes(s, q) / storage;
  if (IsSpot(p)) {
    std::optional<double> rate = SpotRatePerHour(s, q, &out.rate_lower_bound);
    if (!rate) return std::nullopt;
    in.interruptions_per_instance_hour = *rate;
    // The notice is only usable when the write fits in it.
    in.checkpoint_on_notice = q.checkpoint_on_notice && in.checkpoint_write_s <= kSpotNotice_s;
    if (p == Pricing::kSagemakerSpot) in.spot_billed_fraction = 1 - *s.instance.spot_discount;
  }
  in.checkpoint_interval_s = q.checkpoint_interval_s;
  in.provisioning_s = q.provisioning_s.value_or(kDefaultProvisioning_s);
  // A restart re-provisions, then every node reloads its share of the state.
  in.restart_s = q.restart_s.value_or(kDefaultRestart_s) + in.checkpoint_write_s;
  // Every node downloads the whole dataset, at its network rate or its share
  // of the storage bandwidth.
  if (std::optional<double> data = DatasetBytes(s, q)) {
    in.download_s = *data / std::min(NodeNetBps(s.instance), storage / s.cluster.nodes);
  }
  in.trials = q.trials;
  in.seed = q.seed;
  return out;
}

std::vector<std::string> JobAssumptions(const Scenario& s, const SearchConfig& q) {
  std::vector<std::string> out;
  if (!q.provisioning_s) {
    out.push_back(
        "provisioning takes 600 s from request to the first step (assumption, no "
        "source; set search.provisioning_s)");
  }
  if (!q.restart_s) {
    out.push_back(
        "a restart after an interruption takes 600 s plus reloading the checkpoint "
        "(assumption, no source; set search.restart_s)");
  }
  if (!q.storage_GBps) {
    out.push_back(
        "checkpoints and the dataset move at the nodes' full network rate (no storage "
        "limit given; set search.storage_GBps)");
  }
  if (!q.dataset_bytes) {
    out.push_back(s.training.tokens > 0
                      ? "the dataset is the training tokens as token ids of 2 bytes (4 above "
                        "65535 vocabulary entries), downloaded once by every node"
                      : "the dataset download is not counted (set search.dataset_bytes)");
  }
  out.push_back(
      "spot interruption rates are the middle of the Spot Advisor bucket (the "
      "lower bound 20% for \">20%\"), as interruptions per instance per month");
  out.push_back(
      "SageMaker managed spot saves the EC2 Spot Advisor discount (assumption: "
      "SageMaker publishes no figure of its own)");
  return out;
}

void ClosedFormJob(const JobInputs& in, double* time_s, double* cost_usd) {
  const double lambda = in.interruptions_per_instance_hour / kSecondsPerHour * in.nodes;
  double run_s = in.download_s + in.work_s + in.checkpoint_write_s;
  if (lambda > 0) {
    const double mtbi = 1 / lambda;
    if (in.checkpoint_on_notice && in.checkpoint_write_s <= kSpotNotice_s) {
      run_s = in.download_s + ExpectedOnNotice_s(in.work_s + in.checkpoint_write_s,
                                                 in.checkpoint_write_s, in.restart_s, mtbi);
    } else {
      const double tau =
          std::min(in.work_s,
                   in.checkpoint_interval_s.value_or(DalyInterval_s(in.checkpoint_write_s, mtbi)));
      const double segments = in.work_s / std::max(tau, 1e-9);
      run_s = in.download_s +
              segments * ExpectedSegment_s(tau + in.checkpoint_write_s, in.restart_s, mtbi);
    }
  }
  *time_s = in.provisioning_s + run_s;
  const double billed = in.pricing == Pricing::kSagemakerSpot ? in.spot_billed_fraction : 1;
  *cost_usd = in.price_usd_hr ? *in.price_usd_hr / kSecondsPerHour * in.nodes * run_s * billed
                              : std::numeric_limits<double>::infinity();
}

}  // namespace trainsim::planner
