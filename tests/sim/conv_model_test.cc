// The compute model of layer-list (convolutional) models: each layer is a
// roofline convolution at the conv efficiency plus the memory traffic of its
// epilogue (BatchNorm, ReLU, residual add), forward and backward
// (docs/model.md section 2).
#include <gtest/gtest.h>

#include <string>

#include "core/catalog.h"
#include "core/scenario.h"
#include "sim/workload.h"
#include "tests/test_util.h"

namespace trainsim::sim {
namespace {

constexpr double kV100Fp16Peak = 125e12, kV100Fp32Peak = 15.7e12, kV100HbmBps = 900e9;
constexpr int kBatch = 8;

Scenario Parse(const std::string& json) {
  const Catalog& catalog = test::BuiltinCatalog();
  Expected<Scenario> s = ParseScenario(json, "test.json", catalog);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

// A one-layer model on one V100 (p3.2xlarge), one microbatch of kBatch samples.
Scenario OneLayer(const std::string& layer, const std::string& precision = "fp16") {
  return Parse(R"({"model": {"layer_list": [)" + layer + R"(]}, "training": {"global_batch": )" +
               std::to_string(kBatch) + R"(, "micro_batch": )" + std::to_string(kBatch) +
               R"(, "precision": ")" + precision +
               R"(", "optimizer": "sgd"}, "cluster": {"instance": "p3.2xlarge"}})");
}

// Seconds of the forward and of the backward pass of the first microbatch.
struct Passes {
  double fwd = 0, bwd = 0;
};

Passes PassSeconds(const Scenario& s, const ModelParams& params = ModelParams()) {
  Expected<StepProgram> p = BuildStepProgram(s, params);
  EXPECT_TRUE(p.ok()) << p.status().message();
  Passes out;
  for (const Op& op : p->stages[0].ops) {
    if (op.kind != OpKind::kCompute || op.microbatch != 0) continue;
    if (op.phase == OpPhase::kForward) out.fwd += op.seconds;
    if (op.phase == OpPhase::kBackward) out.bwd += op.seconds;
  }
  return out;
}

std::string Layer(double flops, double activation, double input, const std::string& epilogue) {
  return R"({"forward_flops": )" + std::to_string(flops) + R"(, "activation_bytes": )" +
         std::to_string(activation) + R"(, "input_bytes": )" + std::to_string(input) +
         R"(, "epilogue": ")" + epilogue + R"("})";
}

// A model of the V100 in fp16 with the catalog's conv efficiency, for closed forms.
ComputeModel V100Fp16(const Scenario& s) {
  ModelParams params;
  params.conv_efficiency = *s.instance.gpu.conv_efficiency;
  return ComputeModel(kV100Fp16Peak, kV100HbmBps, params);
}

// Each epilogue adds its element-wise kernels over the output: forward BN 1 + 2
// passes, ReLU 2, add 3; backward ReLU 3, add 3, BN 2 + 3.
TEST(ConvModelTest, EpilogueAddsItsElementWisePasses) {
  const double act = 1e6, out = act * kBatch;  // fp16: 2 bytes per element as given
  const Passes none = PassSeconds(OneLayer(Layer(1e3, act, 0, "none")));
  const Scenario s = OneLayer(Layer(1e3, act, 0, "bn-relu"));
  const ComputeModel cm = V100Fp16(s);
  const Passes bn_relu = PassSeconds(s);
  const Passes bn = PassSeconds(OneLayer(Layer(1e3, act, 0, "bn")));
  const Passes add = PassSeconds(OneLayer(Layer(1e3, act, 0, "bn-add-relu")));
  auto mem = [&](double passes) { return cm.MemorySeconds(passes * out); };
  EXPECT_NEAR(bn.fwd - none.fwd, mem(1) + mem(2), 1e-12);
  EXPECT_NEAR(bn.bwd - none.bwd, mem(2) + mem(3), 1e-12);
  EXPECT_NEAR(bn_relu.fwd - none.fwd, mem(1) + 2 * mem(2), 1e-12);
  EXPECT_NEAR(bn_relu.bwd - none.bwd, mem(2) + 2 * mem(3), 1e-12);
  EXPECT_NEAR(add.fwd - none.fwd, mem(1) + 2 * mem(2) + mem(3), 1e-12);
  EXPECT_NEAR(add.bwd - none.bwd, mem(2) + 3 * mem(3), 1e-12);
}

// A convolution is the slower of its compute and its operand traffic: with a
// large input, small FLOP counts do not change the time; with no traffic, the
// time is the FLOPs at the conv efficiency. Backward is two such kernels.
TEST(ConvModelTest, ConvolutionIsARoofline) {
  const double input = 1e8;  // bytes per sample
  const Passes few = PassSeconds(OneLayer(Layer(1e6, 0, input, "none")));
  const Passes more = PassSeconds(OneLayer(Layer(2e6, 0, input, "none")));
  EXPECT_DOUBLE_EQ(few.fwd, more.fwd);
  EXPECT_DOUBLE_EQ(few.bwd, 2 * few.fwd);

  const double flops = 1e12;  // per sample: compute-bound
  const Scenario s = OneLayer(Layer(flops, 0, 0, "none"));
  const double efficiency = *s.instance.gpu.conv_efficiency;
  const Passes p = PassSeconds(s);
  EXPECT_NEAR(p.fwd,
              ModelParams().kernel_overhead_s + flops * kBatch / (efficiency * kV100Fp16Peak),
              1e-12);
  const ComputeModel cm = V100Fp16(s);
  EXPECT_DOUBLE_EQ(p.fwd, cm.ConvSeconds(flops * kBatch, 0));
  EXPECT_DOUBLE_EQ(cm.ConvSeconds(flops * kBatch, input * kBatch),
                   std::max(cm.ConvSeconds(flops * kBatch, 0), cm.MemorySeconds(input * kBatch)));
}

