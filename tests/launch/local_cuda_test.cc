// The cuda backend of trainsim-train: each CudaOps kernel against CpuOps, a
// few training steps on the GPU against the CPU's, and two ranks under
// mpirun. Skipped (with the reason) on builds without CUDA and on machines
// without a visible GPU; the refusal of backend "cuda" there is tested
// through the real binary.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "launch/local/cuda/cuda_backend.h"
#include "launch/local/ops.h"
#include "launch/local/run_config.h"
#include "launch/local/trainer.h"
#include "tests/test_util.h"

namespace trainsim::local {
namespace {

#ifdef TRAINSIM_TRAIN_BINARY
constexpr char kBinary[] = TRAINSIM_TRAIN_BINARY;
#else
constexpr char kBinary[] = "";
#endif

// Why the GPU tests cannot run here, or "" when they can.
std::string NoGpuReason() {
  if (!BuiltWithCuda()) return "built without CUDA";
  if (VisibleCudaDevices() == 0) return "no CUDA device visible";
  return "";
}

std::vector<float> Random(int64_t n, unsigned seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

// The same call on both backends, on copies of the same inputs.
class Pair {
 public:
  Pair() : gpu_(MakeCudaOps(0)) {}
  // A buffer on both sides, filled with `host`.
  int Add(const std::vector<float>& host) {
    cpu_bufs_.push_back(cpu_.Alloc(static_cast<int64_t>(host.size())));
    gpu_bufs_.push_back(gpu_->Alloc(static_cast<int64_t>(host.size())));
    sizes_.push_back(static_cast<int64_t>(host.size()));
    cpu_.CopyFromHost(host.data(), cpu_bufs_.back().get(), sizes_.back());
    gpu_->CopyFromHost(host.data(), gpu_bufs_.back().get(), sizes_.back());
    return static_cast<int>(sizes_.size()) - 1;
  }
  // Runs f(ops, buffers) on both.
  void Run(const std::function<void(Ops&, const std::vector<float*>&)>& f) {
    std::vector<float*> c, g;
    for (auto& b : cpu_bufs_) c.push_back(b.get());
    for (auto& b : gpu_bufs_) g.push_back(b.get());
    f(cpu_, c);
    f(*gpu_, g);
  }
  // max |gpu - cpu| / max |cpu| over buffer i.
  double Error(int i) {
    std::vector<float> c(sizes_[i]), g(sizes_[i]);
    cpu_.CopyToHost(cpu_bufs_[i].get(), c.data(), sizes_[i]);
    gpu_->CopyToHost(gpu_bufs_[i].get(), g.data(), sizes_[i]);
    double diff = 0, scale = 1e-30;
    for (size_t k = 0; k < c.size(); ++k) {
      diff = std::max(diff, static_cast<double>(std::fabs(g[k] - c[k])));
      scale = std::max(scale, static_cast<double>(std::fabs(c[k])));
    }
    return diff / scale;
  }

 private:
  CpuOps cpu_;
  std::unique_ptr<Ops> gpu_;
  std::vector<FloatBuffer> cpu_bufs_, gpu_bufs_;
  std::vector<int64_t> sizes_;
};

class LocalCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = NoGpuReason(); !why.empty()) GTEST_SKIP() << why;
  }
};

constexpr double kTolerance = 1e-4;

TEST_F(LocalCuda, GemmMatchesCpu) {
  for (bool accumulate : {false, true}) {
    Pair p;
    const int a = p.Add(Random(37 * 19, 1)), b = p.Add(Random(19 * 45, 2));
    const int c = p.Add(Random(37 * 45, 3));
    p.Run([&](Ops& o, const std::vector<float*>& x) {
      o.Gemm(37, 45, 19, x[a], x[b], x[c], accumulate);
    });
    EXPECT_LT(p.Error(c), kTolerance) << "accumulate " << accumulate;
  }
}

TEST_F(LocalCuda, ElementwiseKernelsMatchCpu) {
  const int64_t rows = 24, cols = 96, n = rows * cols;
  Pair p;
  const int x = p.Add(Random(n, 1, -3, 3)), dy = p.Add(Random(n, 2));
  const int y = p.Add(Random(n, 3)), t = p.Add(Random(n, 4)), add = p.Add(Random(n, 5));
  p.Run([&](Ops& o, const std::vector<float*>& b) {
    o.Transpose(b[x], rows, cols, b[t]);
    o.LayerNorm(b[x], b[y], rows, cols);
    o.LayerNormBackwardAdd(b[x], b[dy], b[add], rows, cols);
  });
  EXPECT_LT(p.Error(t), kTolerance) << "Transpose";
  EXPECT_LT(p.Error(y), kTolerance) << "LayerNorm";
  EXPECT_LT(p.Error(add), kTolerance) << "LayerNormBackwardAdd";
  p.Run([&](Ops& o, const std::vector<float*>& b) { o.Gelu(b[x], b[y], n); });
  EXPECT_LT(p.Error(y), kTolerance) << "Gelu";
  p.Run([&](Ops& o, const std::vector<float*>& b) { o.GeluBackward(b[x], b[dy], b[y], n); });
  EXPECT_LT(p.Error(y), kTolerance) << "GeluBackward";
  p.Run([&](Ops& o, const std::vector<float*>& b) { o.AddInto(b[dy], b[add], n); });
  EXPECT_LT(p.Error(add), kTolerance) << "AddInto";
  p.Run([&](Ops& o, const std::vector<float*>& b) { o.Copy(b[dy], b[y], n); });
  EXPECT_EQ(p.Error(y), 0) << "Copy";
  p.Run([&](Ops& o, const std::vector<float*>& b) { o.Zero(b[y], n); });
  EXPECT_EQ(p.Error(y), 0) << "Zero";
}

