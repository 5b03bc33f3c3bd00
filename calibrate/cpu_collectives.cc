// Collectives of the cpu backend: float32 operations between forked worker
// processes over buffers in one shared mapping, the shared-memory analogue of
// what NCCL does between GPUs. Every rank reads its peers' buffers directly.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "calibrate/cpu_measure.h"
#include "calibrate/cpu_workers.h"

namespace trainsim::calibrate::cpu {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kSumBlockFloats = 2048;  // 8 KiB of the sum stays in L1

size_t RoundUpToPage(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

// Floats in each rank's input and output buffer.
struct BufferFloats {
  size_t in = 0, out = 0;
};

// nccl-tests sizes: all_gather and reduce_scatter split `bytes` into one
// chunk per rank; the others use the whole buffer on every rank.
BufferFloats FloatsFor(const std::string& op, int ranks, double bytes) {
  const size_t total = static_cast<size_t>(std::max(1.0, std::floor(bytes / sizeof(float))));
  const size_t chunk = std::max<size_t>(1, total / ranks);
  if (op == "all_gather") return {chunk, chunk * ranks};
  if (op == "reduce_scatter") return {chunk * ranks, chunk};
  return {total, total};
}

// The nccl-tests size of an operation on these buffers.
double SizeBytes(const std::string& op, const BufferFloats& floats) {
  return sizeof(float) * static_cast<double>(op == "all_gather" ? floats.out : floats.in);
}

// One shared mapping: a header with rank 0's times, then for each rank its
// input and its output, every buffer page-aligned (no false sharing).
class Layout {
 public:
  Layout(BufferFloats floats, int ranks, int repetitions)
      : floats_(floats),
        header_(RoundUpToPage(sizeof(double) * repetitions)),
        in_stride_(RoundUpToPage(sizeof(float) * floats.in)),
        out_stride_(RoundUpToPage(sizeof(float) * floats.out)),
        ranks_(ranks) {}
  size_t Bytes() const { return header_ + ranks_ * (in_stride_ + out_stride_); }
  void Attach(std::byte* base) { base_ = base; }

  const BufferFloats& floats() const { return floats_; }
  double* times() const { return reinterpret_cast<double*>(base_); }
  float* in(int rank) const { return At(rank, 0); }
  float* out(int rank) const { return At(rank, in_stride_); }

 private:
  float* At(int rank, size_t offset) const {
    return reinterpret_cast<float*>(base_ + header_ + rank * (in_stride_ + out_stride_) + offset);
  }
  BufferFloats floats_;
  size_t header_, in_stride_, out_stride_;
  int ranks_;
  std::byte* base_ = nullptr;
};

// The input values: small integers, so that every sum is exact in float and
// a value tells which rank and index it came from (modulo 251).
float Value(int rank, size_t i) { return static_cast<float>((37 * rank + i) % 251); }

void FillInput(float* x, size_t n, int rank) {
  uint32_t v = (37 * rank) % 251;
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(v);
    if (++v == 251) v = 0;
  }
}

void AddInto(float* __restrict y, const float* __restrict x, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] += x[i];
}

// dst[i] = sum over ranks s (in rank order) of in(s)[offset + i], i < count,
// block by block so that dst stays in L1 while the inputs stream through.
void SumInto(const Layout& b, int ranks, size_t offset, size_t count, float* dst) {
  for (size_t start = 0; start < count; start += kSumBlockFloats) {
    const size_t n = std::min(kSumBlockFloats, count - start);
    std::memcpy(dst + start, b.in(0) + offset + start, n * sizeof(float));
    for (int s = 1; s < ranks; ++s) AddInto(dst + start, b.in(s) + offset + start, n);
  }
}

// Where chunk r starts when `count` floats are split into `ranks` chunks
// (chunk r ends where chunk r + 1 starts).
size_t ChunkStart(size_t count, int ranks, int r) { return count * r / ranks; }

// Reduce-scatter into the own output (rank r sums chunk r), barrier, then
// all-gather: copy every other rank's reduced chunk from its output.
Status AllReduce(const Worker& w, const Layout& b) {
  const size_t count = b.floats().in;
  const int r = w.rank(), n = w.ranks();
  const size_t first = ChunkStart(count, n, r), last = ChunkStart(count, n, r + 1);
  SumInto(b, n, first, last - first, b.out(r) + first);
  if (Status s = w.Sync(); !s.ok()) return s;
  for (int s = 0; s < n; ++s) {
    if (s == r) continue;
    const size_t from = ChunkStart(count, n, s), to = ChunkStart(count, n, s + 1);
    std::memcpy(b.out(r) + from, b.out(s) + from, (to - from) * sizeof(float));
  }
  return Status::Ok();
}

// Rank r's part of one operation; every rank calls it between two barriers.
Status RunOp(const std::string& op, const Worker& w, const Layout& b) {
  const int r = w.rank(), n = w.ranks();
  const BufferFloats& f = b.floats();
  if (op == "all_reduce") return AllReduce(w, b);
  if (op == "reduce_scatter") {
    SumInto(b, n, r * f.out, f.out, b.out(r));
  } else if (op == "all_gather") {
    for (int s = 0; s < n; ++s) std::memcpy(b.out(r) + s * f.in, b.in(s), f.in * sizeof(float));
  } else if (op == "broadcast") {
    std::memcpy(b.out(r), b.in(0), f.out * sizeof(float));
  } else {  // send_recv: push to the next rank
    std::memcpy(b.out((r + 1) % n), b.in(r), f.in * sizeof(float));
  }
  return Status::Ok();
}

