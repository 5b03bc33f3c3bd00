#include "planner/job/capacity_block.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/json_doc.h"
#include "core/units.h"

namespace trainsim::planner {
namespace {

constexpr double kSecondsPerDay = 24 * kSecondsPerHour;

bool NonNegative(double x) { return std::isfinite(x) && x >= 0; }

Status CheckInputs(const CapacityBlockInputs& in) {
  auto bad = [&in](const char* field, const std::string& expected, double got) {
    return Status::InvalidInput(std::string(in.rules.name) + ": " + field + ": expected " +
                                expected + ", got " + FormatNumber(got));
  };
  if (in.nodes < 1 || in.nodes > in.rules.max_instances) {
    return bad(
        "nodes",
        "1 to " + std::to_string(in.rules.max_instances) + " (the most instances held at once)",
        in.nodes);
  }
  if (!std::isfinite(in.training_s) || in.training_s <= 0) {
    return bad("training_s", "a time > 0", in.training_s);
  }
  const std::pair<const char*, double> times[] = {{"setup_s", in.setup_s},
                                                  {"checkpoint_write_s", in.checkpoint_write_s},
                                                  {"restart_s", in.restart_s},
                                                  {"gap_s", in.gap_s}};
  for (const auto& [field, value] : times) {
    if (!NonNegative(value)) return bad(field, "a time >= 0", value);
  }
  if (in.price_usd_hr && !(std::isfinite(*in.price_usd_hr) && *in.price_usd_hr > 0)) {
    return bad("price_usd_hr", "a price > 0", *in.price_usd_hr);
  }
  for (int days : in.booked_days) {
    if (days < 1 || BlockDays(days * kSecondsPerDay, in.rules) != days) {
      return bad("booked_days", "purchasable lengths in days", days);
    }
  }
  return Status::Ok();
}

}  // namespace

std::optional<int> BlockDays(double seconds, const BlockRules& rules) {
  if (!NonNegative(seconds)) return std::nullopt;
  const double days = seconds / kSecondsPerDay;
  if (days > kBlockMaxDays) return std::nullopt;
  if (days <= rules.daily_steps_up_to_days) return std::max(1, static_cast<int>(std::ceil(days)));
  return std::min(kBlockMaxDays,
                  kBlockWeeklyStepDays * static_cast<int>(std::ceil(days / kBlockWeeklyStepDays)));
}

std::vector<int> BlockSizes(int nodes, const BlockRules& rules) {
  std::vector<int> sizes;
  if (nodes < 1 || nodes > rules.max_instances) return sizes;
  for (; nodes >= kBlockMaxInstances; nodes -= kBlockMaxInstances) {
    sizes.push_back(kBlockMaxInstances);
  }
  for (int size = kBlockMaxInstances / 2; size >= 1; size /= 2) {
    if (nodes & size) sizes.push_back(size);
  }
  return sizes;
}

Expected<CapacityBlockJob> PlanCapacityBlocks(const CapacityBlockInputs& in) {
  if (Status st = CheckInputs(in); !st.ok()) return st;
  CapacityBlockJob job;
  job.block_sizes = BlockSizes(in.nodes, in.rules);
  const size_t booked = in.booked_days.size();
  double remaining = in.training_s;  // training still to do
  double used_s = 0;                 // block time the job's instances run, summed
  double reserved_days = 0;
  for (size_t block = 0;; ++block) {
    if (block == kMaxConsecutiveBlocks) {
      return Status::InvalidInput(std::string(in.rules.name) + ": training_s: needs more than " +
                                  std::to_string(kMaxConsecutiveBlocks) + " consecutive blocks");
    }
    const double lead = block == 0 ? in.setup_s : in.restart_s;
    const double needs_s = lead + remaining + kBlockEndMargin_s;
    const std::optional<int> days =
        block < booked ? std::optional<int>(in.booked_days[block]) : BlockDays(needs_s, in.rules);
    if (days && needs_s <= *days * kSecondsPerDay) {  // the last block
      job.block_days.push_back(*days);
      reserved_days += *days;
      used_s += lead + remaining;
      job.wall_s += lead + remaining;
      for (size_t unused = block + 1; unused < booked; ++unused) {  // bought, not needed
        job.block_days.push_back(in.booked_days[unused]);
        reserved_days += in.booked_days[unused];
      }
      break;
    }
    // A full block: train up to its end margin less the checkpoint written before it.
    const int full_days = block < booked ? *days : kBlockMaxDays;
    const double block_s = full_days * kSecondsPerDay;
    const double trains = block_s - kBlockEndMargin_s - lead - in.checkpoint_write_s;
    if (trains <= 0 && block >= booked) {
      return Status::InvalidInput(std::string(in.rules.name) +
                                  ": restart_s and checkpoint_write_s leave a 182-day block no "
                                  "time to train");
    }
    job.block_days.push_back(full_days);
    reserved_days += full_days;
    remaining -= std::max(0.0, trains);
    used_s += block_s - kBlockEndMargin_s;
    job.wall_s += block_s + in.gap_s;
  }
  job.reserved_instance_hours = in.nodes * reserved_days * 24;
  job.idle_instance_hours = job.reserved_instance_hours - in.nodes * used_s / kSecondsPerHour;
  if (in.price_usd_hr) job.cost_usd = *in.price_usd_hr * job.reserved_instance_hours;
  return job;
}

}  // namespace trainsim::planner