// NCHW activations (training.memory_format) in 16 bits: each convolution transposes its
// operands, forward x and y (read + write each), backward dy, dx, x and dy again, as
// memory-bound passes: 2 (in + out) forward, 4 (in + out) backward. fp32 on the V100's
// CUDA cores runs NCHW as it is, and TF32 has no such cost.
TEST(ConvModelTest, NchwTensorCoreConvolutionsTransposeTheirOperands) {
  const double act = 3e6, input = 2e6;  // per sample, fp16
  const std::string layer = Layer(1e9, act, input, "none");
  auto with_format = [&](const std::string& precision, const std::string& format) {
    Scenario s = OneLayer(layer, precision);
    s.training.memory_format = format == "nchw" ? MemoryFormat::kNchw : MemoryFormat::kNhwc;
    return s;
  };
  const Scenario nhwc = with_format("fp16", "nhwc"), nchw = with_format("fp16", "nchw");
  const double in = input * kBatch, out = act * kBatch;
  const double hbm = ModelParams().hbm_efficiency * kV100HbmBps;
  const double overhead = ModelParams().kernel_overhead_s;
  EXPECT_NEAR(PassSeconds(nchw).fwd - PassSeconds(nhwc).fwd, overhead + 2 * (in + out) / hbm,
              1e-12);
  EXPECT_NEAR(PassSeconds(nchw).bwd - PassSeconds(nhwc).bwd, overhead + 4 * (in + out) / hbm,
              1e-12);
  EXPECT_DOUBLE_EQ(PassSeconds(with_format("fp32", "nchw")).fwd,
                   PassSeconds(with_format("fp32", "nhwc")).fwd);
  // TF32 (A100) in NCHW: no transposes (the corpus's NCHW and NHWC TF32 rows agree).
  Scenario tf32 = Parse(R"({"model": "resnet50", "training": {"global_batch": 64,
      "precision": "tf32", "memory_format": "nchw"}, "cluster": {"instance": "p4d.24xlarge"},
      "parallel": {"dp": 8}})");
  EXPECT_FALSE(ConvTransposes(tf32));
  tf32.training.precision = Precision::kFp16;
  EXPECT_TRUE(ConvTransposes(tf32));
  // The parser reads it, and refuses what is not a layout.
  EXPECT_EQ(Parse(R"({"model": "resnet50", "training": {"global_batch": 64,
      "precision": "fp16", "memory_format": "nchw"}, "cluster": {"instance": "p3.2xlarge"}})")
                .training.memory_format,
            MemoryFormat::kNchw);
  Expected<Scenario> bad = ParseScenario(
      R"({"model": "resnet50", "training": {"global_batch": 64, "precision": "fp16",
          "memory_format": "chw"},
          "cluster": {"instance": "p3.2xlarge"}})",
      "test.json", test::BuiltinCatalog());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("training.memory_format"), std::string::npos)
      << bad.status().message();
}

// The catalog's conv efficiency is a 16-bit figure: `use_catalog_conv_efficiency: false` falls
// back to the GEMM efficiency, and fp32 convolutions without their own figure run at the GEMM
// efficiency too. The catalog's GEMM efficiency is a tensor-core figure: fp32 (CUDA cores)
// keeps the assumption.
TEST(ConvModelTest, CatalogConvEfficiencyAppliesToSixteenBitOnly) {
  const std::string layer = Layer(1e12, 0, 0, "none");
  const Scenario fp16 = OneLayer(layer);
  ASSERT_TRUE(fp16.instance.gpu.conv_efficiency.has_value());
  ASSERT_TRUE(fp16.instance.gpu.gemm_efficiency.has_value());
  const double overhead = ModelParams().kernel_overhead_s, work = 1e12 * kBatch;
  const double assumed = ModelParams().gemm_efficiency;
  ASSERT_NE(*fp16.instance.gpu.gemm_efficiency, assumed);
  ModelParams no_catalog;
  no_catalog.use_catalog_conv_efficiency = false;
  EXPECT_NEAR(PassSeconds(OneLayer(layer, "fp32"), no_catalog).fwd,
              overhead + work / (assumed * kV100Fp32Peak), 1e-12);
  EXPECT_NEAR(PassSeconds(fp16, no_catalog).fwd,
              overhead + work / (*fp16.instance.gpu.gemm_efficiency * kV100Fp16Peak), 1e-12);
  EXPECT_NE(PassSeconds(fp16).fwd, PassSeconds(fp16, no_catalog).fwd);
}

