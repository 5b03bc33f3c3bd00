#include "core/instance_type.h"

namespace trainsim {

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

}  // namespace trainsim
