// Kernels of the cuda backend: input fills and result sampling for the GEMM
// check, and the memory-bound kernels whose bandwidth is measured.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "calibrate/cuda/kernels.h"

namespace trainsim::calibrate::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1 << 16;  // grid-stride loops cover the rest

unsigned BlocksFor(int64_t items) {
  const int64_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, kMaxBlocks));
}

__device__ int64_t GlobalThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ int64_t GridThreads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// splitmix64 finaliser of (index, seed): well-spread bits for any index.
__device__ uint32_t Hash(int64_t index, uint32_t seed) {
  uint64_t x = static_cast<uint64_t>(index) * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<uint32_t>(x >> 32);
}

__device__ float UniformPlusMinusOne(int64_t index, uint32_t seed) {
  return static_cast<float>(Hash(index, seed) >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

template <typename T>
__device__ T FromFloat(float v);
template <>
__device__ float FromFloat<float>(float v) {
  return v;
}
template <>
__device__ __half FromFloat<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __nv_fp8_e4m3 FromFloat<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}

__device__ float ToFloat(float v) { return v; }
__device__ float ToFloat(__half v) { return __half2float(v); }
__device__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ float ToFloat(__nv_fp8_e4m3 v) { return static_cast<float>(v); }

template <typename T>
__global__ void FillKernel(T* p, int64_t n, uint32_t seed) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    p[i] = FromFloat<T>(UniformPlusMinusOne(i, seed));
  }
}

template <typename T>
cudaError_t Fill(void* p, int64_t n, uint32_t seed, cudaStream_t stream) {
  FillKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(static_cast<T*>(p), n, seed);
  return cudaGetLastError();
}

// grid.y = sample; threads stride over k.
template <typename AB, typename C>
__global__ void GatherKernel(const AB* a, const AB* b, const C* c, int64_t m, int64_t k,
                             GemmSamples samples, float* a_rows, float* b_cols, float* c_values) {
  const int s = blockIdx.y;
  const AB* a_row = a + samples.row[s] * k;
  const AB* b_col = b + samples.col[s] * k;
  for (int64_t p = GlobalThread(); p < k; p += GridThreads()) {
    a_rows[s * k + p] = ToFloat(a_row[p]);
    b_cols[s * k + p] = ToFloat(b_col[p]);
  }
  if (GlobalThread() == 0) c_values[s] = ToFloat(c[samples.row[s] + samples.col[s] * m]);
}

template <typename AB, typename C>
cudaError_t Gather(const void* a, const void* b, const void* c, int64_t m, int64_t k,
                   const GemmSamples& samples, float* a_rows, float* b_cols, float* c_values,
                   cudaStream_t stream) {
  const dim3 grid(std::min(BlocksFor(k), 64u), kGemmSamples);
  GatherKernel<AB, C><<<grid, kThreads, 0, stream>>>(
      static_cast<const AB*>(a), static_cast<const AB*>(b), static_cast<const C*>(c), m, k, samples,
      a_rows, b_cols, c_values);
  return cudaGetLastError();
}

__global__ void Copy16Kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, int64_t n) {
  for (int64_t i = GlobalThread(); i < n; i += GridThreads()) dst[i] = src[i];
}

// 8 bf16 in 16 bytes <-> 8 floats.
__device__ void Unpack(const uint4& v, float* f) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
  for (int i = 0; i < 4; ++i) {
    const float2 pair = __bfloat1622float2(h[i]);
    f[2 * i] = pair.x;
    f[2 * i + 1] = pair.y;
  }
}
__device__ uint4 Pack(const float* f) {
  uint4 v;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&v);
  for (int i = 0; i < 4; ++i) h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
  return v;
}

constexpr int kLayerNormThreads = kLayerNormWidth / 8;  // one 16-byte vector each
constexpr int kWarps = kLayerNormThreads / 32;

// Sums (a, b) over the block; every thread gets the totals.
__device__ float2 BlockSum(float a, float b) {
  __shared__ float2 partial[kWarps];
  for (int offset = 16; offset > 0; offset /= 2) {
    a += __shfl_xor_sync(0xffffffffu, a, offset);
    b += __shfl_xor_sync(0xffffffffu, b, offset);
  }
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = make_float2(a, b);
  __syncthreads();
  float2 total = make_float2(0, 0);
  for (int w = 0; w < kWarps; ++w) {
    total.x += partial[w].x;
    total.y += partial[w].y;
  }
  return total;
}

