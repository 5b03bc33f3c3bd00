// The cpu calibration backend, run for real on this machine's cores: the
// kernels against references, the process machinery (including a worker that
// dies or hangs), and a whole tiny plan through the Backend interface.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "calibrate/cpu_kernels.h"
#include "calibrate/cpu_measure.h"
#include "calibrate/cpu_workers.h"
#include "calibrate/measure.h"

namespace trainsim::calibrate {
namespace {

using cpu::CollectiveRequest;
using Fault = CollectiveRequest::Fault;

struct ProgressEvent {
  std::string phase;
  int done, total;
  std::string item;
};

class RecordingObserver : public Observer {
 public:
  void Progress(const std::string& phase, int done, int total, const std::string& item) override {
    events.push_back({phase, done, total, item});
  }
  // The items reported for `phase`, checking that `done` counts 0, 1, ...
  // of a constant total equal to the number of items.
  std::vector<std::string> Items(const std::string& phase) const {
    std::vector<const ProgressEvent*> in_phase;
    for (const ProgressEvent& e : events) {
      if (e.phase == phase) in_phase.push_back(&e);
    }
    std::vector<std::string> items;
    for (size_t i = 0; i < in_phase.size(); ++i) {
      EXPECT_EQ(in_phase[i]->done, static_cast<int>(i)) << phase;
      EXPECT_EQ(in_phase[i]->total, static_cast<int>(in_phase.size())) << phase;
      items.push_back(in_phase[i]->item);
    }
    return items;
  }
  std::vector<ProgressEvent> events;
};

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// True when this process has no child processes left, reaped or not.
bool NoChildrenLeft() { return waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

// Shared anonymous mappings of this process ("/dev/zero (deleted)" in maps).
int SharedAnonymousMappings() {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);) count += line.find("/dev/zero") != line.npos;
  return count;
}

// ---------------------------------------------------------------- kernels

// Fills with deterministic values in [-1, 1].
std::vector<float> Values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 8388608.0f - 1.0f;
  }
  return v;
}

struct GemmCase {
  int64_t m, n, k;
};

TEST(CpuKernels, GemmMatchesADoublePrecisionProductOnEdgeShapes) {
  // Tiles are 4 x 8, blocks 128 (m) x 256 (k) x 2048 (n): cover remainders
  // and several blocks in every dimension.
  const std::vector<GemmCase> cases = {{1, 1, 1},     {5, 13, 7},   {4, 8, 256},
                                       {130, 9, 300}, {3, 2100, 4}, {129, 17, 513}};
  for (const GemmCase& c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k));
    const std::vector<float> a = Values(c.m * c.k, 1), b = Values(c.k * c.n, 2);
    std::vector<float> out(c.m * c.n, std::numeric_limits<float>::quiet_NaN());
    std::vector<float> work(cpu::GemmFp32WorkspaceFloats(c.m, c.n, c.k));
    cpu::GemmFp32(c.m, c.n, c.k, a.data(), b.data(), out.data(), work.data());
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double want = 0;
        for (int64_t p = 0; p < c.k; ++p) want += double{a[i * c.k + p]} * b[p * c.n + j];
        ASSERT_NEAR(out[i * c.n + j], want, 1e-4) << "C[" << i << "][" << j << "]";
      }
    }
  }
}

TEST(CpuKernels, AMeasuredGemmOverSeveralKBlocksIsVerified) {
  Measurements m;
  cpu::MeasureGemmFp32({40, 40, 600, "three k blocks"}, 0, 1, &m);
  EXPECT_TRUE(m.failures.empty());
  ASSERT_EQ(m.gemm.size(), 1u);
  EXPECT_TRUE(m.gemm[0].verified);
  EXPECT_EQ(m.gemm[0].flops, 2.0 * 40 * 40 * 600);
}

TEST(CpuKernels, FastTanhIsWithinAMillionthOfTanh) {
  for (float x = -12; x <= 12; x += 0.001f) {
    ASSERT_NEAR(cpu::FastTanh(x), std::tanh(x), 1e-6) << x;
  }
}

