#include "sim/engine.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <simgrid/s4u.hpp>

#include "sim/isolate.h"
#include "sim/stage_model.h"

namespace sg4 = simgrid::s4u;

namespace trainsim::sim {
namespace {

int kPayload = 0;

// Work of an execution that only cancel() ends (Occupying).
constexpr double kNeverDone = 1e30;

// The layout's ranks, rank = (stage x dp + d) x tp + t with d a DP slot (dp = dp x cp,
// Scenario::replicas), and its groups: ShapeOf's (sim/stage_model.h), a group of `members`
// GPUs `stride` ranks apart within a stage (stride a multiple of tp: slots on one TP rank).
struct Layout {
  Layout() = default;
  Layout(const Scenario& s, int measured_slots)
      : tp(s.parallel.tp),
        dp(s.replicas()),
        pp(s.parallel.pp),
        cp(s.parallel.cp),
        measured(measured_slots) {
    for (int k = 0; k < kGroupKinds; ++k) shapes[k] = ShapeOf(s, static_cast<GroupKind>(k));
  }

  int tp = 1, dp = 1, pp = 1;
  int cp = 1;  // the pieces a CP ring is pipelined in
  // DP slots whose collectives kReduced measures: all, or the fold's (sim/fold.h).
  int measured = 1;
  std::array<GroupShape, kGroupKinds> shapes;

  // A group's members and the ranks between them (`kind` not kTp).
  int Members(GroupKind kind) const { return shapes[static_cast<size_t>(kind)].members; }
  int Stride(GroupKind kind) const { return shapes[static_cast<size_t>(kind)].stride; }
  // The GPU ranks of the group of `kind` that GPU (slot d, TP rank t) of `stage` is in, in
  // member order.
  std::vector<int> Ranks(GroupKind kind, int stage, int d, int t) const {
    const int members = Members(kind), stride = Stride(kind), span = members * stride;
    const int r = d * tp + t, first = r - r % span + r % stride;
    std::vector<int> g;
    for (int k = 0; k < members; ++k) g.push_back(Rank(stage, 0, 0) + first + k * stride);
    return g;
  }
  // That GPU's place in the group (its member index in the collective).
  int Member(GroupKind kind, int d, int t) const {
    return ((d * tp + t) / Stride(kind)) % Members(kind);
  }
  // One GPU (slot, TP rank) of every group of `kind` among the measured slots: its member 0.
  std::vector<std::pair<int, int>> Leads(GroupKind kind) const {
    std::vector<std::pair<int, int>> leads;
    for (int r = 0; r < measured * tp; ++r) {
      if ((r / Stride(kind)) % Members(kind) == 0) leads.push_back({r / tp, r % tp});
    }
    return leads;
  }
  int Rank(int stage, int d, int t) const { return (stage * dp + d) * tp + t; }
  // The stage a message in `dir` goes to (0 forward, 1 backward); it wraps
  // around for the interleaved schedule's chunk-to-chunk messages.
  int NextStage(int stage, int dir) const { return (stage + (dir == 0 ? 1 : pp - 1)) % pp; }
  std::vector<int> TpGroup(int stage, int d) const {
    std::vector<int> g;
    for (int t = 0; t < tp; ++t) g.push_back(Rank(stage, d, t));
    return g;
  }
};

// The group of an expert- or context-parallel collective.
GroupKind GroupOf(OpKind kind) { return kind == OpKind::kEpColl ? GroupKind::kEp : GroupKind::kCp; }

// The algorithm a scenario fixes for a DP collective (kAuto: chosen later).
CollAlgo FixedDpAlgo(const Scenario& s, CollKind kind) {
  if (kind != CollKind::kAllReduce) return CollAlgo::kRing;
  switch (s.parallel.dp_algorithm) {
    case DpAlgorithm::kParameterServer:
      return CollAlgo::kParameterServer;
    case DpAlgorithm::kTree:
      return CollAlgo::kTree;
    case DpAlgorithm::kHierarchical:
      return CollAlgo::kHierarchical;
    case DpAlgorithm::kRing:
    case DpAlgorithm::kAuto:
      return CollAlgo::kRing;
  }
  return CollAlgo::kRing;
}

// What a cached duration is of.
enum class Channel { kTp, kEp, kCp, kDp, kPipe, kToHost, kFromHost };

Channel HostChannel(int stream) {
  return stream == kToHostStream ? Channel::kToHost : Channel::kFromHost;
}

// A distinct collective, message or copy of one stage (all its concurrent groups).
struct CollKey {
  int stage = 0;
  Channel channel = Channel::kTp;
  int kind = 0;  // the CollKind; kPipe: the message's direction
  double bytes = 0;
  GroupKind group = GroupKind::kDp;  // kDp
  auto operator<=>(const CollKey&) const = default;
};

// Durations of collectives simulated once, for kReduced.
class CollectiveCache {
 public:
  using Key = CollKey;
  double Get(const Key& k) const { return table_.at(k); }
  bool Has(const Key& k) const { return table_.count(k) > 0; }
  void Put(const Key& k, double v) { table_[k] = v; }
  int size() const { return static_cast<int>(table_.size()); }
  // The algorithm of a DP collective (both modes).
  CollAlgo Algo(const Key& k) const { return algo_.at(k); }
  bool HasAlgo(const Key& k) const { return algo_.count(k) > 0; }
  void PutAlgo(const Key& k, CollAlgo a) { algo_[k] = a; }

