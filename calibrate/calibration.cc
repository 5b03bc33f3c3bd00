#include "calibrate/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "calibrate/fit.h"
#include "core/durable_file.h"
#include "core/units.h"

namespace trainsim::calibrate {
namespace {

template <typename... Args>
std::string Format(const char* fmt, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string Bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (b >= 1024 && u < 3) b /= 1024, ++u;
  return Format("%.0f ", b) + units[u];
}

// A raw point of `kind` with the timing summary every kind has.
ProfilePoint TimedPoint(const char* kind, const std::string& what, const Timing& t) {
  ProfilePoint p;
  p.kind = kind;
  p.what = what;
  p.repetitions = t.repetitions;
  p.median_s = t.median_s;
  p.spread = t.spread();
  return p;
}

ProfilePoint RawPoint(const GemmPoint& g) {
  ProfilePoint p = TimedPoint("gemm", g.dtype, g.timing);
  p.m = static_cast<double>(g.shape.m);
  p.n = static_cast<double>(g.shape.n);
  p.k = static_cast<double>(g.shape.k);
  p.origin = g.shape.origin;
  p.flops = g.flops;
  p.rate = g.tflops * 1e12;
  p.verified = g.verified;
  return p;
}

ProfilePoint RawPoint(const BandwidthPoint& b) {
  ProfilePoint p = TimedPoint("memory", b.what, b.timing);
  p.bytes = b.bytes;
  p.rate = b.GBps * 1e9;
  return p;
}

ProfilePoint RawPoint(const CollectivePoint& c) {
  ProfilePoint p = TimedPoint("collective", c.op, c.timing);
  p.ranks = c.ranks;
  p.nodes = c.nodes;
  p.bytes = c.bytes;
  p.algbw_Bps = c.algbw_GBps * 1e9;
  p.rate = c.busbw_GBps * 1e9;
  return p;
}

// The bandwidth of the largest buffer measured for test `what`.
std::optional<double> LargestBandwidth(const Measurements& m, const std::string& what) {
  const BandwidthPoint* best = nullptr;
  for (const BandwidthPoint& b : m.memory) {
    if (b.what == what && b.GBps > 0 && (!best || b.bytes > best->bytes)) best = &b;
  }
  if (!best) return std::nullopt;
  return best->GBps;
}

void FitCollectives(const Measurements& m, HardwareProfile* p) {
  std::map<std::tuple<std::string, int, int>, std::vector<CollectivePoint>> groups;
  std::vector<std::tuple<std::string, int, int>> order;
  for (const CollectivePoint& c : m.collectives) {
    auto key = std::make_tuple(c.op, c.ranks, c.nodes);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(c);
  }
  for (const auto& key : order) {
    CollectiveFit fit = FitCollective(groups[key]);
    if (!fit.ranges.empty()) p->collectives.push_back(std::move(fit));
  }
}

void ListNotMeasured(const Measurements& m, HardwareProfile* p) {
  for (const std::string& dtype : AllDtypes()) {
    if (p->gemm_tables.count(dtype)) continue;
    const bool supported =
        std::find(m.device.dtypes.begin(), m.device.dtypes.end(), dtype) != m.device.dtypes.end();
    p->not_measured.push_back("gemm " + dtype + ": " +
                              (supported ? "no verified point" : "not supported by the device") +
                              "; the catalog peak x the model's GEMM efficiency applies");
  }
  if (!p->memory_GBps) p->not_measured.push_back("memory bandwidth: the catalog figure applies");
  if (m.device.backend == "cuda" && !p->host_to_device_GBps) {
    p->not_measured.push_back("host link: the catalog PCIe figure applies");
  }
  if (p->collectives.empty() || m.device.devices * m.device.nodes < 2) {
    p->not_measured.push_back(
        "collectives between devices: fewer than 2 devices measured; the catalog NVLink and "
        "network model applies");
  }
}

// The cpu backend's machine as a catalog file: one "GPU" per core whose fp32
// peak is the best measured GEMM rate and whose memory bandwidth is the
// measured per-core copy rate; cores exchange data through shared memory,
// modelled as a switch at the measured all-reduce bus bandwidth.
std::string CpuCatalog(const Measurements& m, const HardwareProfile& p) {
  using ojson = nlohmann::ordered_json;
  double best = 0;
  for (const TablePoint& t : p.gemm_tables.at("fp32")) best = std::max(best, t.y);
  const double mem_gib = m.device.memory_bytes / kGiB;
  ojson gpu = {
      {"name", "local-cpu-core"},
      {"fp32_tflops", best / 1e12},
      {"hbm_GBps", *p.memory_GBps},
      {"mem_gib", mem_gib},
      {"notes", "one core of " + m.device.name +
                    " as measured by trainsim-calibrate --backend cpu on " + p.provenance.date +
                    ": fp32_tflops is the best measured GEMM "
                    "rate, hbm_GBps the measured copy rate per core"}};
  ojson topology = {{"kind", "single"}};
  if (m.device.devices > 1) {
    const CollectivePoint* largest = nullptr;
    for (const CollectivePoint& c : m.collectives) {
      if (c.op == "all_reduce" && c.ranks == m.device.devices && c.busbw_GBps > 0 &&
          (!largest || c.bytes > largest->bytes)) {
        largest = &c;
      }
    }
    if (largest) {
      topology = {{"kind", "nvswitch"}, {"nvlink_GBps_per_gpu_bidir", 2 * largest->busbw_GBps}};
    } else {
      topology = {{"kind", "pcie"}};
    }
  }
  ojson instance = {{"name", "local-cpu"},
                    {"is_aws", false},
                    {"gpu", "local-cpu-core"},
                    {"gpus", m.device.devices},
                    {"gpu_mem_gib", mem_gib},
                    {"topology", topology},
                    {"notes",
                     "this machine's cores as a one-node cluster (shared memory as a "
                     "switch at the measured all-reduce bus bandwidth); no network"}};
  ojson doc = {
      {"version", 1}, {"gpus", ojson::array({gpu})}, {"instances", ojson::array({instance})}};
  return doc.dump(1);
}

}  // namespace

Expected<ChosenBackend> ChooseBackend(const std::string& name) {
  if (name != "auto" && name != "cuda" && name != "cpu") {
    return Status::InvalidInput("--backend: expected cuda, cpu or auto, got \"" + name + "\"");
  }
  ChosenBackend chosen;
  if (name != "cpu") {
    std::unique_ptr<Backend> cuda = MakeCudaBackend();
    if (!cuda) {
      if (name == "cuda") {
        return Status::InvalidInput(
            "--backend cuda: this trainsim-calibrate was built without CUDA (nvcc not found "
            "when it was configured)");
      }
      chosen.note = "built without CUDA: using the cpu backend";
    } else {
      Expected<DeviceInfo> device = cuda->Probe();
      if (device.ok()) {
        chosen.backend = std::move(cuda);
        chosen.device = *device;
        return chosen;
      }
      if (name == "cuda") return Status::NotFound("--backend cuda: " + device.status().message());
      chosen.note = device.status().message() + ": using the cpu backend";
    }
  }
  chosen.backend = MakeCpuBackend();
  if (!chosen.backend) return Status::Internal("the cpu backend is missing from this build");
  Expected<DeviceInfo> device = chosen.backend->Probe();
  if (!device.ok()) return device.status();
  chosen.device = *device;
  return chosen;
}

std::string CatalogGpuName(const Catalog& catalog, const std::string& device_name) {
  const GpuSpec* gpu = catalog.FindGpuByDeviceName(device_name);
  return gpu ? gpu->name : "";
}

HardwareProfile BuildProfile(const Measurements& m, const MeasurePlan& plan,
                             const ProfileOptions& options) {
  HardwareProfile p;
  ProfileProvenance& v = p.provenance;
  v.tool = options.tool;
  v.backend = m.device.backend;
  v.device = m.device.name;
  v.devices = m.device.devices;
  v.nodes = m.device.nodes;
  v.driver = m.device.driver;
  v.runtime = m.device.runtime;
  v.blas = m.device.blas;
  v.collectives = m.device.collectives;
  v.host = m.device.host;
  v.date = options.date;
  v.quick = plan.quick;
  v.warmup = plan.warmup;
  v.repetitions = plan.repetitions;
  v.complete = m.failures.empty();
  p.gpu = !options.gpu.empty() ? options.gpu
          : m.device.backend == "cuda" && options.catalog
              ? CatalogGpuName(*options.catalog, m.device.name)
              : "";
  for (const std::string& dtype : AllDtypes()) {
    std::vector<TablePoint> table = FitGemmTable(m.gemm, dtype);
    if (table.empty()) continue;
    p.gemm_tables[dtype] = std::move(table);
    p.gemm_table_error[dtype] = GemmTableError(m.gemm, dtype);
  }
  const bool cpu = m.device.backend == "cpu";
  p.memory_GBps = LargestBandwidth(m, cpu ? "copy" : "d2d_kernel");
  if (!cpu) {
    p.host_to_device_GBps = LargestBandwidth(m, "h2d_pinned");
    p.device_to_host_GBps = LargestBandwidth(m, "d2h_pinned");
  }
  FitCollectives(m, &p);
  for (const GemmPoint& g : m.gemm) p.points.push_back(RawPoint(g));
  for (const BandwidthPoint& b : m.memory) p.points.push_back(RawPoint(b));
  for (const CollectivePoint& c : m.collectives) p.points.push_back(RawPoint(c));
  for (const Failure& f : m.failures) p.failures.emplace_back(f.what, f.error);
  ListNotMeasured(m, &p);
  if (cpu && p.gemm_tables.count("fp32") && p.memory_GBps) {
    p.gpu = "local-cpu-core";
    p.catalog_json = CpuCatalog(m, p);
  }
  return p;
}

namespace {

// Best rate per dtype, table size, leave-one-out error, share of the peak.
std::string GemmSummary(const HardwareProfile& p, const GpuSpec* gpu) {
  static const std::map<std::string, Precision> kPrecision = {{"fp32", Precision::kFp32},
                                                              {"tf32", Precision::kTf32},
                                                              {"fp16", Precision::kFp16},
                                                              {"bf16", Precision::kBf16},
                                                              {"fp8", Precision::kFp8}};
  std::string out =
      "GEMM   best TFLOP/s  at GFLOP  table points  leave-one-out error  share of catalog peak\n";
  for (const auto& [dtype, table] : p.gemm_tables) {
    const TablePoint* best = &table.front();
    for (const TablePoint& t : table) best = t.y > best->y ? &t : best;
    std::string share = "-";
    std::optional<double> peak = gpu ? gpu->PeakFlops(kPrecision.at(dtype)) : std::nullopt;
    if (peak) share = Format("%.1f%%", 100 * best->y / *peak);
    auto error = p.gemm_table_error.find(dtype);
    out += Format("%-6s %12.3f  %8.2f  %12zu  %18.1f%%  %s\n", dtype.c_str(), best->y / 1e12,
                  best->x / 1e9, table.size(),
                  100 * (error == p.gemm_table_error.end() ? 0.0 : error->second), share.c_str());
  }
  return out;
}

std::string BandwidthSummary(const HardwareProfile& p, const GpuSpec* gpu) {
  std::string out;
  auto line = [&](const char* name, const std::optional<double>& gbps, bool vs_catalog) {
    if (!gbps) return;
    std::string share;
    if (vs_catalog && gpu && gpu->hbm_GBps) {
      share = Format("  (%.1f%% of the catalog's %.0f GB/s)", 100 * *gbps / *gpu->hbm_GBps,
                     *gpu->hbm_GBps);
    }
    out += Format("%-16s %10.1f GB/s%s\n", name, *gbps, share.c_str());
  };
  line("memory copy", p.memory_GBps, true);
  line("host to device", p.host_to_device_GBps, false);
  line("device to host", p.device_to_host_GBps, false);
  return out;
}

std::string CollectiveSummary(const HardwareProfile& p) {
  if (p.collectives.empty()) return "";
  std::string out = "\ncollective      ranks  latency us  algbw GB/s  at largest  fit max error\n";
  for (const CollectiveFit& c : p.collectives) {
    double worst = 0;
    for (const CollectiveRange& r : c.ranges) worst = std::max(worst, r.max_error);
    out += Format("%-15s %5d  %10.2f  %10.2f  %10s  %12.1f%%\n", c.op.c_str(), c.ranks,
                  c.ranges.front().latency_s * 1e6, c.ranges.back().algbw_GBps,
                  Bytes(c.ranges.back().max_bytes).c_str(), 100 * worst);
  }
  return out;
}

}  // namespace

std::string SummaryTable(const HardwareProfile& p, const GpuSpec* gpu) {
  const ProfileProvenance& v = p.provenance;
  std::string out = Format("\n%s x %d (%s; %s; %s)\n\n", v.device.c_str(), v.devices,
                           v.backend.c_str(), v.blas.c_str(), v.collectives.c_str());
  out += GemmSummary(p, gpu) + "\n" + BandwidthSummary(p, gpu) + CollectiveSummary(p);
  if (!p.failures.empty()) {
    out += Format("\n%zu measurement(s) failed:\n", p.failures.size());
    for (const auto& [what, error] : p.failures) out += "  " + what + ": " + error + "\n";
  }
  if (!p.not_measured.empty()) {
    out += "\nnot measured (catalog values apply):\n";
    for (const std::string& s : p.not_measured) out += "  " + s + "\n";
  }
  return out;
}

Status WriteProfile(const HardwareProfile& profile, const std::string& path, bool force,
                    std::string* written_to) {
  std::string target = path;
  std::error_code ec;
  if (!profile.provenance.complete && !force && std::filesystem::exists(path, ec)) {
    Expected<HardwareProfile> old = LoadHardwareProfile(path);
    if (old.ok() && old->provenance.complete) target = path + ".partial";
  }
  if (Status s = WriteFileDurably(target, HardwareProfileToJson(profile)); !s.ok()) return s;
  *written_to = target;
  return Status::Ok();
}

}  // namespace trainsim::calibrate