TEST(CpuKernels, GeluMatchesTheTanhFormula) {
  std::vector<float> x = Values(1000, 3);  // not a whole number of 256-float blocks
  for (float& v : x) v *= 6;
  std::vector<float> y(x.size());
  cpu::Gelu(x.data(), y.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double want = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    ASSERT_NEAR(y[i], want, 1e-5) << "x = " << v;
  }
}

TEST(CpuKernels, LayerNormRowsGiveZeroMeanAndUnitVariance) {
  const size_t rows = 3, cols = 4096;
  std::vector<float> x = Values(rows * cols, 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 3 * x[i] + static_cast<float>(i / cols);
  std::vector<float> y(x.size());
  cpu::LayerNormRows(x.data(), y.data(), rows, cols);
  for (size_t r = 0; r < rows; ++r) {
    double sum = 0, squares = 0;
    for (size_t i = 0; i < cols; ++i) sum += y[r * cols + i];
    for (size_t i = 0; i < cols; ++i) squares += double{y[r * cols + i]} * y[r * cols + i];
    EXPECT_NEAR(sum / cols, 0, 1e-5) << "row " << r;
    EXPECT_NEAR(squares / cols, 1, 1e-3) << "row " << r;
  }
}

TEST(CpuKernels, ScaleCopyByOneCopies) {
  const std::vector<float> x = Values(1001, 5);
  std::vector<float> y(x.size());
  cpu::ScaleCopy(x.data(), y.data(), x.size(), 1.0f);
  EXPECT_EQ(y, x);
}

TEST(CpuKernels, FormatBytesUsesTheLargestExactUnit) {
  EXPECT_EQ(cpu::FormatBytes(8), "8 B");
  EXPECT_EQ(cpu::FormatBytes(4096), "4 KiB");
  EXPECT_EQ(cpu::FormatBytes(64 << 20), "64 MiB");
  EXPECT_EQ(cpu::FormatBytes(1 << 30), "1 GiB");
  EXPECT_EQ(cpu::FormatBytes(1536 << 10), "1536 KiB");
  EXPECT_EQ(cpu::FormatBytes(3000), "3000 B");
}

// ---------------------------------------------------------------- workers

auto Deadline(int ms) { return cpu::Clock::now() + std::chrono::milliseconds(ms); }

TEST(CpuWorkers, BarrierKeepsEveryWorkerInStep) {
  constexpr int kRanks = 3, kRounds = 2000;
  Expected<cpu::SharedMemory> shared = cpu::SharedMemory::Map(sizeof(int) * kRanks);
  ASSERT_TRUE(shared.ok()) << shared.status().message();
  auto* round = reinterpret_cast<std::atomic<int>*>(shared->data());
  const Status status = cpu::RunWorkers(kRanks, Deadline(20000), [&](const cpu::Worker& w) {
    for (int i = 1; i <= kRounds; ++i) {
      round[w.rank()].store(i);
      if (Status s = w.Sync(); !s.ok()) return s;
      for (int r = 0; r < kRanks; ++r) {
        if (round[r].load() != i) return Status::Internal("peer out of step");
      }
      if (Status s = w.Sync(); !s.ok()) return s;
    }
    return Status::Ok();
  });
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(NoChildrenLeft());
}

TEST(CpuWorkers, ABodyErrorNamesItsRank) {
  const Status status = cpu::RunWorkers(2, Deadline(10000), [](const cpu::Worker& w) {
    return w.rank() == 1 ? Status::Internal("boom") : Status::Ok();
  });
  EXPECT_EQ(status.message(), "rank 1: boom");
  EXPECT_TRUE(NoChildrenLeft());
}

TEST(CpuWorkers, AWorkerKilledBySignalIsReported) {
  const Status status = cpu::RunWorkers(2, Deadline(10000), [](const cpu::Worker& w) {
    if (w.rank() == 0) kill(getpid(), SIGKILL);
    return w.Sync();  // rank 1 waits for a peer that is gone
  });
  EXPECT_EQ(status.message(), "rank 0 was killed by signal 9 (Killed)");
  EXPECT_TRUE(NoChildrenLeft());
}

// ---------------------------------------------------------------- collectives

CollectiveRequest Request(const std::string& op, int ranks, double bytes) {
  CollectiveRequest r;
  r.op = op;
  r.ranks = ranks;
  r.bytes = bytes;
  r.warmup = 1;
  r.repetitions = 2;
  return r;
}

TEST(CpuCollectives, EveryOpIsCorrectAtOddSizesAndRankCounts) {
  // Measuring checks the result on every rank; 3 ranks oversubscribe 2 cores.
  for (const std::string& op : cpu::CollectiveOps()) {
    for (int ranks : {1, 2, 3}) {
      if (op == "send_recv" && ranks == 1) continue;
      for (double bytes : {4.0, 100.0, 40000.0}) {
        SCOPED_TRACE(op + " " + std::to_string(ranks) + " ranks " + std::to_string(bytes));
        Expected<CollectivePoint> p = cpu::MeasureCollective(Request(op, ranks, bytes));
        ASSERT_TRUE(p.ok()) << p.status().message();
        EXPECT_GT(p->timing.median_s, 0);
        EXPECT_EQ(p->ranks, ranks);
      }
    }
  }
  EXPECT_TRUE(NoChildrenLeft());
}

TEST(CpuCollectives, SizesRoundDownToWholeFloatsPerRank) {
  const auto bytes = [](const std::string& op, int ranks, double size) {
    Expected<CollectivePoint> p = cpu::MeasureCollective(Request(op, ranks, size));
    return p.ok() ? p->bytes : -1;
  };
  EXPECT_EQ(bytes("all_reduce", 3, 10), 8);
  EXPECT_EQ(bytes("all_gather", 3, 100), 96);    // 8 floats per rank
  EXPECT_EQ(bytes("reduce_scatter", 3, 8), 12);  // at least one float per rank
  EXPECT_EQ(bytes("broadcast", 2, 4096), 4096);
}

TEST(CpuCollectives, ADeadPeerIsAFailureNotAHang) {
  const int mappings_before = SharedAnonymousMappings();
  CollectiveRequest request = Request("all_reduce", 2, 1 << 20);
  request.fault = Fault::kDie;
  request.fault_rank = 1;
  request.timeout = std::chrono::milliseconds(5000);
  const auto start = std::chrono::steady_clock::now();
  Expected<CollectivePoint> p = cpu::MeasureCollective(request);
  EXPECT_LT(Seconds(start), 2.0);  // seen when it died, not at the deadline
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "rank 1 exited with status 3 before finishing");
  EXPECT_TRUE(NoChildrenLeft());
  EXPECT_EQ(SharedAnonymousMappings(), mappings_before);
}

