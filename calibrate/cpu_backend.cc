// The cpu backend: this host's cores as a cluster of "devices", one worker
// process per core. GEMMs run on one core; memory kernels in every worker at
// once; collectives between forked workers through shared memory. It lets
// the calibrate -> profile -> simulate pipeline run without a GPU.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "calibrate/cpu_measure.h"
#include "calibrate/measure.h"

namespace trainsim::calibrate {
namespace {

int OnlineCpus() { return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))); }

// The first "model name" of /proc/cpuinfo, or "unknown CPU" (some ARM kernels
// have none).
std::string CpuModelName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    if (colon != std::string::npos && start != std::string::npos) return line.substr(start);
  }
  return "unknown CPU";
}

std::string KernelRelease() {
  utsname names{};
  return uname(&names) == 0 ? std::string("Linux ") + names.release : "Linux";
}

std::string Compiler() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "g++ " __VERSION__;
#else
  return "unknown compiler";
#endif
}

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

double PhysicalMemoryBytes() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

DeviceInfo ProbeCpu() {
  DeviceInfo info;
  info.backend = "cpu";
  info.devices = OnlineCpus();
  info.name = CpuModelName() + " (" + std::to_string(info.devices) + " cores)";
  info.nodes = 1;
  info.memory_bytes = PhysicalMemoryBytes() / info.devices;
  info.driver = KernelRelease();
  info.runtime = Compiler();
  info.blas = "trainsim blocked GEMM (fp32, one core)";
  info.collectives = "shared memory between processes";
  info.dtypes = {"fp32"};
  info.host = HostName();
  return info;
}

bool Contains(const std::vector<std::string>& list, const std::string& x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

bool Stopped(Observer* observer) { return observer != nullptr && observer->StopRequested(); }

// Reports the next item; false when the user asked to stop (measure no more).
bool Report(Observer* observer, const std::string& phase, size_t done, size_t total,
            const std::string& item) {
  if (Stopped(observer)) return false;
  if (observer != nullptr) {
    observer->Progress(phase, static_cast<int>(done), static_cast<int>(total), item);
  }
  return true;
}

std::string ShapeName(const GemmShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// fp32 is the only dtype this backend has; the others are skipped silently.
void RunGemmPhase(const MeasurePlan& plan, Observer* observer, Measurements* out) {
  if (!Contains(plan.dtypes, "fp32")) return;
  const auto& shapes = plan.gemm_shapes;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (!Report(observer, "gemm", i, shapes.size(), "fp32 " + ShapeName(shapes[i]))) return;
    cpu::MeasureGemmFp32(shapes[i], plan.warmup, plan.repetitions, out);
  }
}

// Kernel by kernel, each over the plan's sizes, in all `workers` at once.
void RunMemoryPhase(const MeasurePlan& plan, int workers, Observer* observer, Measurements* out) {
  const size_t total = cpu::MemoryKernels().size() * plan.memory_bytes.size();
  size_t done = 0;
  for (const std::string& what : cpu::MemoryKernels()) {
    for (double bytes : plan.memory_bytes) {
      const std::string item = what + " " + cpu::FormatBytes(bytes);
      if (!Report(observer, "memory", done++, total, item)) return;
      Expected<BandwidthPoint> point = cpu::MeasureBandwidth({.what = what,
                                                              .bytes = bytes,
                                                              .workers = workers,
                                                              .warmup = plan.warmup,
                                                              .repetitions = plan.repetitions});
      if (point.ok()) {
        out->memory.push_back(*point);
      } else {
        out->failures.push_back({"memory " + item, point.status().message()});
      }
    }
  }
}

std::string CollectiveItem(const cpu::CollectiveRequest& r) {
  return r.op + " " + std::to_string(r.ranks) + (r.ranks == 1 ? " rank " : " ranks ") +
         cpu::FormatBytes(r.bytes);
}

// Op by op, then rank count (the plan's, or 1..devices), then size; an
// unknown op is a failure, send_recv on 1 rank is skipped.
std::vector<cpu::CollectiveRequest> CollectiveRequests(const MeasurePlan& plan, int devices,
                                                       Measurements* out) {
  std::vector<int> rank_counts = plan.collective_ranks;
  if (rank_counts.empty()) {
    for (int r = 1; r <= devices; ++r) rank_counts.push_back(r);
  }
  std::vector<cpu::CollectiveRequest> requests;
  for (const std::string& op : plan.collective_ops) {
    if (!Contains(cpu::CollectiveOps(), op)) {
      out->failures.push_back(
          {"collective " + op, "the cpu backend has no collective \"" + op + "\""});
      continue;
    }
    for (int ranks : rank_counts) {
      if (op == "send_recv" && ranks < 2) continue;
      for (double bytes : plan.collective_bytes) {
        requests.push_back({.op = op,
                            .ranks = ranks,
                            .bytes = bytes,
                            .warmup = plan.warmup,
                            .repetitions = plan.repetitions});
      }
    }
  }
  return requests;
}

void RunCollectivePhase(const MeasurePlan& plan, int devices, Observer* observer,
                        Measurements* out) {
  const std::vector<cpu::CollectiveRequest> requests = CollectiveRequests(plan, devices, out);
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::string item = CollectiveItem(requests[i]);
    if (!Report(observer, "collectives", i, requests.size(), item)) return;
    Expected<CollectivePoint> point = cpu::MeasureCollective(requests[i]);
    if (point.ok()) {
      out->collectives.push_back(*point);
    } else {
      out->failures.push_back({"collective " + item, point.status().message()});
    }
  }
}

class CpuBackend : public Backend {
 public:
  Expected<DeviceInfo> Probe() override { return ProbeCpu(); }

  Status Run(const MeasurePlan& plan, Observer* observer, Measurements* out) override {
    if (plan.repetitions < 1 || plan.warmup < 0) {
      return Status::InvalidInput("the plan needs repetitions >= 1 and warmup >= 0 (got " +
                                  std::to_string(plan.repetitions) + " and " +
                                  std::to_string(plan.warmup) + ")");
    }
    out->device = ProbeCpu();
    RunGemmPhase(plan, observer, out);
    RunMemoryPhase(plan, out->device.devices, observer, out);
    RunCollectivePhase(plan, out->device.devices, observer, out);
    if (Stopped(observer)) out->failures.push_back(InterruptedFailure());
    return Status::Ok();
  }
};

}  // namespace

namespace cpu {

std::string FormatBytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && std::fmod(bytes, 1024) == 0) {
    bytes /= 1024;
    ++unit;
  }
  char text[48];
  std::snprintf(text, sizeof(text), "%.15g %s", bytes, kUnits[unit]);
  return text;
}

}  // namespace cpu

std::unique_ptr<Backend> MakeCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace trainsim::calibrate