  // Horovod: all-reduces of any fused size, from a grid of measured sizes per
  // stage (seconds linear between neighbours; the algorithm of the next
  // larger point).
  struct GridPoint {
    double bytes = 0, seconds = 0;
    CollAlgo algo = CollAlgo::kRing;
  };
  std::vector<GridPoint>& Grid(int stage) { return grid_[stage]; }
  GridPoint Fused(int stage, double bytes) const {
    const std::vector<GridPoint>& g = grid_.at(stage);
    auto hi = std::lower_bound(g.begin(), g.end(), bytes,
                               [](const GridPoint& p, double b) { return p.bytes < b; });
    if (hi == g.end()) --hi;
    if (hi == g.begin() || hi->bytes == bytes) return {bytes, hi->seconds, hi->algo};
    auto lo = hi - 1;
    const double f = (bytes - lo->bytes) / (hi->bytes - lo->bytes);
    return {bytes, lo->seconds + f * (hi->seconds - lo->seconds), hi->algo};
  }

 private:
  std::map<int, std::vector<GridPoint>> grid_;
  std::map<Key, double> table_;
  std::map<Key, CollAlgo> algo_;
};

// "stage 3 of 8: what" as progress unit `done` (ProgressUnits).
void ReportStage(const Layout& L, int stage, int done, const std::string& what) {
  ReportProgress(
      {done, ProgressUnits(L.pp),
       "stage " + std::to_string(stage + 1) + " of " + std::to_string(L.pp) + ": " + what});
}

// Parameter servers: the hosts of the first `parameter_servers` nodes.
std::vector<int> Servers(const Scenario& s, const Platform& platform) {
  std::vector<int> servers;
  if (s.parallel.dp_algorithm != DpAlgorithm::kParameterServer) return servers;
  for (int n = 0; n < s.parallel.parameter_servers; ++n)
    servers.push_back(platform.cpu_endpoint(n));
  return servers;
}

// The DP collective `c` of the group that DP rank d of TP rank t of `stage` is in.
CollectiveCall DpCollectiveCall(const Scenario& s, const Platform& platform, const Layout& L,
                                const AsyncItem& c, CollAlgo algo, int stage, int t, int d) {
  // Named the same by every member: by the group's first GPU (an expert-data group with
  // expert_tp 1 has members on several TP ranks).
  const std::vector<int> real = L.Ranks(c.group, stage, d, t);
  std::string name = "dp" + std::to_string(stage) + "_";
  if (c.group == GroupKind::kDp) {
    name += std::to_string(t);
  } else {
    name += (c.group == GroupKind::kShard        ? "s"
             : c.group == GroupKind::kExpertData ? "e"
                                                 : "r") +
            std::to_string(real[0]);
  }
  CollectiveCall call{c.kind, algo, c.bytes, {}, name};
  for (int r : real) {
    if (r < L.Rank(stage, L.measured, 0)) call.group.push_back(r);  // its DP rank < measured
  }
  if (call.group.size() < real.size()) {  // folded: the real group's size
    call.members = static_cast<int>(real.size());
    std::set<int> nodes;
    for (int r : real) nodes.insert(platform.node_of(r));
    call.nodes = static_cast<int>(nodes.size());
  }
  if (algo == CollAlgo::kParameterServer) call.servers = Servers(s, platform);
  return call;
}

// Horovod: the sizes a fused all-reduce of `stage` can have run from its
// smallest gradient item to the larger of the fusion threshold and its
// largest item: measured at every item size and at the powers of two between.
void BuildFusionGrid(const Scenario& s, const StepProgram& prog, const Platform& platform,
                     const ModelParams& params, const Layout& L, bool timed,
                     CollectiveCache& cache) {
  for (int stage = 0; stage < L.pp; ++stage) {
    ReportStage(L, stage, 1 + stage, "data-parallel all-reduces (fusion grid)");
    const std::vector<AsyncItem>& items = prog.stages[stage].async[kDpStream];
    if (items.empty()) continue;
    std::set<double> sizes;
    double lo = items[0].bytes, hi = s.parallel.bucket_bytes;
    for (const AsyncItem& c : items) {
      sizes.insert(c.bytes);
      lo = std::min(lo, c.bytes);
      hi = std::max(hi, c.bytes);
    }
    sizes.insert(hi);
    for (double b = std::exp2(std::ceil(std::log2(lo))); b < hi; b *= 2) sizes.insert(b);
    for (double bytes : sizes) {
      AsyncItem item{CollKind::kAllReduce, bytes, ""};
      std::vector<CollectiveCall> calls;
      for (int t = 0; t < L.tp; ++t) {
        calls.push_back(
            DpCollectiveCall(s, platform, L, item, FixedDpAlgo(s, item.kind), stage, t, 0));
      }
      CollectiveCache::GridPoint point{bytes, 0, calls[0].algo};
      if (s.parallel.dp_algorithm == DpAlgorithm::kAuto) {
        point.seconds = MeasureFastest(platform, params, calls, &point.algo);
      } else if (timed) {
        point.seconds = MeasureConcurrent(platform, params, calls);
      }
      cache.Grid(stage).push_back(point);
    }
  }
}

// Fixes the algorithm of every DP collective: the scenario's, or with
// dp_algorithm "auto" the fastest for its stage, kind and size (all the
// stage's DP groups at once). Records the duration too when `timed` (kReduced).
void ChooseDpAlgorithms(const Scenario& s, const StepProgram& prog, const Platform& platform,
                        const ModelParams& params, const Layout& L, bool timed,
                        CollectiveCache& cache) {
  for (int stage = 0; stage < L.pp; ++stage) {
    ReportStage(L, stage, 1 + stage, "data-parallel collectives");
    for (const AsyncItem& c : prog.stages[stage].async[kDpStream]) {
      const CollKey key{stage, Channel::kDp, static_cast<int>(c.kind), c.bytes, c.group};
      if (cache.HasAlgo(key)) continue;
      std::vector<CollectiveCall> calls;  // every group of the kind at once
      for (const auto& [d, t] : L.Leads(c.group)) {
        calls.push_back(DpCollectiveCall(s, platform, L, c, FixedDpAlgo(s, c.kind), stage, t, d));
      }
      CollAlgo algo = calls[0].algo;
      const bool choose = s.parallel.dp_algorithm == DpAlgorithm::kAuto;
      if (choose || timed) {
        // Within the part: which collective, as one can take seconds.
        char what[96];
        std::snprintf(what, sizeof what, "data-parallel %s of %.0f MiB", ToString(c.kind),
                      c.bytes / (1 << 20));
        ReportStage(L, stage, 1 + stage, what);
        const double seconds = choose ? MeasureFastest(platform, params, calls, &algo)
                                      : MeasureConcurrent(platform, params, calls);
        if (timed) cache.Put(key, seconds);
      }
      cache.PutAlgo(key, algo);
    }
  }
}

// The cache key of an expert- or context-parallel collective of `stage`.
CollKey SlotKey(int stage, const Op& op) {
  return {stage, op.kind == OpKind::kEpColl ? Channel::kEp : Channel::kCp,
          static_cast<int>(op.coll), op.bytes};
}

// kReduced: simulates every distinct TP collective, pipeline message and
// host copy once (all concurrent groups of the stage together), before the
// step. DP collectives are done by ChooseDpAlgorithms.
void FillCache(const StepProgram& prog, const Platform& platform, const ModelParams& params,
               const Layout& L, CollectiveCache& cache) {
  for (int stage = 0; stage < L.pp; ++stage) {
    ReportStage(L, stage, 1 + L.pp + stage, "tensor-parallel, pipeline and host collectives");
    const StageProgram& sp = prog.stages[stage];
    for (const Op& op : sp.ops) {
      if (op.kind == OpKind::kTpColl) {
        const CollKey key{stage, Channel::kTp, static_cast<int>(op.coll), op.bytes};
        if (cache.Has(key)) continue;
        std::vector<CollectiveCall> calls;
        for (int d = 0; d < L.measured; ++d) {
          const std::vector<int> group = L.TpGroup(stage, d);
          calls.push_back({op.coll, TpAlgo(platform, op.coll, group), op.bytes, group,
                           "tp" + std::to_string(d)});
        }
        cache.Put(key, MeasureConcurrent(platform, params, calls));
      } else if (op.kind == OpKind::kEpColl || op.kind == OpKind::kCpColl) {
        // Every EP (CP) group of every TP rank at once.
        const CollKey key = SlotKey(stage, op);
        if (cache.Has(key)) continue;
        std::vector<CollectiveCall> calls;
        for (const auto& [d, t] : L.Leads(GroupOf(op.kind))) {
          calls.push_back({op.coll, CollAlgo::kRing, op.bytes,
                           L.Ranks(GroupOf(op.kind), stage, d, t),
                           "slots" + std::to_string(d) + "_" + std::to_string(t)});
        }
        cache.Put(key, MeasureConcurrent(platform, params, calls));
      } else if (op.kind == OpKind::kSend) {
        const CollKey key{stage, Channel::kPipe, op.dir, op.bytes};
        if (cache.Has(key)) continue;
        const int peer = L.NextStage(stage, op.dir);
        std::vector<CollectiveCall> calls;
        for (int d = 0; d < L.measured; ++d) {
          for (int t = 0; t < L.tp; ++t) {
            calls.push_back({CollKind::kSendRecv,
                             CollAlgo::kRing,
                             op.bytes,
                             {L.Rank(stage, d, t), L.Rank(peer, d, t)},
                             "pp" + std::to_string(d) + "_" + std::to_string(t)});
          }
        }
        cache.Put(key, MeasureConcurrent(platform, params, calls));
      }
    }
    // Every GPU of the stage copies to or from its node's host at once.
    for (int stream : {kToHostStream, kFromHostStream}) {
      for (const AsyncItem& item : sp.async[stream]) {
        const CollKey key{stage, HostChannel(stream), 0, item.bytes};
        if (cache.Has(key)) continue;
        std::vector<CollectiveCall> calls;
        for (int d = 0; d < L.measured; ++d) {
          for (int t = 0; t < L.tp; ++t) {
            const int gpu = L.Rank(stage, d, t),
                      host = platform.cpu_endpoint(platform.node_of(gpu));
            std::vector<int> ends =
                stream == kToHostStream ? std::vector<int>{gpu, host} : std::vector<int>{host, gpu};
            calls.push_back({CollKind::kSendRecv, CollAlgo::kRing, item.bytes, ends,
                             "copy" + std::to_string(d) + "_" + std::to_string(t)});
          }
        }
        cache.Put(key, MeasureConcurrent(platform, params, calls));
      }
    }
  }
}

// One simulated GPU: its place in the layout and the signals between its streams.
struct Gpu {
  int rank = 0, stage = 0, d = 0, t = 0;
  sg4::SemaphorePtr send_ready[2];          // compute -> send actor
  sg4::SemaphorePtr arrived[2];             // kReduced: neighbour's send done (dir of the message)
  sg4::SemaphorePtr launch[kAsyncStreams];  // compute -> async stream actor
  sg4::SemaphorePtr done[kAsyncStreams];    // async stream actor -> compute
  sg4::SemaphorePtr input_ready;            // data loader -> compute (first stage)
  Breakdown spent;
  double finish_s = 0;
  double slowdown = 1.0;  // straggler factor on its compute
  // Horovod: gradient items handed over so far; the DP group's leader is
  // woken by every hand-over and tells the members what each cycle fuses.
  int dp_ready = 0;
  sg4::SemaphorePtr fusion_wake, decision_ready;
};

class StepRun {
 public:
  StepRun(const Scenario& s, const StepProgram& prog, const Platform& platform,
          const ModelParams& params, SimMode mode, bool trace, int fold_replicas)
      : s_(s), prog_(prog), platform_(platform), params_(params), mode_(mode), trace_(trace) {
    const bool folded = mode == SimMode::kReduced && fold_replicas > 0;
    L_ = Layout(s, folded ? fold_replicas : s.replicas());
  }

