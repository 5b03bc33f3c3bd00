// The collective phase: NCCL operations as nccl-tests measures them (float
// elements, out of place), timed with events on every rank's stream; a
// run's time is its slowest rank's. In one process the communicators span
// the first r devices for every planned rank count r; under MPI one
// communicator spans every rank of the world.
#include <algorithm>
#include <string>
#include <vector>

#include "calibrate/cuda/phases.h"

#if TRAINSIM_HAVE_NCCL

#include "calibrate/cuda/cuda_util.h"
#include "calibrate/cuda/nccl_comm.h"
#include "calibrate/cuda/world.h"

namespace trainsim::calibrate::cuda {

namespace {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kSendRecv };
struct NamedOp {
  const char* name;
  Op op;
};
constexpr NamedOp kOps[] = {{"all_reduce", Op::kAllReduce},
                            {"all_gather", Op::kAllGather},
                            {"reduce_scatter", Op::kReduceScatter},
                            {"broadcast", Op::kBroadcast},
                            {"send_recv", Op::kSendRecv}};

const NamedOp* FindOp(const std::string& name) {
  for (const NamedOp& op : kOps) {
    if (name == op.name) return &op;
  }
  return nullptr;
}

bool Splits(Op op) { return op == Op::kAllGather || op == Op::kReduceScatter; }

// The nccl-tests size in floats: at least one, and a whole number per rank
// for the operations that split the buffer.
size_t TotalElements(Op op, double bytes, int ranks) {
  const size_t n = std::max<size_t>(1, static_cast<size_t>(bytes / sizeof(float)));
  const size_t r = static_cast<size_t>(ranks);
  return Splits(op) ? std::max(r, n / r * r) : n;
}

struct RankBuffers {
  DeviceMemory send, recv;
};

// Zeroed send and receive buffers on every local rank.
Expected<std::vector<RankBuffers>> AllocateBuffers(Communicator& c, Op op, size_t elements) {
  const size_t per_rank = elements / static_cast<size_t>(c.size());
  const size_t send = (op == Op::kAllGather ? per_rank : elements) * sizeof(float);
  const size_t recv = (op == Op::kReduceScatter ? per_rank : elements) * sizeof(float);
  std::vector<RankBuffers> buffers;
  for (LocalRank& r : c.local()) {
    Status st = CudaCheck(cudaSetDevice(r.device), "cudaSetDevice");
    Expected<DeviceMemory> s = st.ok() ? AllocateDevice(send) : Expected<DeviceMemory>(st);
    if (!s.ok()) return s.status();
    Expected<DeviceMemory> d = AllocateDevice(recv);
    if (!d.ok()) return d.status();
    st = CudaCheck(cudaMemsetAsync(s->get(), 0, send, r.stream.get()), "cudaMemsetAsync");
    if (st.ok())
      st = CudaCheck(cudaMemsetAsync(d->get(), 0, recv, r.stream.get()), "cudaMemsetAsync");
    if (!st.ok()) return st;
    buffers.push_back({std::move(s).value(), std::move(d).value()});
  }
  return buffers;
}

// Enqueues rank r's part of one operation over n ranks.
ncclResult_t LaunchOnRank(Op op, const LocalRank& r, int n, const RankBuffers& b, size_t elements) {
  const void* send = b.send.get();
  void* recv = b.recv.get();
  cudaStream_t s = r.stream.get();
  switch (op) {
    case Op::kAllReduce:
      return ncclAllReduce(send, recv, elements, ncclFloat, ncclSum, r.comm, s);
    case Op::kAllGather:
      return ncclAllGather(send, recv, elements / n, ncclFloat, r.comm, s);
    case Op::kReduceScatter:
      return ncclReduceScatter(send, recv, elements / n, ncclFloat, ncclSum, r.comm, s);
    case Op::kBroadcast:
      return ncclBroadcast(send, recv, elements, ncclFloat, 0, r.comm, s);
    case Op::kSendRecv: {
      const ncclResult_t sent = ncclSend(send, elements, ncclFloat, (r.rank + 1) % n, r.comm, s);
      if (sent != ncclSuccess) return sent;
      return ncclRecv(recv, elements, ncclFloat, (r.rank - 1 + n) % n, r.comm, s);
    }
  }
  return ncclInvalidArgument;
}

// One run of the operation on every local rank, in one NCCL group.
Status LaunchGroup(Communicator& c, const NamedOp& op, const std::vector<RankBuffers>& buffers,
                   size_t elements) {
  Status st = NcclCheck(ncclGroupStart(), "ncclGroupStart");
  if (!st.ok()) return st;
  ncclResult_t result = ncclSuccess;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const ncclResult_t r = LaunchOnRank(op.op, c.local()[i], c.size(), buffers[i], elements);
    if (result == ncclSuccess) result = r;
  }
  const ncclResult_t ended = ncclGroupEnd();
  return NcclCheck(result != ncclSuccess ? result : ended, std::string("nccl ") + op.name);
}