// What out(r)[i] must hold after `op`.
float ExpectedValue(const std::string& op, int r, int n, const BufferFloats& f, size_t i) {
  if (op == "all_gather") return Value(static_cast<int>(i / f.in), i % f.in);
  if (op == "broadcast") return Value(0, i);
  if (op == "send_recv") return Value((r + n - 1) % n, i);
  const size_t index = op == "reduce_scatter" ? r * f.out + i : i;
  float sum = 0;
  for (int s = 0; s < n; ++s) sum += Value(s, index);
  return sum;
}

// Checks rank r's output: about 65536 evenly strided elements (all of a
// small buffer; the stride is odd and not a multiple of 251) and the last.
Status CheckOutput(const std::string& op, const Worker& w, const Layout& b) {
  const size_t count = b.floats().out;
  size_t stride = std::max<size_t>(1, count >> 16) | 1;
  if (stride % 251 == 0) stride += 2;
  const float* out = b.out(w.rank());
  const auto check = [&](size_t i) {
    const float want = ExpectedValue(op, w.rank(), w.ranks(), b.floats(), i);
    if (out[i] == want) return Status::Ok();
    return Status::Internal(op + " result[" + std::to_string(i) + "] = " + std::to_string(out[i]) +
                            ", expected " + std::to_string(want));
  };
  for (size_t i = 0; i < count; i += stride) {
    if (Status s = check(i); !s.ok()) return s;
  }
  return check(count - 1);
}

// The test hook of CollectiveRequest, applied before the first operation.
void InjectFault(const CollectiveRequest& request, int rank) {
  if (rank != request.fault_rank) return;
  if (request.fault == CollectiveRequest::Fault::kDie) _exit(3);
  if (request.fault == CollectiveRequest::Fault::kHang) {
    for (;;) pause();
  }
}

// One rank: fill its input, run warmup and timed operations, each between
// barriers (rank 0 records the wall time), then check its output.
Status RunCollectiveWorker(const Worker& w, const CollectiveRequest& request, const Layout& b) {
  FillInput(b.in(w.rank()), b.floats().in, w.rank());
  std::fill_n(b.out(w.rank()), b.floats().out, -1.0f);  // no valid value is negative
  InjectFault(request, w.rank());
  for (int i = 0; i < request.warmup + request.repetitions; ++i) {
    if (Status s = w.Sync(); !s.ok()) return s;
    const Clock::time_point start = Clock::now();
    if (Status s = RunOp(request.op, w, b); !s.ok()) return s;
    if (Status s = w.Sync(); !s.ok()) return s;
    if (w.rank() == 0 && i >= request.warmup) {
      b.times()[i - request.warmup] = std::chrono::duration<double>(Clock::now() - start).count();
    }
  }
  return CheckOutput(request.op, w, b);
}

// Hang guard only: 30 s plus every run moving each rank's buffers twice at
// a pessimistic 0.25 GB/s per rank.
Clock::duration DefaultTimeout(const CollectiveRequest& request, const BufferFloats& f) {
  const double traffic = 2.0 * sizeof(float) * (f.in + f.out) * request.ranks;
  const double seconds = 30 + (request.warmup + request.repetitions + 2) * traffic / 0.25e9;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

Status Validate(const CollectiveRequest& request) {
  const auto& ops = CollectiveOps();
  if (std::find(ops.begin(), ops.end(), request.op) == ops.end()) {
    return Status::InvalidInput("unknown collective \"" + request.op + "\"");
  }
  if (request.ranks < 1 || request.ranks > kMaxCollectiveRanks) {
    return Status::InvalidInput("ranks must be 1 to " + std::to_string(kMaxCollectiveRanks));
  }
  if (request.op == "send_recv" && request.ranks < 2) {
    return Status::InvalidInput("send_recv needs at least 2 ranks");
  }
  if (request.repetitions < 1 || request.warmup < 0) {
    return Status::InvalidInput("needs at least 1 repetition");
  }
  return Status::Ok();
}

CollectivePoint MakePoint(const CollectiveRequest& request, double bytes, const double* times) {
  CollectivePoint point;
  point.op = request.op;
  point.ranks = request.ranks;
  point.nodes = 1;
  point.bytes = bytes;
  point.timing = Summarize(std::vector<double>(times, times + request.repetitions));
  point.algbw_GBps = point.timing.median_s > 0 ? bytes / point.timing.median_s / 1e9 : 0;
  point.busbw_GBps = point.algbw_GBps * BusBandwidthFactor(request.op, request.ranks);
  return point;
}

}  // namespace

const std::vector<std::string>& CollectiveOps() {
  static const std::vector<std::string> kOps = {"all_reduce", "all_gather", "reduce_scatter",
                                                "broadcast", "send_recv"};
  return kOps;
}

Expected<CollectivePoint> MeasureCollective(const CollectiveRequest& request) {
  if (Status s = Validate(request); !s.ok()) return s;
  const BufferFloats floats = FloatsFor(request.op, request.ranks, request.bytes);
  Layout layout(floats, request.ranks, request.repetitions);
  if (Status s = CheckMemoryAvailable(layout.Bytes(), "the shared buffers"); !s.ok()) return s;
  Expected<SharedMemory> shared = SharedMemory::Map(layout.Bytes());
  if (!shared.ok()) return shared.status();
  layout.Attach(shared->data());
  const Clock::duration timeout = request.timeout.count() > 0 ? Clock::duration(request.timeout)
                                                              : DefaultTimeout(request, floats);
  const Status status = RunWorkers(request.ranks, Clock::now() + timeout, [&](const Worker& w) {
    return RunCollectiveWorker(w, request, layout);
  });
  if (!status.ok()) return status;
  return MakePoint(request, SizeBytes(request.op, floats), layout.times());
}

}  // namespace trainsim::calibrate::cpu
