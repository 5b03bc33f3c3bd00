#include "calibrate/plan.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

namespace trainsim::calibrate {
namespace {

TEST(PlanTest, TransformerShapesCoverTpAndMicroBatchWithoutDuplicates) {
  const std::vector<GemmShape> shapes = TransformerGemmShapes(false);
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  for (const GemmShape& s : shapes) {
    EXPECT_TRUE(seen.insert({s.m, s.n, s.k}).second) << s.origin;
    EXPECT_GT(s.m * s.n * s.k, 0);
  }
  // GPT-3 175B (h 12288, ffn 49152, seq 2048) at tp 8, micro batch 4: the MLP
  // down projection is m = 4 x 2048 tokens, n = 12288, k = 49152 / 8.
  EXPECT_TRUE(seen.count({8192, 12288, 6144}));
  // Llama-2 70B's grouped-query QKV at tp 1: (64 + 2 x 8) heads x 128.
  EXPECT_TRUE(seen.count({4096, 10240, 8192}));
  EXPECT_LT(TransformerGemmShapes(true).size(), shapes.size());
}

TEST(PlanTest, CollectiveSizesRunFrom8BytesTo1GiBInDoublings) {
  DeviceInfo gpu;
  gpu.backend = "cuda";
  gpu.dtypes = {"fp32", "bf16"};
  const MeasurePlan p = DefaultPlan(gpu, false);
  ASSERT_EQ(p.collective_bytes.size(), 28u);  // 2^3 .. 2^30
  EXPECT_DOUBLE_EQ(p.collective_bytes.front(), 8);
  EXPECT_DOUBLE_EQ(p.collective_bytes.back(), 1073741824.0);
  EXPECT_EQ(p.dtypes, gpu.dtypes);
  EXPECT_EQ(p.collective_ops.size(), 5u);
}

TEST(PlanTest, CpuPlanStaysSmall) {
  DeviceInfo cpu;
  cpu.backend = "cpu";
  const MeasurePlan quick = DefaultPlan(cpu, true);
  for (const GemmShape& s : quick.gemm_shapes) EXPECT_LE(2.0 * s.m * s.n * s.k, 1e9);
  EXPECT_EQ(quick.dtypes, std::vector<std::string>{"fp32"});
  for (const GemmShape& s : DefaultPlan(cpu, false).gemm_shapes) {
    EXPECT_LE(2.0 * s.m * s.n * s.k, 2e11) << s.origin;
  }
}

}  // namespace
}  // namespace trainsim::calibrate
