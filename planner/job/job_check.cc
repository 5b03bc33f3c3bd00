#include "planner/job/job_check.h"

#include <cmath>
#include <string>

#include "core/json_doc.h"
#include "core/scenario.h"
#include "planner/job/interruptions.h"

namespace trainsim::planner {
namespace {

constexpr int kMaxNodes = 1000000;
constexpr int kMaxTrials = 1000000;
constexpr double kMaxSegments = 1e12;

Status Bad(const std::string& field, const std::string& what) {
  return Status::InvalidInput(field + ": " + what);
}

Status AtLeastZero(const char* field, double v) {
  if (std::isfinite(v) && v >= 0) return Status::Ok();
  return Bad(field, "expected a finite number >= 0, got " + FormatNumber(v));
}

Status Positive(const char* field, double v) {
  if (std::isfinite(v) && v > 0) return Status::Ok();
  return Bad(field, "expected a finite number > 0, got " + FormatNumber(v));
}

Status IntIn(const char* field, int v, int max) {
  if (v >= 1 && v <= max) return Status::Ok();
  return Bad(field,
             "expected an integer in [1, " + std::to_string(max) + "], got " + std::to_string(v));
}

Status CheckFields(const JobInputs& in) {
  const Status checks[] = {
      Positive("work_s", in.work_s),
      IntIn("nodes", in.nodes, kMaxNodes),
      in.price_usd_hr ? AtLeastZero("price_usd_hr", *in.price_usd_hr) : Status::Ok(),
      AtLeastZero("provisioning_s", in.provisioning_s),
      AtLeastZero("download_s", in.download_s),
      AtLeastZero("checkpoint_write_s", in.checkpoint_write_s),
      AtLeastZero("checkpoint_read_s", in.checkpoint_read_s.value_or(0)),
      AtLeastZero("restart_s", in.restart_s),
      AtLeastZero("interruptions_per_instance_hour", in.interruptions_per_instance_hour),
      in.checkpoint_interval_s ? Positive("checkpoint_interval_s", *in.checkpoint_interval_s)
                               : Status::Ok(),
      in.spot_billed_fraction > 0 && in.spot_billed_fraction <= 1
          ? Status::Ok()
          : Bad("spot_billed_fraction",
                "expected a number in (0, 1], got " + FormatNumber(in.spot_billed_fraction)),
      IntIn("trials", in.trials, kMaxTrials),
      IntIn("reclaim_wave_nodes", in.reclaim_wave_nodes, kMaxNodes),
      in.capacity_chance > 0 && in.capacity_chance <= 1
          ? Status::Ok()
          : Bad("capacity_chance",
                "expected a chance in (0, 1], got " + FormatNumber(in.capacity_chance)),
      in.capacity_chance < 1 ? Positive("capacity_retry_s", in.capacity_retry_s) : Status::Ok(),
  };
  for (const Status& st : checks) {
    if (!st.ok()) return st;
  }
  for (size_t i = 0; i < in.work_factors.size(); ++i) {
    const std::string field = "work_factors[" + std::to_string(i) + "]";
    if (Status st = Positive(field.c_str(), in.work_factors[i]); !st.ok()) return st;
  }
  return Status::Ok();
}

Status CheckElastic(const JobInputs& in) {
  const bool elastic = in.pricing == Pricing::kSpotElastic;
  if (elastic != (in.elastic_groups != 0)) {
    return Bad("elastic_groups",
               "spot-elastic pricing (and only it) trains on groups of replicas: expected " +
                   std::string(elastic ? "2 or more" : "0") + " with " + ToString(in.pricing) +
                   " pricing, got " + std::to_string(in.elastic_groups));
  }
  if (!elastic) return Status::Ok();
  if (in.elastic_groups < 2 || in.nodes % in.elastic_groups != 0) {
    return Bad("elastic_groups", "expected 2 or more groups dividing the " +
                                     std::to_string(in.nodes) + " nodes, got " +
                                     std::to_string(in.elastic_groups));
  }
  if (in.checkpoint_on_notice) {
    return Bad("checkpoint_on_notice",
               "spot-elastic keeps training on the replicas left instead of writing on the notice");
  }
  if (Status st = AtLeastZero("elastic_loss_pause_s", in.elastic_loss_pause_s); !st.ok()) return st;
  return AtLeastZero("elastic_join_pause_s", in.elastic_join_pause_s);
}

Status CheckOnNotice(const JobInputs& in) {
  if (!in.checkpoint_on_notice) return Status::Ok();
  if (!IsSpot(in.pricing)) {
    return Bad("checkpoint_on_notice", std::string(ToString(in.pricing)) +
                                           " pricing gives no interruption notice; only the "
                                           "spot options do");
  }
  if (in.checkpoint_write_s > kSpotNotice_s) {
    return Bad("checkpoint_write_s", FormatNumber(in.checkpoint_write_s) +
                                         " s does not fit in the " + FormatNumber(kSpotNotice_s) +
                                         " s spot interruption notice (checkpoint_on_notice)");
  }
  return Status::Ok();
}

// Reserved blocks go with their pricing options, and are never interrupted.
Status CheckBlocks(const JobInputs& in) {
  if (IsReserved(in.pricing) != in.blocks.has_value()) {
    return Bad("blocks", std::string(in.blocks ? "given with " : "missing for ") +
                             ToString(in.pricing) +
                             " pricing; capacity-block and training-plan (only) run in blocks");
  }
  if (in.blocks && in.interruptions_per_instance_hour > 0) {
    return Bad("interruptions_per_instance_hour",
               "expected 0 with reserved blocks (they are not interrupted), got " +
                   FormatNumber(in.interruptions_per_instance_hour));
  }
  if (in.blocks && in.blocks->nodes != in.nodes) {
    return Bad("blocks.nodes", "expected the job's " + std::to_string(in.nodes) + " nodes, got " +
                                   std::to_string(in.blocks->nodes));
  }
  if ((in.pricing == Pricing::kSpotFallback) !=
      (in.fallback_deadline_s.has_value() && in.fallback_usd_hr.has_value())) {
    return Bad("fallback_deadline_s",
               "spot-fallback pricing (and only it) needs a deadline and an on-demand price");
  }
  if (in.fallback_deadline_s && !(*in.fallback_deadline_s > 0)) {
    return Bad("fallback_deadline_s",
               "expected a time > 0, got " + FormatNumber(*in.fallback_deadline_s));
  }
  if (!(in.max_job_s > 0)) {
    return Bad("max_job_s", "expected a time > 0, got " + FormatNumber(in.max_job_s));
  }
  if (!(in.warm_pool_keep_alive_s >= 0 && in.warm_pool_keep_alive_s <= kMaxWarmPoolKeepAlive_s)) {
    return Bad("warm_pool_keep_alive_s", "expected 0 to 3600 s (SageMaker's limit), got " +
                                             FormatNumber(in.warm_pool_keep_alive_s));
  }
  if (in.warm_pool_keep_alive_s > 0 && in.pricing != Pricing::kSagemaker) {
    return Bad("warm_pool_keep_alive_s",
               std::string("a warm pool is SageMaker's, on demand only (not with spot); got ") +
                   ToString(in.pricing) + " pricing");
  }
  if (!(in.committed_instance_hours > 0)) {
    return Bad("committed_instance_hours",
               "expected a number > 0, got " + FormatNumber(in.committed_instance_hours));
  }
  if (std::isfinite(in.committed_instance_hours) && !in.beyond_usd_hr) {
    return Bad("beyond_usd_hr", "missing: the price of hours past the commitment");
  }
  return Status::Ok();
}

}  // namespace

Status CheckJobInputs(const JobInputs& in) {
  if (Status st = CheckFields(in); !st.ok()) return st;
  if (Status st = CheckElastic(in); !st.ok()) return st;
  if (Status st = CheckOnNotice(in); !st.ok()) return st;
  if (Status st = CheckBlocks(in); !st.ok()) return st;
  const bool daly = in.interruptions_per_instance_hour > 0 && !in.checkpoint_on_notice &&
                    !in.checkpoint_interval_s;
  if (daly && in.checkpoint_write_s == 0) {
    return Bad("checkpoint_write_s",
               "0 with interruptions gives a Young/Daly interval of 0; give the write time or "
               "checkpoint_interval_s");
  }
  return Status::Ok();
}

Status CheckSegmentCount(const JobInputs& in, double interval_s, bool from_daly) {
  if (in.work_s / interval_s <= kMaxSegments) return Status::Ok();
  const std::string split = " s splits work_s = " + FormatNumber(in.work_s) + " s into more than " +
                            FormatNumber(kMaxSegments) + " checkpoints";
  if (from_daly) {
    return Bad("checkpoint_write_s", FormatNumber(in.checkpoint_write_s) +
                                         " s gives a Daly interval of " + FormatNumber(interval_s) +
                                         split);
  }
  return Bad("checkpoint_interval_s", FormatNumber(interval_s) + split);
}

Status CheckFinishes(const JobInputs& in, double expected_wall_s, double mtbi_s) {
  if (std::isfinite(expected_wall_s)) return Status::Ok();
  return Bad("interruptions_per_instance_hour",
             FormatNumber(in.interruptions_per_instance_hour) + " x nodes = " +
                 std::to_string(in.nodes) + " means an interruption every " + FormatNumber(mtbi_s) +
                 " s on average: the expected wall time overflows (the job would never finish)");
}

}  // namespace trainsim::planner
