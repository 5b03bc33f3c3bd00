// HardwareProfile: what trainsim-calibrate measured on one machine, in the
// form the simulator uses (docs/formats.md, "Hardware profile").
//
// A profile holds the raw measured points (medians with their spread), the
// tables fitted from them (GEMM throughput against FLOPs per dtype;
// latency + size/bandwidth per size range per collective and group size) and
// the provenance of the run. What was not measured is absent and listed in
// `not_measured`: the simulator then keeps the catalog value. A profile of a
// machine that is not in the catalog (the cpu backend's "cluster" of cores)
// carries its own catalog entry in `catalog`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainsim {

struct ProfileProvenance {
  std::string tool;     // "trainsim-calibrate 0.1"
  std::string backend;  // "cuda" or "cpu"
  std::string device;   // as the driver names it
  int devices = 0;      // per node
  int nodes = 1;
  std::string driver, runtime, blas, collectives, host;
  std::string date;  // ISO 8601, UTC
  bool quick = false;
  int warmup = 0, repetitions = 0;
  bool complete = true;  // false when some measurement failed
};

// One point of a table: x (FLOPs of a GEMM) -> y (achieved FLOP/s).
struct TablePoint {
  double x = 0, y = 0;
};

// y at x, linear in log(x) between the points of an ascending table, flat
// past its ends. `table` must not be empty.
double InterpolateTable(const std::vector<TablePoint>& table, double x);

// A collective fitted as time = latency_s + bytes / (algbw_GBps * 1e9) on
// [min_bytes, max_bytes]; max_error is the largest relative error of the fit
// over the measured points in the range.
struct CollectiveRange {
  double min_bytes = 0, max_bytes = 0;
  double latency_s = 0, algbw_GBps = 0;
  double max_error = 0;
};

struct CollectiveFit {
  std::string op;  // all_reduce, all_gather, reduce_scatter, broadcast, send_recv
  int ranks = 0, nodes = 1;
  std::vector<CollectiveRange> ranges;  // ascending, not overlapping
  // Predicted time of an operation of `bytes` (clamped to the fitted ranges).
  double Seconds(double bytes) const;
};

// The network of one instance type, refitted from a multi-node collective measurement
// (`trainsim observe --refit`, docs/observe.md): the fraction of the NIC line rate its
// collectives reach, in place of the catalog's network efficiency.
struct NetworkFit {
  std::string instance;  // the catalog instance type it was measured on
  double efficiency = 0;
  int nodes = 2;          // of the largest run fitted
  double mean_error = 0;  // of the fitted busbw over the rows it was fitted to
  std::string source;     // the inputs and the rows used
  // NCCL's protocol latency scale refitted to the rows below 128 MiB (sim::ModelParams::
  // protocol_latency_scale for this network), with the mean error there; nullopt: not refitted.
  std::optional<double> latency_scale;
  double latency_mean_error = 0;
};

struct ProfilePoint {          // a raw measured point
  std::string kind;            // "gemm", "memory", "collective"
  std::string what;            // dtype (gemm), test name (memory), op (collective)
  double m = 0, n = 0, k = 0;  // gemm shape
  int ranks = 0, nodes = 0;    // collective
  double bytes = 0;            // memory, collective
  double flops = 0;            // gemm
  std::string origin;          // gemm: where the shape comes from
  int repetitions = 0;
  double median_s = 0, spread = 0;
  double rate = 0;       // gemm: FLOP/s; memory: B/s; collective: bus B/s
  double algbw_Bps = 0;  // collective
  bool verified = true;  // gemm
};

struct HardwareProfile {
  ProfileProvenance provenance;
  std::string gpu;  // catalog GPU the profile applies to; "" = none
  // GEMM throughput tables per dtype ("fp32", "tf32", "fp16", "bf16", "fp8"),
  // ascending in FLOPs.
  std::map<std::string, std::vector<TablePoint>> gemm_tables;
  // Per dtype: the largest leave-one-out relative error of its table at the
  // measured points (the table rebuilt without each point, then read there).
  std::map<std::string, double> gemm_table_error;
  std::optional<double> memory_GBps;          // device memory, read + write
  std::optional<double> host_to_device_GBps;  // pinned
  std::optional<double> device_to_host_GBps;
  std::vector<CollectiveFit> collectives;
  std::optional<NetworkFit> network;
  std::vector<ProfilePoint> points;
  std::vector<std::pair<std::string, std::string>> failures;  // what, error
  std::vector<std::string> not_measured;
  // A catalog file's text (gpus + instances) describing the measured machine
  // when the catalog has no entry for it; "" when none.
  std::string catalog_json;

  // Achieved FLOP/s of a GEMM of `flops` in `dtype`, interpolated linearly
  // in log(FLOPs) between table points and held flat past the ends; nullopt
  // when the dtype was not measured.
  std::optional<double> GemmFlopsPerSecond(std::string_view dtype, double flops) const;
  // Achieved FLOP/s of the verified measured GEMM of exactly this shape (the
  // mean when measured more than once); nullopt when it was not measured.
  std::optional<double> GemmShapeFlopsPerSecond(std::string_view dtype, double m, double n,
                                                double k) const;
  // The fit for (op, ranks, nodes), or nullptr.
  const CollectiveFit* FindCollective(std::string_view op, int ranks, int nodes) const;
};

// Parses and validates a profile (schema, units, ascending tables). Errors
// name file:line:column and the field.
Expected<HardwareProfile> ParseHardwareProfile(std::string_view text, std::string_view filename);
Expected<HardwareProfile> LoadHardwareProfile(const std::string& path);
// The profile as JSON text (2-space indent, fixed key order): byte-identical
// for identical profiles; ParseHardwareProfile reads it back unchanged.
std::string HardwareProfileToJson(const HardwareProfile& profile);

}  // namespace trainsim
