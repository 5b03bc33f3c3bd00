// One pre-LayerNorm transformer layer on the CPU, forward and backward, in
// the shape the simulator models (sim/workload.cc TransformerLayerCost):
//
//   xhat1 = LN(x); qkv = xhat1 Wqkv; per sequence and head:
//     P = causal_softmax(Q K^T / sqrt(d)), O = P V   (scores and AV GEMMs)
//   xmid = x + O Wo
//   xhat2 = LN(xmid); u = xhat2 W1; g = GELU(u); out = xmid + g W2
//
// LayerNorm has no affine parameters and there are no biases: the weights
// are the four GEMM matrices, stored [in x out] row-major. The backward runs
// each GEMM twice (input and weight gradients), with transposes as explicit
// copies. Memory and kernels go through an Ops (ops.h), which the buffers
// belong to. Not thread-safe: a LayerScratch per thread.
#pragma once

#include <cstdint>

#include "launch/local/ops.h"

namespace trainsim::local {

struct LayerDims {
  int64_t batch = 1, seq = 1, hidden = 1, heads = 1, ffn = 1;
  int64_t tokens() const { return batch * seq; }
  int64_t head_dim() const { return hidden / heads; }
};

// The four weight matrices (or their gradients, or their transposes).
struct LayerWeights {
  float* qkv = nullptr;   // hidden x 3 hidden (transposed: 3 hidden x hidden)
  float* proj = nullptr;  // hidden x hidden
  float* up = nullptr;    // hidden x ffn (transposed: ffn x hidden)
  float* down = nullptr;  // ffn x hidden (transposed: hidden x ffn)
};

// What the forward pass keeps for the backward pass, one microbatch.
struct LayerActivations {
  LayerActivations(const LayerDims& d, Ops& ops);
  FloatBuffer x;      // tokens x hidden: the layer's input (written by the caller)
  FloatBuffer xhat1;  // LN(x)
  FloatBuffer qkv;    // tokens x 3 hidden
  FloatBuffer probs;  // batch x heads x seq x seq: attention probabilities
  FloatBuffer attn;   // tokens x hidden: the heads' outputs side by side
  FloatBuffer xmid;   // x + attention block
  FloatBuffer xhat2;  // LN(xmid)
  FloatBuffer u;      // tokens x ffn: before GELU
  FloatBuffer g;      // GELU(u)
};

// Temporaries of one forward or backward pass, sized for the dims.
struct LayerScratch {
  LayerScratch(const LayerDims& d, Ops& ops);
  FloatBuffer q, k, v, o, dq, dk, dv;  // seq x head_dim, one head
  FloatBuffer s1, s2, s3;              // seq x seq
  FloatBuffer wide1, wide2;            // tokens x max(ffn, 3 hidden)
  FloatBuffer tall;                    // max(ffn, hidden) x tokens: a transposed activation
  FloatBuffer narrow;                  // tokens x hidden
};

// Forward: reads acts->x, fills the rest of *acts and writes the output
// (tokens x hidden) to `out`.
void LayerForward(Ops& ops, const LayerDims& d, const LayerWeights& w, LayerActivations* acts,
                  float* out, LayerScratch& scratch);

// Backward from the output gradient `dout`: writes the input gradient to
// `dx` (tokens x hidden, may not alias dout) and the weight gradients to
// `grads` (added to them with `accumulate`). `wt` holds the transposed
// weights.
void LayerBackward(Ops& ops, const LayerDims& d, const LayerWeights& wt,
                   const LayerActivations& acts, const float* dout, float* dx,
                   const LayerWeights& grads, bool accumulate, LayerScratch& scratch);

}  // namespace trainsim::local
