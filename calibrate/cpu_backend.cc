// Placeholder until the cpu backend lands (helper branch).
#include "calibrate/measure.h"

namespace trainsim::calibrate {

std::unique_ptr<Backend> MakeCpuBackend() { return nullptr; }

}  // namespace trainsim::calibrate
