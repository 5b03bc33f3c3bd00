#include "calibrate/fit.h"

#include <algorithm>
#include <cmath>

namespace trainsim::calibrate {
namespace {

std::vector<TablePoint> TableOf(const std::vector<GemmPoint>& points, const std::string& dtype,
                                const GemmPoint* skip) {
  std::vector<TablePoint> raw;
  for (const GemmPoint& p : points) {
    if (&p != skip && p.dtype == dtype && p.verified && p.timing.median_s > 0) {
      raw.push_back({p.flops, p.flops / p.timing.median_s});
    }
  }
  std::sort(raw.begin(), raw.end(), [](const TablePoint& a, const TablePoint& b) {
    return a.x < b.x || (a.x == b.x && a.y < b.y);
  });
  std::vector<TablePoint> table;
  size_t i = 0;
  while (i < raw.size()) {  // merge a run of points within 1% of the run's first FLOPs
    size_t j = i;
    double sum_x = 0, sum_y = 0;
    while (j < raw.size() && raw[j].x <= raw[i].x * 1.01) sum_x += raw[j].x, sum_y += raw[j++].y;
    const double n = static_cast<double>(j - i);
    table.push_back({sum_x / n, sum_y / n});
    i = j;
  }
  return table;
}

struct Line {
  double latency_s = 0, seconds_per_byte = 0;
};

// Weighted least squares of t = a + b x with weights 1/t^2 (relative error).
Line FitLine(const std::vector<const CollectivePoint*>& pts) {
  double sw = 0, swx = 0, swxx = 0, swt = 0, swxt = 0;
  for (const CollectivePoint* p : pts) {
    const double t = p->timing.median_s, x = p->bytes, w = 1 / (t * t);
    sw += w, swx += w * x, swxx += w * x * x, swt += w * t, swxt += w * x * t;
  }
  Line l;
  const double det = sw * swxx - swx * swx;
  if (pts.size() >= 2 && det > 0) {
    l.latency_s = (swt * swxx - swx * swxt) / det;
    l.seconds_per_byte = (sw * swxt - swx * swt) / det;
  }
  if (l.latency_s < 0 || pts.size() < 2 || det <= 0) {  // through the origin instead
    l.latency_s = 0;
    l.seconds_per_byte = swxt / swxx;
  }
  if (l.seconds_per_byte <= 0) {
    // Flat or falling (latency-bound, or noise): the constant that minimises
    // the relative error, and a slope that adds 1% at the largest size.
    double s1 = 0, s2 = 0;
    for (const CollectivePoint* p : pts) {
      s1 += 1 / p->timing.median_s;
      s2 += 1 / (p->timing.median_s * p->timing.median_s);
    }
    l.latency_s = s1 / s2;
    l.seconds_per_byte = 0.01 * l.latency_s / pts.back()->bytes;
  }
  return l;
}

CollectiveRange RangeOf(const std::vector<const CollectivePoint*>& pts) {
  const Line l = FitLine(pts);
  CollectiveRange r;
  r.min_bytes = pts.front()->bytes;
  r.max_bytes = pts.back()->bytes;
  r.latency_s = l.latency_s;
  r.algbw_GBps = 1 / l.seconds_per_byte / 1e9;
  for (const CollectivePoint* p : pts) {
    const double predicted = l.latency_s + p->bytes * l.seconds_per_byte;
    r.max_error =
        std::max(r.max_error, std::abs(predicted - p->timing.median_s) / p->timing.median_s);
  }
  return r;
}

}  // namespace

std::vector<TablePoint> FitGemmTable(const std::vector<GemmPoint>& points,
                                     const std::string& dtype) {
  return TableOf(points, dtype, nullptr);
}

double GemmTableError(const std::vector<GemmPoint>& points, const std::string& dtype) {
  const std::vector<TablePoint> all = TableOf(points, dtype, nullptr);
  if (all.size() < 3) return 0;
  double worst = 0;
  for (const GemmPoint& p : points) {
    if (p.dtype != dtype || !p.verified || p.flops <= all.front().x || p.flops >= all.back().x) {
      continue;
    }
    const std::vector<TablePoint> rest = TableOf(points, dtype, &p);
    const double measured = p.flops / p.timing.median_s;
    worst = std::max(worst, std::abs(InterpolateTable(rest, p.flops) - measured) / measured);
  }
  return worst;
}

const std::vector<double>& CollectiveRangeBounds() {
  static const std::vector<double> kBounds = {4096.0, 65536.0, 1048576.0, 16777216.0, 268435456.0};
  return kBounds;
}

CollectiveFit FitCollective(const std::vector<CollectivePoint>& points) {
  CollectiveFit fit;
  if (points.empty()) return fit;
  fit.op = points.front().op;
  fit.ranks = points.front().ranks;
  fit.nodes = points.front().nodes;
  std::vector<const CollectivePoint*> sorted;
  for (const CollectivePoint& p : points) {
    if (p.timing.median_s > 0 && p.bytes > 0) sorted.push_back(&p);
  }
  if (sorted.empty()) return fit;
  std::sort(sorted.begin(), sorted.end(),
            [](const CollectivePoint* a, const CollectivePoint* b) { return a->bytes < b->bytes; });
  // Split at the bounds; a group of fewer than 2 points joins the previous one.
  std::vector<std::vector<const CollectivePoint*>> groups(1);
  size_t bound = 0;
  const std::vector<double>& bounds = CollectiveRangeBounds();
  for (const CollectivePoint* p : sorted) {
    while (bound < bounds.size() && p->bytes >= bounds[bound]) {
      if (!groups.back().empty()) groups.emplace_back();
      ++bound;
    }
    groups.back().push_back(p);
  }
  for (size_t i = 1; i < groups.size();) {
    if (groups[i].size() < 2 || groups[i - 1].size() < 2) {
      groups[i - 1].insert(groups[i - 1].end(), groups[i].begin(), groups[i].end());
      groups.erase(groups.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  for (const auto& g : groups) fit.ranges.push_back(RangeOf(g));
  return fit;
}

}  // namespace trainsim::calibrate
