// The compute kernels the cpu backend times: a single-threaded fp32 GEMM and
// the memory-bound kernels of a training step. Plain C++ loops shaped so that
// g++/clang at -O3 vectorise them for whatever SIMD the target has (no
// intrinsics, no -march). Pure functions of their arguments; thread-safe.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace trainsim::calibrate::cpu {

// Floats of scratch space GemmFp32 needs for an m x n x k product.
size_t GemmFp32WorkspaceFloats(int64_t m, int64_t n, int64_t k);

// C[m x n] = A[m x k] * B[k x n], all row-major and dense, on one core:
// blocked for the caches, with packed panels and a 4 x 8 register tile.
// `workspace` holds GemmFp32WorkspaceFloats(m, n, k) floats. C is
// overwritten (it may hold anything before). m, n, k > 0.
void GemmFp32(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
              float* workspace);

// y[i] = x[i] * one for n floats: a copy when `one` is 1. The factor is a
// run-time value so that the compiler cannot turn the loop into memcpy.
void ScaleCopy(const float* x, float* y, size_t n, float one);

// Row-wise layer normalisation without affine parameters: each of `rows`
// rows of `cols` floats becomes (x - mean) / sqrt(variance + 1e-5).
void LayerNormRows(const float* x, float* y, size_t rows, size_t cols);

// tanh to about 1e-6 absolute (a rational approximation that vectorises,
// the one Eigen and XLA use).
float FastTanh(float x);

// y[i] = GELU(x[i]) with the tanh approximation:
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void Gelu(const float* x, float* y, size_t n);

// Kernel buffers: 64-byte aligned floats, freed with std::free.
using FloatBuffer = std::unique_ptr<float[], decltype(&std::free)>;

// `count` floats (at least one), or an empty buffer when they cannot be
// allocated.
inline FloatBuffer AllocateFloats(double count) {
  const double bytes = std::ceil(count * sizeof(float) / 64) * 64;  // a multiple of the alignment
  void* p =
      bytes > 0 && bytes < 0x1p62 ? std::aligned_alloc(64, static_cast<size_t>(bytes)) : nullptr;
  return FloatBuffer(static_cast<float*>(p), &std::free);
}

// Keeps the compiler from dropping stores to `p` that are never read back.
inline void KeepAlive(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

}  // namespace trainsim::calibrate::cpu
