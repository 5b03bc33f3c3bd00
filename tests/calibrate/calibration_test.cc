#include "calibrate/calibration.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace trainsim::calibrate {
namespace {

Measurements CudaLike() {
  Measurements m;
  m.device.backend = "cuda";
  m.device.name = "NVIDIA H100 80GB HBM3";
  m.device.devices = 1;
  m.device.dtypes = {"fp32", "tf32", "fp16", "bf16", "fp8"};
  for (int64_t n : {1024, 4096}) {
    GemmPoint g;
    g.dtype = "bf16";
    g.shape = {n, n, n, "square"};
    g.flops = 2.0 * n * n * n;
    g.timing = Summarize({g.flops / 500e12});
    g.tflops = 500;
    g.verified = true;
    m.gemm.push_back(g);
  }
  for (double bytes : {1e6, 1e9}) {
    for (const char* what : {"d2d_kernel", "h2d_pinned", "d2h_pinned"}) {
      BandwidthPoint b;
      b.what = what;
      b.bytes = bytes;
      b.timing = Summarize({1e-3});
      b.GBps = bytes == 1e9 ? (std::string(what) == "d2d_kernel" ? 3000 : 50) : 10;
      m.memory.push_back(b);
    }
  }
  return m;
}

const Catalog& Builtin() {
  static const Catalog catalog = [] {
    Expected<Catalog> c = Catalog::LoadBuiltin(Catalog::DefaultDir());
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? std::move(*c) : Catalog();
  }();
  return catalog;
}

MeasurePlan Plan() {
  MeasurePlan p;
  p.warmup = 2;
  p.repetitions = 5;
  return p;
}

TEST(CalibrationTest, ProfileTakesTablesLargestBuffersAndNamesWhatWasNotMeasured) {
  ProfileOptions o;
  o.date = "2026-11-21T00:00:00Z";
  o.catalog = &Builtin();
  const HardwareProfile p = BuildProfile(CudaLike(), Plan(), o);
  EXPECT_EQ(p.gpu, "H100-SXM5-80GB");
  ASSERT_TRUE(p.gemm_tables.count("bf16"));
  EXPECT_EQ(p.gemm_tables.at("bf16").size(), 2u);
  EXPECT_DOUBLE_EQ(*p.memory_GBps, 3000);  // the 1 GB copy, not the 1 MB one
  EXPECT_DOUBLE_EQ(*p.host_to_device_GBps, 50);
  EXPECT_TRUE(p.provenance.complete);
  EXPECT_EQ(p.provenance.repetitions, 5);
  std::string not_measured;
  for (const std::string& s : p.not_measured) not_measured += s + "\n";
  EXPECT_NE(not_measured.find("gemm fp8: no verified point"), std::string::npos);
  EXPECT_NE(not_measured.find("collectives between devices"), std::string::npos);
  EXPECT_TRUE(p.catalog_json.empty());
}

TEST(CalibrationTest, FailuresMakeTheProfileIncompleteAndAreKept) {
  Measurements m = CudaLike();
  m.failures.push_back({"gemm fp8 16384x16384x16384", "CUBLAS_STATUS_ALLOC_FAILED"});
  const HardwareProfile p = BuildProfile(m, Plan(), ProfileOptions());
  EXPECT_FALSE(p.provenance.complete);
  ASSERT_EQ(p.failures.size(), 1u);
  EXPECT_NE(SummaryTable(p, nullptr).find("CUBLAS_STATUS_ALLOC_FAILED"), std::string::npos);
}

// The catalog's device_names name the GPU of a CUDA device.
TEST(CalibrationTest, CatalogGpuNamesOfCudaDevices) {
  const Catalog& c = Builtin();
  EXPECT_EQ(CatalogGpuName(c, "NVIDIA H100 80GB HBM3"), "H100-SXM5-80GB");
  EXPECT_EQ(CatalogGpuName(c, "NVIDIA A100-SXM4-40GB"), "A100-SXM4-40GB");
  EXPECT_EQ(CatalogGpuName(c, "NVIDIA A100-SXM4-80GB"), "A100-SXM4-80GB");
  EXPECT_EQ(CatalogGpuName(c, "Tesla V100-SXM2-32GB"), "V100-SXM2-32GB");
  EXPECT_EQ(CatalogGpuName(c, "Tesla V100-SXM2-16GB"), "V100-SXM2-16GB");
  EXPECT_EQ(CatalogGpuName(c, "NVIDIA H200"), "H200-141GB");
  EXPECT_EQ(CatalogGpuName(c, "Tesla T4"), "T4");
  EXPECT_EQ(CatalogGpuName(c, "NVIDIA A10G"), "A10G");
  EXPECT_EQ(CatalogGpuName(c, "NVIDIA H100 PCIe"), "");  // not the catalog's SXM part
  EXPECT_EQ(CatalogGpuName(c, "NVIDIA GeForce RTX 4090"), "");
}

class WriteProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("trainsim-write-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "profile.json").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(WriteProfileTest, APartialRunDoesNotReplaceACompleteProfileWithoutForce) {
  HardwareProfile good = BuildProfile(CudaLike(), Plan(), ProfileOptions());
  std::string written;
  ASSERT_TRUE(WriteProfile(good, path_, false, &written).ok());
  EXPECT_EQ(written, path_);

  Measurements failed = CudaLike();
  failed.failures.push_back({"nccl all_reduce", "unhandled system error"});
  HardwareProfile partial = BuildProfile(failed, Plan(), ProfileOptions());
  ASSERT_TRUE(WriteProfile(partial, path_, false, &written).ok());
  EXPECT_EQ(written, path_ + ".partial");
  EXPECT_TRUE(LoadHardwareProfile(path_)->provenance.complete);
  EXPECT_FALSE(LoadHardwareProfile(path_ + ".partial")->provenance.complete);

  ASSERT_TRUE(WriteProfile(partial, path_, true, &written).ok());
  EXPECT_EQ(written, path_);
  EXPECT_FALSE(LoadHardwareProfile(path_)->provenance.complete);
  const auto files = std::distance(std::filesystem::directory_iterator(dir_), {});
  EXPECT_EQ(files, 2);  // profile.json and profile.json.partial: no temporary left
}

TEST_F(WriteProfileTest, UnwritablePathIsAClearError) {
  std::string written;
  Status s =
      WriteProfile(HardwareProfile(), (dir_ / "no" / "such" / "p.json").string(), false, &written);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), (dir_ / "no" / "such" / "p.json").string() +
                             ": cannot write: No such file or directory");
}

TEST(ChooseBackendTest, UnknownBackendIsAnError) {
  Expected<ChosenBackend> b = ChooseBackend("tpu");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), "--backend: expected cuda, cpu or auto, got \"tpu\"");
}

TEST(ChooseBackendTest, AutoFallsBackToTheCpuWhenNoGpuIsVisible) {
  Expected<ChosenBackend> cuda = ChooseBackend("cuda");
  if (cuda.ok()) GTEST_SKIP() << "a CUDA device is visible: auto picks it";
  Expected<ChosenBackend> b = ChooseBackend("auto");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->device.backend, "cpu");
  EXPECT_NE(b->note.find("using the cpu backend"), std::string::npos) << b->note;
  EXPECT_FALSE(cuda.status().message().empty());
}

}  // namespace
}  // namespace trainsim::calibrate
