// The scenario's `search` section (what the planner may choose, under which
// constraints, and the whole-job accounting settings) and its `sweep` grid,
// kept beside the Scenario they belong to in PlanningScenario: the simulator
// never sees them. See docs/formats.md#search and DESIGN.md section 5.
//
// Every list left empty means "the planner's default" (docs/planner.md);
// every optional left unset means "not given" (no constraint, or the
// documented default of the job model).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/catalog.h"
#include "core/scenario.h"
#include "core/status.h"
#include "core/strategy.h"

namespace trainsim {

enum class Objective { kMinCost, kMinTime, kWeighted };

// Named storage for checkpoints and the dataset (docs/planner.md section 4), in
// place of a bare aggregate bandwidth (search.storage_GBps):
//  - FSx for Lustre: throughput per TiB of storage (MB/s/TiB; persistent
//    deployments allow only the documented tiers) times the capacity in TiB;
//  - S3: the request rates S3 documents per partitioned prefix, times the
//    prefixes the objects are spread over and the bytes per request (part).
enum class StorageKind { kFsxLustre, kS3 };
enum class FsxDeployment { kScratch1, kScratch2, kPersistent1, kPersistent2 };
struct StorageConfig {
  StorageKind kind = StorageKind::kFsxLustre;
  FsxDeployment deployment = FsxDeployment::kPersistent2;
  double MBps_per_TiB = 0;
  double capacity_TiB = 0;
  int prefixes = 1;
  double part_MiB = 8;  // the AWS CLI's default multipart chunk size
};

// Prices the user gives for one instance type (search.prices), in USD per
// instance-hour. A Capacity Block price replaces the catalog's (block prices
// move with demand); the others have no public figure to fall back on: the
// option is priced only where one is given here.
struct UserPrices {
  std::optional<double> capacity_block_usd_hr;
  std::optional<double> training_plan_usd_hr;
  // The effective committed rate under a 1- or 3-year Savings Plan or reserved
  // instance (its payment option's upfront spread over the term).
  std::optional<double> savings_plan_1y_usd_hr;
  std::optional<double> savings_plan_3y_usd_hr;
};

struct SearchConfig {
  // --- the space ---
  std::vector<std::string> instances;  // allowed catalog types; empty = every GPU type
  int min_nodes = 1;
  int max_nodes = 64;
  // Options to price; empty = every option with a price for some instance searched (the
  // spot ones only if spot_allowed).
  std::vector<Pricing> pricing;
  bool spot_allowed = true;  // false removes spot and sagemaker-spot
  std::vector<int> tp;       // empty = powers of two up to the node's GPUs
  std::vector<int> pp;       // empty = divisors of the layers up to max_pp
  int max_pp = 64;
  std::vector<int> micro_batch;  // empty = 1, 2, 4, 8 (those dividing the batch)
  std::vector<int> zero_stages;  // empty = 0, 1, 2, 3
  // Hybrid shard groups tried beside the whole DP group for ZeRO-2/3
  // (parallel.shard_group); empty = one node's DP ranks times 1, 2, 4, ...
  // below dp.
  std::vector<int> shard_groups;
  // Expert-parallel degrees (parallel.ep) tried by a mixture-of-experts model's
  // ZeRO-0/1 layouts; empty = 1 and the powers of two dividing the experts and dp.
  std::vector<int> ep;
  // Each strategy's degrees tried (search.<name>, in kStrategies' order, core/strategy.h);
  // empty = the strategy's default axis.
  std::array<std::vector<int>, kStrategyCount> strategies;
  std::vector<Recompute> recompute;  // empty = none, selective, full
  std::vector<Schedule> schedules;   // empty = 1f1b, interleaved
  std::vector<int> virtual_stages;   // for interleaved; empty = 2, 4

  // --- constraints and objective ---
  std::optional<double> budget_usd;
  std::optional<double> deadline_hours;
  Objective objective = Objective::kMinCost;
  // kWeighted: minimise time_weight * time / best_time + (1 - time_weight) * cost / best_cost.
  double time_weight = 0.5;
  int confirm_top = 100;  // candidates the SimGrid simulator confirms
  // Where the leader's error band overlaps others', recommend the better-measured
  // layout (the narrower band) when its pessimistic end is no worse (docs/planner.md
  // section 6); false: the prediction alone ranks.
  bool prefer_validated = true;

