// Adam (Kingma and Ba 2015) with fp32 state and bias correction, no weight
// decay: one memory-bound pass over parameters, gradients and the two
// moments, as the simulator models the optimizer step. The moments and the
// pass belong to an Ops (kept, not owned).
#pragma once

#include <cstdint>

#include "launch/local/ops.h"

namespace trainsim::local {

class Adam {
 public:
  Adam(Ops& ops, int64_t count, double lr, double beta1 = 0.9, double beta2 = 0.999,
       double eps = 1e-8);

  // Updates `params` from `grads`; `step` counts from 1.
  void Step(float* params, const float* grads, int64_t step);

  int64_t size() const { return count_; }
  float* first_moment() { return m_.get(); }
  float* second_moment() { return v_.get(); }

 private:
  Ops& ops_;
  int64_t count_;
  double lr_, beta1_, beta2_, eps_;
  FloatBuffer m_, v_;
};

}  // namespace trainsim::local
