// The output of NVIDIA's nccl-tests (all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, alltoall_perf, sendrecv_perf, ...), read back
// (docs/observe.md). One file holds one test's run: the "# Using devices"
// lines (ranks, hosts, GPUs), then one row per message size with the
// out-of-place and in-place time, algorithm and bus bandwidth.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainsim::observe {

enum class NcclOp {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSendRecv,
  kBroadcast,
  kReduce
};
const char* ToString(NcclOp op);  // "all_reduce", ... as in the test's name (all_reduce_perf)
// "all_reduce", "all_gather", ... (with or without "_perf"); else an error naming `field`.
Expected<NcclOp> ParseNcclOp(std::string_view name, std::string_view field);

struct NcclRow {
  double bytes = 0;  // the "size" column: the test's buffer size
  int64_t count = 0;
  std::string type, redop;
  int64_t root = -1;
  double time_us = 0, algbw_GBps = 0, busbw_GBps = 0;  // out of place
  double inplace_time_us = 0, inplace_algbw_GBps = 0, inplace_busbw_GBps = 0;
  int line = 0;
};

struct NcclTestsRun {
  std::string file;
  std::optional<NcclOp> op;   // from the test's name in the file (a command line), else --op
  int ranks = 0;              // "#  Rank N ..." lines
  int nodes = 0;              // distinct hosts among them
  std::string gpu;            // the device name of rank 0 ("NVIDIA H100 80GB HBM3")
  std::vector<NcclRow> rows;  // in file order
  std::optional<double> avg_busbw_GBps;  // "# Avg bus bandwidth"
};

// Reads one nccl-tests output. `op`: the test when the file does not name it
// (its command line is not in the output); a file that names another test is
// an error. Errors name the file and line: a row with a missing or
// non-numeric column, rows without the "#  Rank" lines, no row at all.
Expected<NcclTestsRun> ParseNcclTests(std::string_view text, const std::string& file,
                                      std::optional<NcclOp> op);
Expected<NcclTestsRun> LoadNcclTests(const std::string& path, std::optional<NcclOp> op);

}  // namespace trainsim::observe
