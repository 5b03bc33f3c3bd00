#include "planner/job/pricing.h"

#include <algorithm>
#include <limits>

#include "core/json_doc.h"
#include "core/strategy.h"
#include "core/units.h"
#include "planner/job/commitment.h"
#include "planner/job/interruptions.h"
#include "planner/job/spot_capacity.h"
#include "sim/memory_model.h"

namespace trainsim::planner {
namespace {

// The nodes' network, bytes per second each: the path to storage.
double NodeNetBps(const InstanceType& t) { return t.nics * t.nic_gbps / 8 * 1e9; }

// Amazon S3 User Guide, "Best practices design patterns: optimizing Amazon S3 performance":
// at least 3,500 PUT/COPY/POST/DELETE and 5,500 GET/HEAD requests per second per partitioned
// prefix (floors: S3 may give more).
constexpr double kS3PutsPerPrefix = 3500;
constexpr double kS3GetsPerPrefix = 5500;

// Aggregate storage bandwidth for every node writing (or reading) at once: their network,
// capped by the storage's rate.
double StorageBps(const Scenario& s, const SearchConfig& q, bool write) {
  double bps = s.cluster.nodes * NodeNetBps(s.instance);
  if (q.storage_GBps) bps = std::min(bps, *q.storage_GBps * 1e9);
  if (q.storage) bps = std::min(bps, NamedStorageBps(*q.storage, write));
  return bps;
}

}  // namespace

double NamedStorageBps(const StorageConfig& c, bool write) {
  if (c.kind == StorageKind::kFsxLustre) return c.MBps_per_TiB * 1e6 * c.capacity_TiB;
  return c.prefixes * (write ? kS3PutsPerPrefix : kS3GetsPerPrefix) * c.part_MiB * kMiB;
}

int ElasticGroups(const Scenario& s) {
  const ParallelConfig& par = s.parallel;
  const int gpus = s.instance.gpus, dp = par.dp, tp = par.tp;
  if (par.zero_stage != 0 || par.ep != 1 || !NoStrategy(par) || gpus < 1) return 0;
  int groups = 0;
  if (tp >= gpus && tp % gpus == 0) {
    groups = dp;
  } else if (tp < gpus && gpus % tp == 0 && (int64_t{dp} * tp) % gpus == 0) {
    groups = static_cast<int>(int64_t{dp} * tp / gpus);
  }
  if (groups < 2 || s.cluster.nodes % groups != 0) return 0;
  return groups;
}

int CommitmentYears(Pricing p) {
  return p == Pricing::kSavingsPlan1y ? 1 : p == Pricing::kSavingsPlan3y ? 3 : 0;
}

std::optional<double> PriceUsdHr(const InstanceType& t, Pricing p, const SearchConfig& q) {
  const auto given = q.prices.find(t.name);
  const UserPrices none;
  const UserPrices& user = given == q.prices.end() ? none : given->second;
  switch (p) {
    case Pricing::kOnDemand:
      return t.price_on_demand_usd_hr;
    case Pricing::kSpot:
    case Pricing::kSpotFallback:  // the spot price; the fallback's is on-demand
    case Pricing::kSpotElastic:
      if (!t.price_on_demand_usd_hr || !t.spot_discount) return std::nullopt;
      return *t.price_on_demand_usd_hr * (1 - *t.spot_discount);
    case Pricing::kSagemaker:
    case Pricing::kSagemakerSpot:
      if (p == Pricing::kSagemakerSpot && !t.spot_discount) return std::nullopt;
      return t.price_sagemaker_usd_hr;
    case Pricing::kCapacityBlock:
      return user.capacity_block_usd_hr ? user.capacity_block_usd_hr
                                        : t.price_capacity_block_usd_hr;
    case Pricing::kTrainingPlan:
      return user.training_plan_usd_hr;
    case Pricing::kSavingsPlan1y:
    case Pricing::kSavingsPlan3y:
      if (!t.price_on_demand_usd_hr) return std::nullopt;
      return p == Pricing::kSavingsPlan1y ? user.savings_plan_1y_usd_hr
                                          : user.savings_plan_3y_usd_hr;
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

namespace {

// A spot option's interruptions, notice, billing, waves, fallback and capacity; false when the
// instance has no interruption rate.
bool SetSpotInputs(const Scenario& s, const SearchConfig& q, Pricing p, PricingInputs* out) {
  JobInputs& in = out->job;
  std::optional<double> rate = SpotRatePerHour(s, q, &out->rate_lower_bound);
  if (!rate) return false;
  in.interruptions_per_instance_hour = *rate;
  // The notice is only usable when the write fits in it.
  in.checkpoint_on_notice = q.checkpoint_on_notice && in.checkpoint_write_s <= kSpotNotice_s;
  if (p == Pricing::kSagemakerSpot) in.spot_billed_fraction = 1 - *s.instance.spot_discount;
  in.reclaim_wave_nodes = q.spot_reclaim_wave_nodes;
  if (p == Pricing::kSpotFallback) {
    in.fallback_deadline_s = *q.deadline_hours * kSecondsPerHour;
    in.fallback_usd_hr = s.instance.price_on_demand_usd_hr;
  }
  if (q.spot_capacity_chance) {
    in.capacity_chance = *q.spot_capacity_chance;
    in.capacity_retry_s = q.spot_capacity_retry_s.value_or(kDefaultSpotRetry_s);
  }
  return true;
}

// Elastic spot over `groups` replica groups: the pauses of a loss and of a join.
void SetElasticInputs(const Scenario& s, const SearchConfig& q, double step_s, int groups,
                      JobInputs* in) {
  in->elastic_groups = groups;
  in->checkpoint_on_notice = false;  // the replicas left carry the state
  const double reconfigure_s = q.elastic_reconfigure_s.value_or(0);
  // Replicas leave mid-step: the step is redone by those left.
  in->elastic_loss_pause_s = step_s + reconfigure_s;
  // A joining node receives its GPUs' share of the state (dp / nodes replicas' worth)
  // from a live replica over its own network.
  in->elastic_join_pause_s =
      CheckpointBytes(s, q) * s.parallel.dp / s.cluster.nodes / NodeNetBps(s.instance) +
      reconfigure_s;
}

// The dataset: streamed during training, or downloaded by every node before it.
void SetDatasetInputs(const Scenario& s, const SearchConfig& q, double step_s, double steps,
                      double read_Bps, JobInputs* in) {
  std::optional<double> data = DatasetBytes(s, q);
  if (!data) return;
  if (q.stream_dataset && steps > 0) {
    // Read during training, prefetched beside the compute: each step waits for its share
    // of the data (one pass over it) at the storage's aggregate read rate, if that is slower.
    in->work_s = steps * std::max(step_s, *data / steps / read_Bps);
  } else {
    // Every node downloads the whole dataset, at its network rate or its share of the
    // storage bandwidth.
    in->download_s = *data / std::min(NodeNetBps(s.instance), read_Bps / s.cluster.nodes);
  }
}

// The option's terms: SageMaker's job limit and warm pool, reserved blocks, a commitment.
void SetTermInputs(const Scenario& s, const SearchConfig& q, Pricing p, const BlockRules& rules,
                   JobInputs* in) {
  if (p == Pricing::kSagemaker || p == Pricing::kSagemakerSpot) {
    in->max_job_s = kSagemakerMaxRuntime_s;
    if (p == Pricing::kSagemaker) in->warm_pool_keep_alive_s = q.warm_pool_keep_alive_s.value_or(0);
  }
  if (IsReserved(p)) {
    CapacityBlockInputs& b = in->blocks.emplace();
    b.rules = rules;
    b.nodes = in->nodes;
    b.checkpoint_write_s = in->checkpoint_write_s;
    b.restart_s = in->restart_s;
    b.gap_s = q.reservation_gap_s.value_or(0);
  }
  if (const int years = CommitmentYears(p)) {
    in->committed_instance_hours = in->nodes * years * kCommitmentHoursPerYear;
    in->beyond_usd_hr = s.instance.price_on_demand_usd_hr;
  }
}

}  // namespace

std::optional<PricingInputs> MakeJobInputs(const Scenario& s, const SearchConfig& q, double step_s,
                                           double steps, Pricing p) {
  std::optional<double> price = PriceUsdHr(s.instance, p, q);
  // Unpriced on-demand (reference systems) still has a time; other options need a price.
  if (!price && p != Pricing::kOnDemand) return std::nullopt;
  const BlockRules& rules = p == Pricing::kTrainingPlan ? kTrainingPlanRules : kCapacityBlockRules;
  if (IsReserved(p) && BlockSizes(s.cluster.nodes, rules).empty()) return std::nullopt;
  if (p == Pricing::kSpotFallback && !q.deadline_hours) return std::nullopt;
  const int elastic_groups = p == Pricing::kSpotElastic ? ElasticGroups(s) : 0;
  if (p == Pricing::kSpotElastic && elastic_groups == 0) return std::nullopt;
  PricingInputs out;
  out.price_usd_hr = price;
  JobInputs& in = out.job;
  in.pricing = p;
  in.price_usd_hr = price;
  in.work_s = step_s * steps;
  in.nodes = s.cluster.nodes;
  const double read_Bps = StorageBps(s, q, false);
  in.checkpoint_write_s = CheckpointBytes(s, q) / StorageBps(s, q, true);
  in.checkpoint_read_s = CheckpointBytes(s, q) / read_Bps;
  // Each new instance (the first ones, and every replacement) pulls the image over its
  // network.
  const double pull_s = q.image_bytes.value_or(0) / NodeNetBps(s.instance);
  if (IsSpot(p) && !SetSpotInputs(s, q, p, &out)) return std::nullopt;
  if (elastic_groups > 0) SetElasticInputs(s, q, step_s, elastic_groups, &in);
  in.checkpoint_interval_s = q.checkpoint_interval_s;
  in.provisioning_s = q.provisioning_s.value_or(kDefaultProvisioning_s) + pull_s;
  // A restart re-provisions, then every node reloads its share of the state.
  in.restart_s = q.restart_s.value_or(kDefaultRestart_s) + pull_s + *in.checkpoint_read_s;
  SetDatasetInputs(s, q, step_s, steps, read_Bps, &in);
  SetTermInputs(s, q, p, rules, &in);
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
  if (q.storage) {
    const StorageConfig& c = *q.storage;
    out.push_back(
        c.kind == StorageKind::kFsxLustre
            ? "checkpoints and the dataset move through FSx for Lustre at " +
                  FormatNumber(c.MBps_per_TiB) + " MB/s per TiB x " + FormatNumber(c.capacity_TiB) +
                  " TiB = " + FormatNumber(NamedStorageBps(c, false) / 1e9) +
                  " GB/s (its baseline: burst credits not counted), or the nodes' network "
                  "when slower"
            : "checkpoints and the dataset move through S3 at its documented floor per "
              "partitioned prefix (3,500 writes and 5,500 reads per second) x " +
                  std::to_string(c.prefixes) + " prefixes x " + FormatNumber(c.part_MiB) +
                  " MiB parts = " + FormatNumber(NamedStorageBps(c, true) / 1e9) + " GB/s out, " +
                  FormatNumber(NamedStorageBps(c, false) / 1e9) +
                  " GB/s in, or the nodes' network when slower (S3 User Guide, optimizing "
                  "performance)");
  } else if (!q.storage_GBps) {
    out.push_back(
        "checkpoints and the dataset move at the nodes' full network rate (no storage "
        "limit given; set search.storage or search.storage_GBps)");
  }
  if (q.image_bytes) {
    out.push_back("every new instance pulls the " + FormatNumber(*q.image_bytes / 1e9) +
                  " GB image over its own network, at provisioning and at each restart (the "
                  "registry is taken not to limit it: ECR publishes no throughput figure)");
  }
  if (q.stream_dataset) {
    out.push_back(
        "the dataset is streamed during training (S3 Mountpoint, SageMaker fast file mode, "
        "FSx): no download before the first step; each step waits for its data when the "
        "storage's read rate cannot keep up with one pass over the dataset");
  }
  if (!q.dataset_bytes) {
    out.push_back(
        s.training.tokens > 0
            ? std::string("the dataset is the training tokens as token ids of 2 bytes "
                          "(4 above 65535 vocabulary entries), ") +
                  (q.stream_dataset ? "read once during training" : "downloaded once by every node")
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

namespace {

bool Offered(const SearchSpace& space, Pricing p) {
  return std::find(space.pricing.begin(), space.pricing.end(), p) != space.pricing.end();
}

// The catalog's Capacity Block prices in use, with their sources and dates.
void AddCapacityBlockPrices(const SearchSpace& space, const SearchConfig& q,
                            std::vector<std::string>* out) {
  auto offered = [&](Pricing p) { return Offered(space, p); };
  if (offered(Pricing::kCapacityBlock)) {
    for (const InstanceType* t : space.instances) {
      const auto given = q.prices.find(t->name);
      if (!t->price_capacity_block_usd_hr ||
          (given != q.prices.end() && given->second.capacity_block_usd_hr)) {
        continue;
      }
      std::string sources;
      if (const auto ids = t->sources.find("pricing.capacity_block_usd_hr");
          ids != t->sources.end()) {
        for (const std::string& id : ids->second) sources += (sources.empty() ? "" : ", ") + id;
      }
      out->push_back("capacity-block: " + t->name + " at $" +
                     FormatNumber(*t->price_capacity_block_usd_hr) +
                     " per instance-hour from the catalog (source " + sources + "), valid until " +
                     t->capacity_block_valid_until.value_or("?") +
                     ": block prices move with demand; give search.prices.\"" + t->name +
                     "\".capacity_block_usd_hr for a current offer");
    }
  }
}

// How reserved blocks are booked and ended, and what a Savings Plan rate means.
void AddReservedTerms(const SearchSpace& space, const SearchConfig& q,
                      std::vector<std::string>* out) {
  auto offered = [&](Pricing p) { return Offered(space, p); };
  if (offered(Pricing::kCapacityBlock) || offered(Pricing::kTrainingPlan)) {
    out->push_back(
        "capacity-block and training-plan: blocks are bought for the predicted run (whole days, "
        "Capacity Blocks whole weeks above 14 days) and are taken to be on offer when wanted (no "
        "public figure on how often they are); a run that outlasts them continues in a block "
        "bought then, " +
        (q.reservation_gap_s ? FormatNumber(*q.reservation_gap_s) + " s later"
                             : std::string("back to back (set search.reservation_gap_s)")));
  }
  if (offered(Pricing::kTrainingPlan)) {
    out->push_back(
        "training-plan: instances end 30 minutes before the plan does, as Capacity Blocks' do "
        "(assumption: SageMaker documents no margin)");
  }
  if (offered(Pricing::kSavingsPlan1y) || offered(Pricing::kSavingsPlan3y)) {
    out->push_back(
        "savings-plan-1y/3y: the rate given in search.prices is the payment option's effective "
        "rate; the commitment covers the job's nodes for the whole term, the job is charged the "
        "hours it uses, and what the rest of the commitment costs is reported beside it");
  }
}

// Whether spot capacity is modelled, and its retry interval.
void AddSpotCapacity(const SearchConfig& q, bool spot, std::vector<std::string>* out) {
  if (spot && !q.spot_capacity_chance) {
    out->push_back(
        "spot capacity is not modelled: the fleet is taken to start at once and each "
        "replacement to be back within the restart time; no public figure says how often N "
        "spot instances of a type can be had at once (set search.spot_capacity_chance)");
  } else if (spot && !q.spot_capacity_retry_s) {
    out->push_back(
        "a request for spot capacity is retried every 600 s (assumption; set "
        "search.spot_capacity_retry_s)");
  }
}

// How elastic spot and spot-fallback are simulated.
void AddElasticAndFallback(const SearchSpace& space, const SearchConfig& q,
                           std::vector<std::string>* out) {
  auto offered = [&](Pricing p) { return Offered(space, p); };
  if (offered(Pricing::kSpotElastic)) {
    out->push_back(
        "spot-elastic: trains on the data-parallel replicas left after a reclaim (as Parcae, "
        "NSDI'24), at their share of the full speed (gradient accumulation keeps the batch); "
        "offered for layouts whose replicas each hold the whole state (ZeRO-0, no experts or "
        "context split over them) and lie on whole nodes; each loss redoes one step, each join "
        "copies the newcomer's share of the state over its network; " +
        (q.elastic_reconfigure_s
             ? FormatNumber(*q.elastic_reconfigure_s) +
                   " s to rebuild the communicators at each change"
             : std::string("rebuilding the communicators is not counted (no public figure; set "
                           "search.elastic_reconfigure_s)")) +
        "; its time and cost are Monte-Carlo means");
  }
  if (offered(Pricing::kSpotFallback)) {
    out->push_back(
        "spot-fallback: runs on spot while it could still finish on demand by the deadline if "
        "one more segment and a restart were lost, then brings up an on-demand fleet (one "
        "restart) for the rest; its time and cost are Monte-Carlo means (no closed form)");
  }
}

}  // namespace

std::vector<std::string> PriceAssumptions(const SearchSpace& space, const SearchConfig& q) {
  std::vector<std::string> out;
  auto offered = [&](Pricing p) { return Offered(space, p); };
  AddCapacityBlockPrices(space, q, &out);
  AddReservedTerms(space, q, &out);
  const bool spot = std::any_of(space.pricing.begin(), space.pricing.end(), IsSpot);
  AddSpotCapacity(q, spot, &out);
  if (q.warm_pool_keep_alive_s && offered(Pricing::kSagemaker)) {
    out.push_back(
        "sagemaker: a warm pool kept " + FormatNumber(*q.warm_pool_keep_alive_s) +
        " s after each job, billed; its cluster runs consecutive jobs for 7 days at most, so "
        "after a 28-day job it is gone: it saves provisioning only for jobs that follow within "
        "those 7 days (a sweep's, an experiment's), not for this plan's chain; warm pools need a "
        "SageMaker quota increase (the default is 0) and do not run spot (SageMaker Developer "
        "Guide, \"SageMaker Managed Warm Pools\")");
  }
  if (spot && q.spot_reclaim_wave_nodes == 1) {
    out.push_back(
        "spot reclaims are independent, one instance at a time (no public figure on reclaim "
        "waves; set search.spot_reclaim_wave_nodes)");
  }
  for (Pricing p : space.unpriced) {
    out.push_back(std::string(ToString(p)) +
                  (p == Pricing::kSpotFallback
                       ? " not compared: it needs search.deadline_hours"
                       : " not compared: no instance searched has a price for it (AWS publishes "
                         "none; give it in search.prices)"));
  }
  AddElasticAndFallback(space, q, &out);
  return out;
}

void ClosedFormJob(const JobInputs& in, double* time_s, double* cost_usd) {
  if (in.pricing == Pricing::kSpotElastic) {
    IntervalSource source;
    const ElasticShape shape = ElasticShapeOf(in, in.work_s, &source);
    const double run_s = ExpectedElasticRun_s(shape);
    *time_s = SpotWaitMean_s(in.capacity_chance, in.capacity_retry_s) + in.provisioning_s + run_s;
    *cost_usd = CostOf_usd(in, ExpectedElasticBilled_s(shape));
    return;
  }
  const int wave = std::max(1, std::min(in.reclaim_wave_nodes, in.nodes));
  const double lambda = in.interruptions_per_instance_hour / kSecondsPerHour * in.nodes / wave;
  // Waiting for capacity: E[W] before the start and in every restart.
  const double wait_s = SpotWaitMean_s(in.capacity_chance, in.capacity_retry_s);
  const double restart_s = in.restart_s + wait_s;
  double run_s = in.download_s + in.work_s + in.checkpoint_write_s;
  if (lambda > 0) {
    const double mtbi = 1 / lambda;
    if (in.checkpoint_on_notice && in.checkpoint_write_s <= kSpotNotice_s) {
      run_s = in.download_s + ExpectedOnNotice_s(in.work_s + in.checkpoint_write_s,
                                                 in.checkpoint_write_s, restart_s, mtbi);
    } else {
      const double tau =
          std::min(in.work_s,
                   in.checkpoint_interval_s.value_or(DalyInterval_s(in.checkpoint_write_s, mtbi)));
      const double segments = in.work_s / std::max(tau, 1e-9);
      run_s = in.download_s +
              segments * ExpectedSegment_s(tau + in.checkpoint_write_s, restart_s, mtbi);
    }
  }
  if (in.blocks) {
    const Expected<CapacityBlockJob> blocks = RunInBlocks(in, run_s);
    *time_s = blocks.ok() ? blocks->wall_s : std::numeric_limits<double>::infinity();
    *cost_usd = blocks.ok() && blocks->cost_usd ? *blocks->cost_usd
                                                : std::numeric_limits<double>::infinity();
    return;
  }
  const JobChain chain = ChainOf(in, run_s);  // SageMaker's 28-day jobs
  run_s += chain.reload_s;
  *time_s = wait_s + in.provisioning_s + chain.provisioning_s + run_s;
  const double billed = in.pricing == Pricing::kSagemakerSpot ? in.spot_billed_fraction : 1;
  *cost_usd = CostOf_usd(in, in.nodes * (run_s * billed + in.warm_pool_keep_alive_s));
  // The fallback, for ranking only: spot when its expectation meets the deadline, else all
  // on demand (the Monte-Carlo gives the real mix).
  if (in.fallback_deadline_s && *time_s > *in.fallback_deadline_s) {
    const double od_run_s = in.download_s + in.work_s + in.checkpoint_write_s;
    *time_s = in.provisioning_s + od_run_s;
    *cost_usd = *in.fallback_usd_hr / kSecondsPerHour * in.nodes * od_run_s;
  }
}

}  // namespace trainsim::planner
