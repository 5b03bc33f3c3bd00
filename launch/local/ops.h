// Every touch of the trainer's tensor memory, over raw float pointers that
// live wherever the Ops puts them: CpuOps on the host (today's kernels,
// tensor_ops.h, in the same order, so the same bits), CudaOps on one GPU
// (launch/local/cuda). Row-major fp32 throughout.
//
// Pointers given to an Ops come from its Alloc (or point inside such a
// buffer), except where a parameter says "host". Work may be queued rather
// than done: calls on one Ops run in the order made, and Synchronize waits
// for all of it; copies to the host and CrossEntropy's loss are complete on
// return. Not thread-safe: one Ops per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "launch/local/tensor_ops.h"

namespace trainsim::local {

class Ops {
 public:
  virtual ~Ops() = default;

  // `count` floats (at least one), zero-filled; aborts when memory runs out.
  virtual FloatBuffer Alloc(int64_t count) = 0;
  virtual void Zero(float* p, int64_t n) = 0;
  virtual void Copy(const float* from, float* to, int64_t n) = 0;
  virtual void CopyFromHost(const float* host, float* to, int64_t n) = 0;
  virtual void CopyToHost(const float* from, float* host, int64_t n) = 0;
  virtual void Synchronize() = 0;

  // The kernels of tensor_ops.h, same contracts.
  virtual void Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                    bool accumulate) = 0;
  virtual void Transpose(const float* a, int64_t rows, int64_t cols, float* at) = 0;
  virtual void AddInto(const float* x, float* y, int64_t n) = 0;
  virtual void LayerNorm(const float* x, float* y, int64_t rows, int64_t cols) = 0;
  virtual void LayerNormBackwardAdd(const float* x, const float* dy, float* dx, int64_t rows,
                                    int64_t cols) = 0;
  virtual void Gelu(const float* u, float* y, int64_t n) = 0;
  virtual void GeluBackward(const float* u, const float* dy, float* du, int64_t n) = 0;
  // `batches` n x n matrices, one after the other.
  virtual void CausalSoftmax(float* s, int64_t batches, int64_t n, float scale) = 0;
  virtual void CausalSoftmaxBackward(const float* p, const float* dp, float* ds, int64_t batches,
                                     int64_t n, float scale) = 0;
  // `targets`: host, `rows` of them.
  virtual double CrossEntropy(float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                              float grad_scale) = 0;

  // Heads: out[rows x cols] = the block of `m` whose row i starts at
  // m + base + i * stride (transposed: out[cols x rows]); Scatter writes it back.
  virtual void GatherBlock(const float* m, int64_t base, int64_t stride, int64_t rows, int64_t cols,
                           bool transposed, float* out) = 0;
  virtual void ScatterBlock(const float* in, int64_t rows, int64_t cols, float* m, int64_t base,
                            int64_t stride) = 0;

  // Embedding: out row i = table row tokens[i]; ScatterAdd adds dy's row i
  // to table row tokens[i], rows in order. `tokens`: host, `rows` of them.
  virtual void EmbedGather(const float* table, const int32_t* tokens, int64_t rows, int64_t width,
                           float* out) = 0;
  virtual void EmbedScatterAdd(const float* dy, const int32_t* tokens, int64_t rows, int64_t width,
                               float* table) = 0;

  // Adam's update with the bias corrections folded into step_size and eps
  // (adam.h): m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
  // p -= step_size m / (sqrt(v) + eps).
  virtual void AdamUpdate(float* params, const float* grads, float* m, float* v, int64_t n,
                          float step_size, float eps, float b1, float b2) = 0;
};

// The host implementation: tensor_ops.h's kernels, single-threaded.
class CpuOps : public Ops {
 public:
  FloatBuffer Alloc(int64_t count) override;
  void Zero(float* p, int64_t n) override;
  void Copy(const float* from, float* to, int64_t n) override;
  void CopyFromHost(const float* host, float* to, int64_t n) override;
  void CopyToHost(const float* from, float* host, int64_t n) override;
  void Synchronize() override {}
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
  local::Gemm gemm_;
};

}  // namespace trainsim::local
