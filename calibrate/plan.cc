#include "calibrate/plan.h"

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

#include "core/model_zoo.h"
#include "core/units.h"

namespace trainsim::calibrate {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// The four weight GEMMs of one transformer layer on one of `tp` ranks, with
// `tokens` rows: QKV, attention output, MLP up (gate + up for SwiGLU), MLP
// down; and the output layer (logits). The simulator looks these shapes up.
void AddLayerShapes(const ModelSpec& m, int tp, int mb, std::vector<GemmShape>* out) {
  const int64_t tokens = static_cast<int64_t>(mb) * m.seq_len;
  const int64_t h = m.hidden;
  const int64_t head_dim = m.hidden / m.heads;
  const int64_t qkv = (m.heads + 2 * m.kv_heads) * head_dim;
  const int64_t up = (m.mlp == MlpKind::kSwiGlu ? 2 : 1) * static_cast<int64_t>(m.ffn_hidden);
  const std::string tag = m.name + " tp" + std::to_string(tp) + " mb" + std::to_string(mb);
  out->push_back({tokens, qkv / tp, h, tag + " qkv"});
  out->push_back({tokens, h, h / tp, tag + " attn-out"});
  out->push_back({tokens, up / tp, h, tag + " mlp-up"});
  out->push_back({tokens, h, m.ffn_hidden / tp, tag + " mlp-down"});
  out->push_back({tokens, m.vocab / tp, h, tag + " logits"});
}

std::vector<GemmShape> Unique(const std::vector<GemmShape>& shapes) {
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  std::vector<GemmShape> out;
  for (const GemmShape& s : shapes) {
    if (s.m > 0 && s.n > 0 && s.k > 0 && seen.insert({s.m, s.n, s.k}).second) out.push_back(s);
  }
  return out;
}

std::vector<GemmShape> Squares(const std::vector<int64_t>& sides) {
  std::vector<GemmShape> out;
  for (int64_t n : sides) out.push_back({n, n, n, "square " + std::to_string(n)});
  return out;
}

std::vector<std::string> Ops() {
  return {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "send_recv"};
}

MeasurePlan GpuPlan(const DeviceInfo& device, bool quick) {
  MeasurePlan p;
  p.quick = quick;
  p.warmup = quick ? 2 : 5;
  p.repetitions = quick ? 5 : 20;
  p.dtypes = device.dtypes;
  p.gemm_shapes = Squares(quick ? std::vector<int64_t>{1024, 4096, 8192}
                                : std::vector<int64_t>{256, 512, 1024, 2048, 4096, 8192, 16384});
  for (const GemmShape& s : TransformerGemmShapes(quick)) p.gemm_shapes.push_back(s);
  p.gemm_shapes = Unique(p.gemm_shapes);
  p.memory_bytes =
      quick ? std::vector<double>{64 * kMiB, 1 * kGiB} : GeometricSizes(1 * kMiB, 1 * kGiB, 4);
  p.collective_ops = Ops();
  p.collective_bytes = GeometricSizes(8, 1 * kGiB, quick ? 8 : 2);
  return p;
}

MeasurePlan CpuPlan(bool quick) {
  MeasurePlan p;
  p.quick = quick;
  p.warmup = quick ? 1 : 2;
  p.repetitions = quick ? 3 : 10;
  p.dtypes = {"fp32"};
  p.gemm_shapes = Squares(quick ? std::vector<int64_t>{128, 256, 512}
                                : std::vector<int64_t>{64, 128, 256, 512, 1024, 2048});
  if (!quick) {
    if (std::optional<ModelSpec> bert = FindModel("bert-large")) {
      AddLayerShapes(*bert, 1, 1, &p.gemm_shapes);
    }
  }
  p.gemm_shapes = Unique(p.gemm_shapes);
  p.memory_bytes =
      quick ? std::vector<double>{4 * kMiB, 64 * kMiB} : GeometricSizes(1 * kMiB, 256 * kMiB, 4);
  p.collective_ops = Ops();
  p.collective_bytes = GeometricSizes(8, quick ? 16 * kMiB : 256 * kMiB, quick ? 8 : 2);
  return p;
}

}  // namespace

std::vector<GemmShape> TransformerGemmShapes(bool quick) {
  const std::vector<std::string> models =
      quick ? std::vector<std::string>{"llama2-7b", "gpt3-175b"}
            : std::vector<std::string>{"bert-large", "llama2-7b", "llama2-13b", "llama2-70b",
                                       "gpt3-175b"};
  const std::vector<int> tps = quick ? std::vector<int>{1, 8} : std::vector<int>{1, 2, 4, 8};
  const std::vector<int> mbs = quick ? std::vector<int>{1} : std::vector<int>{1, 2, 4, 8};
  std::vector<GemmShape> shapes;
  for (const std::string& name : models) {
    std::optional<ModelSpec> m = FindModel(name);
    if (!m || m->kind != ModelKind::kTransformer) continue;
    for (int tp : tps) {
      for (int mb : mbs) AddLayerShapes(*m, tp, mb, &shapes);
    }
  }
  return Unique(shapes);
}

std::vector<double> GeometricSizes(double from, double to, double factor) {
  std::vector<double> out;
  for (double b = from; b <= to * (1 + 1e-12); b *= factor) out.push_back(b);
  return out;
}

MeasurePlan DefaultPlan(const DeviceInfo& device, bool quick) {
  return device.backend == "cpu" ? CpuPlan(quick) : GpuPlan(device, quick);
}

}  // namespace trainsim::calibrate
