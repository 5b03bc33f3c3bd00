// Builds without nvcc have no cuda backend; `--backend auto` then uses cpu.
#include "calibrate/measure.h"

namespace trainsim::calibrate {

std::unique_ptr<Backend> MakeCudaBackend() { return nullptr; }

}  // namespace trainsim::calibrate
