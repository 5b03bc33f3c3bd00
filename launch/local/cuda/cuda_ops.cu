#include <cstdio>
#include <cstdlib>
#include <vector>

#include "launch/local/cuda/cuda_backend.h"
#include "launch/local/cuda/cuda_ops.h"

namespace trainsim::local {
namespace {

void Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "trainsim-train: %s: %s\n", what, cudaGetErrorString(e));
  std::abort();
}

void Check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "trainsim-train: %s: cuBLAS status %d\n", what, static_cast<int>(s));
  std::abort();
}

#define CHECK(call) Check((call), #call)

void FreeDevice(void* p) noexcept { cudaFree(p); }

constexpr int kThreads = 256;

unsigned Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

// Grid-stride loop over [0, n).
#define FOR_EACH(i, n)                                                      \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += int64_t{blockDim.x} * gridDim.x)

// The sum (or max) of `v` over the block (kThreads threads); every thread gets it.
__device__ float BlockReduce(float v, bool max) {
  __shared__ float shared[kThreads];
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const float o = shared[threadIdx.x + half];
      shared[threadIdx.x] = max ? fmaxf(shared[threadIdx.x], o) : shared[threadIdx.x] + o;
    }
    __syncthreads();
  }
  const float result = shared[0];
  __syncthreads();
  return result;
}

__global__ void AddIntoKernel(const float* x, float* y, int64_t n) { FOR_EACH(i, n) y[i] += x[i]; }

__global__ void TransposeKernel(const float* a, int64_t rows, int64_t cols, float* at) {
  FOR_EACH(i, rows * cols) {
    const int64_t r = i / cols, c = i % cols;
    at[c * rows + r] = a[i];
  }
}

// One block per row.
__global__ void LayerNormKernel(const float* x, float* y, int64_t cols) {
  const float* in = x + blockIdx.x * cols;
  float* out = y + blockIdx.x * cols;
  float s = 0;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) s += in[i];
  const float mean = BlockReduce(s, false) / static_cast<float>(cols);
  float q = 0;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) q += (in[i] - mean) * (in[i] - mean);
  const float inv_std = rsqrtf(BlockReduce(q, false) / static_cast<float>(cols) + 1e-5f);
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) out[i] = (in[i] - mean) * inv_std;
}

__global__ void LayerNormBackwardAddKernel(const float* x, const float* dy, float* dx,
                                           int64_t cols) {
  const float* in = x + blockIdx.x * cols;
  const float* g = dy + blockIdx.x * cols;
  float* out = dx + blockIdx.x * cols;
  const float inv_cols = 1.0f / static_cast<float>(cols);
  float s = 0;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) s += in[i];
  const float mean = BlockReduce(s, false) * inv_cols;
  float q = 0;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) q += (in[i] - mean) * (in[i] - mean);
  const float inv_std = rsqrtf(BlockReduce(q, false) * inv_cols + 1e-5f);
  float sg = 0, sgx = 0;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
    sg += g[i];
    sgx += g[i] * (in[i] - mean) * inv_std;
  }
  const float mean_g = BlockReduce(sg, false) * inv_cols;
  const float mean_gx = BlockReduce(sgx, false) * inv_cols;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
    const float xhat = (in[i] - mean) * inv_std;
    out[i] += inv_std * (g[i] - mean_g - xhat * mean_gx);
  }
}

constexpr float kGeluC = 0.7978845608028654f, kGeluA = 0.044715f;

__global__ void GeluKernel(const float* u, float* y, int64_t n) {
  FOR_EACH(i, n) {
    const float v = u[i];
    y[i] = 0.5f * v * (1.0f + tanhf(kGeluC * (v + kGeluA * v * v * v)));
  }
}

__global__ void GeluBackwardKernel(const float* u, const float* dy, float* du, int64_t n) {
  FOR_EACH(i, n) {
    const float v = u[i];
    const float t = tanhf(kGeluC * (v + kGeluA * v * v * v));
    const float slope = 0.5f * (1 + t) + 0.5f * v * (1 - t * t) * kGeluC * (1 + 3 * kGeluA * v * v);
    du[i] = dy[i] * slope;
  }
}