// Timed runs at one size: the slowest rank of each run, over every process.
Expected<CollectivePoint> TimeCollective(const PhaseContext& ctx, Communicator& c,
                                         const NamedOp& op, const std::vector<RankBuffers>& buffers,
                                         size_t elements) {
  Expected<std::vector<double>> times = TimeRuns(
      c.Streams(), ctx.plan->warmup, ctx.plan->repetitions,
      [&] { return LaunchGroup(c, op, buffers, elements); }, [&] { return c.AsyncError(); });
  if (!ctx.world->AllOk(times.ok())) {
    return times.ok() ? Status::Internal("failed on another rank") : times.status();
  }
  Status st = ctx.world->MaxOverRanks(&*times);
  if (!st.ok()) return st;
  CollectivePoint p;
  p.op = op.name;
  p.ranks = c.size();
  p.nodes = ctx.world->nodes();
  p.bytes = static_cast<double>(elements * sizeof(float));
  p.timing = Summarize(std::move(times).value());
  p.algbw_GBps = p.bytes / p.timing.median_s / 1e9;
  p.busbw_GBps = p.algbw_GBps * BusBandwidthFactor(p.op, p.ranks);
  return p;
}

Expected<std::unique_ptr<Communicator>> Connect(const PhaseContext& ctx, int ranks) {
  if (ctx.world->multi_process()) return ConnectAcrossProcesses(*ctx.world, ctx.device);
  return ConnectLocal(ranks);
}

struct Progress {
  int done = 0;
  int total = 0;
};

// The communicator of one rank count, connected again after an NCCL error.
struct Session {
  int ranks = 0;
  std::unique_ptr<Communicator> comm;  // nullptr once it could not reconnect
};

// After a failed run (the old communicator is gone): connect a fresh one.
Status Reconnect(const PhaseContext& ctx, Session* session) {
  Expected<std::unique_ptr<Communicator>> fresh = Connect(ctx, session->ranks);
  if (fresh.ok()) {
    session->comm = std::move(fresh).value();
    return Status::Ok();
  }
  const std::string what = "nccl " + std::to_string(session->ranks) + " ranks: reconnecting";
  return RecordFailure(ctx.out, what, fresh.status());
}

// One size: a point, or a failure. False when the sizes after it should be
// skipped (out of memory, or no communicator any more).
Expected<bool> MeasureSize(const PhaseContext& ctx, Session* session, const NamedOp& op,
                           double bytes) {
  Communicator& c = *session->comm;
  const size_t elements = TotalElements(op.op, bytes, c.size());
  const std::string what = "nccl " + std::string(op.name) + " " + std::to_string(c.size()) +
                           " ranks " + FormatBytes(bytes);
  Expected<std::vector<RankBuffers>> buffers = AllocateBuffers(c, op.op, elements);
  if (!ctx.world->AllOk(buffers.ok())) {
    Status why =
        buffers.ok() ? Status::Internal("another rank could not allocate") : buffers.status();
    Status st = RecordFailure(ctx.out, what, why);
    return st.ok() ? Expected<bool>(false) : Expected<bool>(st);
  }
  Expected<CollectivePoint> p = TimeCollective(ctx, c, op, *buffers, elements);
  if (p.ok()) {
    ctx.out->collectives.push_back(*p);
    return true;
  }
  session->comm->MarkBroken();
  session->comm.reset();                 // aborts what NCCL still runs, then
  buffers = std::vector<RankBuffers>();  // frees the buffers
  Status st = RecordFailure(ctx.out, what, p.status());
  if (st.ok()) st = Reconnect(ctx, session);
  if (!st.ok()) return st;
  return session->comm != nullptr;
}

