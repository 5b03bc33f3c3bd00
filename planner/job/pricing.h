// From a candidate and a pricing option to the job model's inputs: the
// price, the interruption rate, checkpoint and download times, the work.
// The defaults for what the scenario does not say are stated assumptions
// (docs/planner.md, "Whole-job accounting"), listed by JobAssumptions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/search.h"
#include "planner/job/job.h"
#include "planner/search/space.h"

namespace trainsim::planner {

// Assumptions, used when the search section does not set them.
inline constexpr double kDefaultProvisioning_s = 600;  // request to first step
inline constexpr double kDefaultRestart_s = 600;       // re-provision after an interruption
inline constexpr double kDefaultSpotRetry_s = 600;     // between requests for spot capacity

// Price per instance-hour of `t` under `p` (spot: the on-demand price less the
// Spot Advisor saving; capacity-block: search.prices, else the catalog;
// training-plan and the Savings Plans: search.prices only); nullopt when
// neither gives a figure. Savings Plans cover on-demand use: a type without an
// on-demand price has none.
std::optional<double> PriceUsdHr(const InstanceType& t, Pricing p, const SearchConfig& q);

// The term of a Savings Plan option: 1 or 3 years; 0 for the other options.
int CommitmentYears(Pricing p);

// The aggregate rate of named storage, bytes per second: FSx for Lustre its
// throughput per TiB (MB = 1e6 bytes) times its TiB, reads and writes alike (the
// baseline: burst credits are not counted); S3 the documented requests per
// second per prefix (writes 3,500, reads 5,500) times the prefixes and the part size.
double NamedStorageBps(const StorageConfig& storage, bool write);

// spot-elastic: the groups of nodes whose loss takes the same replicas under the rank
// layout rank = (stage x dp + replica) x tp + tp_rank (docs/model.md): a stage's dp x tp
// GPUs lie on consecutive nodes, so with tp <= G GPUs per node a node holds G / tp
// replicas' slices of one stage, and the pp nodes at the same place in every stage's range
// form a group; with tp >= G each replica's tp / G nodes per stage do. 0 when fewer than
// two groups form (a node holding several stages, or a replica cut across node
// boundaries) or a replica does not hold the whole state (ZeRO shards, experts or context
// split over the DP ranks).
int ElasticGroups(const Scenario& s);

// Spot interruptions per instance-hour for `s`'s instance (the override in
// `q`, else the catalog bucket); nullopt when neither gives one. *lower_bound
// is set for the open ">20%" bucket.
std::optional<double> SpotRatePerHour(const Scenario& s, const SearchConfig& q, bool* lower_bound);

// Bytes a checkpoint saves: the override in `q`, else every parameter's
// weights and optimizer state.
double CheckpointBytes(const Scenario& s, const SearchConfig& q);

// Dataset bytes to download: the override in `q`, else token ids (2 bytes,
// 4 when the vocabulary exceeds 65535) for token work; nullopt when unknown.
std::optional<double> DatasetBytes(const Scenario& s, const SearchConfig& q);

// The job model's inputs for scenario `s` (a candidate applied) and its
// search section `q`, at `step_s` per step and `steps` steps under `p`.
// nullopt when the instance has no price under `p` (on-demand excepted: a
// reference system is planned by time, its costs absent), for spot, no
// interruption rate, or for reserved blocks more nodes than they hold.
struct PricingInputs {
  JobInputs job;
  std::optional<double> price_usd_hr;
  bool rate_lower_bound = false;
};
std::optional<PricingInputs> MakeJobInputs(const Scenario& s, const SearchConfig& q, double step_s,
                                           double steps, Pricing p);

// Expected wall time and cost of `in` in closed form (Daly 2006), without
// the Monte-Carlo: what the planner ranks with. Cost is infinite without a
// price.
void ClosedFormJob(const JobInputs& in, double* time_s, double* cost_usd);

// The assumptions behind MakeJobInputs for this scenario and section, in words.
std::vector<std::string> JobAssumptions(const Scenario& s, const SearchConfig& q);

// Where the prices of the space's options come from, when it needs saying (a
// catalog block price and the date it holds until, what a Savings Plan's
// figures mean), and the options left out for want of a price.
std::vector<std::string> PriceAssumptions(const SearchSpace& space, const SearchConfig& q);

}  // namespace trainsim::planner
