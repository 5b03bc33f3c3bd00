#include "calibrate/cuda/gemm_lt.h"

#include <cstdint>

#include "calibrate/cuda/phases.h"

namespace trainsim::calibrate::cuda {
namespace {

// fp32 uses CUBLAS_COMPUTE_32F, which never rounds inputs to TF32 (only
// CUBLAS_COMPUTE_32F_FAST_TF32 does). fp16/bf16 accumulate in fp32; fp8
// multiplies e4m3 inputs into a bf16 C. Tolerances: twice the unit
// roundoff of C's type; the sum term covers fp32 accumulation order, TF32
// input rounding (2^-10 per product) and fp8 tensor-core accumulation.
constexpr DtypeSpec kDtypes[] = {
    {"fp32", 0, CUDA_R_32F, CUDA_R_32F, Elem::kF32, Elem::kF32, CUBLAS_COMPUTE_32F, 0x1p-23, 1e-5},
    {"tf32", 80, CUDA_R_32F, CUDA_R_32F, Elem::kF32, Elem::kF32, CUBLAS_COMPUTE_32F_FAST_TF32,
     0x1p-23, 0x1p-9},
    {"fp16", 70, CUDA_R_16F, CUDA_R_16F, Elem::kF16, Elem::kF16, CUBLAS_COMPUTE_32F, 0x1p-10, 1e-3},
    {"bf16", 80, CUDA_R_16BF, CUDA_R_16BF, Elem::kBF16, Elem::kBF16, CUBLAS_COMPUTE_32F, 0x1p-7,
     1e-3},
    {"fp8", 89, CUDA_R_8F_E4M3, CUDA_R_16BF, Elem::kE4M3, Elem::kBF16, CUBLAS_COMPUTE_32F, 0x1p-7,
     4e-3},
};

template <typename T>
Status SetDescAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                        const T& value) {
  return LtCheck(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof value),
                 "cublasLtMatmulDescSetAttribute");
}

Expected<LtDesc> CreateDesc(const DtypeSpec& spec) {
  cublasLtMatmulDesc_t desc = nullptr;
  Status st = LtCheck(cublasLtMatmulDescCreate(&desc, spec.compute, CUDA_R_32F),
                      "cublasLtMatmulDescCreate");
  if (!st.ok()) return st;
  LtDesc owned(desc);
  st = SetDescAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  if (st.ok()) st = SetDescAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  if (!st.ok()) return st;
  return owned;
}

// Column-major rows x cols with leading dimension ld.
Expected<LtLayout> CreateLayout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld) {
  cublasLtMatrixLayout_t layout = nullptr;
  Status st = LtCheck(cublasLtMatrixLayoutCreate(&layout, type, static_cast<uint64_t>(rows),
                                                 static_cast<uint64_t>(cols), ld),
                      "cublasLtMatrixLayoutCreate");
  if (!st.ok()) return st;
  return LtLayout(layout);
}

Status ChooseAlgorithm(cublasLtHandle_t handle, size_t workspace_bytes, LtMatmul* mm) {
  cublasLtMatmulPreference_t pref = nullptr;
  Status st = LtCheck(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  if (!st.ok()) return st;
  const uint64_t workspace = workspace_bytes;
  st = LtCheck(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace, sizeof workspace),
               "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (st.ok()) {
    st = LtCheck(cublasLtMatmulAlgoGetHeuristic(handle, mm->desc.get(), mm->a.get(), mm->b.get(),
                                                mm->c.get(), mm->c.get(), pref, 1, &result, &found),
                 "cublasLtMatmulAlgoGetHeuristic");
  }
  cublasLtMatmulPreferenceDestroy(pref);
  if (st.ok() && found == 0) st = Status::Internal("cuBLASLt has no algorithm for this GEMM");
  if (st.ok()) mm->algo = result.algo;
  return st;
}

}  // namespace

const DtypeSpec* FindDtype(const std::string& name) {
  for (const DtypeSpec& spec : kDtypes) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

std::vector<std::string> SupportedDtypes(int major, int minor) {
  std::vector<std::string> names;
  for (const std::string& name : AllDtypes()) {
    const DtypeSpec* spec = FindDtype(name);
    if (spec != nullptr && 10 * major + minor >= spec->min_capability) names.push_back(name);
  }
  return names;
}

std::string BlasVersion() {
  int major = 0, minor = 0, patch = 0;
  if (cublasLtGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasLtGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasLtGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS) {
    return "cuBLAS (version unknown)";
  }
  return "cuBLAS " + std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(patch);
}

Status LtCheck(cublasStatus_t status, const std::string& what) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return Status::Internal(what + ": " + cublasLtGetStatusString(status) + " (" +
                          cublasLtGetStatusName(status) + ")");
}

Expected<LtHandle> CreateLtHandle() {
  cublasLtHandle_t handle = nullptr;
  Status st = LtCheck(cublasLtCreate(&handle), "cublasLtCreate");
  if (!st.ok()) return st;
  return LtHandle(handle);
}

Expected<LtMatmul> PlanMatmul(cublasLtHandle_t handle, const DtypeSpec& spec,
                              const GemmShape& shape, size_t workspace_bytes) {
  LtMatmul mm;
  Expected<LtDesc> desc = CreateDesc(spec);
  if (!desc.ok()) return desc.status();
  mm.desc = std::move(desc).value();
  Expected<LtLayout> a = CreateLayout(spec.ab_type, shape.k, shape.m, shape.k);
  if (!a.ok()) return a.status();
  mm.a = std::move(a).value();
  Expected<LtLayout> b = CreateLayout(spec.ab_type, shape.k, shape.n, shape.k);
  if (!b.ok()) return b.status();
  mm.b = std::move(b).value();
  Expected<LtLayout> c = CreateLayout(spec.c_type, shape.m, shape.n, shape.m);
  if (!c.ok()) return c.status();
  mm.c = std::move(c).value();
  Status st = ChooseAlgorithm(handle, workspace_bytes, &mm);
  if (!st.ok()) return st;
  return mm;
}

Status RunMatmul(cublasLtHandle_t handle, const LtMatmul& mm, const void* a, const void* b, void* c,
                 void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  return LtCheck(
      cublasLtMatmul(handle, mm.desc.get(), &alpha, a, mm.a.get(), b, mm.b.get(), &beta, c,
                     mm.c.get(), c, mm.c.get(), &mm.algo, workspace, workspace_bytes, stream),
      "cublasLtMatmul");
}

}  // namespace trainsim::calibrate::cuda