// One block per row.
__global__ void LayerNormKernel(const uint4* __restrict__ x, uint4* __restrict__ y) {
  const int64_t index = static_cast<int64_t>(blockIdx.x) * kLayerNormThreads + threadIdx.x;
  float f[8];
  Unpack(x[index], f);
  float sum = 0, sum_sq = 0;
  for (float v : f) {
    sum += v;
    sum_sq += v * v;
  }
  const float2 total = BlockSum(sum, sum_sq);
  const float mean = total.x / kLayerNormWidth;
  const float var = fmaxf(total.y / kLayerNormWidth - mean * mean, 0.0f);
  const float inv_std = rsqrtf(var + 1e-5f);
  for (float& v : f) v = (v - mean) * inv_std;
  y[index] = Pack(f);
}

__device__ float Gelu(float v) {
  const float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
  return 0.5f * v * (1.0f + tanhf(inner));
}

__global__ void GeluKernel(const uint4* __restrict__ x, uint4* __restrict__ y, int64_t n8) {
  for (int64_t i = GlobalThread(); i < n8; i += GridThreads()) {
    float f[8];
    Unpack(x[i], f);
    for (float& v : f) v = Gelu(v);
    y[i] = Pack(f);
  }
}

}  // namespace

cudaError_t LaunchFill(Elem type, void* p, int64_t n, uint32_t seed, cudaStream_t stream) {
  switch (type) {
    case Elem::kF32:
      return Fill<float>(p, n, seed, stream);
    case Elem::kF16:
      return Fill<__half>(p, n, seed, stream);
    case Elem::kBF16:
      return Fill<__nv_bfloat16>(p, n, seed, stream);
    case Elem::kE4M3:
      return Fill<__nv_fp8_e4m3>(p, n, seed, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchGatherSamples(Elem ab, Elem c, const void* a, const void* b, const void* c_matrix,
                                int64_t m, int64_t k, const GemmSamples& samples, float* a_rows,
                                float* b_cols, float* c_values, cudaStream_t stream) {
  if (ab == Elem::kF32 && c == Elem::kF32) {
    return Gather<float, float>(a, b, c_matrix, m, k, samples, a_rows, b_cols, c_values, stream);
  }
  if (ab == Elem::kF16 && c == Elem::kF16) {
    return Gather<__half, __half>(a, b, c_matrix, m, k, samples, a_rows, b_cols, c_values, stream);
  }
  if (ab == Elem::kBF16 && c == Elem::kBF16) {
    return Gather<__nv_bfloat16, __nv_bfloat16>(a, b, c_matrix, m, k, samples, a_rows, b_cols,
                                                c_values, stream);
  }
  if (ab == Elem::kE4M3 && c == Elem::kBF16) {
    return Gather<__nv_fp8_e4m3, __nv_bfloat16>(a, b, c_matrix, m, k, samples, a_rows, b_cols,
                                                c_values, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchCopy16(const void* src, void* dst, int64_t n16, cudaStream_t stream) {
  Copy16Kernel<<<BlocksFor(n16), kThreads, 0, stream>>>(static_cast<const uint4*>(src),
                                                        static_cast<uint4*>(dst), n16);
  return cudaGetLastError();
}

cudaError_t LaunchLayerNormBf16(const void* x, void* y, int64_t rows, cudaStream_t stream) {
  if (rows < 1 || rows > 0x7fffffff) return cudaErrorInvalidValue;
  LayerNormKernel<<<static_cast<unsigned>(rows), kLayerNormThreads, 0, stream>>>(
      static_cast<const uint4*>(x), static_cast<uint4*>(y));
  return cudaGetLastError();
}

cudaError_t LaunchGeluBf16(const void* x, void* y, int64_t n, cudaStream_t stream) {
  if (n % 8 != 0) return cudaErrorInvalidValue;
  GeluKernel<<<BlocksFor(n / 8), kThreads, 0, stream>>>(static_cast<const uint4*>(x),
                                                        static_cast<uint4*>(y), n / 8);
  return cudaGetLastError();
}

}  // namespace trainsim::calibrate::cuda