TEST(CpuCollectives, AHungPeerIsKilledAtTheDeadline) {
  CollectiveRequest request = Request("all_gather", 2, 4096);
  request.fault = Fault::kHang;
  request.fault_rank = 0;
  request.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  Expected<CollectivePoint> p = cpu::MeasureCollective(request);
  EXPECT_LT(Seconds(start), 3.0);
  ASSERT_FALSE(p.ok());
  // The waiting rank gives up at the barrier, or the supervisor at the deadline.
  EXPECT_NE(p.status().message().find("deadline"), std::string::npos) << p.status().message();
  EXPECT_TRUE(NoChildrenLeft());
}

TEST(CpuCollectives, RequestsThatCannotRunAreErrors) {
  EXPECT_EQ(cpu::MeasureCollective(Request("send_recv", 1, 8)).status().message(),
            "send_recv needs at least 2 ranks");
  EXPECT_EQ(cpu::MeasureCollective(Request("all_to_all", 2, 8)).status().message(),
            "unknown collective \"all_to_all\"");
  const std::string too_large =
      cpu::MeasureCollective(Request("all_reduce", 2, 1e15)).status().message();
  EXPECT_EQ(too_large.rfind("needs ", 0), 0u) << too_large;
}

// ---------------------------------------------------------------- backend

