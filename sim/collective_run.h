// One collective simulated alone, as nccl-tests runs it: a group of the first
// `per_node` GPUs of each of `nodes` nodes of an instance type, one operation
// of `bytes` (nccl-tests' size: the all-reduce buffer, the all-gather output,
// the reduce-scatter input, each member's all-to-all buffer). bench/accuracy's
// collective points and `trainsim observe`'s nccl-tests comparison and network
// refit (docs/observe.md) use it.
#pragma once

#include "core/instance_type.h"
#include "core/status.h"
#include "sim/collectives.h"
#include "sim/model_params.h"

namespace trainsim::sim {

struct CollectiveRun {
  InstanceType type;
  int nodes = 1;
  int per_node = 0;  // 0: every GPU of the node
  CollKind kind = CollKind::kAllReduce;
  double bytes = 0;
  bool ring_only = false;  // NCCL_ALGO=Ring; else the fastest algorithm, as NCCL's tuner picks
};

// The operation's simulated seconds (in a child process: sim/isolate.h).
// Fails when per_node exceeds the instance's GPUs.
Expected<double> SimulateCollectiveSeconds(const CollectiveRun& run, const ModelParams& params);

// nccl-tests' bus bandwidth factor (busbw = algbw x factor) for `ranks` members:
// all-reduce 2 (n - 1) / n; all-gather, reduce-scatter and all-to-all (n - 1) / n;
// send/recv 1 (doc/PERFORMANCE.md of nccl-tests).
double BusFactor(CollKind kind, int ranks);

}  // namespace trainsim::sim