  StepResult Run() {
    StepResult result;
    if (Horovod()) {
      BuildFusionGrid(s_, prog_, platform_, params_, L_, mode_ == SimMode::kReduced, cache_);
    } else {
      ChooseDpAlgorithms(s_, prog_, platform_, params_, L_, mode_ == SimMode::kReduced, cache_);
    }
    if (mode_ == SimMode::kReduced) FillCache(prog_, platform_, params_, L_, cache_);
    result.distinct_collectives = cache_.size();
    ReportProgress({ProgressUnits(L_.pp) - 1, ProgressUnits(L_.pp),
                    mode_ == SimMode::kFull ? "the step, every GPU" : "the step"});
    CreateGpus();
    start_ = sg4::Engine::get_clock();
    for (auto& [rank, gpu] : gpus_) StartActors(gpu);
    sg4::Engine::get_instance()->run();
    const Gpu* critical = nullptr;
    for (auto& [rank, gpu] : gpus_) {
      if (!critical || gpu.finish_s > critical->finish_s + 1e-15) critical = &gpu;
    }
    result.step_time_s = critical->finish_s;
    result.breakdown = critical->spent;
    result.critical_stage = critical->stage;
    result.simulated_gpus = static_cast<int>(gpus_.size());
    result.trace = std::move(events_);
    return result;
  }

