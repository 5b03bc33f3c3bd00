// The cuda backend's own kernels (kernels.cu), behind plain launch
// functions so host code compiles without nvcc. Every launcher enqueues on
// `stream` on the current device and returns the launch's error (the
// kernel's own failures surface at the next synchronisation).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace trainsim::calibrate::cuda {

// Element types of the GEMM inputs and outputs.
enum class Elem { kF32, kF16, kBF16, kE4M3 };

// Fills p[0..n) with deterministic pseudo-random values in [-1, 1), a hash
// of (seed, index) rounded to `type`.
cudaError_t LaunchFill(Elem type, void* p, int64_t n, uint32_t seed, cudaStream_t stream);

// Positions C[row][col] sampled to check a GEMM.
constexpr int kGemmSamples = 16;
struct GemmSamples {
  int64_t row[kGemmSamples];
  int64_t col[kGemmSamples];
};

// For the layout of gemm.cc (A row i at a + i*k, B column j at b + j*k, C
// column-major with leading dimension m), copies as float, for sample s:
// A's row into a_rows[s*k ..], B's column into b_cols[s*k ..] and
// C[row][col] into c_values[s].
cudaError_t LaunchGatherSamples(Elem ab, Elem c, const void* a, const void* b, const void* c_matrix,
                                int64_t m, int64_t k, const GemmSamples& samples, float* a_rows,
                                float* b_cols, float* c_values, cudaStream_t stream);

// dst[0..n16) = src[0..n16), 16-byte elements.
cudaError_t LaunchCopy16(const void* src, void* dst, int64_t n16, cudaStream_t stream);

// Row width of the layernorm kernel, in elements.
constexpr int kLayerNormWidth = 4096;

// y = (x - mean) / sqrt(var + 1e-5) for each of `rows` rows of
// kLayerNormWidth bf16 elements.
cudaError_t LaunchLayerNormBf16(const void* x, void* y, int64_t rows, cudaStream_t stream);

// y = gelu(x) (tanh form) over n bf16 elements; n a multiple of 8.
cudaError_t LaunchGeluBf16(const void* x, void* y, int64_t n, cudaStream_t stream);

}  // namespace trainsim::calibrate::cuda
