// PyTorch profiler (Kineto) traces read back as a stream (observe/kineto.h): kernels sorted by
// kind, the steps' kernel time and exposed communication counted by hand on a synthetic trace,
// and the refusals.
#include "observe/kineto.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "observe/gemm_refit.h"

namespace trainsim::observe {
namespace {

namespace fs = std::filesystem;
const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/observe/data/";

TEST(Kineto, KernelsSortedByName) {
  EXPECT_EQ(ClassifyKernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)"),
            KernelKind::kComm);
  EXPECT_EQ(ClassifyKernel("ncclKernel_AllGather_RING_LL_Sum_int8_t"), KernelKind::kComm);
  EXPECT_EQ(ClassifyKernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"), KernelKind::kGemm);
  EXPECT_EQ(ClassifyKernel("void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm>"),
            KernelKind::kGemm);
  EXPECT_EQ(ClassifyKernel("flash_fwd_kernel<Flash_fwd_kernel_traits<128>>"),
            KernelKind::kAttention);
  EXPECT_EQ(ClassifyKernel("cudnn_generated_fort_native_sdpa_sm90_flash_fprop"),
            KernelKind::kAttention);
  EXPECT_EQ(ClassifyKernel("void at::native::vectorized_elementwise_kernel<4>"),
            KernelKind::kOther);
}

// Step 7 (GPU annotation 1000-2000 us): GEMM 1000-1400, all-reduce 1300-1600 (1400-1600 with no
// compute: 200 us exposed), a fill 1650-1700. Step 8 (2010-2910): flash 2010-2210 and GEMM
// 2150-2450 overlap (attention 200, GEMM 300 us), reduce-scatter 2300-2400 under the GEMM,
// all-gather 2800-3000 clipped to 2910 (110 us, all exposed). Device 1's kernel is not summed.
TEST(Kineto, StepsKernelTimeAndExposedCommunication) {
  Expected<KinetoTrace> t = LoadKinetoTrace(kData + "kineto-synthetic.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->kernels, 8);
  EXPECT_EQ(t->device_pid, 0);
  EXPECT_EQ(t->device, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(t->steps.size(), 2u);  // the GPU-side annotations
  const TraceStep& a = t->steps[0];
  EXPECT_EQ(a.step, 7);
  EXPECT_DOUBLE_EQ(a.wall_s, 1000e-6);
  EXPECT_DOUBLE_EQ(a.kernel_s[static_cast<int>(KernelKind::kGemm)], 400e-6);
  EXPECT_DOUBLE_EQ(a.kernel_s[static_cast<int>(KernelKind::kComm)], 300e-6);
  EXPECT_DOUBLE_EQ(a.kernel_s[static_cast<int>(KernelKind::kOther)], 50e-6);
  EXPECT_DOUBLE_EQ(a.exposed_comm_s, 200e-6);
  EXPECT_DOUBLE_EQ(a.compute_s, 450e-6);  // 1000-1400, 1650-1700
  EXPECT_DOUBLE_EQ(a.idle_s, 350e-6);     // 1000 - 450 - 200
  const TraceStep& b = t->steps[1];
  EXPECT_EQ(b.step, 8);
  EXPECT_DOUBLE_EQ(b.wall_s, 900e-6);
  EXPECT_DOUBLE_EQ(b.kernel_s[static_cast<int>(KernelKind::kAttention)], 200e-6);
  EXPECT_DOUBLE_EQ(b.kernel_s[static_cast<int>(KernelKind::kGemm)], 300e-6);
  EXPECT_DOUBLE_EQ(b.kernel_s[static_cast<int>(KernelKind::kComm)], 210e-6);
  EXPECT_DOUBLE_EQ(b.exposed_comm_s, 110e-6);
  EXPECT_DOUBLE_EQ(b.compute_s, 440e-6);  // 2010-2450
  EXPECT_DOUBLE_EQ(b.idle_s, 350e-6);     // 900 - 440 - 110
  // The last step's kernels, from its start: flash 0-200, GEMM 140-440, reduce-scatter 290-390,
  // all-gather 790-900 (clipped).
  ASSERT_EQ(t->last_step.size(), 4u);
  EXPECT_EQ(t->last_step[1].kind, KernelKind::kGemm);
  EXPECT_NEAR(t->last_step[1].start_s, 140e-6, 1e-12);
  EXPECT_NEAR(t->last_step[3].end_s, 900e-6, 1e-12);
  EXPECT_EQ(t->rank, 3);  // distributedInfo
  EXPECT_EQ(t->world_size, 64);
}

// Collectives' sizes: step 7's all-reduce carries PyTorch's args itself (16 Mi bf16 elements:
// 32 MiB); step 8's reduce-scatter takes those of the record_param_comms with its External id
// (4 Mi fp32 in, 512 Ki out: 16 MiB, the larger buffer as nccl-tests counts it). The
// all-gather has no args (and is clipped): no sample.
TEST(Kineto, CollectiveSizesFromPyTorchArgs) {
  Expected<KinetoTrace> t = LoadKinetoTrace(kData + "kineto-synthetic.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->steps[0].comms.size(), 1u);
  const CommSample& a = t->steps[0].comms[0];
  EXPECT_EQ(a.op, "all_reduce");
  EXPECT_DOUBLE_EQ(a.bytes, 32.0 * 1024 * 1024);
  EXPECT_EQ(a.group_ranks, 8);
  EXPECT_DOUBLE_EQ(a.seconds, 300e-6);
  EXPECT_EQ(a.group, (std::vector<int>{3, 11, 19, 27, 35, 43, 51, 59}));
  ASSERT_EQ(t->steps[1].comms.size(), 1u);
  const CommSample& b = t->steps[1].comms[0];
  EXPECT_EQ(b.op, "reduce_scatter");
  EXPECT_DOUBLE_EQ(b.bytes, 16.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(b.seconds, 100e-6);
  EXPECT_TRUE(b.group.empty());  // not recorded
}

// GEMM shapes from the args of trainsim-train's gemm_fp32 events, and the profile refitted
// from them: the median time per shape, the table by FLOPs.
TEST(Kineto, GemmShapesRefitAProfile) {
  const std::string dir = fs::temp_directory_path() / "kineto_refit_test";
  fs::create_directories(dir);
  const std::string path = dir + "/t.json";
  std::ofstream(path) << R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
    {"ph": "X", "cat": "kernel", "name": "gemm_fp32", "ts": 1, "dur": 10, "args": {"M": 4, "N": 8, "K": 16}},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 100, "dur": 100},
    {"ph": "X", "cat": "kernel", "name": "gemm_fp32", "ts": 101, "dur": 20, "args": {"M": 4, "N": 8, "K": 16}},
    {"ph": "X", "cat": "kernel", "name": "gemm_fp32", "ts": 130, "dur": 40, "args": {"M": 4, "N": 8, "K": 16}},
    {"ph": "X", "cat": "kernel", "name": "gemm_fp32", "ts": 171, "dur": 8, "args": {"M": 8, "N": 8, "K": 16}},
    {"ph": "X", "cat": "kernel", "name": "transpose", "ts": 180, "dur": 5, "args": {"elements": 64}}
  ]})";
  Expected<KinetoTrace> t = LoadKinetoTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->steps.size(), 2u);
  EXPECT_EQ(t->steps[1].gemms.size(), 3u);
  HardwareProfile base;
  base.gpu = "local-cpu-core";
  Expected<GemmRefit> r = RefitGemms({*t}, 1, base, "fp32");  // step 2 only
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->shapes, 2);
  EXPECT_EQ(r->samples, 3);
  // 4x8x16: 20 and 40 us, median 30 us; 1024 FLOPs. 8x8x16: 8 us, 2048 FLOPs.
  EXPECT_NEAR(*r->profile.GemmShapeFlopsPerSecond("fp32", 4, 8, 16), 1024 / 30e-6, 1e-3);
  EXPECT_NEAR(*r->profile.GemmShapeFlopsPerSecond("fp32", 8, 8, 16), 2048 / 8e-6, 1e-3);
  ASSERT_EQ(r->profile.gemm_tables.at("fp32").size(), 2u);
  EXPECT_EQ(RefitGemms({*t}, 2, base, "fp32").status().message(),
            path +
                ": no GEMM with a recorded shape (args M, N, K) in the steps after the "
                "warm-up of 2: nothing to refit the GEMMs from");
  // The other kernels (the transpose) of step 2: 5 us, the median over one step.
  EXPECT_DOUBLE_EQ(MedianKernelSeconds({*t}, 1, KernelKind::kOther), 5e-6);
  EXPECT_DOUBLE_EQ(MedianKernelSeconds({*t}, 2, KernelKind::kOther), 0);
  fs::remove_all(dir);
}

