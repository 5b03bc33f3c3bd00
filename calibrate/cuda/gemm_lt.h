// cuBLASLt pieces of the GEMM phase: the dtype table, owning descriptor
// handles and a planned matmul. Layout ("TN", which fp8 requires and every
// dtype uses): A is row-major m x k (row i at a + i*k), B is stored by
// columns (column j at b + j*k), C is column-major m x n (ld m).
#pragma once

#include <cublasLt.h>

#include <memory>
#include <string>
#include <type_traits>

#include "calibrate/cuda/kernels.h"
#include "calibrate/measure.h"
#include "core/status.h"

namespace trainsim::calibrate::cuda {

// One GEMM dtype: storage types, cuBLAS compute type and the check's
// tolerance, |got - exact| <= out_tol * |exact| + sum_tol * sum |a_i b_i|.
struct DtypeSpec {
  const char* name;
  int min_capability;  // 10 * major + minor
  cudaDataType_t ab_type, c_type;
  Elem ab_elem, c_elem;
  cublasComputeType_t compute;
  double out_tol;  // rounding of C to its storage type
  double sum_tol;  // accumulation, and inputs rounded inside cuBLAS (tf32)
};

// nullptr for an unknown name.
const DtypeSpec* FindDtype(const std::string& name);

// Ok for CUBLAS_STATUS_SUCCESS, else Internal("<what>: <cuBLAS's message>").
Status LtCheck(cublasStatus_t status, const std::string& what);

struct LtHandleDestroy {
  void operator()(cublasLtHandle_t h) const { cublasLtDestroy(h); }
};
struct LtDescDestroy {
  void operator()(cublasLtMatmulDesc_t d) const { cublasLtMatmulDescDestroy(d); }
};
struct LtLayoutDestroy {
  void operator()(cublasLtMatrixLayout_t l) const { cublasLtMatrixLayoutDestroy(l); }
};
using LtHandle = std::unique_ptr<std::remove_pointer_t<cublasLtHandle_t>, LtHandleDestroy>;
using LtDesc = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulDesc_t>, LtDescDestroy>;
using LtLayout = std::unique_ptr<std::remove_pointer_t<cublasLtMatrixLayout_t>, LtLayoutDestroy>;

Expected<LtHandle> CreateLtHandle();

// A matmul of one dtype and shape with the algorithm cuBLASLt's heuristic
// picks for `workspace_bytes` of workspace.
struct LtMatmul {
  LtDesc desc;
  LtLayout a, b, c;
  cublasLtMatmulAlgo_t algo{};
};
Expected<LtMatmul> PlanMatmul(cublasLtHandle_t handle, const DtypeSpec& spec,
                              const GemmShape& shape, size_t workspace_bytes);

// Enqueues C = A B (C is also the beta = 0 input).
Status RunMatmul(cublasLtHandle_t handle, const LtMatmul& mm, const void* a, const void* b, void* c,
                 void* workspace, size_t workspace_bytes, cudaStream_t stream);

}  // namespace trainsim::calibrate::cuda
