// The CPU kernels of the local trainer: the GEMM and the element-wise kernels
// the calibration measured (calibrate/cpu_kernels.h), plus the backward
// passes and the few kernels it has no counterpart for (softmax, cross
// entropy, transposes). Row-major fp32 throughout; single-threaded. A Gemm
// owns scratch memory, so one Gemm per thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "calibrate/cpu_kernels.h"

namespace trainsim::local {

using calibrate::cpu::FloatBuffer;

// `count` floats (at least one), zero-filled; aborts when memory runs out.
FloatBuffer Floats(int64_t count);

// C[m x n] = A[m x k] B[k x n] (or C += A B with `accumulate`), through
// calibrate::cpu::GemmFp32.
class Gemm {
 public:
  Gemm();
  void operator()(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                  bool accumulate = false);

 private:
  FloatBuffer workspace_;
  FloatBuffer product_;  // the product before it is added to C
  int64_t product_floats_ = 0;
};

// at[cols x rows] = a[rows x cols] transposed.
void Transpose(const float* a, int64_t rows, int64_t cols, float* at);

// y[i] += x[i].
void AddInto(const float* x, float* y, size_t n);

// Row-wise layer norm without affine parameters (calibrate::cpu::LayerNormRows).
void LayerNorm(const float* x, float* y, int64_t rows, int64_t cols);

// The input gradient of LayerNorm for input x and output gradient dy, added
// to dx: with xhat = (x - mean) r, r = 1 / sqrt(var + 1e-5),
// dx += r (dy - mean(dy) - xhat mean(dy xhat)), row by row.
void LayerNormBackwardAdd(const float* x, const float* dy, float* dx, int64_t rows, int64_t cols);

// y = GELU(u), tanh approximation (calibrate::cpu::Gelu).
void Gelu(const float* u, float* y, size_t n);

// du = dy GELU'(u), the derivative of the same tanh approximation.
void GeluBackward(const float* u, const float* dy, float* du, size_t n);

// In place on an n x n score matrix: scale, keep column <= row (causal), and
// softmax each row: s[i][j] = exp(scale s[i][j] - max) / sum, 0 for j > i.
void CausalSoftmax(float* s, int64_t n, float scale);

// ds = scale p (dp - rowsum(p dp)) on n x n matrices: the gradient of the
// scores before CausalSoftmax's scale, given its output p and gradient dp.
void CausalSoftmaxBackward(const float* p, const float* dp, float* ds, int64_t n, float scale);

// Softmax cross-entropy of `rows` rows of logits over `vocab` classes:
// returns the summed loss -log p[target] (in double), and overwrites the
// logits with their gradient (p - onehot(target)) grad_scale.
double CrossEntropy(float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                    float grad_scale);

}  // namespace trainsim::local