// The memory-bound rate refitted: the simulated 2 s at 10 GB/s took 4 s in the trace, so the
// work's 20 GB run at 5 GB/s; the fit is recorded as a memory point, and a second refit of the
// same trace replaces it.
TEST(Kineto, MemoryRateRefit) {
  HardwareProfile base;
  base.memory_GBps = 10;
  Expected<HardwareProfile> p = RefitMemoryRate(base, 10, 2, 4, 5, "t.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_DOUBLE_EQ(*p->memory_GBps, 5);
  ASSERT_EQ(p->points.size(), 1u);
  EXPECT_EQ(p->points[0].kind, "memory");
  EXPECT_EQ(p->points[0].what, "non-GEMM kernels of t.json");
  EXPECT_DOUBLE_EQ(p->points[0].bytes, 20e9);
  EXPECT_DOUBLE_EQ(p->points[0].median_s, 4);
  EXPECT_EQ(p->points[0].repetitions, 5);
  Expected<HardwareProfile> again = RefitMemoryRate(*p, 5, 4, 2, 5, "t.json");
  ASSERT_TRUE(again.ok());
  EXPECT_DOUBLE_EQ(*again->memory_GBps, 10);
  EXPECT_EQ(again->points.size(), 1u);
  // The profile writes and reads back with the fit.
  Expected<HardwareProfile> back = ParseHardwareProfile(HardwareProfileToJson(*p), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(*back->memory_GBps, 5);
  EXPECT_EQ(RefitMemoryRate(base, 10, 2, 0, 5, "t.json").status().message(),
            "t.json: no kernel other than GEMMs, attention and communication in the steps after "
            "the warm-up: nothing to refit the memory-bound rate from");
  EXPECT_EQ(RefitMemoryRate(base, 10, 0, 4, 5, "t.json").status().message(),
            "the simulated step has no memory-bound work to refit (no norm, activation or "
            "optimizer kernel in the model)");
}

// In a PyTorch trace (record_shapes=True) a GEMM kernel's shape is its launching op's: aten::mm
// (M x K, K x N) or aten::addmm (bias, M x K, K x N), joined by "External id".
TEST(Kineto, PyTorchGemmShapesFromTheLaunchingOp) {
  const std::string dir = fs::temp_directory_path() / "kineto_mm_test";
  fs::create_directories(dir);
  const std::string path = dir + "/t.json";
  std::ofstream(path) << R"({"traceEvents": [
    {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#3", "pid": 0, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 9, "ts": 0, "dur": 5,
     "args": {"External id": 7, "Input Dims": [[64, 128], [128, 256]], "Input type": ["float", "float"]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 9, "ts": 6, "dur": 5,
     "args": {"External id": 8, "Input Dims": [[512], [32, 1024], [1024, 512]]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 9, "ts": 12, "dur": 5,
     "args": {"External id": 9, "Input Dims": [[64, 128], [64, 128]]}},
    {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_tn", "pid": 0, "ts": 10, "dur": 20, "args": {"External id": 7}},
    {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16", "pid": 0, "ts": 40, "dur": 10, "args": {"External id": 8}},
    {"ph": "X", "cat": "kernel", "name": "cutlass_gemm_unknown", "pid": 0, "ts": 60, "dur": 10, "args": {"External id": 9}}
  ]})";
  Expected<KinetoTrace> t = LoadKinetoTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->steps.size(), 1u);
  ASSERT_EQ(t->steps[0].gemms.size(), 2u);  // aten::add's shape is no GEMM's
  EXPECT_DOUBLE_EQ(t->steps[0].gemms[0].m, 64);
  EXPECT_DOUBLE_EQ(t->steps[0].gemms[0].n, 256);
  EXPECT_DOUBLE_EQ(t->steps[0].gemms[0].k, 128);
  EXPECT_DOUBLE_EQ(t->steps[0].gemms[0].seconds, 20e-6);
  EXPECT_DOUBLE_EQ(t->steps[0].gemms[1].m, 32);
  EXPECT_DOUBLE_EQ(t->steps[0].gemms[1].n, 512);
  EXPECT_DOUBLE_EQ(t->steps[0].gemms[1].k, 1024);
  fs::remove_all(dir);
}

// The text form reads what the file form reads, and names the trace as told in its errors.
TEST(Kineto, FromText) {
  std::ifstream in(kData + "kineto-synthetic.json");
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Expected<KinetoTrace> file = LoadKinetoTrace(kData + "kineto-synthetic.json");
  Expected<KinetoTrace> text = ParseKinetoTrace(whole, "trace.json");
  ASSERT_TRUE(file.ok() && text.ok()) << text.status().message();
  EXPECT_EQ(text->file, "trace.json");
  EXPECT_EQ(text->kernels, file->kernels);
  ASSERT_EQ(text->steps.size(), file->steps.size());
  for (size_t i = 0; i < text->steps.size(); ++i) {
    EXPECT_EQ(text->steps[i].step, file->steps[i].step);
    EXPECT_DOUBLE_EQ(text->steps[i].exposed_comm_s, file->steps[i].exposed_comm_s);
  }
  EXPECT_EQ(ParseKinetoTrace("{\"traceEvents\": [\n  {\"ph\": }", "t.json").status().message(),
            "t.json:2:10: not a whole JSON trace (cut short?): [json.exception.parse_error.101] "
            "parse error at line 2, column 10: syntax error while parsing value - unexpected '}'; "
            "expected '[', '{', or a literal");
}

// Integers out of their range (a pid or External id of 2^64, a group size or rank of 1e10) are
// ignored, not cast (undefined behaviour; found by fuzz/kineto_fuzzer.cc): the kernel stays on
// device 0, unjoined to an op, its group size unknown, and the rank absent.
TEST(Kineto, IntegersOutOfRangeAreIgnored) {
  Expected<KinetoTrace> t =
      ParseKinetoTrace(R"({"distributedInfo": {"rank": 1e10, "world_size": 1e300},
    "traceEvents": [
    {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "pid": 18446744073709551616,
     "ts": 10, "dur": 20, "args": {"External id": 1.9e19, "Collective name": "allreduce",
     "dtype": "Float", "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": 1e10}}
  ]})",
                       "t.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->rank, -1);
  EXPECT_EQ(t->world_size, 0);
  EXPECT_EQ(t->device_pid, 0);
  ASSERT_EQ(t->steps.size(), 1u);
  ASSERT_EQ(t->steps[0].comms.size(), 1u);
  EXPECT_EQ(t->steps[0].comms[0].op, "all_reduce");
  EXPECT_EQ(t->steps[0].comms[0].group_ranks, 0);
}

TEST(Kineto, Errors) {
  const std::string dir = fs::temp_directory_path() / "kineto_test";
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  std::ifstream in(kData + "kineto-synthetic.json");
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = write("cut.json", whole.substr(0, 700));
  Expected<KinetoTrace> t = LoadKinetoTrace(cut);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message().rfind(cut + ":", 0), 0u) << t.status().message();
  EXPECT_NE(t.status().message().find(": not a whole JSON trace (cut short?): "), std::string::npos)
      << t.status().message();
  const std::string other = write("other.json", R"({"steps": [1, 2]})");
  EXPECT_EQ(LoadKinetoTrace(other).status().message(),
            other + ": no traceEvents array: not a Chrome / Kineto trace");
  const std::string cpu = write(
      "cpu.json",
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]})");
  EXPECT_EQ(LoadKinetoTrace(cpu).status().message(),
            cpu +
                ": no GPU kernel event (\"cat\": \"kernel\"): profile with activities "
                "including ProfilerActivity.CUDA");
  const std::string steps = write(
      "nosteps.json",
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm", "ts": 1, "dur": 2}]})");
  EXPECT_EQ(LoadKinetoTrace(steps).status().message(),
            steps +
                ": no ProfilerStep#N annotation: profile with torch.profiler's schedule and "
                "call prof.step() each step");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainsim::observe
