#include <cmath>
#include <cstring>

#include "launch/local/ops.h"

namespace trainsim::local {

FloatBuffer CpuOps::Alloc(int64_t count) { return Floats(count); }

void CpuOps::Zero(float* p, int64_t n) { std::memset(p, 0, static_cast<size_t>(n) * 4); }

void CpuOps::Copy(const float* from, float* to, int64_t n) {
  std::memcpy(to, from, static_cast<size_t>(n) * 4);
}

void CpuOps::CopyFromHost(const float* host, float* to, int64_t n) { Copy(host, to, n); }

void CpuOps::CopyToHost(const float* from, float* host, int64_t n) { Copy(from, host, n); }

void CpuOps::Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                  bool accumulate) {
  gemm_(m, n, k, a, b, c, accumulate);
}

void CpuOps::Transpose(const float* a, int64_t rows, int64_t cols, float* at) {
  local::Transpose(a, rows, cols, at);
}

void CpuOps::AddInto(const float* x, float* y, int64_t n) {
  local::AddInto(x, y, static_cast<size_t>(n));
}

void CpuOps::LayerNorm(const float* x, float* y, int64_t rows, int64_t cols) {
  local::LayerNorm(x, y, rows, cols);
}

void CpuOps::LayerNormBackwardAdd(const float* x, const float* dy, float* dx, int64_t rows,
                                  int64_t cols) {
  local::LayerNormBackwardAdd(x, dy, dx, rows, cols);
}

void CpuOps::Gelu(const float* u, float* y, int64_t n) {
  local::Gelu(u, y, static_cast<size_t>(n));
}

void CpuOps::GeluBackward(const float* u, const float* dy, float* du, int64_t n) {
  local::GeluBackward(u, dy, du, static_cast<size_t>(n));
}

void CpuOps::CausalSoftmax(float* s, int64_t batches, int64_t n, float scale) {
  for (int64_t b = 0; b < batches; ++b) local::CausalSoftmax(s + b * n * n, n, scale);
}

void CpuOps::CausalSoftmaxBackward(const float* p, const float* dp, float* ds, int64_t batches,
                                   int64_t n, float scale) {
  for (int64_t b = 0; b < batches; ++b) {
    local::CausalSoftmaxBackward(p + b * n * n, dp + b * n * n, ds + b * n * n, n, scale);
  }
}

double CpuOps::CrossEntropy(float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                            float grad_scale) {
  return local::CrossEntropy(logits, targets, rows, vocab, grad_scale);
}

void CpuOps::GatherBlock(const float* m, int64_t base, int64_t stride, int64_t rows, int64_t cols,
                         bool transposed, float* out) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = m + base + i * stride;
    if (!transposed) {
      std::memcpy(out + i * cols, row, static_cast<size_t>(cols) * 4);
      continue;
    }
    for (int64_t c = 0; c < cols; ++c) out[c * rows + i] = row[c];
  }
}

void CpuOps::ScatterBlock(const float* in, int64_t rows, int64_t cols, float* m, int64_t base,
                          int64_t stride) {
  for (int64_t i = 0; i < rows; ++i) {
    std::memcpy(m + base + i * stride, in + i * cols, static_cast<size_t>(cols) * 4);
  }
}

void CpuOps::EmbedGather(const float* table, const int32_t* tokens, int64_t rows, int64_t width,
                         float* out) {
  for (int64_t i = 0; i < rows; ++i) {
    std::memcpy(out + i * width, table + tokens[i] * width, static_cast<size_t>(width) * 4);
  }
}

void CpuOps::EmbedScatterAdd(const float* dy, const int32_t* tokens, int64_t rows, int64_t width,
                             float* table) {
  for (int64_t i = 0; i < rows; ++i) {
    local::AddInto(dy + i * width, table + tokens[i] * width, static_cast<size_t>(width));
  }
}

void CpuOps::AdamUpdate(float* __restrict params, const float* __restrict grads,
                        float* __restrict m, float* __restrict v, int64_t n, float step_size,
                        float eps, float b1, float b2) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = grads[i];
    m[i] = b1 * m[i] + (1 - b1) * g;
    v[i] = b2 * v[i] + (1 - b2) * g * g;
    params[i] -= step_size * m[i] / (std::sqrt(v[i]) + eps);
  }
}

}  // namespace trainsim::local
