// The GEMM phase: cuBLASLt matmuls timed with events, each checked on a
// sample of C against a double-precision dot product on the host.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "calibrate/cuda/cuda_util.h"
#include "calibrate/cuda/gemm_lt.h"
#include "calibrate/cuda/phases.h"

namespace trainsim::calibrate::cuda {
namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;  // cuBLASLt's recommendation for Hopper

// What every GEMM of the phase shares: handle, stream, workspace.
struct GemmRig {
  LtHandle handle;
  Stream stream;
  DeviceMemory workspace;
};

Expected<GemmRig> CreateRig() {
  GemmRig rig;
  Expected<LtHandle> handle = CreateLtHandle();
  if (!handle.ok()) return handle.status();
  rig.handle = std::move(handle).value();
  Expected<Stream> stream = CreateStream();
  if (!stream.ok()) return stream.status();
  rig.stream = std::move(stream).value();
  Expected<DeviceMemory> workspace = AllocateDevice(kWorkspaceBytes);
  if (!workspace.ok()) return workspace.status();
  rig.workspace = std::move(workspace).value();
  return rig;
}

std::string ShapeText(const GemmShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

size_t ElemBytes(Elem e) {
  switch (e) {
    case Elem::kF32:
      return 4;
    case Elem::kF16:
    case Elem::kBF16:
      return 2;
    case Elem::kE4M3:
      return 1;
  }
  return 4;
}

// Why this shape cannot be run in this dtype; ok when it can.
Status CheckShape(const DtypeSpec& spec, const GemmShape& s) {
  if (s.m < 1 || s.n < 1 || s.k < 1) return Status::InvalidInput("m, n and k must be positive");
  const double m = s.m, n = s.n, k = s.k;
  if (std::max({m * k, k * n, m * n}) * 4 > 0x1p62) {
    return Status::InvalidInput("the matrices do not fit in 64-bit sizes");
  }
  if (spec.ab_elem == Elem::kE4M3 && (s.m % 16 || s.n % 16 || s.k % 16)) {
    return Status::InvalidInput("fp8 GEMMs need m, n and k multiples of 16 (cuBLASLt)");
  }
  return Status::Ok();
}

struct Operands {
  DeviceMemory a, b, c;
};

// A and B filled with hashed values in [-1, 1); C left as is (beta = 0).
Expected<Operands> CreateOperands(const DtypeSpec& spec, const GemmShape& s, cudaStream_t stream) {
  Operands ops;
  const size_t in = ElemBytes(spec.ab_elem), out = ElemBytes(spec.c_elem);
  Expected<DeviceMemory> a = AllocateDevice(static_cast<size_t>(s.m * s.k) * in);
  if (!a.ok()) return a.status();
  ops.a = std::move(a).value();
  Expected<DeviceMemory> b = AllocateDevice(static_cast<size_t>(s.k * s.n) * in);
  if (!b.ok()) return b.status();
  ops.b = std::move(b).value();
  Expected<DeviceMemory> c = AllocateDevice(static_cast<size_t>(s.m * s.n) * out);
  if (!c.ok()) return c.status();
  ops.c = std::move(c).value();
  Status st = CudaCheck(LaunchFill(spec.ab_elem, ops.a.get(), s.m * s.k, 1, stream), "fill A");
  if (st.ok())
    st = CudaCheck(LaunchFill(spec.ab_elem, ops.b.get(), s.k * s.n, 2, stream), "fill B");
  if (!st.ok()) return st;
  return ops;
}

// Corners, then pseudo-random positions.
GemmSamples PickSamples(const GemmShape& s) {
  GemmSamples samples;
  uint64_t x = 0x2545F4914F6CDD1Dull;
  for (int i = 0; i < kGemmSamples; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    samples.row[i] = static_cast<int64_t>((x >> 33) % static_cast<uint64_t>(s.m));
    samples.col[i] = static_cast<int64_t>((x >> 13) % static_cast<uint64_t>(s.n));
  }
  samples.row[0] = 0, samples.col[0] = 0;
  samples.row[1] = s.m - 1, samples.col[1] = s.n - 1;
  return samples;
}

// Empty when C[i][j] = sum a_p b_p within the dtype's tolerance; otherwise
// "result check failed at C[i][j]: got x, expected y".
std::string CompareSample(const DtypeSpec& spec, const float* a, const float* b, int64_t k,
                          float got, int64_t i, int64_t j) {
  double exact = 0, magnitude = 0;
  for (int64_t p = 0; p < k; ++p) {
    const double term = static_cast<double>(a[p]) * b[p];
    exact += term;
    magnitude += std::fabs(term);
  }
  const double tolerance = spec.out_tol * std::fabs(exact) + spec.sum_tol * magnitude + 1e-6;
  if (std::fabs(got - exact) <= tolerance) return "";  // false for NaN
  char text[160];
  std::snprintf(text, sizeof text, "result check failed at C[%lld][%lld]: got %.6g, expected %.6g",
                static_cast<long long>(i), static_cast<long long>(j), got, exact);
  return text;
}

// Copies the sampled rows of A, columns of B and entries of C to the host,
// then compares; the value is "" when every sample passes, else the first
// mismatch.
Expected<std::string> CheckSamples(const DtypeSpec& spec, const GemmShape& s, const Operands& ops,
                                   cudaStream_t stream) {
  const GemmSamples samples = PickSamples(s);
  const size_t floats = 2 * kGemmSamples * static_cast<size_t>(s.k) + kGemmSamples;
  Expected<DeviceMemory> gathered = AllocateDevice(floats * sizeof(float));
  if (!gathered.ok()) return gathered.status();
  float* d = static_cast<float*>(gathered->get());
  float* d_b = d + kGemmSamples * s.k;
  float* d_c = d_b + kGemmSamples * s.k;
  std::vector<float> host(floats);
  Status st = CudaCheck(LaunchGatherSamples(spec.ab_elem, spec.c_elem, ops.a.get(), ops.b.get(),
                                            ops.c.get(), s.m, s.k, samples, d, d_b, d_c, stream),
                        "gathering the sampled entries");
  if (st.ok()) {
    st = CudaCheck(
        cudaMemcpyAsync(host.data(), d, floats * sizeof(float), cudaMemcpyDeviceToHost, stream),
        "copying the sampled entries");
  }
  if (st.ok()) st = CudaCheck(cudaStreamSynchronize(stream), "checking the GEMM result");
  if (!st.ok()) return st;
  const float* a_rows = host.data();
  const float* b_cols = a_rows + kGemmSamples * s.k;
  const float* c_values = b_cols + kGemmSamples * s.k;
  for (int i = 0; i < kGemmSamples; ++i) {
    std::string mismatch = CompareSample(spec, a_rows + i * s.k, b_cols + i * s.k, s.k, c_values[i],
                                         samples.row[i], samples.col[i]);
    if (!mismatch.empty()) return mismatch;
  }
  return std::string();
}

struct GemmResult {
  GemmPoint point;
  std::string check_failure;  // empty when verified
};

Expected<GemmResult> MeasureGemm(const PhaseContext& ctx, GemmRig& rig, const DtypeSpec& spec,
                                 const GemmShape& shape) {
  Status st = CheckShape(spec, shape);
  if (!st.ok()) return st;
  cudaStream_t stream = rig.stream.get();
  Expected<Operands> ops = CreateOperands(spec, shape, stream);
  if (!ops.ok()) return ops.status();
  Expected<LtMatmul> mm = PlanMatmul(rig.handle.get(), spec, shape, kWorkspaceBytes);
  if (!mm.ok()) return mm.status();
  auto launch = [&] {
    return RunMatmul(rig.handle.get(), *mm, ops->a.get(), ops->b.get(), ops->c.get(),
                     rig.workspace.get(), kWorkspaceBytes, stream);
  };
  Expected<std::vector<double>> times =
      TimeRuns({{ctx.device, stream}}, ctx.plan->warmup, ctx.plan->repetitions, launch);
  if (!times.ok()) return times.status();
  Expected<std::string> mismatch = CheckSamples(spec, shape, *ops, stream);
  if (!mismatch.ok()) return mismatch.status();
  GemmResult r;
  r.point = {spec.name, shape, Summarize(std::move(times).value()), 0, 0, mismatch->empty()};
  r.point.flops = 2.0 * shape.m * shape.n * shape.k;
  r.point.tflops = r.point.flops / r.point.timing.median_s / 1e12;
  r.check_failure = std::move(mismatch).value();
  return r;
}

// Planned dtypes in plan order: the device's, plus unknown names (which fail).
std::vector<std::string> DtypesToRun(const PhaseContext& ctx) {
  std::vector<std::string> names;
  for (const std::string& name : ctx.plan->dtypes) {
    const std::vector<std::string>& supported = ctx.out->device.dtypes;
    const bool runs = std::find(supported.begin(), supported.end(), name) != supported.end();
    if (runs || FindDtype(name) == nullptr) names.push_back(name);
  }
  return names;
}

// One point (or failure); an error only when the device is unusable.
Status MeasureAndRecord(const PhaseContext& ctx, GemmRig& rig, const std::string& dtype,
                        const GemmShape& shape) {
  const std::string what = "gemm " + dtype + " " + ShapeText(shape);
  const DtypeSpec* spec = FindDtype(dtype);
  if (spec == nullptr) return RecordFailure(ctx.out, what, Status::InvalidInput("unknown dtype"));
  Expected<GemmResult> r = MeasureGemm(ctx, rig, *spec, shape);
  if (!r.ok()) return RecordFailure(ctx.out, what, r.status());
  ctx.out->gemm.push_back(r->point);
  if (r->check_failure.empty()) return Status::Ok();
  return RecordFailure(ctx.out, what, Status::Internal(r->check_failure));
}

}  // namespace

Status MeasureGemms(const PhaseContext& ctx) {
  const std::vector<std::string> dtypes = DtypesToRun(ctx);
  const std::vector<GemmShape>& shapes = ctx.plan->gemm_shapes;
  if (dtypes.empty() || shapes.empty()) return Status::Ok();
  Status st = CudaCheck(cudaSetDevice(ctx.device), "cudaSetDevice");
  if (!st.ok()) return RecordFailure(ctx.out, "gemm", st);
  Expected<GemmRig> rig = CreateRig();
  if (!rig.ok()) return RecordFailure(ctx.out, "gemm", rig.status());
  const int total = static_cast<int>(dtypes.size() * shapes.size());
  int done = 0;
  for (const std::string& dtype : dtypes) {
    for (const GemmShape& shape : shapes) {
      if (ctx.Stopped()) return Status::Ok();
      ctx.Report("gemm", done++, total, dtype + " " + ShapeText(shape));
      st = MeasureAndRecord(ctx, *rig, dtype, shape);
      if (!st.ok()) return st;
    }
  }
  return Status::Ok();
}

}  // namespace trainsim::calibrate::cuda
