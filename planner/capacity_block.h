// EC2 Capacity Blocks for ML: instances reserved for a fixed window, never
// interrupted inside it, paid up front for the whole window whether the job
// uses it or not (docs/planner.md section 6.8). A job longer than the longest
// block runs in consecutive blocks: before each block's end it writes a
// checkpoint, and the next block provisions its instances and reloads it.
//
// The purchase rules, from the AWS EC2 User Guide ("Find and purchase Capacity
// Blocks", "Work with Capacity Blocks"; read 2026-11-27): durations in 1-day
// steps up to 14 days and 7-day steps up to 182 days; 1, 2, 4, 8, 16, 32 or 64
// instances per block, at most 256 across blocks; every block ends at 11:30 UTC;
// instances still running are terminated from 30 minutes before the end.
//
// Pure functions: no I/O, no state, thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "core/status.h"

namespace trainsim::planner {

inline constexpr int kBlockDailyStepsUpToDays = 14;
inline constexpr int kBlockWeeklyStepDays = 7;
inline constexpr int kBlockMaxDays = 182;
inline constexpr int kBlockMaxInstances = 64;    // one block
inline constexpr int kBlocksMaxInstances = 256;  // across blocks at once
inline constexpr double kBlockEndMargin_s = 1800;

// The shortest purchasable block, in days, that holds `seconds`: whole days up
// to 14, whole weeks above. nullopt above 182 days (or for a negative time).
std::optional<int> BlockDays(double seconds);

// Blocks that reserve `nodes` instances at once: the sizes (1, 2, ..., 64) of
// the binary digits of nodes, 64s first. Empty when nodes < 1 or > 256.
std::vector<int> BlockSizes(int nodes);

struct CapacityBlockInputs {
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

// InvalidInput naming the field for nodes outside 1..256, a non-positive or
// non-finite training time, negative times, a price <= 0, a 182-day block that
// the restart and checkpoint write leave no time to train in, or more than
// kMaxConsecutiveBlocks blocks.
Expected<CapacityBlockJob> PlanCapacityBlocks(const CapacityBlockInputs& in);

}  // namespace trainsim::planner
