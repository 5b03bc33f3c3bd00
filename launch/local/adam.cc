#include "launch/local/adam.h"

#include <cmath>

namespace trainsim::local {

Adam::Adam(int64_t count, double lr, double beta1, double beta2, double eps)
    : count_(count),
      lr_(lr),
      beta1_(beta1),
      beta2_(beta2),
      eps_(eps),
      m_(Floats(count)),
      v_(Floats(count)) {}

void Adam::Step(float* __restrict params, const float* __restrict grads, int64_t step) {
  const double t = static_cast<double>(step);
  // lr sqrt(1 - b2^t) / (1 - b1^t), and eps scaled to match: the update is
  // lr m_hat / (sqrt(v_hat) + eps) with m_hat, v_hat the corrected moments.
  const float step_size =
      static_cast<float>(lr_ * std::sqrt(1 - std::pow(beta2_, t)) / (1 - std::pow(beta1_, t)));
  const float eps = static_cast<float>(eps_ * std::sqrt(1 - std::pow(beta2_, t)));
  const float b1 = static_cast<float>(beta1_), b2 = static_cast<float>(beta2_);
  float* __restrict m = m_.get();
  float* __restrict v = v_.get();
  for (int64_t i = 0; i < count_; ++i) {
    const float g = grads[i];
    m[i] = b1 * m[i] + (1 - b1) * g;
    v[i] = b2 * v[i] + (1 - b2) * g * g;
    params[i] -= step_size * m[i] / (std::sqrt(v[i]) + eps);
  }
}

}  // namespace trainsim::local
