// The collective phase of builds without NCCL: it says so, once.
#include "calibrate/cuda/phases.h"

#if !TRAINSIM_HAVE_NCCL

namespace trainsim::calibrate::cuda {

std::string CollectivesVersion() { return "none (built without NCCL)"; }

Status MeasureCollectives(const PhaseContext& ctx) {
  if (ctx.plan->collective_ops.empty()) return Status::Ok();
  ctx.out->failures.push_back({"collectives", "collectives not measured: built without NCCL"});
  return Status::Ok();
}

}  // namespace trainsim::calibrate::cuda

#endif  // !TRAINSIM_HAVE_NCCL