TEST(CpuBackend, ProbeDescribesThisHost) {
  std::unique_ptr<Backend> backend = MakeCpuBackend();
  ASSERT_NE(backend, nullptr);
  Expected<DeviceInfo> info = backend->Probe();
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->backend, "cpu");
  EXPECT_GE(info->devices, 1);
  EXPECT_EQ(info->dtypes, std::vector<std::string>{"fp32"});
  EXPECT_NE(info->name.find(" (" + std::to_string(info->devices) + " cores)"), std::string::npos);
  EXPECT_GT(info->memory_bytes, 0);
  EXPECT_EQ(info->driver.rfind("Linux ", 0), 0u);
  EXPECT_FALSE(info->host.empty());
}

MeasurePlan TinyPlan() {
  MeasurePlan plan;
  plan.quick = true;
  plan.warmup = 1;
  plan.repetitions = 3;
  plan.dtypes = {"bf16", "fp32"};
  plan.gemm_shapes = {{64, 64, 64, "square 64"}, {96, 80, 72, "odd"}};
  plan.memory_bytes = {1 << 20};
  plan.collective_ops = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "send_recv"};
  plan.collective_bytes = {8, 4096, 1 << 20};
  plan.collective_ranks = {2};
  return plan;
}

TEST(CpuBackend, RunsATinyPlanInThePlansOrder) {
  const MeasurePlan plan = TinyPlan();
  RecordingObserver observer;
  Measurements m;
  const Status status = MakeCpuBackend()->Run(plan, &observer, &m);
  ASSERT_TRUE(status.ok()) << status.message();
  for (const Failure& f : m.failures) ADD_FAILURE() << f.what << ": " << f.error;
  EXPECT_EQ(m.device.backend, "cpu");

  ASSERT_EQ(m.gemm.size(), 2u);  // bf16 skipped silently
  for (size_t i = 0; i < m.gemm.size(); ++i) {
    EXPECT_EQ(m.gemm[i].dtype, "fp32");
    EXPECT_EQ(m.gemm[i].shape.origin, plan.gemm_shapes[i].origin);
    EXPECT_TRUE(m.gemm[i].verified);
    EXPECT_GT(m.gemm[i].tflops, 0);
    EXPECT_EQ(m.gemm[i].timing.repetitions, 3);
  }
  EXPECT_EQ(m.gemm[1].flops, 2.0 * 96 * 80 * 72);
  EXPECT_EQ(observer.Items("gemm"), (std::vector<std::string>{"fp32 64x64x64", "fp32 96x80x72"}));

  ASSERT_EQ(m.memory.size(), cpu::MemoryKernels().size());
  std::vector<std::string> memory_items;
  for (size_t i = 0; i < m.memory.size(); ++i) {
    EXPECT_EQ(m.memory[i].what, cpu::MemoryKernels()[i]);
    EXPECT_EQ(m.memory[i].bytes, 2 << 20);  // read + written
    EXPECT_GT(m.memory[i].GBps, 0);
    memory_items.push_back(cpu::MemoryKernels()[i] + " 1 MiB");
  }
  EXPECT_EQ(observer.Items("memory"), memory_items);

  std::vector<std::string> collective_items;
  size_t i = 0;
  ASSERT_EQ(m.collectives.size(), plan.collective_ops.size() * plan.collective_bytes.size());
  for (const std::string& op : plan.collective_ops) {
    for (double bytes : plan.collective_bytes) {
      const CollectivePoint& p = m.collectives[i++];
      EXPECT_EQ(p.op, op);
      EXPECT_EQ(p.ranks, 2);
      EXPECT_EQ(p.bytes, bytes);
      EXPECT_GT(p.algbw_GBps, 0);
      EXPECT_EQ(p.busbw_GBps, p.algbw_GBps * BusBandwidthFactor(op, 2));
      collective_items.push_back(op + " 2 ranks " + cpu::FormatBytes(bytes));
    }
  }
  EXPECT_EQ(observer.Items("collectives"), collective_items);
  EXPECT_EQ(observer.events.size(), 2 + memory_items.size() + collective_items.size());
  EXPECT_TRUE(NoChildrenLeft());
}

