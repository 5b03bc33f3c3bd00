#include "core/instance_type.h"

namespace trainsim {

bool InstanceType::RunsSagemakerLibrary(std::string_view library) const {
  for (const std::string& l : sagemaker_libraries) {
    if (l == library) return true;
  }
  return false;
}

std::optional<double> GpuSpec::PeakFlops(Precision p) const {
  switch (p) {
    case Precision::kFp32:
      return fp32_flops;
    case Precision::kTf32:
      return tf32_flops;
    case Precision::kFp16:
      return fp16_flops;
    case Precision::kBf16:
      return bf16_flops;
    case Precision::kFp8:
      return fp8_flops;
  }
  return std::nullopt;
}

const std::vector<GpuFigure>& GpuFigures() {
  static const std::vector<GpuFigure> figures = {
      {"gemm_efficiency", &GpuSpec::gemm_efficiency, &GpuSpec::gemm_efficiency_provenance},
      {"tf32_gemm_efficiency", &GpuSpec::tf32_gemm_efficiency,
       &GpuSpec::tf32_gemm_efficiency_provenance},
      {"attention_efficiency", &GpuSpec::attention_efficiency,
       &GpuSpec::attention_efficiency_provenance},
      {"unaligned_gemm_efficiency", &GpuSpec::unaligned_gemm_efficiency,
       &GpuSpec::unaligned_gemm_efficiency_provenance},
      {"fp8_rowwise_gemm_efficiency", &GpuSpec::fp8_rowwise_gemm_efficiency,
       &GpuSpec::fp8_rowwise_gemm_efficiency_provenance},
      {"conv_efficiency", &GpuSpec::conv_efficiency, &GpuSpec::conv_efficiency_provenance},
      {"tf32_conv_efficiency", &GpuSpec::tf32_conv_efficiency,
       &GpuSpec::tf32_conv_efficiency_provenance},
      {"fp32_conv_efficiency", &GpuSpec::fp32_conv_efficiency,
       &GpuSpec::fp32_conv_efficiency_provenance},
      {"cudnn_attention_efficiency", &GpuSpec::cudnn_attention_efficiency,
       &GpuSpec::cudnn_attention_efficiency_provenance},
      {"nvlink_efficiency", &GpuSpec::nvlink_efficiency, &GpuSpec::nvlink_efficiency_provenance},
      {"nvls_efficiency", &GpuSpec::nvls_efficiency, &GpuSpec::nvls_efficiency_provenance},
  };
  return figures;
}

}  // namespace trainsim