// One block per row of batches x n rows; row i of each matrix keeps j <= i.
__global__ void CausalSoftmaxKernel(float* s, int64_t n, float scale) {
  const int64_t i = blockIdx.x % n;
  float* row = s + blockIdx.x * n;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j <= i; j += blockDim.x) m = fmaxf(m, row[j] * scale);
  const float max = BlockReduce(m, true);
  float sum = 0;
  for (int64_t j = threadIdx.x; j <= i; j += blockDim.x) {
    row[j] = expf(row[j] * scale - max);
    sum += row[j];
  }
  const float inv = 1.0f / BlockReduce(sum, false);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) row[j] = j <= i ? row[j] * inv : 0.0f;
}

__global__ void CausalSoftmaxBackwardKernel(const float* p, const float* dp, float* ds, int64_t n,
                                            float scale) {
  const int64_t i = blockIdx.x % n;
  const float* pr = p + blockIdx.x * n;
  const float* gr = dp + blockIdx.x * n;
  float* out = ds + blockIdx.x * n;
  float d = 0;
  for (int64_t j = threadIdx.x; j <= i; j += blockDim.x) d += pr[j] * gr[j];
  const float dot = BlockReduce(d, false);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    out[j] = j <= i ? scale * pr[j] * (gr[j] - dot) : 0.0f;
  }
}

// One block per row: loss[r] = log(sum) - (logit[t] - max); logits become
// the gradient (p - onehot) grad_scale.
__global__ void CrossEntropyKernel(float* logits, const int32_t* targets, int64_t vocab,
                                   float grad_scale, double* loss) {
  float* row = logits + blockIdx.x * vocab;
  const int32_t t = targets[blockIdx.x];
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) m = fmaxf(m, row[j]);
  const float max = BlockReduce(m, true);
  const float target = row[t] - max;
  __syncthreads();  // everyone has read row[t] before it changes
  float s = 0;
  for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) {
    row[j] = expf(row[j] - max);
    s += row[j];
  }
  const float sum = BlockReduce(s, false);
  const float inv = 1.0f / sum;
  for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) {
    row[j] = row[j] * inv * grad_scale - (j == t ? grad_scale : 0.0f);
  }
  if (threadIdx.x == 0) loss[blockIdx.x] = log(static_cast<double>(sum)) - target;
}

__global__ void GatherBlockKernel(const float* m, int64_t base, int64_t stride, int64_t rows,
                                  int64_t cols, bool transposed, float* out) {
  FOR_EACH(e, rows * cols) {
    const int64_t i = e / cols, c = e % cols;
    out[transposed ? c * rows + i : e] = m[base + i * stride + c];
  }
}

__global__ void ScatterBlockKernel(const float* in, int64_t rows, int64_t cols, float* m,
                                   int64_t base, int64_t stride) {
  FOR_EACH(e, rows * cols) {
    const int64_t i = e / cols, c = e % cols;
    m[base + i * stride + c] = in[e];
  }
}

__global__ void EmbedGatherKernel(const float* table, const int32_t* tokens, int64_t rows,
                                  int64_t width, float* out) {
  FOR_EACH(e, rows * width) {
    const int64_t i = e / width, c = e % width;
    out[e] = table[int64_t{tokens[i]} * width + c];
  }
}

// Rows with the same token add in any order (atomics): close to the CPU's
// in-order sums, not identical.
__global__ void EmbedScatterAddKernel(const float* dy, const int32_t* tokens, int64_t rows,
                                      int64_t width, float* table) {
  FOR_EACH(e, rows * width) {
    const int64_t i = e / width, c = e % width;
    atomicAdd(table + int64_t{tokens[i]} * width + c, dy[e]);
  }
}

