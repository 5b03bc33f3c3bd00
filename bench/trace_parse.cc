// How fast and in how much memory `trainsim observe` reads a large PyTorch profiler (Kineto)
// trace (issue 18's target: 1 GB in <= 30 s and <= 2 GB RSS). Writes a SYNTHETIC trace in
// Kineto's format (export_chrome_trace: complete events of CPU ops, GPU kernels of the kinds
// cuBLAS, FlashAttention, NCCL and PyTorch name, step annotations, flow events; made-up times),
// then reads it back with observe::LoadKinetoTrace and prints a table.
//
//   ./build/bench/trace_parse [--mb 1024] [--out /tmp/trainsim-trace-bench.json] [--keep]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <string>

#include "observe/kineto.h"

namespace {

// One step of a made-up training loop: per layer a CPU op, a GEMM, a flash kernel, an
// elementwise kernel and, every fourth layer, an NCCL all-reduce on its own stream.
void WriteStep(std::ofstream& out, long step, double& t, bool& first) {
  auto event = [&](const char* cat, const std::string& name, int pid, int tid, double ts,
                   double dur, const char* args) {
    out << (first ? "\n  " : ",\n  ") << "{\"ph\": \"X\", \"cat\": \"" << cat << "\", \"name\": \""
        << name << "\", \"pid\": " << pid << ", \"tid\": " << tid << ", \"ts\": " << ts
        << ", \"dur\": " << dur << ", \"args\": " << args << "}";
    first = false;
  };
  const double start = t;
  const std::string step_name = "ProfilerStep#" + std::to_string(step);
  event("user_annotation", step_name, 4242, 4242, start, 9000, "{\"External id\": 1}");
  event("gpu_user_annotation", step_name, 0, 7, start, 9000, "{}");
  for (int layer = 0; layer < 40; ++layer) {
    event("cpu_op", "aten::mm", 4242, 4242, t, 12,
          "{\"Input Dims\": [[8192, 4096], [4096, 4096]], \"External id\": 7}");
    event("kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1",
          0, 7, t, 120, "{\"stream\": 7, \"grid\": [132, 1, 1], \"block\": [384, 1, 1]}");
    event("kernel", "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false>>", 0, 7,
          t + 121, 60, "{\"stream\": 7}");
    event("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor>", 0,
          7, t + 182, 8, "{\"stream\": 7}");
    if (layer % 4 == 0) {
      event("kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long)", 0,
            20, t + 100, 90, "{\"stream\": 20}");
    }
    out << ",\n  {\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": " << layer
        << ", \"pid\": 0, \"tid\": 7, \"ts\": " << t << ", \"bp\": \"e\"}";
    t += 200;
  }
  t = start + 9000;
}

long PeakRssMiB() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  double mb = 1024;
  std::string path = (std::filesystem::temp_directory_path() / "trainsim-trace-bench.json");
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mb" && i + 1 < argc) {
      mb = std::atof(argv[++i]);
    } else if (a == "--out" && i + 1 < argc) {
      path = argv[++i];
    } else if (a == "--keep") {
      keep = true;
    } else {
      std::fprintf(stderr, "usage: trace_parse [--mb N] [--out FILE] [--keep]\n");
      return 1;
    }
  }
  const auto w0 = std::chrono::steady_clock::now();
  {
    std::ofstream out(path, std::ios::binary);
    out << std::fixed << std::setprecision(3);  // microseconds with 3 decimals, as Kineto writes
    out << "{\n\"schemaVersion\": 1,\n\"traceName\": \"synthetic (bench/trace_parse.cc)\",\n"
           "\"traceEvents\": [";
    double t = 1.0e15;
    bool first = true;
    for (long step = 1; out.tellp() < static_cast<std::streamoff>(mb * 1024 * 1024); ++step) {
      WriteStep(out, step, t, first);
    }
    out << "\n]\n}\n";
    if (!out) {
      std::fprintf(stderr, "trace_parse: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  const double write_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const double size_mb = std::filesystem::file_size(path) / (1024.0 * 1024);
  const long rss_before = PeakRssMiB();
  const auto p0 = std::chrono::steady_clock::now();
  trainsim::Expected<trainsim::observe::KinetoTrace> trace =
      trainsim::observe::LoadKinetoTrace(path);
  const double parse_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count();
  if (!keep) std::filesystem::remove(path);
  if (!trace.ok()) {
    std::fprintf(stderr, "trace_parse: %s\n", trace.status().message().c_str());
    return 1;
  }
  std::printf(
      "| trace MiB | events | GPU kernels | steps | write s | parse s | MiB/s | peak RSS MiB "
      "(before the parse) |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::printf("| %.0f | %lld | %lld | %zu | %.1f | %.1f | %.0f | %ld (%ld) |\n", size_mb,
              static_cast<long long>(trace->events), static_cast<long long>(trace->kernels),
              trace->steps.size(), write_s, parse_s, size_mb / parse_s, PeakRssMiB(), rss_before);
  return 0;
}
