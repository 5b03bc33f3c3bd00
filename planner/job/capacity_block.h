// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// Reserved blocks: EC2 Capacity Blocks for ML and SageMaker training plans.
// Instances reserved for a fixed window, never interrupted inside it, paid up
// front for the whole window whether the job uses it or not (docs/planner.md
// section 6.8). A job longer than the longest block runs in consecutive
// blocks: before each block's end it writes a checkpoint, and the next block
// provisions its instances and reloads it.
//
// Capacity Blocks, from the AWS EC2 User Guide ("Find and purchase Capacity
// Blocks", "Work with Capacity Blocks"; read 2026-11-27): durations in 1-day
// steps up to 14 days and 7-day steps up to 182 days; 1, 2, 4, 8, 16, 32 or 64
// instances per block, at most 256 across blocks; every block ends at 11:30 UTC;
// instances still running are terminated from 30 minutes before the end.
//
// Training plans, from the SageMaker Developer Guide ("Search training plan
// offerings"; read 2026-11-27): durations in 1-day steps from 1 to 182 days;
// 1, 2, 4, 8, 16, 32 or 64 instances per reservation. No limit across
// reservations and no end margin are documented: none is applied to the
// instance count, and the Capacity Blocks' 30 minutes is assumed at the end.
//
// Pure functions: no I/O, no state, thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "core/status.h"

namespace trainsim::planner {

inline constexpr int kBlockWeeklyStepDays = 7;
inline constexpr int kBlockMaxDays = 182;
inline constexpr int kBlockMaxInstances = 64;  // one block
inline constexpr double kBlockEndMargin_s = 1800;

// What one kind of reservation can be bought as.
struct BlockRules {
  const char* name;            // for messages: "capacity block"
  int daily_steps_up_to_days;  // whole days up to this length, whole weeks above
  int max_instances;           // across blocks held at once
};
inline constexpr BlockRules kCapacityBlockRules{"capacity block", 14, 256};
inline constexpr BlockRules kTrainingPlanRules{"training plan", kBlockMaxDays, 1 << 30};

// The shortest purchasable block, in days, that holds `seconds`: whole days up
// to the rules' daily limit, whole weeks above. nullopt above 182 days (or for
// a negative time).
std::optional<int> BlockDays(double seconds, const BlockRules& rules = kCapacityBlockRules);

// Blocks that reserve `nodes` instances at once: the sizes (1, 2, ..., 64) of
// the binary digits of nodes, 64s first. Empty when nodes < 1 or above the
// rules' limit.
std::vector<int> BlockSizes(int nodes, const BlockRules& rules = kCapacityBlockRules);

struct CapacityBlockInputs {
  BlockRules rules = kCapacityBlockRules;
  int nodes = 1;
  // Price per instance-hour of the block. Absent: the costs are absent.
  std::optional<double> price_usd_hr;
  double setup_s = 0;     // in the first block: provisioning and the dataset download
  double training_s = 0;  // the training itself (work and its checkpoint writes); > 0
  // In every block but the last: one checkpoint write before the end margin.
  double checkpoint_write_s = 0;
  // At the start of every later block: provisioning and reloading the checkpoint.
  double restart_s = 0;
  // Between consecutive blocks: waiting for the next one to start (0 = bought
  // back to back; offerings are first come, first served).
  double gap_s = 0;
  // Blocks bought in advance, in days (the plan's for the predicted training
  // time): used in order; what they leave unused is paid all the same, and a
  // run that outlasts them continues in blocks bought then, after the gap.
  // Empty: every block is sized to this run.
  std::vector<int> booked_days;
};

struct CapacityBlockJob {
  std::vector<int> block_days;   // the consecutive reservations, in order
  std::vector<int> block_sizes;  // the blocks held at once (BlockSizes(nodes))
  // From the first block's start to the end of the training, gaps included.
  double wall_s = 0;
  // Paid: nodes x the days reserved x 24. Idle: reserved while none of the
  // job's instances runs (each earlier block's end margin, the last block's
  // unused tail).
  double reserved_instance_hours = 0;
  double idle_instance_hours = 0;
  std::optional<double> cost_usd;  // the up-front fees; absent without a price
};

// At most this many consecutive blocks (about 500 years).
inline constexpr int kMaxConsecutiveBlocks = 1000;

// InvalidInput naming the field for nodes outside 1..the rules' limit, a
// non-positive or non-finite training time, negative times, a price <= 0, a
// booked length that is not purchasable, a 182-day block that the restart and
// checkpoint write leave no time to train in, or more than
// kMaxConsecutiveBlocks blocks.
Expected<CapacityBlockJob> PlanCapacityBlocks(const CapacityBlockInputs& in);

}  // namespace trainsim::planner
