// The cuda measurement backend. Without a GPU only Probe's refusal and the
// launcher environment are checked; with one, a tiny plan runs once and the
// tests read its measurements.
#include "calibrate/cuda/cuda_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/measure.h"

namespace trainsim::calibrate {
namespace {

// Whether this machine shows an NVIDIA GPU to this process, judged without
// CUDA: the driver's control node exists and CUDA_VISIBLE_DEVICES does not
// hide every device.
bool GpuExpected() {
  if (!std::filesystem::exists("/dev/nvidiactl")) return false;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible == nullptr || (*visible != '\0' && std::string(visible) != "-1");
}

TEST(CudaBackendProbe, DescribesTheDeviceOrSaysNoCudaDeviceIsVisible) {
  std::unique_ptr<Backend> backend = MakeCudaBackend();
  if (backend == nullptr) GTEST_SKIP() << "built without the CUDA backend";
  Expected<DeviceInfo> info = backend->Probe();
  if (!GpuExpected()) {
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.status().code(), Status::Code::kNotFound);
    EXPECT_EQ(info.status().message().rfind("no CUDA device is visible (", 0), 0u)
        << info.status().message();
    return;
  }
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->backend, "cuda");
  EXPECT_FALSE(info->name.empty());
  EXPECT_GE(info->devices, 1);
  EXPECT_EQ(info->nodes, 1);
  EXPECT_GT(info->memory_bytes, 1e9);
  EXPECT_EQ(info->driver.rfind("CUDA driver ", 0), 0u) << info->driver;
  EXPECT_EQ(info->runtime.rfind("CUDA runtime ", 0), 0u) << info->runtime;
  EXPECT_EQ(info->blas.rfind("cuBLAS ", 0), 0u) << info->blas;
  EXPECT_FALSE(info->collectives.empty());
  ASSERT_FALSE(info->dtypes.empty());
  EXPECT_EQ(info->dtypes.front(), "fp32");
  EXPECT_FALSE(info->host.empty());
}

// Sets launcher variables for one test and restores the environment after.
class LauncherEnvironment {
 public:
  explicit LauncherEnvironment(const std::map<std::string, std::string>& vars) {
    for (const char* name : kNames) {
      if (const char* v = std::getenv(name)) saved_[name] = v;
      unsetenv(name);
    }
    for (const auto& [name, value] : vars) setenv(name.c_str(), value.c_str(), 1);
  }
  ~LauncherEnvironment() {
    for (const char* name : kNames) unsetenv(name);
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  static constexpr const char* kNames[] = {
      "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK",
      "SLURM_NTASKS"};
  std::map<std::string, std::string> saved_;
};

struct LaunchCase {
  std::map<std::string, std::string> env;
  int rank, size;
  bool launched, primary;
};

TEST(CudaBackendLaunch, RanksComeFromTheLauncherEnvironment) {
  const std::vector<LaunchCase> cases = {
      {{}, 0, 1, false, true},
      {{{"SLURM_NTASKS", "8"}}, 0, 1, false, true},  // inside a job, not launched as a rank
      {{{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "16"}}, 0, 16, true, true},
      {{{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "16"}}, 3, 16, true, false},
      {{{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}, 1, 2, true, false},
      {{{"PMIX_RANK", "0"}, {"SLURM_NTASKS", "4"}}, 0, 4, true, true},
      {{{"PMIX_RANK", "0"}}, 0, 1, true, true},
      {{{"PMIX_RANK", "5"}}, 5, 6, true, false},  // size unknown: at least rank + 1
  };
  for (const LaunchCase& c : cases) {
    LauncherEnvironment env(c.env);
    const LaunchRanks r = LaunchRanksFromEnvironment();
    const std::string label = c.env.empty() ? "no launcher" : c.env.begin()->first;
    EXPECT_EQ(r.rank, c.rank) << label;
    EXPECT_EQ(r.size, c.size) << label;
    EXPECT_EQ(r.launched, c.launched) << label;
    EXPECT_EQ(IsPrimaryRank(), c.primary) << label;
  }
}

class RecordingObserver : public Observer {
 public:
  struct Call {
    std::string phase;
    int done, total;
    std::string item;
  };
  void Progress(const std::string& phase, int done, int total, const std::string& item) override {
    calls.push_back({phase, done, total, item});
  }
  std::vector<Call> calls;
};

// Every dtype (those the device has: tf32 and fp8 take other cuBLASLt paths
// and tolerances), two shapes (multiples of 16, as fp8 needs), one memory
// size, the collectives that one rank can run from 1 KiB to 4 MiB.
MeasurePlan TinyPlan() {
  MeasurePlan plan;
  plan.quick = true;
  plan.warmup = 1;
  plan.repetitions = 3;
  plan.dtypes = AllDtypes();
  plan.gemm_shapes = {{256, 256, 256, "square 256"}, {512, 1024, 768, "rectangle"}};
  plan.memory_bytes = {16.0 * (1 << 20)};
  plan.collective_ops = {"all_reduce", "all_gather", "reduce_scatter", "broadcast"};
  for (double b = 1024; b <= 4.0 * (1 << 20); b *= 2) plan.collective_bytes.push_back(b);
  plan.collective_ranks = {1};
  return plan;
}

struct TinyRun {
  DeviceInfo device;
  Status status;
  Measurements out;
  RecordingObserver observer;
};

// Skips (with the reason) when no backend or no device; otherwise runs
// TinyPlan once for every test that reads it.
class CudaBackendGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = MakeCudaBackend();
    if (backend_ == nullptr) GTEST_SKIP() << "built without the CUDA backend";
    Expected<DeviceInfo> info = backend_->Probe();
    if (!info.ok()) GTEST_SKIP() << "no CUDA device visible: " << info.status().message();
  }

