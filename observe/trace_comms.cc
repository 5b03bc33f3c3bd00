#include "observe/trace_comms.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "observe/nccl_compare.h"
#include "observe/run_log.h"
#include "sim/collective_run.h"

namespace trainsim::observe {
namespace {

int NodesOf(const CommSample& c, int gpus_per_node) {
  if (gpus_per_node <= 0) return 0;
  if (!c.group.empty()) {
    std::set<int> nodes;
    for (int r : c.group) nodes.insert(r / gpus_per_node);
    return static_cast<int>(nodes.size());
  }
  return (c.group_ranks + gpus_per_node - 1) / gpus_per_node;
}

// The nccl-tests test of a trace's collective (CommSample::op: trainsim's names).
std::optional<NcclOp> OpOf(std::string_view op) {
  const std::pair<const char*, NcclOp> kOps[] = {{"all_reduce", NcclOp::kAllReduce},
                                                 {"all_gather", NcclOp::kAllGather},
                                                 {"reduce_scatter", NcclOp::kReduceScatter},
                                                 {"all_to_all", NcclOp::kAllToAll},
                                                 {"send_recv", NcclOp::kSendRecv},
                                                 {"broadcast", NcclOp::kBroadcast},
                                                 {"reduce", NcclOp::kReduce}};
  for (const auto& [name, o] : kOps) {
    if (op == name) return o;
  }
  return std::nullopt;
}

}  // namespace

std::vector<TraceCollectives> CollectivesOfTraces(const std::vector<KinetoTrace>& traces,
                                                  int warmup, int gpus_per_node) {
  // (op, ranks, nodes) -> bytes -> seconds
  std::map<std::tuple<int, int, int>, std::map<double, std::vector<double>>> groups;
  std::string gpu;
  for (const KinetoTrace& t : traces) {
    if (gpu.empty()) gpu = t.device;
    for (size_t i = std::min<size_t>(std::max(0, warmup), t.steps.size()); i < t.steps.size();
         ++i) {
      for (const CommSample& c : t.steps[i].comms) {
        const std::optional<NcclOp> op = OpOf(c.op);
        if (!op || c.group_ranks < 2 || c.seconds <= 0) continue;
        groups[{static_cast<int>(*op), c.group_ranks, NodesOf(c, gpus_per_node)}][c.bytes]
            .push_back(c.seconds);
      }
    }
  }
  std::vector<TraceCollectives> out;
  for (const auto& [key, sizes] : groups) {
    const auto [op, ranks, nodes] = key;
    TraceCollectives tc;
    tc.run.file = traces.empty() ? "" : traces.front().file;
    tc.run.op = static_cast<NcclOp>(op);
    tc.run.ranks = ranks;
    tc.run.nodes = nodes;
    tc.run.gpu = gpu;
    // sendrecv, broadcast and reduce count their bytes once, as nccl-tests does
    const Expected<sim::CollKind> kind = SimulatedKind(*tc.run.op, tc.run.file);
    const double factor = kind.ok() ? sim::BusFactor(*kind, ranks) : 1.0;
    for (const auto& [bytes, seconds] : sizes) {
      NcclRow row;
      row.bytes = bytes;
      row.time_us = Median(seconds) * 1e6;
      row.algbw_GBps = bytes / (row.time_us * 1e-6) / 1e9;
      row.busbw_GBps = row.algbw_GBps * factor;
      tc.run.rows.push_back(row);
      tc.samples.push_back(static_cast<int>(seconds.size()));
    }
    out.push_back(std::move(tc));
  }
  return out;
}

}  // namespace trainsim::observe