 private:
  void CreateGpus() {
    for (int stage = 0; stage < L_.pp; ++stage) {
      const int dps = mode_ == SimMode::kFull ? L_.dp : 1,
                tps = mode_ == SimMode::kFull ? L_.tp : 1;
      for (int d = 0; d < dps; ++d) {
        for (int t = 0; t < tps; ++t) {
          Gpu g;
          g.rank = L_.Rank(stage, d, t);
          g.stage = stage;
          g.d = d;
          g.t = t;
          for (int dir = 0; dir < 2; ++dir) {
            g.send_ready[dir] = sg4::Semaphore::create(0);
            g.arrived[dir] = sg4::Semaphore::create(0);
          }
          for (int k = 0; k < kAsyncStreams; ++k) {
            g.launch[k] = sg4::Semaphore::create(0);
            g.done[k] = sg4::Semaphore::create(0);
          }
          g.input_ready = sg4::Semaphore::create(0);
          g.fusion_wake = sg4::Semaphore::create(0);
          g.decision_ready = sg4::Semaphore::create(0);
          g.slowdown = mode_ == SimMode::kFull ? s_.Slowdown(g.rank) : StageSlowdown(stage);
          gpus_.emplace(g.rank, std::move(g));
        }
      }
    }
  }

  void StartActors(Gpu& g) {
    sg4::Host* host = platform_.gpus[g.rank];
    const std::string id = std::to_string(g.rank);
    sg4::Actor::create("compute" + id, host, [this, &g]() { ComputeStream(g); });
    for (int dir = 0; dir < 2; ++dir) {
      sg4::Actor::create("send" + std::to_string(dir) + "-" + id, host,
                         [this, &g, dir]() { SendStream(g, dir); });
    }
    for (int k = 0; k < kAsyncStreams; ++k) {
      if (prog_.stages[g.stage].async[k].empty()) continue;
      sg4::Actor::create("async" + std::to_string(k) + "-" + id, host, [this, &g, k]() {
        if (k == kDpStream && Horovod()) return HorovodStream(g);
        AsyncStreamRun(g, k);
      });
    }
    if (g.stage == 0 && s_.training.input_samples_per_s_per_node > 0) {
      sg4::Actor::create("loader" + id, host, [this, &g]() { DataLoader(g); });
    }
  }

