// Placeholder until the cuda backend lands (helper branch).
#include "calibrate/measure.h"

namespace trainsim::calibrate {

std::unique_ptr<Backend> MakeCudaBackend() { return nullptr; }

}  // namespace trainsim::calibrate
