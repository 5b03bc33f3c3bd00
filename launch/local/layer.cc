#include "launch/local/layer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

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

// out[seq x hd] = the head's rows of `m`.
void Gather(const float* m, HeadView v, int64_t seq, int64_t hd, float* out) {
  for (int64_t i = 0; i < seq; ++i) std::memcpy(out + i * hd, m + v.base + i * v.stride, hd * 4);
}

// out[hd x seq] = the head's rows of `m`, transposed.
void GatherTransposed(const float* m, HeadView v, int64_t seq, int64_t hd, float* out) {
  for (int64_t i = 0; i < seq; ++i) {
    const float* row = m + v.base + i * v.stride;
    for (int64_t c = 0; c < hd; ++c) out[c * seq + i] = row[c];
  }
}

void Scatter(const float* in, int64_t seq, int64_t hd, float* m, HeadView v) {
  for (int64_t i = 0; i < seq; ++i) std::memcpy(m + v.base + i * v.stride, in + i * hd, hd * 4);
}

float ScoreScale(const LayerDims& d) { return 1.0f / std::sqrt(static_cast<float>(d.head_dim())); }

// attn = per sequence and head, causal_softmax(Q K^T scale) V; probs kept.
void AttentionForward(const LayerDims& d, LayerActivations* a, LayerScratch& s) {
  const int64_t seq = d.seq, hd = d.head_dim(), h = d.hidden;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t head = 0; head < d.heads; ++head) {
      float* p = a->probs.get() + (b * d.heads + head) * seq * seq;
      Gather(a->qkv.get(), View(d, b, head, 3 * h, 0), seq, hd, s.q.get());
      GatherTransposed(a->qkv.get(), View(d, b, head, 3 * h, h), seq, hd, s.k.get());
      Gather(a->qkv.get(), View(d, b, head, 3 * h, 2 * h), seq, hd, s.v.get());
      s.gemm(seq, seq, hd, s.q.get(), s.k.get(), p);
      CausalSoftmax(p, seq, ScoreScale(d));
      s.gemm(seq, hd, seq, p, s.v.get(), s.o.get());
      Scatter(s.o.get(), seq, hd, a->attn.get(), View(d, b, head, h, 0));
    }
  }
}

// dqkv from dattn: dP = dO V^T, dV = P^T dO, dS = softmax'(dP), dQ = dS K
// scale, dK = dS^T Q scale (the scale is inside dS).
void AttentionBackward(const LayerDims& d, const LayerActivations& a, const float* dattn,
                       float* dqkv, LayerScratch& s) {
  const int64_t seq = d.seq, hd = d.head_dim(), h = d.hidden;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t head = 0; head < d.heads; ++head) {
      const float* p = a.probs.get() + (b * d.heads + head) * seq * seq;
      const HeadView q = View(d, b, head, 3 * h, 0), k = View(d, b, head, 3 * h, h);
      const HeadView v = View(d, b, head, 3 * h, 2 * h);
      Gather(dattn, View(d, b, head, h, 0), seq, hd, s.o.get());             // dO
      GatherTransposed(a.qkv.get(), v, seq, hd, s.v.get());                  // V^T
      s.gemm(seq, seq, hd, s.o.get(), s.v.get(), s.s1.get());                // dP
      Transpose(p, seq, seq, s.s2.get());                                    // P^T
      s.gemm(seq, hd, seq, s.s2.get(), s.o.get(), s.dv.get());               // dV
      CausalSoftmaxBackward(p, s.s1.get(), s.s3.get(), seq, ScoreScale(d));  // dS
      Gather(a.qkv.get(), k, seq, hd, s.k.get());
      s.gemm(seq, hd, seq, s.s3.get(), s.k.get(), s.dq.get());  // dQ
      Transpose(s.s3.get(), seq, seq, s.s2.get());              // dS^T
      Gather(a.qkv.get(), q, seq, hd, s.q.get());
      s.gemm(seq, hd, seq, s.s2.get(), s.q.get(), s.dk.get());  // dK
      Scatter(s.dq.get(), seq, hd, dqkv, q);
      Scatter(s.dk.get(), seq, hd, dqkv, k);
      Scatter(s.dv.get(), seq, hd, dqkv, v);
    }
  }
}

// grad (+)= x^T dy for x [tokens x in], dy [tokens x out]: grad is in x out.
void WeightGradient(const LayerDims& d, const float* x, int64_t in, const float* dy, int64_t out,
                    float* grad, bool accumulate, LayerScratch& s) {
  Transpose(x, d.tokens(), in, s.tall.get());
  s.gemm(in, out, d.tokens(), s.tall.get(), dy, grad, accumulate);
}

}  // namespace