std::string ItemText(const NamedOp& op, int ranks, double bytes) {
  return std::string(op.name) + " " + std::to_string(ranks) + " ranks " + FormatBytes(bytes);
}

bool Applies(const NamedOp& op, int ranks) { return op.op != Op::kSendRecv || ranks > 1; }

Status MeasureOp(const PhaseContext& ctx, Session* session, const NamedOp& op, Progress* progress) {
  const std::vector<double>& sizes = ctx.plan->collective_bytes;
  for (size_t i = 0; i < sizes.size(); ++i) {
    ctx.Report("collectives", progress->done++, progress->total,
               ItemText(op, session->ranks, sizes[i]));
    Expected<bool> go_on = MeasureSize(ctx, session, op, sizes[i]);
    if (!go_on.ok()) return go_on.status();
    if (!*go_on) {
      progress->done += static_cast<int>(sizes.size() - i - 1);
      break;
    }
  }
  return Status::Ok();
}

int ItemsOnRanks(const std::vector<const NamedOp*>& ops, int ranks, size_t sizes) {
  int items = 0;
  for (const NamedOp* op : ops) items += Applies(*op, ranks) ? static_cast<int>(sizes) : 0;
  return items;
}

Status MeasureOnRanks(const PhaseContext& ctx, const std::vector<const NamedOp*>& ops, int ranks,
                      Progress* progress) {
  const int items = ItemsOnRanks(ops, ranks, ctx.plan->collective_bytes.size());
  const std::string what = "nccl " + std::to_string(ranks) + " ranks";
  if (!ctx.world->multi_process() && (ranks < 1 || ranks > ctx.device_count)) {
    progress->done += items;
    const std::string why = std::to_string(ctx.device_count) + " CUDA devices are visible";
    return RecordFailure(ctx.out, what, Status::InvalidInput(why));
  }
  Expected<std::unique_ptr<Communicator>> comm = Connect(ctx, ranks);
  if (!comm.ok()) {
    progress->done += items;
    return RecordFailure(ctx.out, what, comm.status());
  }
  Session session{ranks, std::move(comm).value()};
  for (const NamedOp* op : ops) {
    if (!Applies(*op, ranks)) continue;
    if (session.comm == nullptr) break;
    Status st = MeasureOp(ctx, &session, *op, progress);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

// Planned operations NCCL measures; unknown names become failures.
std::vector<const NamedOp*> PlannedOps(const PhaseContext& ctx) {
  std::vector<const NamedOp*> ops;
  for (const std::string& name : ctx.plan->collective_ops) {
    const NamedOp* op = FindOp(name);
    if (op != nullptr) {
      ops.push_back(op);
    } else {
      ctx.out->failures.push_back({"nccl " + name, "unknown collective operation"});
    }
  }
  return ops;
}

// Every process's communicator sizes: the world under MPI, else the
// planned counts (1 .. visible devices when none are planned).
std::vector<int> RankCounts(const PhaseContext& ctx) {
  if (ctx.world->multi_process()) return {ctx.world->size()};
  if (!ctx.plan->collective_ranks.empty()) return ctx.plan->collective_ranks;
  std::vector<int> counts;
  for (int r = 1; r <= ctx.device_count; ++r) counts.push_back(r);
  return counts;
}

}  // namespace

std::string CollectivesVersion() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return "NCCL (version unknown)";
  // 2.9 and later: major * 10000 + minor * 100 + patch.
  return "NCCL " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) +
         "." + std::to_string(version % 100);
}

Status MeasureCollectives(const PhaseContext& ctx) {
  const std::vector<const NamedOp*> ops = PlannedOps(ctx);
  if (ops.empty() || ctx.plan->collective_bytes.empty()) return Status::Ok();
  const std::vector<int> counts = RankCounts(ctx);
  Progress progress;
  for (int ranks : counts) {
    progress.total += ItemsOnRanks(ops, ranks, ctx.plan->collective_bytes.size());
  }
  for (int ranks : counts) {
    Status st = MeasureOnRanks(ctx, ops, ranks, &progress);
    if (!st.ok()) return st;
  }
  return CudaCheck(cudaSetDevice(ctx.device), "cudaSetDevice");
}

}  // namespace trainsim::calibrate::cuda

#endif  // TRAINSIM_HAVE_NCCL