__global__ void AdamKernel(float* params, const float* grads, float* m, float* v, int64_t n,
                           float step_size, float eps, float b1, float b2) {
  FOR_EACH(i, n) {
    const float g = grads[i];
    m[i] = b1 * m[i] + (1 - b1) * g;
    v[i] = b2 * v[i] + (1 - b2) * g * g;
    params[i] -= step_size * m[i] / (sqrtf(v[i]) + eps);
  }
}

unsigned Rows(int64_t rows) { return static_cast<unsigned>(rows); }

}  // namespace

CudaOps::CudaOps(int device) : device_(device) {
  CHECK(cudaSetDevice(device));
  CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CHECK(cublasCreate(&blas_));
  CHECK(cublasSetStream(blas_, stream_));
  // Plain fp32 products: the default math mode, which leaves TF32 off.
  CHECK(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));
}

CudaOps::~CudaOps() {
  cudaStreamSynchronize(stream_);
  cudaFree(indices_);
  cudaFree(losses_);
  cublasDestroy(blas_);
  cudaStreamDestroy(stream_);
}

FloatBuffer CudaOps::Alloc(int64_t count) {
  const size_t bytes = sizeof(float) * static_cast<size_t>(count > 1 ? count : 1);
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) {
    std::fprintf(stderr, "trainsim-train: out of GPU memory allocating %lld floats\n",
                 static_cast<long long>(count));
    std::abort();
  }
  CHECK(cudaMemsetAsync(p, 0, bytes, stream_));
  return FloatBuffer(static_cast<float*>(p), &FreeDevice);
}

void CudaOps::Zero(float* p, int64_t n) {
  CHECK(cudaMemsetAsync(p, 0, sizeof(float) * n, stream_));
}

void CudaOps::Copy(const float* from, float* to, int64_t n) {
  CHECK(cudaMemcpyAsync(to, from, sizeof(float) * n, cudaMemcpyDeviceToDevice, stream_));
}

void CudaOps::CopyFromHost(const float* host, float* to, int64_t n) {
  CHECK(cudaMemcpyAsync(to, host, sizeof(float) * n, cudaMemcpyHostToDevice, stream_));
  Synchronize();
}

void CudaOps::CopyToHost(const float* from, float* host, int64_t n) {
  CHECK(cudaMemcpyAsync(host, from, sizeof(float) * n, cudaMemcpyDeviceToHost, stream_));
  Synchronize();
}

// Also where a failed kernel launch shows (launches are not checked one by one).
void CudaOps::Synchronize() {
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(stream_));
}

// Row-major C = A B is column-major C^T = B^T A^T: cuBLAS sees B as an n x k
// matrix and A as a k x m one, both without transposes.
void CudaOps::Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                   bool accumulate) {
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  CHECK(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                    static_cast<int>(k), &one, b, static_cast<int>(n), a, static_cast<int>(k),
                    &beta, c, static_cast<int>(n)));
}

void CudaOps::Transpose(const float* a, int64_t rows, int64_t cols, float* at) {
  TransposeKernel<<<Blocks(rows * cols), kThreads, 0, stream_>>>(a, rows, cols, at);
}

void CudaOps::AddInto(const float* x, float* y, int64_t n) {
  AddIntoKernel<<<Blocks(n), kThreads, 0, stream_>>>(x, y, n);
}

void CudaOps::LayerNorm(const float* x, float* y, int64_t rows, int64_t cols) {
  LayerNormKernel<<<Rows(rows), kThreads, 0, stream_>>>(x, y, cols);
}

void CudaOps::LayerNormBackwardAdd(const float* x, const float* dy, float* dx, int64_t rows,
                                   int64_t cols) {
  LayerNormBackwardAddKernel<<<Rows(rows), kThreads, 0, stream_>>>(x, dy, dx, cols);
}

void CudaOps::Gelu(const float* u, float* y, int64_t n) {
  GeluKernel<<<Blocks(n), kThreads, 0, stream_>>>(u, y, n);
}

