// Does the simulator, fed a hardware profile, predict GEMMs it was not fitted
// on? Measures the weight GEMMs of a few transformer layers on this machine
// (shapes that are not in the profile's plan) with the profile's backend, and
// prints them beside the time the simulator's compute model gives from the
// profile's table (docs/calibration.md, docs/BENCHMARKS.md).
//
// Usage: profile_check PROFILE.json [DTYPE]
//   DTYPE defaults to fp32 for a cpu profile and bf16 for a cuda profile.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "calibrate/measure.h"
#include "core/hardware_profile.h"
#include "sim/model_params.h"
#include "sim/workload.h"

namespace trainsim::bench {
namespace {

// QKV, attention output, MLP up and down of one layer with `tokens` rows.
void AddLayer(int64_t tokens, int64_t hidden, int64_t ffn, const std::string& tag,
              std::vector<calibrate::GemmShape>* out) {
  out->push_back({tokens, 3 * hidden, hidden, tag + " qkv"});
  out->push_back({tokens, hidden, hidden, tag + " attn-out"});
  out->push_back({tokens, ffn, hidden, tag + " mlp-up"});
  out->push_back({tokens, hidden, ffn, tag + " mlp-down"});
}

std::vector<calibrate::GemmShape> HeldOutShapes(bool cpu) {
  std::vector<calibrate::GemmShape> shapes;
  if (cpu) {  // scenarios/local/cpu-transformer.json (h 512, seq 128) at micro batch 1 and 3
    AddLayer(128, 512, 2048, "h512 mb1", &shapes);
    AddLayer(384, 512, 2048, "h512 mb3", &shapes);
    AddLayer(200, 768, 3072, "h768 200 tokens", &shapes);
  } else {  // GPT-3 2.7B-like and 6.7B-like layers at 2048 tokens, odd token counts
    AddLayer(2048, 2560, 10240, "h2560 mb1", &shapes);
    AddLayer(6144, 4096, 16384, "h4096 mb3", &shapes);
    AddLayer(3000, 5120, 20480, "h5120 3000 tokens", &shapes);
  }
  return shapes;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: profile_check PROFILE.json [DTYPE]\n");
    return 1;
  }
  Expected<HardwareProfile> profile = LoadHardwareProfile(argv[1]);
  if (!profile.ok()) {
    std::fprintf(stderr, "profile_check: %s\n", profile.status().message().c_str());
    return 1;
  }
  const bool cpu = profile->provenance.backend == "cpu";
  const std::string dtype = argc > 2 ? argv[2] : cpu ? "fp32" : "bf16";
  auto table = profile->gemm_tables.find(dtype);
  if (table == profile->gemm_tables.end()) {
    std::fprintf(stderr, "profile_check: %s has no %s GEMM table\n", argv[1], dtype.c_str());
    return 1;
  }
  Expected<calibrate::ChosenBackend> backend = calibrate::ChooseBackend(cpu ? "cpu" : "cuda");
  if (!backend.ok()) {
    std::fprintf(stderr, "profile_check: %s\n", backend.status().message().c_str());
    return 1;
  }
  calibrate::MeasurePlan plan;
  plan.warmup = 2;
  plan.repetitions = cpu ? 5 : 20;
  plan.dtypes = {dtype};
  plan.gemm_shapes = HeldOutShapes(cpu);
  calibrate::Measurements m;
  if (Status s = backend->backend->Run(plan, nullptr, &m); !s.ok()) {
    std::fprintf(stderr, "profile_check: %s\n", s.message().c_str());
    return 1;
  }
  // The simulator's compute model with the profile's table (peak and memory
  // bandwidth do not enter a GEMM's time when a table is given).
  const sim::ComputeModel cm(1, 1, sim::ModelParams(),
                             sim::MeasuredGemms{&table->second, nullptr, dtype});
  std::printf("## GEMMs not in the profile: measured vs the simulator's prediction\n\n");
  std::printf("profile %s (%s, %s), dtype %s, %d repetitions\n\n", argv[1],
              profile->provenance.device.c_str(), profile->provenance.date.c_str(), dtype.c_str(),
              plan.repetitions);
  std::printf("| shape | m x n x k | GFLOP | measured ms | spread | predicted ms | error %% |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|\n");
  double worst = 0, sum = 0;
  int n = 0;
  for (const calibrate::GemmPoint& g : m.gemm) {
    const double predicted = cm.GemmSeconds(g.flops);
    const double error = (predicted - g.timing.median_s) / g.timing.median_s;
    worst = std::max(worst, std::abs(error));
    sum += std::abs(error);
    ++n;
    std::printf("| %s | %lldx%lldx%lld | %.2f | %.3f | %.1f%% | %.3f | %+.1f |\n",
                g.shape.origin.c_str(), static_cast<long long>(g.shape.m),
                static_cast<long long>(g.shape.n), static_cast<long long>(g.shape.k), g.flops / 1e9,
                g.timing.median_s * 1e3, 100 * g.timing.spread(), predicted * 1e3, 100 * error);
  }
  for (const calibrate::Failure& f : m.failures) {
    std::printf("failed: %s: %s\n", f.what.c_str(), f.error.c_str());
  }
  if (n > 0) {
    std::printf("\n%d shapes: mean absolute error %.1f%%, worst %.1f%%\n", n, 100 * sum / n,
                100 * worst);
  }
  return 0;
}

}  // namespace
}  // namespace trainsim::bench

int main(int argc, char** argv) { return trainsim::bench::Main(argc, argv); }
