#include "observe/gemm_refit.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "observe/run_log.h"

namespace trainsim::observe {
Expected<GemmRefit> RefitGemms(const KinetoTrace& trace, int warmup, const HardwareProfile& base,
                               const std::string& dtype) {
  std::map<std::tuple<double, double, double>, std::vector<double>> times;  // shape -> seconds
  GemmRefit out;
  const size_t first = std::min<size_t>(std::max(0, warmup), trace.steps.size());
  for (size_t i = first; i < trace.steps.size(); ++i) {
    for (const GemmSample& g : trace.steps[i].gemms) {
      if (g.seconds <= 0) continue;
      times[{g.m, g.n, g.k}].push_back(g.seconds);
      ++out.samples;
    }
  }
  if (times.empty()) {
    return Status::InvalidInput(trace.file + ": no GEMM with a recorded shape (args M, N, K) in " +
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
    p.origin = "trace " + trace.file;
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

}  // namespace trainsim::observe