TEST(CpuBackend, AGemmOverTheFlopLimitFailsAndTheNextShapesRun) {
  MeasurePlan plan;
  plan.warmup = 0;
  plan.repetitions = 1;
  plan.dtypes = {"fp32"};
  plan.gemm_shapes = {{32, 32, 32, ""}, {8192, 8192, 8192, ""}, {16, 8, 4, ""}};
  Measurements m;
  ASSERT_TRUE(MakeCpuBackend()->Run(plan, nullptr, &m).ok());
  ASSERT_EQ(m.failures.size(), 1u);
  EXPECT_EQ(m.failures[0].what, "gemm fp32 8192x8192x8192");
  EXPECT_EQ(m.failures[0].error, "1100 GFLOP is too large for the cpu backend (limit 200 GFLOP)");
  ASSERT_EQ(m.gemm.size(), 2u);
  EXPECT_EQ(m.gemm[1].shape.m, 16);
  EXPECT_TRUE(m.gemm[1].verified);
}

TEST(CpuBackend, MeasurementsThatCannotRunBecomeFailures) {
  MeasurePlan plan;
  plan.warmup = 0;
  plan.repetitions = 1;
  plan.memory_bytes = {1e15, 4096};
  plan.collective_ops = {"all_to_all", "broadcast"};
  plan.collective_bytes = {1e15, 8};
  plan.collective_ranks = {1};
  Measurements m;
  ASSERT_TRUE(MakeCpuBackend()->Run(plan, nullptr, &m).ok());
  EXPECT_EQ(m.memory.size(), cpu::MemoryKernels().size());  // the 4 KiB ones
  ASSERT_EQ(m.collectives.size(), 1u);
  EXPECT_EQ(m.collectives[0].bytes, 8);
  std::vector<std::string> failed;
  for (const Failure& f : m.failures) failed.push_back(f.what);
  const std::string huge = cpu::FormatBytes(1e15);
  EXPECT_EQ(failed, (std::vector<std::string>{"memory copy " + huge, "memory copy_loop " + huge,
                                              "memory layernorm " + huge, "memory gelu " + huge,
                                              "collective all_to_all",
                                              "collective broadcast 1 rank " + huge}));
}

TEST(CpuBackend, APlanWithoutRepetitionsIsAnError) {
  MeasurePlan plan;
  plan.repetitions = 0;
  Measurements m;
  EXPECT_EQ(MakeCpuBackend()->Run(plan, nullptr, &m).code(), Status::Code::kInvalidInput);
}

// Stops after `items` progress reports, as a Ctrl-C would.
class StoppingObserver : public RecordingObserver {
 public:
  explicit StoppingObserver(size_t items) : items_(items) {}
  bool StopRequested() override { return events.size() >= items_; }

 private:
  size_t items_;
};

TEST(CpuBackend, AStopRequestKeepsWhatWasMeasuredAndSaysTheRestWasNot) {
  MeasurePlan plan;
  plan.warmup = 0;
  plan.repetitions = 1;
  plan.dtypes = {"fp32"};
  plan.gemm_shapes = {{32, 32, 32, "a"}, {48, 48, 48, "b"}, {64, 64, 64, "c"}};
  plan.memory_bytes = {1 << 20};
  plan.collective_ops = {"all_reduce"};
  plan.collective_bytes = {1024};
  StoppingObserver observer(2);
  Measurements m;
  ASSERT_TRUE(MakeCpuBackend()->Run(plan, &observer, &m).ok());
  EXPECT_EQ(m.gemm.size(), 2u);  // the third shape and everything after: not measured
  EXPECT_TRUE(m.memory.empty());
  EXPECT_TRUE(m.collectives.empty());
  ASSERT_FALSE(m.failures.empty());
  EXPECT_EQ(m.failures.back().what, InterruptedFailure().what);
  EXPECT_TRUE(NoChildrenLeft());
}

}  // namespace
}  // namespace trainsim::calibrate