  // --- whole-job accounting (unset = the job model's documented default) ---
  std::optional<double> dataset_bytes;          // bytes downloaded before training
  std::optional<double> storage_GBps;           // aggregate storage bandwidth (checkpoints, data)
  std::optional<StorageConfig> storage;         // named storage instead (not with storage_GBps)
  std::optional<double> image_bytes;            // the container image each new instance pulls
  bool stream_dataset = false;                  // read the dataset during training, not before
  std::optional<double> checkpoint_bytes;       // replaces the model-state size
  std::optional<double> checkpoint_interval_s;  // replaces the Young/Daly interval
  std::optional<double> provisioning_s;         // request to first step
  std::optional<double> restart_s;              // after an interruption, before reloading
  // Spot interruptions per instance per month, replacing the catalog bucket.
  std::optional<double> spot_interruptions_per_month;
  // Spot capacity (planner/job/spot_capacity.h): the chance that one request for the
  // whole fleet is filled (no public figure: unset = not modelled, and the plan
  // says so), retried every spot_capacity_retry_s (unset: 600 s, an assumption);
  // instances each reclaim event takes at once (unset: 1, independent reclaims).
  std::optional<double> spot_capacity_chance;
  std::optional<double> spot_capacity_retry_s;
  int spot_reclaim_wave_nodes = 1;
  // Reserved blocks (capacity-block, training-plan): the wait between two
  // consecutive blocks of a job longer than one block, or of a job that overran
  // the blocks bought for it (unset: back to back).
  std::optional<double> reservation_gap_s;
  std::map<std::string, UserPrices> prices;  // by instance type name
  // SageMaker managed warm pool keep-alive (sagemaker pricing), 0 to 3600 s:
  // later jobs of a chain longer than 28 days skip provisioning; the last
  // keep-alive is billed. Unset: no warm pool.
  std::optional<double> warm_pool_keep_alive_s;
  // spot-elastic: the pause to rebuild the replicas' communicators at each
  // change of the live replicas (no public figure: unset = not counted, and the
  // plan says so).
  std::optional<double> elastic_reconfigure_s;
  bool checkpoint_on_notice = false;  // write a checkpoint in the 2-minute notice
  int trials = 2000;                  // Monte-Carlo runs of the job
  uint64_t seed = 1;
};

// One axis of a sweep grid: a dotted scenario field and the values it takes.
struct SweepAxis {
  std::string field;  // "cluster.nodes", "parallel.tp", ...
  std::vector<nlohmann::json> values;
};

// A scenario file as the planner and the sweep read it: the scenario the
// simulator runs, and the file's planning sections.
struct PlanningScenario {
  Scenario scenario;
  // Planning (`trainsim plan`): the section as given, or defaults when absent.
  SearchConfig search;
  bool has_search = false;
  // Sweeps (`trainsim sweep`): the grid's axes; empty = no grid. ExpandSweepGrid
  // (core/sweep_grid.h) makes the grid's points.
  std::vector<SweepAxis> sweep;
  // The document as read, for a plan to embed (nlohmann's reading of the same bytes); null for
  // a sweep's grid point, which no file holds.
  nlohmann::json document;
};

// ParseScenario and LoadScenarioFile (core/scenario.h) with the planning
// sections kept: the same parse, the same errors.
Expected<PlanningScenario> ParsePlanningScenario(std::string_view text, std::string_view filename,
                                                 const Catalog& catalog);
Expected<PlanningScenario> LoadPlanningScenario(const std::string& path, const Catalog& catalog,
                                                const std::string& profile_path = "");
// LoadPlanningScenario on the text of the file at `path` (an editor's unsaved text): the
// profile is found and loaded, and errors named, as for that file.
Expected<PlanningScenario> LoadPlanningText(std::string_view text, const std::string& path,
                                            const Catalog& catalog,
                                            const std::string& profile_path = "");

const char* ToString(Objective o);

}  // namespace trainsim
