#include "launch/local/layer.h"

#include <algorithm>
#include <cmath>

namespace trainsim::local {
namespace {

// Where head `head` of sequence `b` sits in a tokens x (`stride`) matrix
// starting at column `column`: row i of the head is at base + i * stride.
struct HeadView {
  int64_t base, stride;
};

HeadView View(const LayerDims& d, int64_t b, int64_t head, int64_t stride, int64_t column) {
  return {b * d.seq * stride + column + head * d.head_dim(), stride};
}

// out[seq x hd] = the head's rows of `m` (transposed: out[hd x seq]).
void Gather(Ops& ops, const float* m, HeadView v, int64_t seq, int64_t hd, float* out,
            bool transposed = false) {
  ops.GatherBlock(m, v.base, v.stride, seq, hd, transposed, out);
}

void Scatter(Ops& ops, const float* in, int64_t seq, int64_t hd, float* m, HeadView v) {
  ops.ScatterBlock(in, seq, hd, m, v.base, v.stride);
}

float ScoreScale(const LayerDims& d) { return 1.0f / std::sqrt(static_cast<float>(d.head_dim())); }

// attn = per sequence and head, causal_softmax(Q K^T scale) V; probs kept.
void AttentionForward(Ops& ops, const LayerDims& d, LayerActivations* a, LayerScratch& s) {
  const int64_t seq = d.seq, hd = d.head_dim(), h = d.hidden;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t head = 0; head < d.heads; ++head) {
      float* p = a->probs.get() + (b * d.heads + head) * seq * seq;
      Gather(ops, a->qkv.get(), View(d, b, head, 3 * h, 0), seq, hd, s.q.get());
      Gather(ops, a->qkv.get(), View(d, b, head, 3 * h, h), seq, hd, s.k.get(), true);
      Gather(ops, a->qkv.get(), View(d, b, head, 3 * h, 2 * h), seq, hd, s.v.get());
      ops.Gemm(seq, seq, hd, s.q.get(), s.k.get(), p, false);
      ops.CausalSoftmax(p, 1, seq, ScoreScale(d));
      ops.Gemm(seq, hd, seq, p, s.v.get(), s.o.get(), false);
      Scatter(ops, s.o.get(), seq, hd, a->attn.get(), View(d, b, head, h, 0));
    }
  }
}

// dqkv from dattn: dP = dO V^T, dV = P^T dO, dS = softmax'(dP), dQ = dS K
// scale, dK = dS^T Q scale (the scale is inside dS).
void AttentionBackward(Ops& ops, const LayerDims& d, const LayerActivations& a, const float* dattn,
                       float* dqkv, LayerScratch& s) {
  const int64_t seq = d.seq, hd = d.head_dim(), h = d.hidden;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t head = 0; head < d.heads; ++head) {
      const float* p = a.probs.get() + (b * d.heads + head) * seq * seq;
      const HeadView q = View(d, b, head, 3 * h, 0), k = View(d, b, head, 3 * h, h);
      const HeadView v = View(d, b, head, 3 * h, 2 * h);
      Gather(ops, dattn, View(d, b, head, h, 0), seq, hd, s.o.get());               // dO
      Gather(ops, a.qkv.get(), v, seq, hd, s.v.get(), true);                        // V^T
      ops.Gemm(seq, seq, hd, s.o.get(), s.v.get(), s.s1.get(), false);              // dP
      ops.Transpose(p, seq, seq, s.s2.get());                                       // P^T
      ops.Gemm(seq, hd, seq, s.s2.get(), s.o.get(), s.dv.get(), false);             // dV
      ops.CausalSoftmaxBackward(p, s.s1.get(), s.s3.get(), 1, seq, ScoreScale(d));  // dS
      Gather(ops, a.qkv.get(), k, seq, hd, s.k.get());
      ops.Gemm(seq, hd, seq, s.s3.get(), s.k.get(), s.dq.get(), false);  // dQ
      ops.Transpose(s.s3.get(), seq, seq, s.s2.get());                   // dS^T
      Gather(ops, a.qkv.get(), q, seq, hd, s.q.get());
      ops.Gemm(seq, hd, seq, s.s2.get(), s.q.get(), s.dk.get(), false);  // dK
      Scatter(ops, s.dq.get(), seq, hd, dqkv, q);
      Scatter(ops, s.dk.get(), seq, hd, dqkv, k);
      Scatter(ops, s.dv.get(), seq, hd, dqkv, v);
    }
  }
}

// grad (+)= x^T dy for x [tokens x in], dy [tokens x out]: grad is in x out.
void WeightGradient(Ops& ops, const LayerDims& d, const float* x, int64_t in, const float* dy,
                    int64_t out, float* grad, bool accumulate, LayerScratch& s) {
  ops.Transpose(x, d.tokens(), in, s.tall.get());
  ops.Gemm(in, out, d.tokens(), s.tall.get(), dy, grad, accumulate);
}

}  // namespace

