#include "calibrate/fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "calibrate/plan.h"

namespace trainsim::calibrate {
namespace {

CollectivePoint Point(const std::string& op, int ranks, double bytes, double seconds) {
  CollectivePoint p;
  p.op = op;
  p.ranks = ranks;
  p.bytes = bytes;
  p.timing = Summarize({seconds});
  p.algbw_GBps = bytes / seconds / 1e9;
  p.busbw_GBps = p.algbw_GBps * BusBandwidthFactor(op, ranks);
  return p;
}

TEST(BusBandwidthTest, FactorsAreTheNcclTestsDefinitions) {
  // nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n for all_reduce,
  // (n-1)/n for all_gather and reduce_scatter, 1 for broadcast and send/recv.
  for (int n = 1; n <= 8; ++n) {
    EXPECT_DOUBLE_EQ(BusBandwidthFactor("all_reduce", n), 2.0 * (n - 1) / n);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor("all_gather", n), (n - 1.0) / n);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor("reduce_scatter", n), (n - 1.0) / n);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor("broadcast", n), 1.0);
    EXPECT_DOUBLE_EQ(BusBandwidthFactor("send_recv", n), 1.0);
  }
  // A worked row: an 8-GPU all_reduce of 1 GiB in 8.156 ms is algbw 131.65 GB/s
  // and busbw 230.4 GB/s, as nccl-tests prints for a p4d.24xlarge.
  const CollectivePoint p = Point("all_reduce", 8, 1073741824.0, 8.156e-3);
  EXPECT_NEAR(p.algbw_GBps, 131.65, 0.01);
  EXPECT_NEAR(p.busbw_GBps, 230.39, 0.01);
}

TEST(SummarizeTest, MedianAndSpreadOfRepetitions) {
  const Timing odd = Summarize({3, 1, 2});
  EXPECT_EQ(odd.repetitions, 3);
  EXPECT_DOUBLE_EQ(odd.median_s, 2);
  EXPECT_DOUBLE_EQ(odd.spread(), 1.0);
  EXPECT_DOUBLE_EQ(Summarize({4, 1, 2, 3}).median_s, 2.5);
}

TEST(FitCollectiveTest, RecoversLatencyAndBandwidthPerRange) {
  // Up to 64 KiB: 12 us + bytes / 5 GB/s; to 16 MiB: 20 us + bytes / 50 GB/s;
  // above: 40 us + bytes / 200 GB/s. Ranges split at 4 KiB x 16^i.
  std::vector<CollectivePoint> points;
  for (double b : GeometricSizes(8, 1 << 30, 2)) {
    const double t = b < 65536      ? 12e-6 + b / 5e9
                     : b < 16777216 ? 20e-6 + b / 50e9
                                    : 40e-6 + b / 200e9;
    points.push_back(Point("all_reduce", 8, b, t));
  }
  const CollectiveFit fit = FitCollective(points);
  ASSERT_EQ(fit.ranges.size(), 6u);
  EXPECT_EQ(fit.op, "all_reduce");
  EXPECT_EQ(fit.ranks, 8);
  EXPECT_NEAR(fit.ranges[0].latency_s, 12e-6, 1e-9);
  EXPECT_NEAR(fit.ranges[1].algbw_GBps, 5, 1e-3);
  EXPECT_NEAR(fit.ranges[2].algbw_GBps, 50, 1e-2);
  EXPECT_NEAR(fit.ranges[3].latency_s, 20e-6, 1e-8);
  EXPECT_NEAR(fit.ranges[5].latency_s, 40e-6, 1e-7);
  EXPECT_NEAR(fit.ranges[5].algbw_GBps, 200, 1e-2);
  for (const CollectiveRange& r : fit.ranges) EXPECT_LT(r.max_error, 1e-6);
  EXPECT_DOUBLE_EQ(fit.ranges[0].min_bytes, 8);
  EXPECT_DOUBLE_EQ(fit.ranges[1].min_bytes, 4096);
  EXPECT_DOUBLE_EQ(fit.ranges[5].max_bytes, 1 << 30);
}

