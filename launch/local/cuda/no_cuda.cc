// The cuda backend of a build without CUDA: not there, no device.
#include "launch/local/cuda/cuda_backend.h"

namespace trainsim::local {

bool BuiltWithCuda() { return false; }
int VisibleCudaDevices() { return 0; }
std::unique_ptr<Ops> MakeCudaOps(int) { return nullptr; }

}  // namespace trainsim::local
