// A hardware profile refitted from the GEMMs a trace timed (docs/observe.md section 3c).
#pragma once

#include <string>

#include "core/hardware_profile.h"
#include "observe/kineto.h"

namespace trainsim::observe {

struct GemmRefit {
  HardwareProfile profile;
  int shapes = 0, samples = 0;  // distinct shapes, GEMMs timed
};

// `base` with the GEMM shapes the trace's steps after `warmup` timed (GemmSample: trainsim-
// train's gemm_fp32 events carry M, N, K) as measured `dtype` points, the median time per
// shape (replacing base's points of the same shape), and the dtype's table rebuilt from them
// (the median rate per FLOP count, ascending) when they span two FLOP counts or more. The
// simulator then prices a GEMM of a measured shape at its measured rate, and others by the
// table. Fails when no step after the warm-up has a GEMM with a shape.
Expected<GemmRefit> RefitGemms(const KinetoTrace& trace, int warmup, const HardwareProfile& base,
                               const std::string& dtype);

}  // namespace trainsim::observe