TEST(FitCollectiveTest, ReportsTheErrorOfNoisyPoints) {
  std::vector<CollectivePoint> points;
  int i = 0;
  for (double b : GeometricSizes(1 << 23, 1 << 30, 2)) {
    const double noise = (i++ % 2) ? 1.1 : 0.9;  // +-10%
    points.push_back(Point("all_gather", 4, b, (30e-6 + b / 100e9) * noise));
  }
  const CollectiveFit fit = FitCollective(points);
  ASSERT_EQ(fit.ranges.size(), 2u);  // 8 MiB alone joins 16-128 MiB; 256 MiB-1 GiB
  for (const CollectiveRange& r : fit.ranges) {
    EXPECT_GT(r.max_error, 0.05);
    EXPECT_LT(r.max_error, 0.25);
    EXPECT_NEAR(r.algbw_GBps, 100, 20);
  }
}

TEST(FitCollectiveTest, ALatencyBoundRangeIsAConstantNotASlope) {
  // Noise at tiny sizes: times that fall with size must not give a slope that
  // predicts 2 KiB at many times its measured time.
  std::vector<CollectivePoint> points;
  const double times[] = {0.19e-6, 0.21e-6, 0.17e-6, 0.19e-6, 0.15e-6, 0.22e-6, 0.14e-6};
  int i = 0;
  for (double b : GeometricSizes(8, 512, 2)) points.push_back(Point("send_recv", 2, b, times[i++]));
  const CollectiveFit fit = FitCollective(points);
  ASSERT_EQ(fit.ranges.size(), 1u);
  EXPECT_LT(fit.ranges[0].max_error, 0.5);
  EXPECT_NEAR(fit.ranges[0].latency_s, 0.18e-6, 0.02e-6);
}

TEST(FitCollectiveTest, ARangeWithOnePointJoinsItsNeighbour) {
  std::vector<CollectivePoint> points = {Point("broadcast", 2, 1024, 10e-6),
                                         Point("broadcast", 2, 4096, 11e-6),
                                         Point("broadcast", 2, 1 << 20, 40e-6)};
  const CollectiveFit fit = FitCollective(points);
  ASSERT_EQ(fit.ranges.size(), 1u);
  EXPECT_DOUBLE_EQ(fit.ranges[0].max_bytes, 1 << 20);
  EXPECT_GE(fit.ranges[0].latency_s, 0);
}

GemmPoint Gemm(const std::string& dtype, int64_t n, double tflops, bool verified = true) {
  GemmPoint g;
  g.dtype = dtype;
  g.shape = {n, n, n, "square"};
  g.flops = 2.0 * n * n * n;
  g.timing = Summarize({g.flops / (tflops * 1e12)});
  g.tflops = tflops;
  g.verified = verified;
  return g;
}

TEST(FitGemmTableTest, AscendingVerifiedPointsOfTheDtype) {
  const std::vector<GemmPoint> points = {Gemm("bf16", 4096, 600), Gemm("bf16", 1024, 300),
                                         Gemm("fp32", 1024, 40), Gemm("bf16", 2048, 1, false)};
  const std::vector<TablePoint> t = FitGemmTable(points, "bf16");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(t[0].x, 2.0 * 1024 * 1024 * 1024);
  EXPECT_NEAR(t[0].y, 300e12, 1e3);
  EXPECT_NEAR(t[1].y, 600e12, 1e3);
  EXPECT_TRUE(FitGemmTable(points, "fp8").empty());
}

TEST(FitGemmTableTest, MergesShapesOfAlmostEqualFlops) {
  GemmPoint a = Gemm("fp16", 2048, 400), b = Gemm("fp16", 2048, 500);
  b.shape = {4096, 1024, 2048, "other"};  // same FLOPs, another shape
  const std::vector<TablePoint> t = FitGemmTable({a, b}, "fp16");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_NEAR(t[0].y, 450e12, 1e3);
}

TEST(FitGemmTableTest, LeaveOneOutErrorFindsAnOutlier) {
  std::vector<GemmPoint> smooth;
  for (int64_t n : {512, 1024, 2048, 4096, 8192}) {
    smooth.push_back(Gemm("bf16", n, 100 * std::log2(static_cast<double>(n)) - 800));
  }
  EXPECT_LT(GemmTableError(smooth, "bf16"), 0.01);  // linear in log(flops): exact
  smooth[2] = Gemm("bf16", 2048, 900);              // 3x the curve
  EXPECT_GT(GemmTableError(smooth, "bf16"), 0.5);
}

}  // namespace
}  // namespace trainsim::calibrate
