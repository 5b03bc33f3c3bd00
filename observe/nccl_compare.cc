#include "observe/nccl_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/collective_run.h"

namespace trainsim::observe {

Expected<sim::CollKind> SimulatedKind(NcclOp op, const std::string& file) {
  switch (op) {
    case NcclOp::kAllReduce:
      return sim::CollKind::kAllReduce;
    case NcclOp::kAllGather:
      return sim::CollKind::kAllGather;
    case NcclOp::kReduceScatter:
      return sim::CollKind::kReduceScatter;
    case NcclOp::kAllToAll:
      return sim::CollKind::kAllToAll;
    default:
      return Status::InvalidInput(file + ": " + ToString(op) +
                                  "_perf is not simulated as nccl-tests runs it (all_reduce, "
                                  "all_gather, reduce_scatter and alltoall are)");
  }
}

namespace {

// The run's shape on `type`, or why it cannot be that type.
Status CheckShape(const NcclTestsRun& run, const InstanceType& type) {
  const std::string family = type.gpu.name.substr(0, type.gpu.name.find('-'));
  if (!run.gpu.empty() && run.gpu.find(family) == std::string::npos) {
    return Status::InvalidInput(run.file + ": measured on " + run.gpu + ", but " + type.name +
                                " has " + type.gpu.name + ": give the instance type it ran on");
  }
  if (run.nodes < 1 || run.ranks % run.nodes != 0) {
    return Status::InvalidInput(run.file + ": " + std::to_string(run.ranks) + " ranks on " +
                                std::to_string(run.nodes) +
                                " hosts, not the same number on each: not simulated");
  }
  if (run.ranks / run.nodes > type.gpus) {
    return Status::InvalidInput(run.file + ": " + std::to_string(run.ranks / run.nodes) +
                                " ranks per host, but " + type.name + " has " +
                                std::to_string(type.gpus) + " GPUs");
  }
  return Status::Ok();
}

}  // namespace

Expected<std::vector<ComparedRow>> CompareNccl(const NcclTestsRun& run, const InstanceType& type,
                                               const sim::ModelParams& params) {
  if (Status st = CheckShape(run, type); !st.ok()) return st;
  Expected<sim::CollKind> kind = SimulatedKind(*run.op, run.file);
  if (!kind.ok()) return kind.status();
  std::vector<ComparedRow> out;
  for (const NcclRow& r : run.rows) {
    sim::CollectiveRun c;
    c.type = type;
    c.nodes = run.nodes;
    c.per_node = run.ranks / run.nodes;
    c.kind = *kind;
    c.bytes = r.bytes;
    std::fflush(stdout);  // the simulation's child process inherits stdout
    Expected<double> seconds = sim::SimulateCollectiveSeconds(c, params);
    if (!seconds.ok()) return seconds.status();
    ComparedRow row;
    row.bytes = r.bytes;
    row.measured_busbw_GBps = r.busbw_GBps;
    row.simulated_busbw_GBps = r.bytes / *seconds * sim::BusFactor(*kind, run.ranks) / 1e9;
    if (r.busbw_GBps > 0) row.error = row.simulated_busbw_GBps / r.busbw_GBps - 1;
    out.push_back(row);
  }
  return out;
}

// The x in [a, b] where f is least, f unimodal there (golden-section search, `steps` steps).
template <typename F>
Expected<double> GoldenSection(double a, double b, int steps, F f) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a);
  Expected<double> fc = f(c), fd = f(d);
  for (int i = 0; i < steps; ++i) {
    if (!fc.ok()) return fc.status();
    if (!fd.ok()) return fd.status();
    if (*fc <= *fd) {
      b = d, d = c, fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return (a + b) / 2;
}

std::optional<double> MeanFitError(const std::vector<ComparedRow>& rows) {
  double sum = 0;
  int n = 0;
  for (const ComparedRow& r : rows) {
    if (r.bytes < kNetworkFitMinBytes || !r.error) continue;
    sum += std::fabs(*r.error);
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

Expected<NetworkFit> RefitNetwork(const std::vector<NcclTestsRun>& runs, const InstanceType& type,
                                  const sim::ModelParams& params) {
  std::vector<NcclTestsRun> fit;    // the multi-node runs, their bandwidth rows only
  std::vector<NcclTestsRun> small;  // ... and their latency rows (below 128 MiB, busbw > 0)
  std::string source;
  int nodes = 0, rows = 0, small_rows = 0;
  for (const NcclTestsRun& run : runs) {
    if (Status st = CheckShape(run, type); !st.ok()) return st;
    if (Expected<sim::CollKind> k = SimulatedKind(*run.op, run.file); !k.ok()) return k.status();
    if (run.nodes < 2) continue;
    NcclTestsRun part = run, latency = run;
    part.rows.clear();
    latency.rows.clear();
    for (const NcclRow& r : run.rows) {
      if (r.busbw_GBps <= 0) continue;
      (r.bytes >= kNetworkFitMinBytes ? part.rows : latency.rows).push_back(r);
    }
    if (!latency.rows.empty()) {
      small_rows += static_cast<int>(latency.rows.size());
      small.push_back(std::move(latency));
    }
    if (part.rows.empty()) continue;
    rows += static_cast<int>(part.rows.size());
    nodes = std::max(nodes, run.nodes);
    source += (source.empty() ? "" : "; ") + run.file + " (" + ToString(*run.op) + ", " +
              std::to_string(run.ranks) + " ranks on " + std::to_string(run.nodes) + " nodes, " +
              std::to_string(part.rows.size()) + " rows >= 128 MiB)";
    fit.push_back(std::move(part));
  }
  if (fit.empty()) {
    return Status::InvalidInput(
        "no run over 2 or more nodes with rows of 128 MiB or more: a network refit needs the "
        "bandwidth of a multi-node collective (one node measures NVLink, which "
        "trainsim-calibrate's profile carries)");
  }
  // The mean absolute busbw error over `runs` with the network at efficiency `e` and, when
  // given, NCCL's protocol latency scale `scale` across it.
  auto error = [&](const std::vector<NcclTestsRun>& runs_, int n, double e,
                   std::optional<double> scale) -> Expected<double> {
    InstanceType t = type;
    t.network_efficiency = e;
    t.protocol_latency_scale = scale;
    double sum = 0;
    for (const NcclTestsRun& run : runs_) {
      Expected<std::vector<ComparedRow>> c = CompareNccl(run, t, params);
      if (!c.ok()) return c.status();
      for (const ComparedRow& r : *c) sum += r.error ? std::fabs(*r.error) : 0;
    }
    return sum / n;
  };
  // The bandwidth rows set the efficiency (the error is unimodal in it: busbw rises with it), the
  // smaller rows NCCL's protocol latency scale across the network (searched in log space over
  // [0.05, 20]; the simulated time falls as the scale does). Each moves the other's rows a
  // little (the latency counts at 128 MiB too), so the two are fitted in turn, twice.
  NetworkFit n;
  n.instance = type.name;
  n.nodes = nodes;
  n.source = source;
  for (int round = 0; round < (small.empty() ? 1 : 2); ++round) {
    Expected<double> best = GoldenSection(0.05, 1.0, 16, [&](double e) {
      return error(fit, rows, e, n.latency_scale);
    });  // the bracket shrinks to 0.95 x 0.618^16 < 0.0005
    if (!best.ok()) return best.status();
    n.efficiency = std::round(*best * 1000) / 1000;
    if (small.empty()) break;
    Expected<double> log_scale = GoldenSection(std::log(0.05), std::log(20.0), 16, [&](double x) {
      return error(small, small_rows, n.efficiency, std::exp(x));
    });  // to 6.0 x 0.618^16 < 0.0035 in log space: 0.35%
    if (!log_scale.ok()) return log_scale.status();
    n.latency_scale = std::round(std::exp(*log_scale) * 1000) / 1000;
  }
  Expected<double> e = error(fit, rows, n.efficiency, n.latency_scale);
  if (!e.ok()) return e.status();
  n.mean_error = *e;
  if (n.latency_scale) {
    Expected<double> le = error(small, small_rows, n.efficiency, n.latency_scale);
    if (!le.ok()) return le.status();
    n.latency_mean_error = *le;
    n.source += "; latency: " + std::to_string(small_rows) + " rows below 128 MiB";
  }
  return n;
}

Expected<HardwareProfile> ProfileWithNetwork(const HardwareProfile* base,
                                             const std::string& base_path,
                                             const std::vector<NcclTestsRun>& runs,
                                             const InstanceType& type, const NetworkFit& fit) {
  HardwareProfile profile;
  if (base) {
    if (!base->gpu.empty() && base->gpu != type.gpu.name) {
      return Status::InvalidInput(base_path + ": measured " + base->gpu + ", but " + type.name +
                                  " has " + type.gpu.name);
    }
    profile = *base;
  } else {
    profile.provenance.tool = "trainsim observe";
    profile.provenance.backend = "nccl-tests";
    profile.provenance.device = runs.front().gpu;
    profile.provenance.devices = runs.front().ranks / runs.front().nodes;
    profile.provenance.nodes = fit.nodes;
    profile.provenance.collectives = "nccl-tests";
    profile.not_measured = {"gemm", "memory", "host links", "collectives inside a node"};
  }
  profile.gpu = type.gpu.name;
  profile.network = fit;
  return profile;
}

}  // namespace trainsim::observe