void CudaOps::GeluBackward(const float* u, const float* dy, float* du, int64_t n) {
  GeluBackwardKernel<<<Blocks(n), kThreads, 0, stream_>>>(u, dy, du, n);
}

void CudaOps::CausalSoftmax(float* s, int64_t batches, int64_t n, float scale) {
  CausalSoftmaxKernel<<<Rows(batches * n), kThreads, 0, stream_>>>(s, n, scale);
}

void CudaOps::CausalSoftmaxBackward(const float* p, const float* dp, float* ds, int64_t batches,
                                    int64_t n, float scale) {
  CausalSoftmaxBackwardKernel<<<Rows(batches * n), kThreads, 0, stream_>>>(p, dp, ds, n, scale);
}

double CudaOps::CrossEntropy(float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                             float grad_scale) {
  if (losses_size_ < rows) {
    cudaFree(losses_);
    CHECK(cudaMalloc(&losses_, sizeof(double) * rows));
    losses_size_ = rows;
  }
  const int32_t* t = DeviceIndices(targets, rows);
  CrossEntropyKernel<<<Rows(rows), kThreads, 0, stream_>>>(logits, t, vocab, grad_scale, losses_);
  std::vector<double> losses(rows);
  CHECK(cudaMemcpyAsync(losses.data(), losses_, sizeof(double) * rows, cudaMemcpyDeviceToHost,
                        stream_));
  Synchronize();
  double loss = 0;
  for (double l : losses) loss += l;
  return loss;
}

void CudaOps::GatherBlock(const float* m, int64_t base, int64_t stride, int64_t rows, int64_t cols,
                          bool transposed, float* out) {
  GatherBlockKernel<<<Blocks(rows * cols), kThreads, 0, stream_>>>(m, base, stride, rows, cols,
                                                                   transposed, out);
}

void CudaOps::ScatterBlock(const float* in, int64_t rows, int64_t cols, float* m, int64_t base,
                           int64_t stride) {
  ScatterBlockKernel<<<Blocks(rows * cols), kThreads, 0, stream_>>>(in, rows, cols, m, base,
                                                                    stride);
}

void CudaOps::EmbedGather(const float* table, const int32_t* tokens, int64_t rows, int64_t width,
                          float* out) {
  const int32_t* t = DeviceIndices(tokens, rows);
  EmbedGatherKernel<<<Blocks(rows * width), kThreads, 0, stream_>>>(table, t, rows, width, out);
}

void CudaOps::EmbedScatterAdd(const float* dy, const int32_t* tokens, int64_t rows, int64_t width,
                              float* table) {
  const int32_t* t = DeviceIndices(tokens, rows);
  EmbedScatterAddKernel<<<Blocks(rows * width), kThreads, 0, stream_>>>(dy, t, rows, width, table);
}

void CudaOps::AdamUpdate(float* params, const float* grads, float* m, float* v, int64_t n,
                         float step_size, float eps, float b1, float b2) {
  AdamKernel<<<Blocks(n), kThreads, 0, stream_>>>(params, grads, m, v, n, step_size, eps, b1, b2);
}

// Ordered on the stream after the kernels that read the previous indices;
// the copy from pageable memory has read `host` when it returns.
const int32_t* CudaOps::DeviceIndices(const int32_t* host, int64_t rows) {
  if (indices_size_ < rows) {
    Synchronize();
    cudaFree(indices_);
    CHECK(cudaMalloc(&indices_, sizeof(int32_t) * rows));
    indices_size_ = rows;
  }
  CHECK(cudaMemcpyAsync(indices_, host, sizeof(int32_t) * rows, cudaMemcpyHostToDevice, stream_));
  return indices_;
}

bool BuiltWithCuda() { return true; }

int VisibleCudaDevices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

std::unique_ptr<Ops> MakeCudaOps(int device) { return std::make_unique<CudaOps>(device); }

}  // namespace trainsim::local