  int Chunks() const {
    return s_.parallel.schedule == Schedule::kInterleaved ? s_.parallel.virtual_stages : 1;
  }

  // kReduced: the stage's GPUs run in lockstep (TP collectives every layer,
  // DP at the end of the step), so the slowest of them paces the stage.
  double StageSlowdown(int stage) const {
    double factor = 1.0;
    for (int d = 0; d < L_.dp; ++d) {
      for (int t = 0; t < L_.tp; ++t) factor = std::max(factor, s_.Slowdown(L_.Rank(stage, d, t)));
    }
    return factor;
  }

  // Trace tracks: kernels, TP collectives (which block the kernels) and the
  // compute stream's waits each get their own, so bubbles show as such.
  static int TrackOf(const Op& op) {
    switch (op.kind) {
      case OpKind::kTpColl:
        return kTrackTp;
      case OpKind::kEpColl:
        return kTrackEp;
      case OpKind::kCpColl:
        return kTrackFirstStrategy + StrategyIndex(kContextParallel);
      case OpKind::kRecv:
      case OpKind::kWait:
      case OpKind::kInputWait:
        return kTrackWait;
      default:
        return kTrackCompute;
    }
  }
  static std::string TraceName(const Op& op) {
    if (op.kind == OpKind::kRecv) return "waiting for " + op.label.substr(5);  // "recv x"
    if (op.kind == OpKind::kWait) {
      if (op.stream != kDpStream) return "waiting for host memory copies";
      return op.coll == CollKind::kAllGather ? "waiting for weight gather"
                                             : "waiting for gradient reduction";
    }
    if (op.kind == OpKind::kInputWait) return "waiting for input data";
    return op.label;
  }

  static sg4::Mailbox* PipeBox(int dir, int rank) {
    return sg4::Mailbox::by_name("pp" + std::to_string(dir) + "/" + std::to_string(rank));
  }

  double Now() const { return sg4::Engine::get_clock() - start_; }

  void Record(const Gpu& g, int stream, const std::string& name, double start) {
    if (trace_) events_.push_back(TraceEvent{g.rank, stream, name, start, Now()});
  }

  int Neighbour(const Gpu& g, int dir) const {
    return L_.Rank(L_.NextStage(g.stage, dir), g.d, g.t);
  }