  const TinyRun& Tiny() {
    static TinyRun* run = [this] {
      auto* r = new TinyRun;
      r->device = *backend_->Probe();
      r->status = backend_->Run(TinyPlan(), &r->observer, &r->out);
      return r;
    }();
    return *run;
  }

  std::unique_ptr<Backend> backend_;
};

size_t WantedDtypes(const DeviceInfo& device) {
  size_t n = 0;
  for (const std::string& d : TinyPlan().dtypes) {
    n += std::count(device.dtypes.begin(), device.dtypes.end(), d);
  }
  return n;
}

bool HasNccl(const DeviceInfo& device) { return device.collectives.rfind("NCCL ", 0) == 0; }

TEST_F(CudaBackendGpu, TinyPlanRunsWithoutFailures) {
  const TinyRun& run = Tiny();
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_EQ(run.out.device.backend, "cuda");
  for (const Failure& f : run.out.failures) {
    const bool expected = !HasNccl(run.device) && f.what == "collectives";
    EXPECT_TRUE(expected) << f.what << ": " << f.error;
  }
}

TEST_F(CudaBackendGpu, EveryGemmPointIsVerifiedAndFast) {
  const TinyRun& run = Tiny();
  EXPECT_EQ(run.out.gemm.size(), 2 * WantedDtypes(run.device));
  for (const GemmPoint& p : run.out.gemm) {
    const std::string label = p.dtype + " " + p.shape.origin;
    EXPECT_TRUE(p.verified) << label;
    EXPECT_EQ(p.flops, 2.0 * p.shape.m * p.shape.n * p.shape.k) << label;
    EXPECT_GT(p.tflops, 0) << label;
    EXPECT_EQ(p.timing.repetitions, 3) << label;
    EXPECT_NEAR(p.tflops, p.flops / p.timing.median_s / 1e12, 1e-9 * p.tflops) << label;
  }
}

TEST_F(CudaBackendGpu, EveryMemoryTestHasABandwidth) {
  const TinyRun& run = Tiny();
  std::vector<std::string> names;
  for (const BandwidthPoint& p : run.out.memory) {
    names.push_back(p.what);
    EXPECT_GT(p.GBps, 0) << p.what;
    EXPECT_GT(p.bytes, 0) << p.what;
  }
  const std::vector<std::string> expected = {"d2d_kernel", "d2d_memcpy", "h2d_pinned",
                                             "d2h_pinned", "layernorm",  "gelu"};
  EXPECT_EQ(names, expected);
}

