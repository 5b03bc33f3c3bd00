#include "calibrate/cpu_kernels.h"

#include <algorithm>
#include <cmath>

namespace trainsim::calibrate::cpu {
namespace {

// Register tile (MR rows x NR columns of C in 8 SIMD registers of 4 floats)
// and cache blocks: an A block (kMc x kKc, 128 KiB) stays in L2, a packed B
// panel (kKc x kNr, 8 KiB) in L1, the B block (kKc x kNc, 2 MiB) in L3.
// Measured on Zen 2 with SSE2: 4 x 8 reaches ~80% of peak at -O3, while
// 6 x 8 or 4 x 16 spill and run 5-10 times slower.
constexpr int64_t kMr = 4;
constexpr int64_t kNr = 8;
constexpr int64_t kKc = 256;
constexpr int64_t kMc = 128;
constexpr int64_t kNc = 2048;

int64_t RoundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Packs an mc x kc block of A (leading dimension lda) as kMr-row panels, each
// stored column by column (kMr floats per k), zero-padded to whole panels.
void PackA(const float* a, int64_t lda, int64_t mc, int64_t kc, float* packed) {
  for (int64_t i0 = 0; i0 < mc; i0 += kMr, packed += kMr * kc) {
    const int64_t rows = std::min(kMr, mc - i0);
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t i = 0; i < kMr; ++i) packed[p * kMr + i] = i < rows ? a[(i0 + i) * lda + p] : 0;
    }
  }
}

// Packs a kc x nc block of B (leading dimension ldb) as kNr-column panels,
// each stored row by row (kNr floats per k), zero-padded to whole panels.
void PackB(const float* b, int64_t ldb, int64_t kc, int64_t nc, float* packed) {
  for (int64_t j0 = 0; j0 < nc; j0 += kNr, packed += kNr * kc) {
    const int64_t cols = std::min(kNr, nc - j0);
    for (int64_t p = 0; p < kc; ++p) {
      const float* row = b + p * ldb + j0;
      for (int64_t j = 0; j < kNr; ++j) packed[p * kNr + j] = j < cols ? row[j] : 0;
    }
  }
}

// tile = (packed A panel) x (packed B panel) over kc: the hot loop. The
// fixed-size accumulator lives in registers; the j loop is the SIMD lane.
void MicroKernel(int64_t kc, const float* __restrict a, const float* __restrict b,
                 float* __restrict tile) {
  float acc[kMr][kNr] = {};
  for (int64_t p = 0; p < kc; ++p) {
    for (int64_t i = 0; i < kMr; ++i) {
      for (int64_t j = 0; j < kNr; ++j) acc[i][j] += a[p * kMr + i] * b[p * kNr + j];
    }
  }
  for (int64_t i = 0; i < kMr; ++i) {
    for (int64_t j = 0; j < kNr; ++j) tile[i * kNr + j] = acc[i][j];
  }
}

// Stores the valid rows x cols corner of a tile into C: overwrite on the
// first k block, accumulate on the later ones.
void StoreTile(const float* tile, int64_t rows, int64_t cols, bool accumulate, float* c,
               int64_t ldc) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      c[i * ldc + j] = (accumulate ? c[i * ldc + j] : 0.0f) + tile[i * kNr + j];
    }
  }
}

// C block (mc x nc at c) += or = packed A block x packed B block.
void MultiplyBlock(int64_t mc, int64_t nc, int64_t kc, const float* packed_a, const float* packed_b,
                   bool accumulate, float* c, int64_t ldc) {
  alignas(64) float tile[kMr * kNr];
  for (int64_t jr = 0; jr < nc; jr += kNr) {
    for (int64_t ir = 0; ir < mc; ir += kMr) {
      MicroKernel(kc, packed_a + ir * kc, packed_b + jr * kc, tile);
      StoreTile(tile, std::min(kMr, mc - ir), std::min(kNr, nc - jr), accumulate, c + ir * ldc + jr,
                ldc);
    }
  }
}

}  // namespace

size_t GemmFp32WorkspaceFloats(int64_t m, int64_t n, int64_t k) {
  const int64_t kc = std::min(kKc, k);
  return static_cast<size_t>(RoundUp(std::min(kMc, m), kMr) * kc +
                             RoundUp(std::min(kNc, n), kNr) * kc);
}