LayerActivations::LayerActivations(const LayerDims& d)
    : x(Floats(d.tokens() * d.hidden)),
      xhat1(Floats(d.tokens() * d.hidden)),
      qkv(Floats(d.tokens() * 3 * d.hidden)),
      probs(Floats(d.batch * d.heads * d.seq * d.seq)),
      attn(Floats(d.tokens() * d.hidden)),
      xmid(Floats(d.tokens() * d.hidden)),
      xhat2(Floats(d.tokens() * d.hidden)),
      u(Floats(d.tokens() * d.ffn)),
      g(Floats(d.tokens() * d.ffn)) {}

LayerScratch::LayerScratch(const LayerDims& d)
    : q(Floats(d.seq * d.head_dim())),
      k(Floats(d.seq * d.head_dim())),
      v(Floats(d.seq * d.head_dim())),
      o(Floats(d.seq * d.head_dim())),
      dq(Floats(d.seq * d.head_dim())),
      dk(Floats(d.seq * d.head_dim())),
      dv(Floats(d.seq * d.head_dim())),
      s1(Floats(d.seq * d.seq)),
      s2(Floats(d.seq * d.seq)),
      s3(Floats(d.seq * d.seq)),
      wide1(Floats(d.tokens() * std::max(d.ffn, 3 * d.hidden))),
      wide2(Floats(d.tokens() * std::max(d.ffn, 3 * d.hidden))),
      tall(Floats(d.tokens() * std::max(d.ffn, d.hidden))),
      narrow(Floats(d.tokens() * d.hidden)) {}

void LayerForward(const LayerDims& d, const LayerWeights& w, LayerActivations* a, float* out,
                  LayerScratch& s) {
  const int64_t t = d.tokens(), h = d.hidden, f = d.ffn;
  LayerNorm(a->x.get(), a->xhat1.get(), t, h);
  s.gemm(t, 3 * h, h, a->xhat1.get(), w.qkv, a->qkv.get());
  AttentionForward(d, a, s);
  s.gemm(t, h, h, a->attn.get(), w.proj, a->xmid.get());
  AddInto(a->x.get(), a->xmid.get(), t * h);
  LayerNorm(a->xmid.get(), a->xhat2.get(), t, h);
  s.gemm(t, f, h, a->xhat2.get(), w.up, a->u.get());
  Gelu(a->u.get(), a->g.get(), t * f);
  s.gemm(t, h, f, a->g.get(), w.down, out);
  AddInto(a->xmid.get(), out, t * h);
}

void LayerBackward(const LayerDims& d, const LayerWeights& wt, const LayerActivations& a,
                   const float* dout, float* dx, const LayerWeights& grads, bool accumulate,
                   LayerScratch& s) {
  const int64_t t = d.tokens(), h = d.hidden, f = d.ffn;
  float* dmid = s.narrow.get();
  // MLP: out = xmid + GELU(LN(xmid) W1) W2.
  float* dg = s.wide1.get();
  float* du = s.wide2.get();
  WeightGradient(d, a.g.get(), f, dout, h, grads.down, accumulate, s);
  s.gemm(t, f, h, dout, wt.down, dg);
  GeluBackward(a.u.get(), dg, du, t * f);
  WeightGradient(d, a.xhat2.get(), h, du, f, grads.up, accumulate, s);
  s.gemm(t, h, f, du, wt.up, dx);  // dxhat2 (dx as a temporary)
  std::memcpy(dmid, dout, t * h * 4);
  LayerNormBackwardAdd(a.xmid.get(), dx, dmid, t, h);
  // Attention: xmid = x + attn Wo.
  float* dattn = s.wide1.get();
  float* dqkv = s.wide2.get();
  float* dxhat1 = s.wide1.get();
  WeightGradient(d, a.attn.get(), h, dmid, h, grads.proj, accumulate, s);
  s.gemm(t, h, h, dmid, wt.proj, dattn);
  AttentionBackward(d, a, dattn, dqkv, s);
  WeightGradient(d, a.xhat1.get(), h, dqkv, 3 * h, grads.qkv, accumulate, s);
  s.gemm(t, h, 3 * h, dqkv, wt.qkv, dxhat1);
  std::memcpy(dx, dmid, t * h * 4);
  LayerNormBackwardAdd(a.x.get(), dxhat1, dx, t, h);
}

}  // namespace trainsim::local
