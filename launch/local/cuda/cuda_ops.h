// Ops (launch/local/ops.h) on one GPU: cuBLAS SGEMM in plain fp32 (no TF32,
// so results stay close to the CPU's) and small CUDA kernels, all on one
// stream that this object owns. Device memory from cudaMalloc; host copies
// and CrossEntropy wait for the stream. Errors of CUDA or cuBLAS abort the
// process with the call and its message: a rank cannot go on without its
// GPU. Not thread-safe.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "launch/local/ops.h"

namespace trainsim::local {

class CudaOps : public Ops {
 public:
  explicit CudaOps(int device);
  ~CudaOps() override;
  CudaOps(const CudaOps&) = delete;
  CudaOps& operator=(const CudaOps&) = delete;

  // The stream all work goes to: a device transport orders itself after it.
  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }

  FloatBuffer Alloc(int64_t count) override;
  void Zero(float* p, int64_t n) override;
  void Copy(const float* from, float* to, int64_t n) override;
  void CopyFromHost(const float* host, float* to, int64_t n) override;
  void CopyToHost(const float* from, float* host, int64_t n) override;
  void Synchronize() override;
  void Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
            bool accumulate) override;
  void Transpose(const float* a, int64_t rows, int64_t cols, float* at) override;
  void AddInto(const float* x, float* y, int64_t n) override;
  void LayerNorm(const float* x, float* y, int64_t rows, int64_t cols) override;
  void LayerNormBackwardAdd(const float* x, const float* dy, float* dx, int64_t rows,
                            int64_t cols) override;
  void Gelu(const float* u, float* y, int64_t n) override;
  void GeluBackward(const float* u, const float* dy, float* du, int64_t n) override;
  void CausalSoftmax(float* s, int64_t batches, int64_t n, float scale) override;
  void CausalSoftmaxBackward(const float* p, const float* dp, float* ds, int64_t batches, int64_t n,
                             float scale) override;
  double CrossEntropy(float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                      float grad_scale) override;
  void GatherBlock(const float* m, int64_t base, int64_t stride, int64_t rows, int64_t cols,
                   bool transposed, float* out) override;
  void ScatterBlock(const float* in, int64_t rows, int64_t cols, float* m, int64_t base,
                    int64_t stride) override;
  void EmbedGather(const float* table, const int32_t* tokens, int64_t rows, int64_t width,
                   float* out) override;
  void EmbedScatterAdd(const float* dy, const int32_t* tokens, int64_t rows, int64_t width,
                       float* table) override;
  void AdamUpdate(float* params, const float* grads, float* m, float* v, int64_t n, float step_size,
                  float eps, float b1, float b2) override;

 private:
  // `rows` host tokens or targets copied to the device; valid until the next call.
  const int32_t* DeviceIndices(const int32_t* host, int64_t rows);

  int device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  int32_t* indices_ = nullptr;  // device
  int64_t indices_size_ = 0;
  double* losses_ = nullptr;  // device, one per row
  int64_t losses_size_ = 0;
};

}  // namespace trainsim::local