TEST_F(LocalCuda, SoftmaxAndCrossEntropyMatchCpu) {
  const int64_t seq = 20, batches = 3, vocab = 50, rows = 16;
  Pair p;
  const int s = p.Add(Random(batches * seq * seq, 1, -4, 4));
  const int dp = p.Add(Random(batches * seq * seq, 2)), ds = p.Add(Random(batches * seq * seq, 3));
  p.Run([&](Ops& o, const std::vector<float*>& b) {
    o.CausalSoftmax(b[s], batches, seq, 0.3f);
    o.CausalSoftmaxBackward(b[s], b[dp], b[ds], batches, seq, 0.3f);
  });
  EXPECT_LT(p.Error(s), kTolerance) << "CausalSoftmax";
  EXPECT_LT(p.Error(ds), kTolerance) << "CausalSoftmaxBackward";
  const int logits = p.Add(Random(rows * vocab, 4, -5, 5));
  std::vector<int32_t> targets(rows);
  for (int64_t r = 0; r < rows; ++r) targets[r] = static_cast<int32_t>((r * 7) % vocab);
  std::vector<double> loss;
  p.Run([&](Ops& o, const std::vector<float*>& b) {
    loss.push_back(o.CrossEntropy(b[logits], targets.data(), rows, vocab, 0.25f));
  });
  EXPECT_NEAR(loss[1], loss[0], kTolerance * loss[0]) << "CrossEntropy loss";
  EXPECT_LT(p.Error(logits), kTolerance) << "CrossEntropy gradient";
}

TEST_F(LocalCuda, GathersScattersEmbeddingAndAdamMatchCpu) {
  const int64_t rows = 12, cols = 8, stride = 40, base = 5, vocab = 30, width = 16;
  Pair p;
  const int m = p.Add(Random(base + rows * stride, 1)), out = p.Add(Random(rows * cols, 2));
  const int outt = p.Add(Random(rows * cols, 3));
  p.Run([&](Ops& o, const std::vector<float*>& b) {
    o.GatherBlock(b[m], base, stride, rows, cols, false, b[out]);
    o.GatherBlock(b[m], base, stride, rows, cols, true, b[outt]);
    o.ScatterBlock(b[outt], rows, cols, b[m], base + 3, stride);
  });
  EXPECT_EQ(p.Error(out), 0) << "GatherBlock";
  EXPECT_EQ(p.Error(outt), 0) << "GatherBlock transposed";
  EXPECT_EQ(p.Error(m), 0) << "ScatterBlock";
  std::vector<int32_t> tokens(rows * 3);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 11) % 7);
  const int table = p.Add(Random(vocab * width, 4)), rows_out = p.Add(Random(rows * 3 * width, 5));
  const int dy = p.Add(Random(rows * 3 * width, 6));
  p.Run([&](Ops& o, const std::vector<float*>& b) {
    o.EmbedGather(b[table], tokens.data(), rows * 3, width, b[rows_out]);
    o.EmbedScatterAdd(b[dy], tokens.data(), rows * 3, width, b[table]);
  });
  EXPECT_EQ(p.Error(rows_out), 0) << "EmbedGather";
  EXPECT_LT(p.Error(table), kTolerance) << "EmbedScatterAdd";
  const int64_t n = 1000;
  const int params = p.Add(Random(n, 7)), grads = p.Add(Random(n, 8));
  const int m1 = p.Add(Random(n, 9, 0, 0.1f)), v1 = p.Add(Random(n, 10, 0, 0.01f));
  p.Run([&](Ops& o, const std::vector<float*>& b) {
    o.AdamUpdate(b[params], b[grads], b[m1], b[v1], n, 1e-3f, 1e-8f, 0.9f, 0.999f);
  });
  EXPECT_LT(p.Error(params), kTolerance) << "AdamUpdate params";
  EXPECT_LT(p.Error(m1), kTolerance) << "AdamUpdate m";
  EXPECT_LT(p.Error(v1), kTolerance) << "AdamUpdate v";
}

RunConfig Tiny(int steps) {
  Expected<RunConfig> c = ParseRunConfig(
      R"({"layers": 2, "hidden": 32, "heads": 4, "ffn_hidden": 128, "seq_len": 16, "vocab": 64,)"
      R"( "micro_batch": 2, "global_batch": 8, "lr": 0.01, "steps": )" +
          std::to_string(steps) + "}",
      "tiny.json");
  EXPECT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(ResolveLayout(&*c, 1).ok());
  return *c;
}

