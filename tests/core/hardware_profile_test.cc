#include "core/hardware_profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace trainsim {
namespace {

HardwareProfile SampleProfile() {
  HardwareProfile p;
  p.provenance.tool = "trainsim-calibrate";
  p.provenance.backend = "cuda";
  p.provenance.device = "NVIDIA H100 80GB HBM3";
  p.provenance.devices = 8;
  p.provenance.date = "2026-11-21T10:00:00Z";
  p.provenance.warmup = 5;
  p.provenance.repetitions = 20;
  p.gpu = "H100-SXM5-80GB";
  p.gemm_tables["bf16"] = {{1e9, 200e12}, {1e12, 700e12}};
  p.gemm_table_error["bf16"] = 0.042;
  p.memory_GBps = 2900.5;
  p.host_to_device_GBps = 50;
  p.device_to_host_GBps = 52.25;
  p.collectives.push_back(
      {"all_reduce", 8, 1, {{8, 65536, 20e-6, 10, 0.05}, {131072, 1e9, 30e-6, 360, 0.02}}});
  ProfilePoint g;
  g.kind = "gemm";
  g.what = "bf16";
  g.m = g.n = g.k = 8192;
  g.origin = "square 8192";
  g.flops = 2 * 8192.0 * 8192 * 8192;
  g.repetitions = 20;
  g.median_s = 0.0016;
  g.spread = 0.01;
  g.rate = g.flops / g.median_s;
  p.points.push_back(g);
  p.failures.emplace_back("gemm fp8 16384x16384x16384", "out of memory");
  p.not_measured.push_back("gemm fp32: no verified point");
  p.network =
      NetworkFit{"p5.48xlarge", 0.91, 2, 0.012, "nccl.txt (all_reduce, 16 ranks)", 0.8, 0.05};
  return p;
}

TEST(HardwareProfileTest, JsonRoundTripIsByteIdentical) {
  const std::string text = HardwareProfileToJson(SampleProfile());
  Expected<HardwareProfile> back = ParseHardwareProfile(text, "p.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(HardwareProfileToJson(*back), text);
  EXPECT_EQ(back->gpu, "H100-SXM5-80GB");
  EXPECT_DOUBLE_EQ(*back->device_to_host_GBps, 52.25);
  EXPECT_DOUBLE_EQ(back->gemm_table_error.at("bf16"), 0.042);
  ASSERT_EQ(back->collectives.size(), 1u);
  EXPECT_EQ(back->collectives[0].ranges.size(), 2u);
  EXPECT_EQ(back->failures.size(), 1u);
  ASSERT_TRUE(back->network);
  EXPECT_EQ(back->network->instance, "p5.48xlarge");
  EXPECT_DOUBLE_EQ(back->network->efficiency, 0.91);
  EXPECT_EQ(back->network->nodes, 2);
}

// Strings in UTF-8 (raw and escaped) are written back as read.
TEST(HardwareProfileTest, NonAsciiStringsRoundTrip) {
  Expected<HardwareProfile> p = ParseHardwareProfile(
      "{\"version\": 1, \"provenance\": {\"host\": \"n\xc5\x93ud-\\u00e9-\\ud83d\\ude00\"}}",
      "p.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->provenance.host, "n\xc5\x93ud-\xc3\xa9-\xf0\x9f\x98\x80");
  Expected<HardwareProfile> back = ParseHardwareProfile(HardwareProfileToJson(*p), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->provenance.host, p->provenance.host);
}

TEST(HardwareProfileTest, GemmTableInterpolatesInLogFlopsAndHoldsFlatPastTheEnds) {
  const HardwareProfile p = SampleProfile();
  // 10^10.5 is halfway between 1e9 and 1e12 in log: halfway in FLOP/s too.
  EXPECT_NEAR(*p.GemmFlopsPerSecond("bf16", std::pow(10.0, 10.5)), 450e12, 1e6);
  EXPECT_DOUBLE_EQ(*p.GemmFlopsPerSecond("bf16", 1e3), 200e12);
  EXPECT_DOUBLE_EQ(*p.GemmFlopsPerSecond("bf16", 1e15), 700e12);
  EXPECT_FALSE(p.GemmFlopsPerSecond("fp8", 1e9).has_value());
}

TEST(HardwareProfileTest, CollectiveFitUsesTheRangeOfTheSize) {
  const HardwareProfile p = SampleProfile();
  const CollectiveFit* f = p.FindCollective("all_reduce", 8, 1);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->Seconds(1000), 20e-6 + 1000 / 10e9);
  EXPECT_DOUBLE_EQ(f->Seconds(1e8), 30e-6 + 1e8 / 360e9);
  EXPECT_EQ(p.FindCollective("all_reduce", 4, 1), nullptr);
}

struct BadProfile {
  std::string text;
  std::string error;
};

TEST(HardwareProfileTest, BadProfilesNameFileLineColumnAndField) {
  const std::vector<BadProfile> cases = {
      {"{\"version\": 2}", "p.json:1:13: version: expected an integer in [1, 1], got 2"},
      {"{\"version\": 1, \"colour\": 1}",
       "p.json:1:16: unknown field colour (known: version, provenance, gpu, gemm_tables,"},
      {"{\"version\": 1, \"gemm_tables\": {\"fp4\": []}}",
       "p.json:1:32: gemm_tables.fp4: unknown dtype; expected one of fp32, tf32, fp16, bf16, fp8"},
      {"{\"version\": 1, \"gemm_tables\": {\"bf16\": []}}",
       "p.json:1:40: gemm_tables.bf16: expected a non-empty array of {flops, tflops} points"},
      {"{\"version\": 1, \"gemm_tables\": {\"bf16\": [{\"flops\": 1e9, \"tflops\": 100},\n"
       " {\"flops\": 1e8, \"tflops\": 50}]}}",
       "p.json:2:2: gemm_tables.bf16[1].flops: must be greater than the previous point's "
       "(tables ascend in FLOPs)"},
      {"{\"version\": 1, \"gemm_tables\": {\"bf16\": [{\"flops\": 1e9, \"tflops\": -1}]}}",
       "gemm_tables.bf16[0].tflops: expected a number >= "},
      {"{\"version\": 1, \"memory_GBps\": 0}", "p.json:1:31: memory_GBps: expected a number >= "},
      {"{\"version\": 1, \"collectives\": [{\"op\": \"all_reduce\", \"ranks\": 2, \"ranges\": [\n"
       "{\"min_bytes\": 8, \"max_bytes\": 1024, \"latency_s\": 1e-5, \"algbw_GBps\": 1},\n"
       "{\"min_bytes\": 512, \"max_bytes\": 4096, \"latency_s\": 1e-5, \"algbw_GBps\": 2}]}]}",
       "p.json:3:1: collectives[0].ranges[1].min_bytes: overlaps the previous range (ranges "
       "ascend in bytes)"},
      {"{\"version\": 1, \"collectives\": [{\"op\": \"alltoall\", \"ranks\": 2, \"ranges\": []}]}",
       "collectives[0].op: expected one of"},
      {"{\"version\": 1, \"points\": [{\"kind\": \"gemm\", \"repetitions\": 3, \"median_s\": 1}]}",
       "p.json:1:27: missing required field points[0].dtype"},
      {"{\"version\": 1, \"network\": {\"instance\": \"p5.48xlarge\", \"efficiency\": 1.5, "
       "\"nodes\": 2}}",
       "network.efficiency: expected a number in [0.001, 1], got 1.5"},
      {"{\"version\": 1, \"network\": {\"efficiency\": 0.9, \"nodes\": 2}}",
       "missing required field network.instance"},
      // Not UTF-8: read, it made HardwareProfileToJson throw (found by
      // fuzz/hardware_profile_fuzzer.cc).
      {"{\"version\": 1, \"provenance\": {\"tool\": \"calibrate \x89\"}}",
       "p.json:1:50: invalid JSON: invalid UTF-8 in string: byte 0x89"},
  };
  for (const BadProfile& c : cases) {
    Expected<HardwareProfile> p = ParseHardwareProfile(c.text, "p.json");
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_NE(p.status().message().find(c.error), std::string::npos)
        << "got: " << p.status().message() << "\nwanted: " << c.error;
  }
}

TEST(HardwareProfileTest, MissingFileSaysSo) {
  Expected<HardwareProfile> p = LoadHardwareProfile("/nonexistent/profile.json");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("/nonexistent/profile.json: cannot open file"),
            std::string::npos);
}

}  // namespace
}  // namespace trainsim
