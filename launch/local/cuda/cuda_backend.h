// What the rest of trainsim-train knows of the cuda backend, in plain C++:
// whether it was built, how many GPUs are visible, and the CudaOps factory.
// Without CUDA (no nvcc or cuBLAS at configure time) no_cuda.cc answers:
// nothing built, no device.
#pragma once

#include <memory>

#include "launch/local/ops.h"

namespace trainsim::local {

// True when this build has CudaOps (launch/local/cuda/cuda_ops.cu).
bool BuiltWithCuda();

// The number of CUDA devices visible to this process (0 on any error, or
// without CUDA).
int VisibleCudaDevices();

// CudaOps on `device` (cudaSetDevice first); nullptr without CUDA.
std::unique_ptr<Ops> MakeCudaOps(int device);

}  // namespace trainsim::local