std::vector<double> Losses(const RunConfig& c, Ops& ops) {
  SoloTransport transport;
  TrainObserver quiet;
  Expected<TrainResult> r =
      Train(c, RankLayout::Of(0, 1, 1), transport, ops, quiet, [] { return false; });
  EXPECT_TRUE(r.ok()) << r.status().message();
  std::vector<double> losses;
  if (r.ok()) {
    for (const StepResult& s : r->steps) losses.push_back(s.loss);
  }
  return losses;
}

TEST_F(LocalCuda, StepsTrackTheCpuAndTheLossGoesDown) {
  const RunConfig c = Tiny(20);
  CpuOps cpu;
  std::unique_ptr<Ops> gpu = MakeCudaOps(0);
  const std::vector<double> on_cpu = Losses(c, cpu), on_gpu = Losses(c, *gpu);
  ASSERT_EQ(on_gpu.size(), 20u);
  ASSERT_EQ(on_cpu.size(), 20u);
  EXPECT_NEAR(on_gpu[0], on_cpu[0], 1e-4 * on_cpu[0]) << "the first step's loss";
  for (size_t i = 1; i < on_gpu.size(); ++i) {
    EXPECT_NEAR(on_gpu[i], on_cpu[i], 1e-2 * on_cpu[i]) << "step " << i + 1;
  }
  EXPECT_LT(on_gpu.back(), on_gpu.front() * 0.9);
}

// A command's exit code, with its stdout and stderr in files under `dir`.
int Shell(const std::string& command, const std::filesystem::path& dir, std::string* out,
          std::string* err) {
  const int status = std::system(
      (command + " > " + (dir / "out").string() + " 2> " + (dir / "err").string()).c_str());
  *out = trainsim::test::ReadFile(dir / "out");
  *err = trainsim::test::ReadFile(dir / "err");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string TinyFlags(int steps) {
  return " --layers 2 --hidden 32 --heads 4 --ffn_hidden 128 --seq_len 16 --vocab 64"
         " --micro_batch 2 --global_batch 8 --lr 0.01 --steps " +
         std::to_string(steps);
}

class LocalCudaBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(kBinary).empty()) GTEST_SKIP() << "trainsim-train was not built (no MPI)";
    dir_ = std::filesystem::temp_directory_path() / ("local_cuda_test." + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    if (geteuid() == 0) {  // Open MPI refuses root without these
      setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
      setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

TEST_F(LocalCudaBinary, CudaWithoutAGpuIsRefusedClearly) {
  std::string expected;
  if (!BuiltWithCuda()) {
    expected =
        "trainsim-train: backend cuda: this trainsim-train was built without CUDA (nvcc and "
        "cuBLAS were not found when it was configured; see docs/local-run.md section 8)\n";
  } else if (VisibleCudaDevices() == 0) {
    expected = "trainsim-train: backend cuda: no CUDA device is visible\n";
  } else {
    GTEST_SKIP() << "a CUDA device is visible: backend cuda is not refused here";
  }
  std::string out, err;
  const int code = Shell(std::string(kBinary) + TinyFlags(2) + " --backend cuda", dir_, &out, &err);
  EXPECT_EQ(code, 2) << err;
  EXPECT_EQ(err, expected);
  EXPECT_EQ(out, "");
}

// The step lines' losses ("loss": x) in order.
std::vector<double> StepLosses(const std::string& out) {
  std::vector<double> losses;
  const std::string key = "\"loss\": ";
  for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + 1)) {
    losses.push_back(std::strtod(out.c_str() + at + key.size(), nullptr));
  }
  return losses;
}

TEST_F(LocalCudaBinary, TwoGpusUnderMpirunTrackOneCpuRank) {
  if (const std::string why = NoGpuReason(); !why.empty()) GTEST_SKIP() << why;
  if (VisibleCudaDevices() < 2) GTEST_SKIP() << "needs 2 CUDA devices, sees 1";
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
  std::string cpu_out, out, err;
  ASSERT_EQ(Shell(std::string(kBinary) + TinyFlags(10), dir_, &cpu_out, &err), 0) << err;
  for (const std::string layout : {" --pp 2", " --pp 1"}) {  // pipeline, then data parallel
    const std::string mpi = "mpirun -np 2 --oversubscribe --bind-to none " + std::string(kBinary);
    ASSERT_EQ(Shell(mpi + TinyFlags(10) + layout + " --backend cuda", dir_, &out, &err), 0) << err;
    const std::vector<double> cpu = StepLosses(cpu_out), gpu = StepLosses(out);
    ASSERT_EQ(gpu.size(), cpu.size()) << out;
    ASSERT_GE(gpu.size(), 10u) << out;
    for (size_t i = 0; i < 10; ++i) EXPECT_NEAR(gpu[i], cpu[i], 1e-2 * cpu[i]) << layout << i;
  }
}

}  // namespace
}  // namespace trainsim::local
