#include "launch/local/adam.h"

#include <cmath>

namespace trainsim::local {

Adam::Adam(Ops& ops, int64_t count, double lr, double beta1, double beta2, double eps)
    : ops_(ops),
      count_(count),
      lr_(lr),
      beta1_(beta1),
      beta2_(beta2),
      eps_(eps),
      m_(ops.Alloc(count)),
      v_(ops.Alloc(count)) {}

void Adam::Step(float* params, const float* grads, int64_t step) {
  const double t = static_cast<double>(step);
  // lr sqrt(1 - b2^t) / (1 - b1^t), and eps scaled to match: the update is
  // lr m_hat / (sqrt(v_hat) + eps) with m_hat, v_hat the corrected moments.
  const float step_size =
      static_cast<float>(lr_ * std::sqrt(1 - std::pow(beta2_, t)) / (1 - std::pow(beta1_, t)));
  const float eps = static_cast<float>(eps_ * std::sqrt(1 - std::pow(beta2_, t)));
  ops_.AdamUpdate(params, grads, m_.get(), v_.get(), count_, step_size, eps,
                  static_cast<float>(beta1_), static_cast<float>(beta2_));
}

}  // namespace trainsim::local
