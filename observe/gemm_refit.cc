#include "observe/gemm_refit.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "observe/run_log.h"

namespace trainsim::observe {
// The traces' files, "a.json" or "a.json, b.json".
std::string Files(const std::vector<KinetoTrace>& traces) {
  std::string out;
  for (const KinetoTrace& t : traces) out += (out.empty() ? "" : ", ") + t.file;
  return out;
}

Expected<GemmRefit> RefitGemms(const std::vector<KinetoTrace>& traces, int warmup,
                               const HardwareProfile& base, const std::string& dtype) {
  std::map<std::tuple<double, double, double>, std::vector<double>> times;  // shape -> seconds
  GemmRefit out;
  for (const KinetoTrace& trace : traces) {
    const size_t first = std::min<size_t>(std::max(0, warmup), trace.steps.size());
    for (size_t i = first; i < trace.steps.size(); ++i) {
      for (const GemmSample& g : trace.steps[i].gemms) {
        if (g.seconds <= 0) continue;
        times[{g.m, g.n, g.k}].push_back(g.seconds);
        ++out.samples;
      }
    }
  }
  if (times.empty()) {
    return Status::InvalidInput(Files(traces) +
                                ": no GEMM with a recorded shape (args M, N, K) in " +
                                "the steps after the warm-up of " + std::to_string(warmup) +
                                ": nothing to refit the GEMMs from");
  }
  out.profile = base;
  std::vector<ProfilePoint>& points = out.profile.points;
  std::map<double, std::vector<double>> rates;  // FLOPs -> FLOP/s of each shape
  for (const auto& [shape, seconds] : times) {
    const auto [m, n, k] = shape;
    points.erase(std::remove_if(points.begin(), points.end(),
                                [&, m = m, n = n, k = k](const ProfilePoint& p) {
                                  return p.kind == "gemm" && p.what == dtype && p.m == m &&
                                         p.n == n && p.k == k;
                                }),
                 points.end());
    ProfilePoint p;
    p.kind = "gemm";
    p.what = dtype;
    p.m = m, p.n = n, p.k = k;
    p.flops = 2 * m * n * k;
    p.origin = "trace " + Files(traces);
    p.repetitions = static_cast<int>(seconds.size());
    p.median_s = Median(seconds);
    p.spread = (*std::max_element(seconds.begin(), seconds.end()) -
                *std::min_element(seconds.begin(), seconds.end())) /
               p.median_s;
    p.rate = p.flops / p.median_s;
    p.verified = true;
    points.push_back(p);
    rates[p.flops].push_back(p.rate);
    ++out.shapes;
  }
  if (rates.size() >= 2) {
    std::vector<TablePoint>& table = out.profile.gemm_tables[dtype];
    table.clear();
    for (const auto& [flops, r] : rates) table.push_back({flops, Median(r)});
  }
  return out;
}

double MedianKernelSeconds(const std::vector<KinetoTrace>& traces, int warmup, KernelKind kind) {
  std::vector<double> v;
  for (const KinetoTrace& trace : traces) {
    for (size_t i = std::min<size_t>(std::max(0, warmup), trace.steps.size());
         i < trace.steps.size(); ++i) {
      v.push_back(trace.steps[i].kernel_s[static_cast<int>(kind)]);
    }
  }
  return v.empty() ? 0 : Median(v);
}

Expected<HardwareProfile> RefitMemoryRate(const HardwareProfile& base, double rate_GBps,
                                          double model_s, double measured_s, int steps,
                                          const std::string& source) {
  if (!(model_s > 0) || !(rate_GBps > 0)) {
    return Status::InvalidInput(
        "the simulated step has no memory-bound work to refit (no norm, activation or "
        "optimizer kernel in the model)");
  }
  if (!(measured_s > 0)) {
    return Status::InvalidInput(source +
                                ": no kernel other than GEMMs, attention and communication in "
                                "the steps after the warm-up: nothing to refit the "
                                "memory-bound rate from");
  }
  HardwareProfile out = base;
  const double bytes = model_s * rate_GBps * 1e9;
  out.memory_GBps = bytes / measured_s / 1e9;
  std::vector<ProfilePoint>& points = out.points;
  const std::string what = "non-GEMM kernels of " + source;
  points.erase(
      std::remove_if(points.begin(), points.end(),
                     [&](const ProfilePoint& p) { return p.kind == "memory" && p.what == what; }),
      points.end());
  ProfilePoint p;
  p.kind = "memory";
  p.what = what;
  p.bytes = bytes;
  p.repetitions = std::max(1, steps);
  p.median_s = measured_s;
  p.rate = bytes / measured_s;
  points.push_back(p);
  return out;
}

}  // namespace trainsim::observe
