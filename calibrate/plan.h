// The default measurement plan for a device: which GEMM shapes, buffer sizes
// and collectives trainsim-calibrate measures (docs/calibration.md).
#pragma once

#include <vector>

#include "calibrate/measure.h"

namespace trainsim::calibrate {

// GEMM shapes of the zoo's transformer layers (QKV, attention output
// projection, the MLP matrices, the logits) for tp 1, 2, 4, 8 and micro batch 1, 2, 4, 8,
// without duplicates, in a fixed order. `quick`: tp 1 and 8, micro batch 1,
// llama2-7b and gpt3-175b only.
std::vector<GemmShape> TransformerGemmShapes(bool quick);

// Sizes from `from` to `to` bytes (inclusive), multiplying by `factor`.
std::vector<double> GeometricSizes(double from, double to, double factor);

// The plan for a device the backend probed. GPUs: zoo shapes plus squares
// 256..16384, every supported dtype, memory 1 MiB..1 GiB, collectives 8 B..1 GiB
// in x2 steps. The cpu backend: squares 64..2048 and BERT-large's shapes at
// micro batch 1, sizes up to 256 MiB. `quick` shrinks each list to a few
// points and fewer repetitions (seconds on a CPU, about a minute on a GPU).
MeasurePlan DefaultPlan(const DeviceInfo& device, bool quick);

}  // namespace trainsim::calibrate
