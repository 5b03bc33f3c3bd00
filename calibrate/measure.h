// What a calibration backend measures, and the interface every backend
// implements (cpu: this host's cores; cuda: cuBLAS, CUDA memory and NCCL).
//
// A backend runs a MeasurePlan and appends raw points to Measurements: every
// point is the median of several timed repetitions, with the spread. A
// measurement that fails (out of memory at one size, an NCCL error) is
// recorded in `failures` and the backend goes on with the next one. Backends
// never fit, never invent a figure and never print: progress goes through
// the Observer. Fitting and the profile are calibrate/fit.h and
// core/hardware_profile.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace trainsim::calibrate {

// Element types a GEMM is measured in (the names of the scenario's precision).
// "tf32": fp32 storage, TF32 tensor-core math. "fp8": e4m3 inputs.
inline const std::vector<std::string>& AllDtypes() {
  static const std::vector<std::string> kAll = {"fp32", "tf32", "fp16", "bf16", "fp8"};
  return kAll;
}

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;  // C[m x n] = A[m x k] * B[k x n]
  std::string origin;           // "gpt3-175b tp8 mb1 fc1", "square 4096"
};

// Timing summary of repeated runs of one measurement.
struct Timing {
  int repetitions = 0;
  double median_s = 0;
  double min_s = 0, max_s = 0;
  // (max - min) / median: how noisy the repetitions were.
  double spread() const { return median_s > 0 ? (max_s - min_s) / median_s : 0; }
};
// Summary of `times_s` (not empty).
Timing Summarize(std::vector<double> times_s);

struct GemmPoint {
  std::string dtype;
  GemmShape shape;
  Timing timing;
  double flops = 0;       // 2 m n k
  double tflops = 0;      // flops / median / 1e12
  bool verified = false;  // a sample of C checked against a host reference
};

// Bytes-per-second measurements of memory: "d2d_kernel" (own copy kernel),
// "d2d_memcpy", "h2d_pinned", "d2h_pinned", "layernorm", "gelu" (cuda);
// "copy", "layernorm", "gelu" (cpu). `bytes` counts what was read plus
// written once each; for the host<->device copies, the bytes transferred.
struct BandwidthPoint {
  std::string what;
  double bytes = 0;
  Timing timing;
  double GBps = 0;  // bytes / median / 1e9
};

// One collective over `ranks` ranks (on `nodes` nodes), as nccl-tests reports
// it: algbw = bytes / time, busbw = algbw x the operation's factor
// (BusBandwidthFactor). `bytes` is the nccl-tests "size": the whole buffer for
// all_reduce/broadcast/send_recv, the gathered (total) buffer for all_gather
// and reduce_scatter.
struct CollectivePoint {
  std::string op;  // all_reduce, all_gather, reduce_scatter, broadcast, send_recv
  int ranks = 0;
  int nodes = 1;
  double bytes = 0;
  Timing timing;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};

// nccl-tests PERFORMANCE.md: all_reduce 2(n-1)/n, all_gather and
// reduce_scatter (n-1)/n, broadcast / reduce / send_recv 1.
double BusBandwidthFactor(const std::string& op, int ranks);

struct Failure {
  std::string what;   // "gemm fp8 8192x8192x8192", "nccl all_reduce 8 ranks 1 GiB"
  std::string error;  // the library's message
};

// What was measured on, for provenance.
struct DeviceInfo {
  std::string backend;  // "cpu" or "cuda"
  std::string name;     // "NVIDIA H100 80GB HBM3", "AMD EPYC 7R13 (2 cores)"
  int devices = 0;      // GPUs (cuda) or worker processes (cpu) per node
  int nodes = 1;
  double memory_bytes = 0;          // per device (GPU memory; host RAM per worker on cpu)
  std::string driver;               // CUDA driver version, or the kernel release on cpu
  std::string runtime;              // CUDA runtime version, or the compiler on cpu
  std::string blas;                 // cuBLAS version, or "trainsim blocked GEMM"
  std::string collectives;          // NCCL version, or "shared-memory ring"
  std::vector<std::string> dtypes;  // GEMM dtypes the device supports
  std::string host;                 // host name
};

struct Measurements {
  DeviceInfo device;
  std::vector<GemmPoint> gemm;
  std::vector<BandwidthPoint> memory;
  std::vector<CollectivePoint> collectives;
  std::vector<Failure> failures;
};

struct MeasurePlan {
  bool quick = false;
  int warmup = 2;                   // untimed runs before the timed ones
  int repetitions = 10;             // timed runs; the median is kept
  std::vector<std::string> dtypes;  // wanted; a backend skips those its device lacks
  std::vector<GemmShape> gemm_shapes;
  std::vector<double> memory_bytes;  // buffer sizes for the memory tests
  std::vector<std::string> collective_ops;
  std::vector<double> collective_bytes;  // 8 B ... 1 GiB, x2 steps
  // Rank counts to measure collectives on (1..all local devices when empty).
  std::vector<int> collective_ranks;
};

// Progress reports; the tool prints them on stderr, tests record them.
class Observer {
 public:
  virtual ~Observer() = default;
  // `phase`: "gemm", "memory", "collectives"; `done` of `total` items in it;
  // `item` says what is being measured now.
  virtual void Progress(const std::string& phase, int done, int total, const std::string& item) = 0;
  // True once the user asked to stop (Ctrl-C): a backend ends before its next
  // measurement, keeps what it measured and records InterruptedFailure(), so
  // that the tool still writes the (incomplete) profile.
  virtual bool StopRequested() { return false; }
};

// The failure a backend records when it stopped on StopRequested().
inline const Failure& InterruptedFailure() {
  static const Failure kInterrupted = {
      "calibration", "interrupted: the measurements after this point were not made"};
  return kInterrupted;
}

class Backend {
 public:
  virtual ~Backend() = default;
  // What the backend would measure on; an error when it cannot run here
  // ("no CUDA device is visible").
  virtual Expected<DeviceInfo> Probe() = 0;
  // Runs the plan, appending to *out (out->device is set first). Only a
  // failure of the whole run (the device vanished) is an error; single
  // measurements that fail go to out->failures.
  virtual Status Run(const MeasurePlan& plan, Observer* observer, Measurements* out) = 0;
};

std::unique_ptr<Backend> MakeCpuBackend();
// nullptr when this build has no CUDA backend (compiled without nvcc).
std::unique_ptr<Backend> MakeCudaBackend();

}  // namespace trainsim::calibrate
