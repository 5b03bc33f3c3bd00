#include "observe/nccl_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/collective_run.h"

namespace trainsim::observe {
namespace {

Expected<sim::CollKind> KindOf(NcclOp op, const std::string& file) {
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
  Expected<sim::CollKind> kind = KindOf(*run.op, run.file);
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
  std::vector<NcclTestsRun> fit;  // the multi-node runs, their bandwidth rows only
  std::string source;
  int nodes = 0, rows = 0;
  for (const NcclTestsRun& run : runs) {
    if (Status st = CheckShape(run, type); !st.ok()) return st;
    if (Expected<sim::CollKind> k = KindOf(*run.op, run.file); !k.ok()) return k.status();
    if (run.nodes < 2) continue;
    NcclTestsRun part = run;
    part.rows.clear();
    for (const NcclRow& r : run.rows) {
      if (r.bytes >= kNetworkFitMinBytes && r.busbw_GBps > 0) part.rows.push_back(r);
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
  auto error = [&](double e) -> Expected<double> {
    InstanceType t = type;
    t.network_efficiency = e;
    double sum = 0;
    for (const NcclTestsRun& run : fit) {
      Expected<std::vector<ComparedRow>> c = CompareNccl(run, t, params);
      if (!c.ok()) return c.status();
      for (const ComparedRow& r : *c) sum += r.error ? std::fabs(*r.error) : 0;
    }
    return sum / rows;
  };
  // Golden-section search: the error is unimodal in e (bus bandwidth rises with it).
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = 0.05, b = 1.0, c = b - g * (b - a), d = a + g * (b - a);
  Expected<double> fc = error(c), fd = error(d);
  for (int i = 0; i < 16; ++i) {  // the bracket shrinks to 0.95 x 0.618^16 < 0.0005
    if (!fc.ok()) return fc.status();
    if (!fd.ok()) return fd.status();
    if (*fc <= *fd) {
      b = d, d = c, fd = fc;
      c = b - g * (b - a);
      fc = error(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + g * (b - a);
      fd = error(d);
    }
  }
  const double best = std::round((a + b) / 2 * 1000) / 1000;
  Expected<double> e = error(best);
  if (!e.ok()) return e.status();
  NetworkFit n;
  n.instance = type.name;
  n.efficiency = best;
  n.nodes = nodes;
  n.mean_error = *e;
  n.source = source;
  return n;
}

}  // namespace trainsim::observe
