// GEMM measurement of the cpu backend: fp32, one core (cpu_kernels.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "calibrate/cpu_kernels.h"
#include "calibrate/cpu_measure.h"
#include "calibrate/cpu_workers.h"

namespace trainsim::calibrate::cpu {
namespace {

// Deterministic values in [-1, 1], never zero (xorshift32 from a seed).
void FillRandom(float* x, int64_t n, uint32_t seed) {
  uint32_t s = seed | 1u;
  for (int64_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    const float v = static_cast<float>(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
    x[i] = v != 0 ? v : 0.5f;
  }
}

std::string ShapeName(const GemmShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The 16 entries of C checked: the four corners and 12 spread by a fixed
// pseudo-random sequence.
std::vector<std::pair<int64_t, int64_t>> SampledEntries(int64_t m, int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> entries = {
      {0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
  uint64_t s = 0x9E3779B97F4A7C15ull;
  while (entries.size() < 16) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    entries.push_back({static_cast<int64_t>((s >> 33) % m), static_cast<int64_t>((s >> 17) % n)});
  }
  return entries;
}

// Compares sampled C entries with double-precision dot products, relative
// to sum |a_i b_i|. The tolerance is the worst-case float summation error
// k 2^-24, at least 1e-4: a correct kernel passes, a wrong index does not.
// Empty when all pass, else what was wrong with the first bad entry.
std::string CheckSample(const GemmShape& s, const float* a, const float* b, const float* c) {
  const double tolerance = std::max(1e-4, static_cast<double>(s.k) * 0x1p-24);
  for (const auto& [i, j] : SampledEntries(s.m, s.n)) {
    double dot = 0, magnitude = 0;
    for (int64_t p = 0; p < s.k; ++p) {
      const double term = static_cast<double>(a[i * s.k + p]) * b[p * s.n + j];
      dot += term;
      magnitude += std::fabs(term);
    }
    const double error = std::fabs(c[i * s.n + j] - dot) / std::max(magnitude, 1e-30);
    if (!(error <= tolerance)) {
      return "C[" + std::to_string(i) + "][" + std::to_string(j) +
             "] = " + Format("%.7g", c[i * s.n + j]) + ", expected " + Format("%.7g", dot) +
             " (relative error " + Format("%.3g", error) + " > " + Format("%.3g", tolerance) + ")";
    }
  }
  return "";
}

// Why `shape` is not run: bad dimensions, over the flop limit or more memory
// than is available; empty when it can run.
std::string RefusalReason(const GemmShape& shape) {
  const double m = shape.m, n = shape.n, k = shape.k;
  if (m <= 0 || n <= 0 || k <= 0) return "every dimension must be positive";
  if (2 * m * n * k > kMaxGemmFlops) {
    return Format("%.4g", 2 * m * n * k / 1e9) + " GFLOP is too large for the cpu backend (limit " +
           Format("%.4g", kMaxGemmFlops / 1e9) + " GFLOP)";
  }
  const Status memory = CheckMemoryAvailable(4 * (m * k + k * n + m * n), "the matrices");
  return memory.ok() ? "" : memory.message();
}

// A, B (filled), C and the kernel's workspace for one shape.
struct GemmBuffers {
  FloatBuffer a, b, c, work;
  bool ok() const { return a && b && c && work; }
};

GemmBuffers Allocate(const GemmShape& s) {
  const double m = s.m, n = s.n, k = s.k;
  GemmBuffers buffers{AllocateFloats(m * k), AllocateFloats(k * n), AllocateFloats(m * n),
                      AllocateFloats(GemmFp32WorkspaceFloats(s.m, s.n, s.k))};
  if (buffers.ok()) {
    FillRandom(buffers.a.get(), s.m * s.k, 1);
    FillRandom(buffers.b.get(), s.k * s.n, 2);
  }
  return buffers;
}

// `warmup` untimed runs of `run`, then the seconds of `repetitions` timed ones.
template <typename Run>
std::vector<double> TimeRuns(const Run& run, int warmup, int repetitions) {
  for (int i = 0; i < warmup; ++i) run();
  std::vector<double> times;
  for (int i = 0; i < repetitions; ++i) {
    const Clock::time_point start = Clock::now();
    run();
    times.push_back(SecondsSince(start));
  }
  return times;
}

}  // namespace

void MeasureGemmFp32(const GemmShape& shape, int warmup, int repetitions, Measurements* out) {
  const std::string what = "gemm fp32 " + ShapeName(shape);
  if (const std::string refused = RefusalReason(shape); !refused.empty()) {
    out->failures.push_back({what, refused});
    return;
  }
  GemmBuffers buffers = Allocate(shape);
  if (!buffers.ok()) {
    out->failures.push_back({what, "cannot allocate the matrices"});
    return;
  }
  const auto run = [&] {
    GemmFp32(shape.m, shape.n, shape.k, buffers.a.get(), buffers.b.get(), buffers.c.get(),
             buffers.work.get());
  };
  GemmPoint point;
  point.dtype = "fp32";
  point.shape = shape;
  point.timing = Summarize(TimeRuns(run, warmup, repetitions));
  point.flops = 2.0 * shape.m * shape.n * shape.k;
  point.tflops = point.timing.median_s > 0 ? point.flops / point.timing.median_s / 1e12 : 0;
  const std::string error = CheckSample(shape, buffers.a.get(), buffers.b.get(), buffers.c.get());
  point.verified = error.empty();
  if (!point.verified) out->failures.push_back({what, error});
  out->gemm.push_back(point);
}

}  // namespace trainsim::calibrate::cpu
