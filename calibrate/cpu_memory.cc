// Memory-bandwidth measurement of the cpu backend: every worker process runs
// the kernel on its own buffers at once, as every device does in training.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "calibrate/cpu_kernels.h"
#include "calibrate/cpu_measure.h"
#include "calibrate/cpu_workers.h"

namespace trainsim::calibrate::cpu {
namespace {

constexpr size_t kLayerNormCols = 4096;

// Read at run time so that ScaleCopy stays a loop (see ScaleCopy).
volatile float g_one = 1.0f;

// Floats per buffer that `what` uses for `bytes`: whole rows for layernorm
// (one shorter row below 4096 floats), at least one float.
size_t UsedFloats(const std::string& what, double bytes) {
  size_t n = static_cast<size_t>(std::max(1.0, std::floor(bytes / sizeof(float))));
  if (what == "layernorm" && n > kLayerNormCols) n -= n % kLayerNormCols;
  return n;
}

void RunKernel(const std::string& what, const float* x, float* y, size_t n, float one) {
  if (what == "copy") {
    std::memcpy(y, x, n * sizeof(float));
  } else if (what == "copy_loop") {
    ScaleCopy(x, y, n, one);
  } else if (what == "layernorm") {
    const size_t cols = std::min(n, kLayerNormCols);
    LayerNormRows(x, y, n / cols, cols);
  } else {
    Gelu(x, y, n);
  }
  KeepAlive(y);
}

// Deterministic inputs in [-3, 3] (the range GELU and layer norm see).
void FillInputs(float* x, size_t n, uint32_t seed) {
  uint32_t s = seed | 1u;
  for (size_t i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    x[i] = static_cast<float>(s >> 8) * (6.0f / 16777216.0f) - 3.0f;
  }
}

// One worker: its own buffers, then warmup and timed runs, each started by
// a barrier. Its times go to times[rank * repetitions + i].
Status RunBandwidthWorker(const Worker& worker, const BandwidthRequest& request, size_t n,
                          double* times) {
  FloatBuffer x = AllocateFloats(n), y = AllocateFloats(n);
  if (!x || !y) return Status::Internal("cannot allocate 2 x " + FormatBytes(4.0 * n));
  FillInputs(x.get(), n, 1 + worker.rank());
  std::memset(y.get(), 0, n * sizeof(float));
  const float one = g_one;
  for (int i = 0; i < request.warmup + request.repetitions; ++i) {
    if (Status s = worker.Sync(); !s.ok()) return s;
    const Clock::time_point start = Clock::now();
    RunKernel(request.what, x.get(), y.get(), n, one);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (i >= request.warmup)
      times[worker.rank() * request.repetitions + i - request.warmup] = seconds;
  }
  return Status::Ok();
}

// The time of each repetition: that of its slowest worker.
std::vector<double> SlowestPerRepetition(const double* times, int workers, int repetitions) {
  std::vector<double> slowest(repetitions, 0.0);
  for (int w = 0; w < workers; ++w) {
    for (int i = 0; i < repetitions; ++i) {
      slowest[i] = std::max(slowest[i], times[w * repetitions + i]);
    }
  }
  return slowest;
}

// Hang guard only: 30 s plus every run at a pessimistic 0.25 GB/s per worker.
Clock::duration Timeout(const BandwidthRequest& request, size_t n) {
  const double traffic = 2.0 * n * sizeof(float) * request.workers;
  const double seconds = 30 + (request.warmup + request.repetitions + 1) * traffic / 0.25e9;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

const std::vector<std::string>& MemoryKernels() {
  static const std::vector<std::string> kKernels = {"copy", "copy_loop", "layernorm", "gelu"};
  return kKernels;
}

Expected<BandwidthPoint> MeasureBandwidth(const BandwidthRequest& request) {
  const auto& kernels = MemoryKernels();
  if (std::find(kernels.begin(), kernels.end(), request.what) == kernels.end()) {
    return Status::InvalidInput("unknown memory kernel \"" + request.what + "\"");
  }
  if (request.workers < 1 || request.repetitions < 1 || request.warmup < 0) {
    return Status::InvalidInput("needs at least 1 worker and 1 repetition");
  }
  const size_t n = UsedFloats(request.what, request.bytes);
  const double bytes = 2.0 * n * sizeof(float);  // x read once, y written once
  if (Status s = CheckMemoryAvailable(bytes * request.workers, "the buffers"); !s.ok()) return s;
  Expected<SharedMemory> times =
      SharedMemory::Map(sizeof(double) * request.workers * request.repetitions);
  if (!times.ok()) return times.status();
  double* time_slots = reinterpret_cast<double*>(times->data());
  const Status status =
      RunWorkers(request.workers, Clock::now() + Timeout(request, n),
                 [&](const Worker& w) { return RunBandwidthWorker(w, request, n, time_slots); });
  if (!status.ok()) return status;
  BandwidthPoint point;
  point.what = request.what;
  point.bytes = bytes;
  point.timing = Summarize(SlowestPerRepetition(time_slots, request.workers, request.repetitions));
  point.GBps = point.timing.median_s > 0 ? bytes / point.timing.median_s / 1e9 : 0;
  return point;
}

}  // namespace trainsim::calibrate::cpu