  // Compute work of `seconds` at the GPU's full rate. While a DP collective of
  // the same GPU is in flight (Occupying), the work runs at 1 -
  // comm_compute_share of that rate: both are executions on the GPU's host,
  // shared max-min fairly with the collective's bounded at the share
  // (docs/model.md section 2, "Communication takes compute").
  void Work(double seconds) {
    if (params_.comm_compute_share <= 0) return sg4::this_actor::sleep_for(seconds);
    sg4::this_actor::execute(seconds * sg4::this_actor::get_host()->get_speed());
  }

  // Runs `collective` (a DP-stream collective of this GPU) while it occupies
  // comm_compute_share of the GPU's compute rate.
  template <class Collective>
  void Occupying(Collective&& collective) {
    const double share = params_.comm_compute_share;
    if (share <= 0) return collective();
    sg4::Host* host = sg4::this_actor::get_host();
    sg4::ExecPtr kernels = sg4::this_actor::exec_init(kNeverDone);
    kernels->set_bound(share * host->get_speed())->start();
    collective();
    kernels->cancel();
  }

  void ComputeStream(Gpu& g) {
    const StageProgram& prog = prog_.stages[g.stage];
    int waited[kAsyncStreams] = {};
    if (mode_ == SimMode::kFull) {
      // Pipeline messages start as soon as they are sent (eager, like
      // pre-posted receives), not when this stream reaches the receive.
      for (int dir = 0; dir < 2; ++dir) PipeBox(dir, g.rank)->set_receiver(sg4::Actor::self());
    }
    for (const Op& op : prog.ops) {
      const double t0 = Now();
      switch (op.kind) {
        case OpKind::kCompute:
          Work(op.seconds * g.slowdown);
          Account(g, op, Now() - t0);
          break;
        case OpKind::kEpColl:
          SlotCollective(g, op);
          g.spent.ep_comm_s += Now() - t0;
          break;
        case OpKind::kCpColl: {  // the exchange, then what of the core it did not hide
          SlotCollective(g, op);
          const double core = op.seconds * g.slowdown, comm = Now() - t0;
          sg4::this_actor::sleep_for(
              PipelinedSeconds(core, comm, L_.cp, params_.comm_compute_share) - comm);
          Account(g, op, core);
          g.spent.strategy_comm_s[StrategyIndex(kContextParallel)] += Now() - t0 - core;
          break;
        }
        case OpKind::kTpColl: {
          TpCollective(g, op);
          if (op.seconds > 0) {  // pipelined with a GEMM (parallel.tp_overlap)
            const double gemm = op.seconds * g.slowdown, comm = Now() - t0;
            sg4::this_actor::sleep_for(
                PipelinedSeconds(gemm, comm, L_.tp, params_.comm_compute_share) - comm);
            Account(g, op, gemm);
            g.spent.tp_comm_s += Now() - t0 - gemm;
          } else {
            g.spent.tp_comm_s += Now() - t0;
          }
          break;
        }
        case OpKind::kSend:
          g.send_ready[op.dir]->release();
          break;
        case OpKind::kRecv:
          Receive(g, op);
          g.spent.pp_comm_exposed_s += Now() - t0;  // split into bubble below
          break;
        case OpKind::kLaunch:
          if (op.stream == kDpStream && Horovod()) {  // Horovod's loop polls, not launches
            ++g.dp_ready;
            Leader(g).fusion_wake->release();
          } else {
            g.launch[op.stream]->release();
          }
          break;
        case OpKind::kWait:
          for (int& w = waited[op.stream]; w < op.upto; ++w) g.done[op.stream]->acquire();
          AccountWait(g, op, Now() - t0);
          break;
        case OpKind::kInputWait:
          g.input_ready->acquire();
          g.spent.data_wait_s += Now() - t0;
          break;
      }
      if (Now() > t0) Record(g, TrackOf(op), TraceName(op), t0);
    }
    g.finish_s = Now();
    // Of the time spent waiting for neighbours, the schedule's ideal bubble is
    // (pp - 1) microbatches of this stage's compute, divided by the chunks of
    // the interleaved schedule; the rest is exposed pipeline communication.
    const double ideal = (L_.pp - 1) * prog.compute_per_microbatch_s / Chunks();
    g.spent.pipeline_bubble_s = std::min(ideal, g.spent.pp_comm_exposed_s);
    g.spent.pp_comm_exposed_s -= g.spent.pipeline_bubble_s;
  }

  static void AccountWait(Gpu& g, const Op& op, double dt) {
    if (op.stream != kDpStream) {
      g.spent.offload_exposed_s += dt;
    } else if (op.coll == CollKind::kAllGather) {
      g.spent.weight_gather_exposed_s += dt;
    } else {
      g.spent.dp_comm_exposed_s += dt;
    }
  }

  static void Account(Gpu& g, const Op& op, double dt) {
    if (op.phase == OpPhase::kRecompute) {
      g.spent.recompute_s += dt;
    } else if (op.phase == OpPhase::kOptimizer) {
      g.spent.optimizer_s += dt;
    } else {
      g.spent.compute_s += dt;
    }
  }