TEST_F(CudaBackendGpu, CollectiveBusBandwidthIsAlgorithmBandwidthTimesTheFactor) {
  const TinyRun& run = Tiny();
  if (!HasNccl(run.device)) GTEST_SKIP() << "built without NCCL";
  EXPECT_EQ(run.out.collectives.size(),
            TinyPlan().collective_ops.size() * TinyPlan().collective_bytes.size());
  for (const CollectivePoint& p : run.out.collectives) {
    EXPECT_EQ(p.ranks, 1);
    EXPECT_EQ(p.nodes, 1);
    EXPECT_GT(p.algbw_GBps, 0) << p.op << " " << p.bytes;
    EXPECT_DOUBLE_EQ(p.busbw_GBps, p.algbw_GBps * BusBandwidthFactor(p.op, p.ranks));
  }
}

// Every operation over two GPUs (send_recv needs two), where there are two.
TEST_F(CudaBackendGpu, CollectivesOverTwoDevicesWhereThereAreTwo) {
  Expected<DeviceInfo> info = backend_->Probe();
  ASSERT_TRUE(info.ok()) << info.status().message();
  if (!HasNccl(*info)) GTEST_SKIP() << "built without NCCL";
  if (info->devices < 2) GTEST_SKIP() << "only one CUDA device is visible";
  MeasurePlan plan;
  plan.warmup = 1;
  plan.repetitions = 3;
  plan.collective_ops = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "send_recv"};
  plan.collective_bytes = {8, 1 << 20};
  plan.collective_ranks = {2};
  Measurements out;
  Status st = backend_->Run(plan, nullptr, &out);
  ASSERT_TRUE(st.ok()) << st.message();
  for (const Failure& f : out.failures) ADD_FAILURE() << f.what << ": " << f.error;
  EXPECT_EQ(out.collectives.size(), plan.collective_ops.size() * plan.collective_bytes.size());
  for (const CollectivePoint& p : out.collectives) {
    EXPECT_EQ(p.ranks, 2) << p.op;
    EXPECT_GT(p.algbw_GBps, 0) << p.op << " " << p.bytes;
    EXPECT_DOUBLE_EQ(p.busbw_GBps, p.algbw_GBps * BusBandwidthFactor(p.op, p.ranks));
  }
}

TEST_F(CudaBackendGpu, ProgressNamesEveryItemBeforeMeasuringIt) {
  const TinyRun& run = Tiny();
  std::map<std::string, int> per_phase;
  for (const RecordingObserver::Call& c : run.observer.calls) {
    EXPECT_EQ(c.done, per_phase[c.phase]++) << c.phase << " " << c.item;
    EXPECT_LT(c.done, c.total) << c.phase << " " << c.item;
  }
  EXPECT_EQ(per_phase["gemm"], static_cast<int>(2 * WantedDtypes(run.device)));
  EXPECT_EQ(per_phase["memory"], 6);
  ASSERT_FALSE(run.observer.calls.empty());
  EXPECT_EQ(run.observer.calls.front().item, "fp32 256x256x256");
}

TEST_F(CudaBackendGpu, AbsurdGemmShapeIsAFailureAndLaterShapesAreStillMeasured) {
  MeasurePlan plan;
  plan.warmup = 0;
  plan.repetitions = 1;
  plan.dtypes = {"fp32"};
  plan.gemm_shapes = {{1 << 20, 1 << 20, 1 << 20, "absurd"}, {128, 128, 128, "small"}};
  Measurements out;
  Status st = backend_->Run(plan, nullptr, &out);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(out.failures.size(), 1u);
  EXPECT_EQ(out.failures[0].what, "gemm fp32 1048576x1048576x1048576");
  EXPECT_NE(out.failures[0].error.find("cudaMalloc"), std::string::npos) << out.failures[0].error;
  ASSERT_EQ(out.gemm.size(), 1u);
  EXPECT_EQ(out.gemm[0].shape.origin, "small");
  EXPECT_TRUE(out.gemm[0].verified);
}

}  // namespace
}  // namespace trainsim::calibrate