LayerActivations::LayerActivations(const LayerDims& d, Ops& ops)
    : x(ops.Alloc(d.tokens() * d.hidden)),
      xhat1(ops.Alloc(d.tokens() * d.hidden)),
      qkv(ops.Alloc(d.tokens() * 3 * d.hidden)),
      probs(ops.Alloc(d.batch * d.heads * d.seq * d.seq)),
      attn(ops.Alloc(d.tokens() * d.hidden)),
      xmid(ops.Alloc(d.tokens() * d.hidden)),
      xhat2(ops.Alloc(d.tokens() * d.hidden)),
      u(ops.Alloc(d.tokens() * d.ffn)),
      g(ops.Alloc(d.tokens() * d.ffn)) {}

LayerScratch::LayerScratch(const LayerDims& d, Ops& ops)
    : q(ops.Alloc(d.seq * d.head_dim())),
      k(ops.Alloc(d.seq * d.head_dim())),
      v(ops.Alloc(d.seq * d.head_dim())),
      o(ops.Alloc(d.seq * d.head_dim())),
      dq(ops.Alloc(d.seq * d.head_dim())),
      dk(ops.Alloc(d.seq * d.head_dim())),
      dv(ops.Alloc(d.seq * d.head_dim())),
      s1(ops.Alloc(d.seq * d.seq)),
      s2(ops.Alloc(d.seq * d.seq)),
      s3(ops.Alloc(d.seq * d.seq)),
      wide1(ops.Alloc(d.tokens() * std::max(d.ffn, 3 * d.hidden))),
      wide2(ops.Alloc(d.tokens() * std::max(d.ffn, 3 * d.hidden))),
      tall(ops.Alloc(d.tokens() * std::max(d.ffn, d.hidden))),
      narrow(ops.Alloc(d.tokens() * d.hidden)) {}

void LayerForward(Ops& ops, const LayerDims& d, const LayerWeights& w, LayerActivations* a,
                  float* out, LayerScratch& s) {
  const int64_t t = d.tokens(), h = d.hidden, f = d.ffn;
  ops.LayerNorm(a->x.get(), a->xhat1.get(), t, h);
  ops.Gemm(t, 3 * h, h, a->xhat1.get(), w.qkv, a->qkv.get(), false);
  AttentionForward(ops, d, a, s);
  ops.Gemm(t, h, h, a->attn.get(), w.proj, a->xmid.get(), false);
  ops.AddInto(a->x.get(), a->xmid.get(), t * h);
  ops.LayerNorm(a->xmid.get(), a->xhat2.get(), t, h);
  ops.Gemm(t, f, h, a->xhat2.get(), w.up, a->u.get(), false);
  ops.Gelu(a->u.get(), a->g.get(), t * f);
  ops.Gemm(t, h, f, a->g.get(), w.down, out, false);
  ops.AddInto(a->xmid.get(), out, t * h);
}

void LayerBackward(Ops& ops, const LayerDims& d, const LayerWeights& wt, const LayerActivations& a,
                   const float* dout, float* dx, const LayerWeights& grads, bool accumulate,
                   LayerScratch& s) {
  const int64_t t = d.tokens(), h = d.hidden, f = d.ffn;
  float* dmid = s.narrow.get();
  // MLP: out = xmid + GELU(LN(xmid) W1) W2.
  float* dg = s.wide1.get();
  float* du = s.wide2.get();
  WeightGradient(ops, d, a.g.get(), f, dout, h, grads.down, accumulate, s);
  ops.Gemm(t, f, h, dout, wt.down, dg, false);
  ops.GeluBackward(a.u.get(), dg, du, t * f);
  WeightGradient(ops, d, a.xhat2.get(), h, du, f, grads.up, accumulate, s);
  ops.Gemm(t, h, f, du, wt.up, dx, false);  // dxhat2 (dx as a temporary)
  ops.Copy(dout, dmid, t * h);
  ops.LayerNormBackwardAdd(a.xmid.get(), dx, dmid, t, h);
  // Attention: xmid = x + attn Wo.
  float* dattn = s.wide1.get();
  float* dqkv = s.wide2.get();
  float* dxhat1 = s.wide1.get();
  WeightGradient(ops, d, a.attn.get(), h, dmid, h, grads.proj, accumulate, s);
  ops.Gemm(t, h, h, dmid, wt.proj, dattn, false);
  AttentionBackward(ops, d, a, dattn, dqkv, s);
  WeightGradient(ops, d, a.xhat1.get(), h, dqkv, 3 * h, grads.qkv, accumulate, s);
  ops.Gemm(t, h, 3 * h, dqkv, wt.qkv, dxhat1, false);
  ops.Copy(dmid, dx, t * h);
  ops.LayerNormBackwardAdd(a.x.get(), dxhat1, dx, t, h);
}

}  // namespace trainsim::local
