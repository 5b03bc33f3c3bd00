// A trace's collectives with recorded sizes, as nccl-tests rows (docs/observe.md section 3d),
// so they are set beside the simulated collective as nccl-tests output is (nccl_compare.h).
#pragma once

#include <vector>

#include "observe/kineto.h"
#include "observe/nccl_tests.h"

namespace trainsim::observe {

struct TraceCollectives {
  NcclTestsRun run;          // one collective, one group size and placement
  std::vector<int> samples;  // per row: the kernels its median time is taken over
};

// The sized collectives (TraceStep::comms) of the steps after `warmup` of every trace, grouped
// by op, group size and nodes, one row per size: the median kernel time, algbw = bytes / time,
// busbw = algbw x nccl-tests' bus factor. The group's nodes: the distinct rank / gpus_per_node
// of its recorded ranks, else the fewest nodes that hold it; 0 when gpus_per_node is 0
// (unknown). Ops nccl-tests has no test for are left out. In order of op, ranks, nodes, size.
std::vector<TraceCollectives> CollectivesOfTraces(const std::vector<KinetoTrace>& traces,
                                                  int warmup, int gpus_per_node);

}  // namespace trainsim::observe
