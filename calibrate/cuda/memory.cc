// The memory phase: device copies (own kernel and cudaMemcpyAsync), pinned
// host transfers, and two memory-bound training kernels (layernorm, GELU on
// bf16), each timed with events at every planned buffer size.
#include <algorithm>
#include <string>

#include "calibrate/cuda/cuda_util.h"
#include "calibrate/cuda/kernels.h"
#include "calibrate/cuda/phases.h"

namespace trainsim::calibrate::cuda {
namespace {

// One test at one size: bytes moved per run (read + written once each) and
// the launch of one run.
Expected<BandwidthPoint> Time(const PhaseContext& ctx, cudaStream_t stream, const std::string& what,
                              double bytes, const std::function<Status()>& launch) {
  Expected<std::vector<double>> times =
      TimeRuns({{ctx.device, stream}}, ctx.plan->warmup, ctx.plan->repetitions, launch);
  if (!times.ok()) return times.status();
  BandwidthPoint p{what, bytes, Summarize(std::move(times).value()), 0};
  p.GBps = bytes / p.timing.median_s / 1e9;
  return p;
}

Status AllocateTwo(size_t bytes, DeviceMemory* a, DeviceMemory* b) {
  Expected<DeviceMemory> first = AllocateDevice(bytes);
  if (!first.ok()) return first.status();
  Expected<DeviceMemory> second = AllocateDevice(bytes);
  if (!second.ok()) return second.status();
  *a = std::move(first).value();
  *b = std::move(second).value();
  return Status::Ok();
}

// Source buffer of `bytes` (a multiple of 4) filled with hashed values.
Status AllocateFilled(size_t bytes, Elem type, cudaStream_t stream, DeviceMemory* src,
                      DeviceMemory* dst) {
  Status st = AllocateTwo(bytes, src, dst);
  const int64_t elems = static_cast<int64_t>(bytes / (type == Elem::kF32 ? 4 : 2));
  if (st.ok()) st = CudaCheck(LaunchFill(type, src->get(), elems, 3, stream), "fill");
  return st;
}

Expected<BandwidthPoint> KernelCopy(const PhaseContext& ctx, cudaStream_t stream, size_t size) {
  const int64_t n16 = static_cast<int64_t>(std::max<size_t>(1, size / 16));
  DeviceMemory src, dst;
  Status st = AllocateFilled(n16 * 16, Elem::kF32, stream, &src, &dst);
  if (!st.ok()) return st;
  return Time(ctx, stream, "d2d_kernel", 2.0 * n16 * 16, [&] {
    return CudaCheck(LaunchCopy16(src.get(), dst.get(), n16, stream), "copy kernel");
  });
}

Expected<BandwidthPoint> MemcpyCopy(const PhaseContext& ctx, cudaStream_t stream, size_t size) {
  DeviceMemory src, dst;
  Status st = AllocateFilled(size, Elem::kF32, stream, &src, &dst);
  if (!st.ok()) return st;
  return Time(ctx, stream, "d2d_memcpy", 2.0 * size, [&] {
    return CudaCheck(cudaMemcpyAsync(dst.get(), src.get(), size, cudaMemcpyDeviceToDevice, stream),
                     "cudaMemcpyAsync");
  });
}

// Pinned host <-> device; the transfer size counts once.
Expected<BandwidthPoint> HostCopy(const PhaseContext& ctx, cudaStream_t stream, size_t size,
                                  bool to_device) {
  Expected<PinnedMemory> host = AllocatePinned(size);
  if (!host.ok()) return host.status();
  Expected<DeviceMemory> device = AllocateDevice(size);
  if (!device.ok()) return device.status();
  std::fill_n(static_cast<char*>(host->get()), size, 1);
  void* dst = to_device ? device->get() : host->get();
  const void* src = to_device ? host->get() : device->get();
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  return Time(ctx, stream, to_device ? "h2d_pinned" : "d2h_pinned", size, [&] {
    return CudaCheck(cudaMemcpyAsync(dst, src, size, kind, stream), "cudaMemcpyAsync");
  });
}

Expected<BandwidthPoint> ToDevice(const PhaseContext& ctx, cudaStream_t stream, size_t size) {
  return HostCopy(ctx, stream, size, true);
}
Expected<BandwidthPoint> ToHost(const PhaseContext& ctx, cudaStream_t stream, size_t size) {
  return HostCopy(ctx, stream, size, false);
}

// Rows of kLayerNormWidth bf16 values: as many as fit in `size` (at least one).
Expected<BandwidthPoint> LayerNorm(const PhaseContext& ctx, cudaStream_t stream, size_t size) {
  const size_t row_bytes = kLayerNormWidth * 2;
  const int64_t rows = static_cast<int64_t>(std::max<size_t>(1, size / row_bytes));
  DeviceMemory x, y;
  Status st = AllocateFilled(rows * row_bytes, Elem::kBF16, stream, &x, &y);
  if (!st.ok()) return st;
  return Time(ctx, stream, "layernorm", 2.0 * rows * row_bytes, [&] {
    return CudaCheck(LaunchLayerNormBf16(x.get(), y.get(), rows, stream), "layernorm kernel");
  });
}

Expected<BandwidthPoint> Gelu(const PhaseContext& ctx, cudaStream_t stream, size_t size) {
  const int64_t n = static_cast<int64_t>(std::max<size_t>(8, size / 2 / 8 * 8));
  DeviceMemory x, y;
  Status st = AllocateFilled(n * 2, Elem::kBF16, stream, &x, &y);
  if (!st.ok()) return st;
  return Time(ctx, stream, "gelu", 2.0 * n * 2, [&] {
    return CudaCheck(LaunchGeluBf16(x.get(), y.get(), n, stream), "gelu kernel");
  });
}

using Test = Expected<BandwidthPoint> (*)(const PhaseContext&, cudaStream_t, size_t);
struct NamedTest {
  const char* what;
  Test run;
};
constexpr NamedTest kTests[] = {
    {"d2d_kernel", KernelCopy}, {"d2d_memcpy", MemcpyCopy}, {"h2d_pinned", ToDevice},
    {"d2h_pinned", ToHost},     {"layernorm", LayerNorm},   {"gelu", Gelu},
};

}  // namespace

Status MeasureMemory(const PhaseContext& ctx) {
  const std::vector<double>& sizes = ctx.plan->memory_bytes;
  if (sizes.empty()) return Status::Ok();
  Status st = CudaCheck(cudaSetDevice(ctx.device), "cudaSetDevice");
  Expected<Stream> stream = st.ok() ? CreateStream() : Expected<Stream>(st);
  if (!stream.ok()) return RecordFailure(ctx.out, "memory", stream.status());
  const int total = static_cast<int>(std::size(kTests) * sizes.size());
  int done = 0;
  for (const NamedTest& test : kTests) {
    for (double bytes : sizes) {
      const std::string item = std::string(test.what) + " " + FormatBytes(bytes);
      if (ctx.Stopped()) return Status::Ok();
      ctx.Report("memory", done++, total, item);
      const size_t size = static_cast<size_t>(std::max(bytes, 16.0));
      Expected<BandwidthPoint> p = test.run(ctx, stream->get(), size);
      if (p.ok()) {
        ctx.out->memory.push_back(*p);
        continue;
      }
      st = RecordFailure(ctx.out, "memory " + item, p.status());
      if (!st.ok()) return st;
    }
  }
  return Status::Ok();
}

}  // namespace trainsim::calibrate::cuda
