#include "launch/local/tensor_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace trainsim::local {
namespace cpu = calibrate::cpu;

FloatBuffer Floats(int64_t count) {
  FloatBuffer buffer = cpu::AllocateFloats(static_cast<double>(std::max<int64_t>(count, 1)));
  if (!buffer) {
    std::fprintf(stderr, "trainsim-train: out of memory allocating %lld floats\n",
                 static_cast<long long>(count));
    std::abort();
  }
  std::memset(buffer.get(), 0, sizeof(float) * static_cast<size_t>(std::max<int64_t>(count, 1)));
  return buffer;
}

// GemmFp32's blocks are bounded: this is the most workspace it ever needs.
Gemm::Gemm()
    : workspace_(
          Floats(static_cast<int64_t>(cpu::GemmFp32WorkspaceFloats(1 << 20, 1 << 20, 1 << 20)))),
      product_(nullptr, &std::free) {}

void Gemm::operator()(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                      bool accumulate) {
  if (!accumulate) {
    cpu::GemmFp32(m, n, k, a, b, c, workspace_.get());
    return;
  }
  if (product_floats_ < m * n) {
    product_ = Floats(m * n);
    product_floats_ = m * n;
  }
  cpu::GemmFp32(m, n, k, a, b, product_.get(), workspace_.get());
  AddInto(product_.get(), c, static_cast<size_t>(m * n));
}

// In 32 x 32 tiles, so that both sides stay in the cache.
void Transpose(const float* a, int64_t rows, int64_t cols, float* at) {
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) at[j * rows + i] = a[i * cols + j];
      }
    }
  }
}

void AddInto(const float* __restrict x, float* __restrict y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] += x[i];
}

void LayerNorm(const float* x, float* y, int64_t rows, int64_t cols) {
  cpu::LayerNormRows(x, y, static_cast<size_t>(rows), static_cast<size_t>(cols));
}

void LayerNormBackwardAdd(const float* x, const float* dy, float* dx, int64_t rows, int64_t cols) {
  const float inv_cols = 1.0f / static_cast<float>(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict in = x + r * cols;
    const float* __restrict g = dy + r * cols;
    float* __restrict out = dx + r * cols;
    float mean = 0;
    for (int64_t i = 0; i < cols; ++i) mean += in[i];
    mean *= inv_cols;
    float variance = 0;
    for (int64_t i = 0; i < cols; ++i) variance += (in[i] - mean) * (in[i] - mean);
    const float inv_std = 1.0f / std::sqrt(variance * inv_cols + 1e-5f);
    float mean_g = 0, mean_gx = 0;
    for (int64_t i = 0; i < cols; ++i) {
      mean_g += g[i];
      mean_gx += g[i] * (in[i] - mean) * inv_std;
    }
    mean_g *= inv_cols;
    mean_gx *= inv_cols;
    for (int64_t i = 0; i < cols; ++i) {
      const float xhat = (in[i] - mean) * inv_std;
      out[i] += inv_std * (g[i] - mean_g - xhat * mean_gx);
    }
  }
}

void Gelu(const float* u, float* y, size_t n) { cpu::Gelu(u, y, n); }

// GELU(u) = 0.5 u (1 + t), t = tanh(c (u + 0.044715 u^3)):
// GELU'(u) = 0.5 (1 + t) + 0.5 u (1 - t^2) c (1 + 3 0.044715 u^2).
void GeluBackward(const float* __restrict u, const float* __restrict dy, float* __restrict du,
                  size_t n) {
  constexpr float kC = 0.7978845608028654f, kA = 0.044715f;
  for (size_t i = 0; i < n; ++i) {
    const float v = u[i];
    const float t = cpu::FastTanh(kC * (v + kA * v * v * v));
    const float slope = 0.5f * (1 + t) + 0.5f * v * (1 - t * t) * kC * (1 + 3 * kA * v * v);
    du[i] = dy[i] * slope;
  }
}

void CausalSoftmax(float* s, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) {
    float* row = s + i * n;
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j <= i; ++j) max = std::max(max, row[j] * scale);
    float sum = 0;
    for (int64_t j = 0; j <= i; ++j) {
      row[j] = std::exp(row[j] * scale - max);
      sum += row[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j <= i; ++j) row[j] *= inv;
    for (int64_t j = i + 1; j < n; ++j) row[j] = 0;
  }
}

void CausalSoftmaxBackward(const float* p, const float* dp, float* ds, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) {
    const float* pr = p + i * n;
    const float* gr = dp + i * n;
    float* out = ds + i * n;
    float dot = 0;
    for (int64_t j = 0; j <= i; ++j) dot += pr[j] * gr[j];
    for (int64_t j = 0; j <= i; ++j) out[j] = scale * pr[j] * (gr[j] - dot);
    for (int64_t j = i + 1; j < n; ++j) out[j] = 0;
  }
}

double CrossEntropy(float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                    float grad_scale) {
  double loss = 0;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = logits + r * vocab;
    float max = row[0];
    for (int64_t j = 1; j < vocab; ++j) max = std::max(max, row[j]);
    const int32_t t = targets[r];
    const float target = row[t] - max;
    float sum = 0;
    for (int64_t j = 0; j < vocab; ++j) {
      row[j] = std::exp(row[j] - max);
      sum += row[j];
    }
    const float inv = 1.0f / sum;
    loss += std::log(static_cast<double>(sum)) - target;
    for (int64_t j = 0; j < vocab; ++j) row[j] *= inv * grad_scale;
    row[t] -= grad_scale;
  }
  return loss;
}

}  // namespace trainsim::local
