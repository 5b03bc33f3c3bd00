// A hardware profile refitted from the kernels a trace timed (docs/observe.md section 3c): its
// GEMMs by shape, and the rate of the memory-bound work.
#pragma once

#include <string>
#include <vector>

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
// Several traces (of one run, or runs of one configuration) are pooled.
Expected<GemmRefit> RefitGemms(const std::vector<KinetoTrace>& traces, int warmup,
                               const HardwareProfile& base, const std::string& dtype);

// The median over the steps after `warmup` of the trace's busy time of one kernel kind per
// step; 0 when no step is left.
// The steps of all traces are pooled.
double MedianKernelSeconds(const std::vector<KinetoTrace>& traces, int warmup, KernelKind kind);

// The memory-bound work refitted. The simulator prices the kernels other than GEMMs and
// attention (norms, activations, softmax, residual adds, the optimizer) as bytes / rate; at
// `rate_GBps` that work takes `model_s` per step, where the trace's other kernels took
// `measured_s`. `base` with the rate that makes the two equal, rate_GBps * model_s /
// measured_s, as its memory_GBps, and a "memory" point recording the fit (`what` names
// `source`, `bytes` the bytes the model counts per step, `median_s` the measured seconds).
// Errors: a model_s or measured_s not positive (nothing to fit).
Expected<HardwareProfile> RefitMemoryRate(const HardwareProfile& base, double rate_GBps,
                                          double model_s, double measured_s, int steps,
                                          const std::string& source);

}  // namespace trainsim::observe
