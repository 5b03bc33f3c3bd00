// Single measurements of the cpu backend, each self-contained: the backend
// (cpu_backend.cc) loops over the plan and calls these. Internal to
// calibrate/; tests call them directly, including the collective fault hook.
//
// Every figure is the median of `repetitions` timed runs after `warmup`
// untimed ones (steady_clock). None of these prints or throws.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "calibrate/measure.h"

namespace trainsim::calibrate::cpu {

// GEMMs above this many flops (2 m n k) are not run: minutes on one core.
constexpr double kMaxGemmFlops = 2e11;

// Times C = A B in fp32 for `shape` on this core and checks 16 sampled
// entries of C against a double-precision dot product. Appends to out->gemm
// (verified or not) and, when the shape is too large, cannot be allocated or
// fails the check, to out->failures.
void MeasureGemmFp32(const GemmShape& shape, int warmup, int repetitions, Measurements* out);

// The memory kernels, in measuring order: "copy" (memcpy), "copy_loop" (a
// plain loop), "layernorm" (rows of 4096 floats), "gelu" (tanh GELU).
const std::vector<std::string>& MemoryKernels();

struct BandwidthRequest {
  std::string what;  // one of MemoryKernels()
  double bytes = 0;  // size of the input buffer (the output is as large)
  int workers = 1;   // processes running the kernel at once
  int warmup = 0;
  int repetitions = 1;
};

// Runs the kernel in `workers` processes at once, each on its own buffers.
// BandwidthPoint::bytes = read + written by one worker; the time of a
// repetition is that of its slowest worker. An error when the buffers do
// not fit in memory or a worker fails.
Expected<BandwidthPoint> MeasureBandwidth(const BandwidthRequest& request);

// The collectives, as named in MeasurePlan::collective_ops.
const std::vector<std::string>& CollectiveOps();

struct CollectiveRequest {
  std::string op;    // one of CollectiveOps()
  int ranks = 1;     // worker processes; send_recv needs at least 2
  double bytes = 0;  // nccl-tests size (see CollectivePoint)
  int warmup = 0;
  int repetitions = 1;
  // How long the whole measurement may take before its workers are killed;
  // zero: a generous default derived from the sizes.
  std::chrono::milliseconds timeout{0};

  // Test hook: rank `fault_rank` dies (_exit(3)) or hangs before its first
  // operation, so that tests can check the failure handling.
  enum class Fault { kNone, kDie, kHang };
  Fault fault = Fault::kNone;
  int fault_rank = 0;
};

// The most ranks a collective may have (the checks' sums stay exact).
constexpr int kMaxCollectiveRanks = 1024;

// Runs the collective over float32 buffers in shared memory between `ranks`
// forked processes and checks the result of the last run on every rank.
// CollectivePoint::bytes is the size actually used: the request rounded
// down to whole floats per rank (at least one). An error when the buffers
// do not fit, the result is wrong, a worker dies or the deadline passes;
// every worker is reaped and the buffers unmapped before returning.
Expected<CollectivePoint> MeasureCollective(const CollectiveRequest& request);

// "8 B", "4 KiB", "64 MiB", "1 GiB", "1536 KiB", "3000 B".
std::string FormatBytes(double bytes);

}  // namespace trainsim::calibrate::cpu