// TF32 convolutions (A100) run at the GPU's TF32 conv efficiency times the TF32 peak; fp16 keeps
// the 16-bit figure, and `use_catalog_conv_efficiency: false` drops both (the TF32 GEMM
// efficiency applies then).
TEST(ConvModelTest, Tf32ConvolutionsRunAtTheirOwnEfficiency) {
  auto a100 = [](const std::string& precision) {
    return Parse(R"({"model": {"layer_list": [)" + Layer(1e12, 0, 0, "none") +
                 R"(]}, "training": {"global_batch": 64, "micro_batch": 8, "precision": ")" +
                 precision + R"(", "optimizer": "sgd"}, "cluster": {"instance": "p4d.24xlarge"}})");
  };
  const Scenario tf32 = a100("tf32"), fp16 = a100("fp16");
  const GpuSpec& gpu = tf32.instance.gpu;
  ASSERT_TRUE(gpu.tf32_conv_efficiency && gpu.conv_efficiency && gpu.gemm_efficiency);
  const double overhead = ModelParams().kernel_overhead_s, work = 1e12 * kBatch;
  EXPECT_NEAR(PassSeconds(tf32).fwd, overhead + work / (*gpu.tf32_conv_efficiency * 156e12), 1e-12);
  EXPECT_NEAR(PassSeconds(fp16).fwd, overhead + work / (*gpu.conv_efficiency * 312e12), 1e-12);
  ModelParams no_catalog;
  no_catalog.use_catalog_conv_efficiency = false;
  // Without the conv figures, the GEMM efficiency of the precision: TF32's own.
  ASSERT_TRUE(gpu.tf32_gemm_efficiency);
  EXPECT_NEAR(PassSeconds(tf32, no_catalog).fwd,
              overhead + work / (*gpu.tf32_gemm_efficiency * 156e12), 1e-12);
}

// FP32 convolutions on a V100's CUDA cores run at its FP32 conv efficiency times the FP32
// peak (15.7 TFLOP/s); without the catalog's figures, at the assumed GEMM efficiency (fp32
// GEMMs do not take the tensor-core figure either).
TEST(ConvModelTest, Fp32ConvolutionsRunAtTheirOwnEfficiency) {
  const Scenario fp32 = Parse(R"({"model": {"layer_list": [)" + Layer(1e12, 0, 0, "none") +
                              R"(]}, "training": {"global_batch": 64, "micro_batch": 8,
      "precision": "fp32", "optimizer": "sgd"}, "cluster": {"instance": "p3.16xlarge"}})");
  const GpuSpec& gpu = fp32.instance.gpu;
  ASSERT_TRUE(gpu.fp32_conv_efficiency && gpu.conv_efficiency);
  EXPECT_NE(*gpu.fp32_conv_efficiency, *gpu.conv_efficiency);
  const double overhead = ModelParams().kernel_overhead_s, work = 1e12 * kBatch;
  EXPECT_NEAR(PassSeconds(fp32).fwd, overhead + work / (*gpu.fp32_conv_efficiency * kV100Fp32Peak),
              1e-12);
}

// The conv efficiency does not touch transformers (A100 has both figures).
TEST(ConvModelTest, ConvEfficiencyLeavesTransformersAlone) {
  const Scenario gpt = Parse(R"({"model": "gpt-1.7b", "training": {"global_batch": 16},
      "cluster": {"instance": "p4d.24xlarge"}, "parallel": {}})");
  ASSERT_TRUE(gpt.instance.gpu.conv_efficiency.has_value());
  ModelParams no_conv;
  no_conv.use_catalog_conv_efficiency = false;
  ModelParams other_conv;
  other_conv.conv_efficiency = 0.1;
  other_conv.use_catalog_conv_efficiency = false;
  const double with = BuildStepProgram(gpt, ModelParams())->stages[0].compute_per_microbatch_s;
  EXPECT_DOUBLE_EQ(with, BuildStepProgram(gpt, no_conv)->stages[0].compute_per_microbatch_s);
  EXPECT_DOUBLE_EQ(with, BuildStepProgram(gpt, other_conv)->stages[0].compute_per_microbatch_s);
}

// fp32 moves twice the bytes of fp16 in every element-wise pass.
TEST(ConvModelTest, ElementWiseTrafficScalesWithTheElementSize) {
  const double act = 1e7;
  const Passes none16 = PassSeconds(OneLayer(Layer(1, act, 0, "none")));
  const Passes bn16 = PassSeconds(OneLayer(Layer(1, act, 0, "bn-relu")));
  const Passes none32 = PassSeconds(OneLayer(Layer(1, act, 0, "none"), "fp32"));
  const Passes bn32 = PassSeconds(OneLayer(Layer(1, act, 0, "bn-relu"), "fp32"));
  const double overheads = 3 * ModelParams().kernel_overhead_s;  // three forward kernels
  EXPECT_NEAR((bn32.fwd - none32.fwd - overheads) / (bn16.fwd - none16.fwd - overheads), 2.0, 1e-9);
}

}  // namespace
}  // namespace trainsim::sim