  void TpCollective(Gpu& g, const Op& op) {
    if (mode_ == SimMode::kReduced) {
      sg4::this_actor::sleep_for(
          cache_.Get({g.stage, Channel::kTp, static_cast<int>(op.coll), op.bytes}));
      return;
    }
    const std::vector<int> group = L_.TpGroup(g.stage, g.d);
    CollectiveCall call{op.coll, TpAlgo(platform_, op.coll, group), op.bytes, group,
                        "tp" + std::to_string(g.stage) + "_" + std::to_string(g.d)};
    RunCollectiveMember(platform_, params_, call, g.t);
  }

  // An expert- or context-parallel collective of this GPU's group (blocking).
  void SlotCollective(Gpu& g, const Op& op) {
    if (mode_ == SimMode::kReduced)
      return sg4::this_actor::sleep_for(cache_.Get(SlotKey(g.stage, op)));
    const std::vector<int> group = L_.Ranks(GroupOf(op.kind), g.stage, g.d, g.t);
    CollectiveCall call{op.coll, CollAlgo::kRing, op.bytes, group,
                        (op.kind == OpKind::kEpColl ? "ep" : "cp") + std::to_string(g.stage) + "_" +
                            std::to_string(group[0]) + ToString(op.coll)};
    RunCollectiveMember(platform_, params_, call, L_.Member(GroupOf(op.kind), g.d, g.t));
  }

  void Receive(Gpu& g, const Op& op) {
    // A message travelling in `dir` arrives from the neighbour on the other side.
    if (mode_ == SimMode::kReduced) {
      g.arrived[op.dir]->acquire();
      return;
    }
    PipeBox(op.dir, g.rank)->get<int>();
  }

  void SendStream(Gpu& g, int dir) {
    for (const Op& op : prog_.stages[g.stage].ops) {
      if (op.kind != OpKind::kSend || op.dir != dir) continue;
      g.send_ready[dir]->acquire();
      const double t0 = Now();
      const int peer = Neighbour(g, dir);
      if (mode_ == SimMode::kReduced) {
        sg4::this_actor::sleep_for(cache_.Get({g.stage, Channel::kPipe, dir, op.bytes}));
        gpus_.at(peer).arrived[dir]->release();
      } else {
        PipeBox(dir, peer)->put(&kPayload, op.bytes);
      }
      Record(g, dir == 0 ? kTrackSendForward : kTrackSendBackward, op.label, t0);
    }
  }

  // The node's input pipeline serves the replicas whose first stage is on the
  // node, at input_samples_per_s_per_node in all; it holds
  // input_prefetch_microbatches ready when the step starts, then delivers one
  // microbatch per interval.
  void DataLoader(Gpu& g) {
    const TrainingConfig& t = s_.training;
    const int node = platform_.node_of(g.rank);
    int first_stage_gpus_on_node = 0;
    for (int r = 0; r < L_.dp * L_.tp; ++r)
      first_stage_gpus_on_node += platform_.node_of(r) == node;
    const double replicas = std::max(1.0, static_cast<double>(first_stage_gpus_on_node) / L_.tp);
    const double interval = t.micro_batch * replicas / t.input_samples_per_s_per_node;
    const int m = static_cast<int>(s_.microbatches_per_pipeline());
    for (int k = 0; k < m; ++k) {
      if (k >= t.input_prefetch_microbatches) sg4::this_actor::sleep_for(interval);
      g.input_ready->release();
    }
  }

  bool Horovod() const { return s_.parallel.dp_fusion == DpFusion::kHorovod; }

  // The member of g's DP group that makes Horovod's fusion decisions.
  Gpu& Leader(Gpu& g) { return mode_ == SimMode::kFull ? gpus_.at(L_.Rank(g.stage, 0, g.t)) : g; }