// The Goto/BLIS loop nest: n in kNc columns, k in kKc slices (B packed once
// per slice), m in kMc rows (A packed per block), then register tiles.
void GemmFp32(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
              float* workspace) {
  float* packed_a = workspace;
  float* packed_b = workspace + RoundUp(std::min(kMc, m), kMr) * std::min(kKc, k);
  for (int64_t jc = 0; jc < n; jc += kNc) {
    const int64_t nc = std::min(kNc, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      PackB(b + pc * n + jc, n, kc, nc, packed_b);
      for (int64_t ic = 0; ic < m; ic += kMc) {
        const int64_t mc = std::min(kMc, m - ic);
        PackA(a + ic * k + pc, k, mc, kc, packed_a);
        MultiplyBlock(mc, nc, kc, packed_a, packed_b, pc > 0, c + ic * n + jc, n);
      }
    }
  }
}

void ScaleCopy(const float* __restrict x, float* __restrict y, size_t n, float one) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] * one;
}

namespace {

// Lanes of the partial sums below: a fixed-size array the compiler keeps in
// SIMD registers, since it may not reorder a plain float sum itself.
constexpr size_t kLanes = 16;

float Sum(const float* x, size_t n) {
  float lanes[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) lanes[l] += x[i + l];
  }
  float sum = 0;
  for (; i < n; ++i) sum += x[i];
  for (float lane : lanes) sum += lane;
  return sum;
}

float SumOfSquaredDeviations(const float* x, size_t n, float mean) {
  float lanes[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) {
      const float d = x[i + l] - mean;
      lanes[l] += d * d;
    }
  }
  float sum = 0;
  for (; i < n; ++i) sum += (x[i] - mean) * (x[i] - mean);
  for (float lane : lanes) sum += lane;
  return sum;
}

}  // namespace

void LayerNormRows(const float* x, float* y, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; ++r) {
    const float* __restrict in = x + r * cols;
    float* __restrict out = y + r * cols;
    const float mean = Sum(in, cols) / static_cast<float>(cols);
    const float variance = SumOfSquaredDeviations(in, cols, mean) / static_cast<float>(cols);
    const float inv_std = 1.0f / std::sqrt(variance + 1e-5f);
    for (size_t i = 0; i < cols; ++i) out[i] = (in[i] - mean) * inv_std;
  }
}

namespace {

// Where float tanh rounds to +-1; the rational function below is only valid
// inside. A select whose result is stored: it vectorises (g++ 12 does not
// if-convert the clamp when its result feeds arithmetic directly).
constexpr float kTanhLimit = 7.90531110763549805f;
inline float ClampTanhArgument(float u) {
  const float upper = u < kTanhLimit ? u : kTanhLimit;
  return upper > -kTanhLimit ? upper : -kTanhLimit;
}

// Eigen's fast tanh on [-kTanhLimit, kTanhLimit]: a 13/6 rational minimax fit.
inline float TanhRational(float u) {
  const float u2 = u * u;
  float p = -2.76076847742355e-16f;
  p = p * u2 + 2.00018790482477e-13f;
  p = p * u2 + -8.60467152213735e-11f;
  p = p * u2 + 5.12229709037114e-08f;
  p = p * u2 + 1.48572235717979e-05f;
  p = p * u2 + 6.37261928875436e-04f;
  p = p * u2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * u2 + 1.18534705686654e-04f;
  q = q * u2 + 2.26843463243900e-03f;
  q = q * u2 + 4.89352518554385e-03f;
  return u * p / q;
}

}  // namespace

float FastTanh(float x) { return TanhRational(ClampTanhArgument(x)); }

// Block by block, two loops that both vectorise: the clamped tanh argument
// into a stack block, then the rational tanh and the GELU itself.
void Gelu(const float* __restrict x, float* __restrict y, size_t n) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  constexpr size_t kBlock = 256;
  float u[kBlock];
  for (size_t start = 0; start < n; start += kBlock) {
    const size_t count = std::min(kBlock, n - start);
    const float* __restrict in = x + start;
    float* __restrict out = y + start;
    for (size_t i = 0; i < count; ++i) {
      const float v = in[i];
      u[i] = ClampTanhArgument(kSqrt2OverPi * (v + 0.044715f * v * v * v));
    }
    for (size_t i = 0; i < count; ++i) out[i] = 0.5f * in[i] * (1.0f + TanhRational(u[i]));
  }
}

}  // namespace trainsim::calibrate::cpu
