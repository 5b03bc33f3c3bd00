// Hardware profiles in the simulator: they must describe the scenario's GPU,
// their measured figures replace the catalog's, and what they lack keeps the
// catalog's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/catalog.h"
#include "core/hardware_profile.h"
#include "core/scenario.h"
#include "sim/simulate.h"
#include "sim/workload.h"
#include "tests/test_util.h"

namespace trainsim::sim {
namespace {

Scenario Gpt() {
  Expected<Scenario> s = ParseScenario(
      R"({"model": "gpt-1.7b", "training": {"global_batch": 16, "micro_batch": 2},
          "cluster": {"instance": "p4d.24xlarge"}, "parallel": {"tp": 1}})",
      "test.json", test::BuiltinCatalog());
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

std::shared_ptr<HardwareProfile> A100Profile() {
  auto p = std::make_shared<HardwareProfile>();
  p->gpu = "A100-SXM4-40GB";
  p->provenance.device = "NVIDIA A100-SXM4-40GB";
  return p;
}

double ComputePerMicrobatch(const Scenario& s) {
  Expected<StepProgram> p = BuildStepProgram(s, ModelParams());
  EXPECT_TRUE(p.ok()) << p.status().message();
  double sum = 0;
  for (const StageProgram& stage : p->stages) sum += stage.compute_per_microbatch_s;
  return sum;
}

TEST(ProfileTest, AProfileOfAnotherGpuIsRejected) {
  auto p = A100Profile();
  p->gpu = "H100-SXM5-80GB";
  Scenario s = Gpt();
  Status st = AttachProfile(p, "h100.json", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "h100.json: the profile measured H100-SXM5-80GB (NVIDIA A100-SXM4-40GB), but instance "
            "p4d.24xlarge has A100-SXM4-40GB: a profile applies only to the GPU it measured");
  p->gpu = "";
  st = AttachProfile(p, "x.json", &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("is not a catalog GPU; run trainsim-calibrate with --gpu NAME"),
            std::string::npos);
}

TEST(ProfileTest, MeasuredGemmRatesSetTheComputeTime) {
  Scenario base = Gpt();
  const double catalog_time = ComputePerMicrobatch(base);
  // Half the model's GEMM rate (0.69 x 312 TFLOP/s), flat over sizes.
  auto p = A100Profile();
  const double rate = 0.5 * 0.69 * 312e12;
  p->gemm_tables["bf16"] = {{1e6, rate}, {1e15, rate}};
  Scenario slow = Gpt();
  ASSERT_TRUE(AttachProfile(p, "p.json", &slow).ok());
  const double measured_time = ComputePerMicrobatch(slow);
  EXPECT_GT(measured_time, 1.6 * catalog_time);  // GEMMs dominate: close to 2x
  EXPECT_LT(measured_time, 2.0 * catalog_time);
  // A table for another dtype changes nothing.
  auto other = A100Profile();
  other->gemm_tables["fp32"] = {{1e6, 1e12}};
  Scenario same = Gpt();
  ASSERT_TRUE(AttachProfile(other, "p.json", &same).ok());
  EXPECT_DOUBLE_EQ(ComputePerMicrobatch(same), catalog_time);
}

TEST(ProfileTest, ComputeModelUsesTheTableAtItsPoints) {
  const std::vector<TablePoint> table = {{1e9, 100e12}, {1e12, 400e12}};
  ComputeModel cm(312e12, 1.5e12, ModelParams(), MeasuredGemms{&table, nullptr, "bf16"});
  EXPECT_DOUBLE_EQ(cm.GemmSeconds(1e9), 1e9 / 100e12);
  EXPECT_DOUBLE_EQ(cm.GemmSeconds(1e12), 1e12 / 400e12);
}

TEST(ProfileTest, AMeasuredShapeTakesItsOwnRateNotTheTables) {
  HardwareProfile p;
  p.gemm_tables["bf16"] = {{1e6, 100e12}, {1e15, 100e12}};
  ProfilePoint g;
  g.kind = "gemm";
  g.what = "bf16";
  g.m = 4096, g.n = 1024, g.k = 512;
  g.flops = 2 * g.m * g.n * g.k;
  g.rate = 50e12;
  g.repetitions = 1;
  p.points.push_back(g);
  g.verified = false;  // an unverified point of another shape is not used
  g.m = 2048;
  g.rate = 1e12;
  p.points.push_back(g);
  ComputeModel cm(312e12, 1.5e12, ModelParams(), MeasuredGemms{&p.gemm_tables["bf16"], &p, "bf16"});
  const double measured = 2.0 * 4096 * 1024 * 512;
  const double other = 2.0 * 2048 * 1024 * 512;
  EXPECT_DOUBLE_EQ(cm.GemmSeconds({{4096, 1024, 512}}), measured / 50e12);
  EXPECT_DOUBLE_EQ(cm.GemmSeconds({{2048, 1024, 512}}), other / 100e12);
  EXPECT_DOUBLE_EQ(cm.GemmSeconds({{4096, 1024, 512}, {2048, 1024, 512}}),
                   measured / 50e12 + other / 100e12);
  // Without a profile a block is one kernel of its total FLOPs.
  ComputeModel model(312e12, 1.5e12, ModelParams());
  EXPECT_DOUBLE_EQ(model.GemmSeconds({{4096, 1024, 512}, {2048, 1024, 512}}),
                   model.GemmSeconds(measured + other));
}

TEST(ProfileTest, HostLinkAndNvswitchAllReduceReplaceCatalogFigures) {
  auto p = A100Profile();
  p->host_to_device_GBps = 20;
  p->device_to_host_GBps = 22;
  // 8 GPUs (the node), largest range 137.14 GB/s algbw = 240 GB/s busbw of the 300 GB/s
  // per-direction NVLink: efficiency 0.8.
  const double algbw = 240.0 / (2 * 7.0 / 8);
  p->collectives.push_back({"all_reduce", 8, 1, {{8, 1e9, 30e-6, algbw, 0.01}}});
  Scenario s = Gpt();
  ASSERT_TRUE(AttachProfile(p, "p.json", &s).ok());
  EXPECT_DOUBLE_EQ(s.instance.pcie_GBps_per_dir, 20);
  ASSERT_TRUE(s.instance.gpu.nvlink_efficiency.has_value());
  EXPECT_NEAR(*s.instance.gpu.nvlink_efficiency, 0.8, 1e-12);
  EXPECT_NE(s.instance.gpu.nvlink_efficiency_provenance.find("measured"), std::string::npos);
}

// On an NVLink SHARP node the measured all-reduce ran as NVLS: it sets the NVLS
// efficiency (S (n + 1) / n through each link per algbw unit), not the ring one.
TEST(ProfileTest, NvlinkSharpAllReduceSetsTheNvlsEfficiency) {
  auto p = A100Profile();
  // 8 GPUs; algbw 160 GB/s moves 160 x 9/8 = 180 GB/s through each of the 300 GB/s links: 0.6.
  p->collectives.push_back({"all_reduce", 8, 1, {{8, 1e9, 30e-6, 160.0, 0.01}}});
  Scenario s = Gpt();
  s.instance.nvlink_sharp = true;
  const std::optional<double> catalog_nvlink = s.instance.gpu.nvlink_efficiency;
  ASSERT_TRUE(AttachProfile(p, "p.json", &s).ok());
  ASSERT_TRUE(s.instance.gpu.nvls_efficiency.has_value());
  EXPECT_NEAR(*s.instance.gpu.nvls_efficiency, 0.6, 1e-12);
  EXPECT_NE(s.instance.gpu.nvls_efficiency_provenance.find("NVLink SHARP"), std::string::npos);
  EXPECT_EQ(s.instance.gpu.nvlink_efficiency, catalog_nvlink);
}

TEST(ProfileTest, ScenarioFileNamesItsProfileRelativeToItsFolder) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "trainsim-profile-test";
  std::filesystem::create_directories(dir / "profiles");
  auto p = A100Profile();
  p->memory_GBps = 1000;
  std::ofstream(dir / "profiles" / "a100.json") << HardwareProfileToJson(*p);
  std::ofstream(dir / "s.json") << R"({"model": "gpt-1.7b", "training": {"global_batch": 16},
            "cluster": {"instance": "p4d.24xlarge", "profile": "profiles/a100.json"}})";
  Expected<Scenario> s = LoadScenarioFile((dir / "s.json").string(), test::BuiltinCatalog());
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_NE(s->profile, nullptr);
  EXPECT_DOUBLE_EQ(*s->profile->memory_GBps, 1000);
  EXPECT_EQ(s->cluster.profile, (dir / "profiles" / "a100.json").string());
  // A broken profile is reported with its own file and position.
  std::ofstream(dir / "profiles" / "a100.json") << "{\"version\": 1, \"memory_GBps\": -1}";
  Expected<Scenario> bad = LoadScenarioFile((dir / "s.json").string(), test::BuiltinCatalog());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("a100.json:1:31: memory_GBps: expected a number"),
            std::string::npos)
      << bad.status().message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainsim::sim