  // Horovod's background loop (tensor fusion): at each cycle boundary, the
  // gradient items every member of the DP group has handed over are fused,
  // in order, into buffers of at most the fusion threshold (an item larger
  // than it alone) and all-reduced one after the other.
  void HorovodStream(Gpu& g) {
    const std::vector<AsyncItem>& items = prog_.stages[g.stage].async[kDpStream];
    const int n = static_cast<int>(items.size());
    Gpu& leader = Leader(g);
    std::vector<int>& decisions = fusion_decisions_[{g.stage, g.t}];
    const double cycle = s_.parallel.cycle_s;
    int next = 0;
    for (int round = 0; next < n; ++round) {
      if (&leader == &g) {
        auto ready = [&]() {
          int r = g.dp_ready;
          if (mode_ == SimMode::kFull) {
            for (int d = 0; d < L_.dp; ++d) {
              r = std::min(r, gpus_.at(L_.Rank(g.stage, d, g.t)).dp_ready);
            }
          }
          return r;
        };
        while (ready() <= next) g.fusion_wake->acquire();
        const double tick = std::ceil(Now() / cycle - 1e-9) * cycle;
        if (tick > Now()) sg4::this_actor::sleep_for(tick - Now());
        decisions.push_back(ready());
        if (mode_ == SimMode::kFull) {
          for (int d = 1; d < L_.dp; ++d)
            gpus_.at(L_.Rank(g.stage, d, g.t)).decision_ready->release();
        }
      } else {
        g.decision_ready->acquire();
      }
      const int end = decisions[round];
      while (next < end) {
        double bytes = items[next].bytes;
        int last = next + 1;
        while (last < end && bytes + items[last].bytes <= s_.parallel.bucket_bytes) {
          bytes += items[last++].bytes;
        }
        const double t0 = Now();
        const CollectiveCache::GridPoint fused = cache_.Fused(g.stage, bytes);
        Occupying([&]() {
          if (mode_ == SimMode::kReduced) {
            sg4::this_actor::sleep_for(fused.seconds);
          } else {
            AsyncItem item{CollKind::kAllReduce, bytes, ""};
            RunCollectiveMember(
                platform_, params_,
                DpCollectiveCall(s_, platform_, L_, item, fused.algo, g.stage, g.t, g.d), g.d);
          }
        });
        Record(g, kTrackDp, "dp fused all_reduce (" + std::string(ToString(fused.algo)) + ")", t0);
        for (; next < last; ++next) g.done[kDpStream]->release();
      }
    }
  }

  // Runs async stream `k`'s items in order, each once the compute stream
  // launches it: DP collectives, or copies to/from the node's host memory.
  void AsyncStreamRun(Gpu& g, int k) {
    for (const AsyncItem& c : prog_.stages[g.stage].async[k]) {
      g.launch[k]->acquire();
      if (k == kDpStream) {
        DpCollective(g, c);
      } else {
        HostCopy(g, k, c);
      }
      g.done[k]->release();
    }
  }

  void DpCollective(Gpu& g, const AsyncItem& c) {
    const double t0 = Now();
    const CollKey key{g.stage, Channel::kDp, static_cast<int>(c.kind), c.bytes, c.group};
    const CollAlgo algo = cache_.Algo(key);
    Occupying([&]() {
      if (mode_ == SimMode::kReduced) {
        sg4::this_actor::sleep_for(cache_.Get(key));
      } else {
        RunCollectiveMember(platform_, params_,
                            DpCollectiveCall(s_, platform_, L_, c, algo, g.stage, g.t, g.d),
                            L_.Member(c.group, g.d, g.t));
      }
    });
    const bool gather = c.kind == CollKind::kAllGather;
    Record(g, gather ? kTrackWeightGather : kTrackDp, c.label + " (" + ToString(algo) + ")", t0);
  }

  void HostCopy(Gpu& g, int k, const AsyncItem& c) {
    const double t0 = Now();
    if (mode_ == SimMode::kReduced) {
      sg4::this_actor::sleep_for(cache_.Get({g.stage, HostChannel(k), 0, c.bytes}));
    } else {
      sg4::Host* gpu = platform_.gpus[g.rank];
      sg4::Host* host = platform_.cpus[platform_.node_of(g.rank)];
      if (k == kToHostStream) {
        sg4::Comm::sendto(gpu, host, static_cast<uint64_t>(c.bytes));
      } else {
        sg4::Comm::sendto(host, gpu, static_cast<uint64_t>(c.bytes));
      }
    }
    Record(g, kTrackHostCopy, c.label, t0);
  }

  const Scenario& s_;
  const StepProgram& prog_;
  const Platform& platform_;
  const ModelParams& params_;
  SimMode mode_;
  bool trace_;
  Layout L_;
  CollectiveCache cache_;
  std::map<std::pair<int, int>, std::vector<int>> fusion_decisions_;  // (stage, t) -> rounds
  std::map<int, Gpu> gpus_;
  std::vector<TraceEvent> events_;
  double start_ = 0;
};

}  // namespace

StepResult RunStep(const Scenario& s, const StepProgram& program, const Platform& platform,
                   const ModelParams& params, SimMode mode, bool record_trace, int fold_replicas) {
  // Parameter-server workers are not symmetric: those beside a server finish
  // a bucket first and start the next while the server still answers the
  // others, which one simulated GPU per stage cannot show. Simulate them all.
  if (s.parallel.dp_algorithm == DpAlgorithm::kParameterServer) mode = SimMode::kFull;
  return StepRun(s, program, platform, params, mode, record_trace, fold_replicas).Run();
}

}  // namespace trainsim::sim
