#include "launch/local/stage_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/model_spec.h"
#include "launch/local/counter_rng.h"

namespace trainsim::local {

struct StageModel::Microbatch {
  Microbatch(const ModelDims& d, const StageSpec& spec, Ops& ops)
      : tokens(d.layer.tokens()),
        last(ops.Alloc(spec.head ? d.layer.tokens() * d.layer.hidden : 1)),
        normed(ops.Alloc(spec.head ? d.layer.tokens() * d.layer.hidden : 1)),
        logits(ops.Alloc(spec.head ? d.layer.tokens() * d.vocab : 1)) {
    for (int l = 0; l < spec.layers; ++l) layers.emplace_back(d.layer, ops);
  }
  std::vector<LayerActivations> layers;
  std::vector<int32_t> tokens;  // first stage (host)
  FloatBuffer last;             // last stage: the last layer's output
  FloatBuffer normed;           // ... its LayerNorm
  FloatBuffer logits;           // ... the logits, then their gradient
};

StageSpec StageOf(int layers, int pp, int stage) {
  const LayerRange range = SplitLayers(layers, pp, stage);
  StageSpec s;
  s.first_layer = range.first;
  s.layers = range.count;
  s.embedding = stage == 0;
  s.head = stage == pp - 1;
  return s;
}

StageModel::StageModel(const ModelDims& dims, const StageSpec& spec, Ops* ops)
    : owned_ops_(ops ? nullptr : std::make_unique<CpuOps>()),
      ops_(ops ? *ops : *owned_ops_),
      dims_(dims),
      spec_(spec),
      params_(nullptr, &std::free),
      grads_(nullptr, &std::free),
      transposed_(nullptr, &std::free),
      scratch_(dims.layer, ops_),
      dx1_(ops_.Alloc(dims.layer.tokens() * dims.layer.hidden)),
      dx2_(ops_.Alloc(dims.layer.tokens() * dims.layer.hidden)) {
  const int64_t h = dims.layer.hidden, f = dims.layer.ffn;
  if (spec.embedding) {
    embedding_offset_ = param_count_;
    AddTensor("embedding", dims.vocab, h, 0);
  }
  for (int l = 0; l < spec.layers; ++l) {
    const int layer = spec.first_layer + l;
    const std::string name = "layer" + std::to_string(layer) + ".";
    const uint64_t index = 1 + 4 * static_cast<uint64_t>(layer);
    layer_offsets_.push_back(param_count_);
    AddTensor(name + "qkv", h, 3 * h, index);
    AddTensor(name + "proj", h, h, index + 1);
    AddTensor(name + "up", h, f, index + 2);
    AddTensor(name + "down", f, h, index + 3);
  }
  layer_offsets_.push_back(param_count_);  // the end of the last layer
  if (spec.head) {
    head_offset_ = param_count_;
    AddTensor("head", h, dims.vocab, 1 + 4 * static_cast<uint64_t>(dims.layers));
  }
  params_ = ops_.Alloc(param_count_);
  grads_ = ops_.Alloc(param_count_);
  transposed_ = ops_.Alloc(param_count_);
}

StageModel::~StageModel() = default;

void StageModel::AddTensor(const std::string& name, int64_t rows, int64_t cols, uint64_t index) {
  tensors_.push_back(ParamTensor{name, param_count_, rows, cols, index});
  param_count_ += rows * cols;
}

void StageModel::Initialize(uint64_t seed) {
  const double residual_scale = 1 / std::sqrt(2.0 * dims_.layers);
  for (const ParamTensor& t : tensors_) {
    const bool branch_out = t.name.ends_with(".proj") || t.name.ends_with(".down");
    const double std = 0.02 * (branch_out ? residual_scale : 1.0);
    std::vector<float> p(static_cast<size_t>(t.size()));
    for (int64_t i = 0; i < t.size(); ++i)
      p[i] = static_cast<float>(std * Normal(seed, t.index, i));
    ops_.CopyFromHost(p.data(), params_.get() + t.offset, t.size());
  }
}

void StageModel::BeginStep() {
  for (const ParamTensor& t : tensors_) {
    if (t.offset == embedding_offset_) continue;
    ops_.Transpose(params_.get() + t.offset, t.rows, t.cols, transposed_.get() + t.offset);
  }
  if (spec_.embedding)
    ops_.Zero(grads_.get() + embedding_offset_, dims_.vocab * dims_.layer.hidden);
}

LayerWeights StageModel::Weights(float* base, int l) const {
  const int64_t h = dims_.layer.hidden, f = dims_.layer.ffn;
  float* p = base + layer_offsets_[l];
  return LayerWeights{p, p + 3 * h * h, p + 4 * h * h, p + 4 * h * h + h * f};
}

LayerWeights StageModel::Transposed(int l) const { return Weights(transposed_.get(), l); }

StageModel::Microbatch* StageModel::Acquire() {
  if (free_.empty()) {
    microbatches_.push_back(std::make_unique<Microbatch>(dims_, spec_, ops_));
    return microbatches_.back().get();
  }
  Microbatch* mb = free_.back();
  free_.pop_back();
  return mb;
}

void StageModel::Release(Microbatch* mb) { free_.push_back(mb); }

float* StageModel::Input(Microbatch* mb) { return mb->layers[0].x.get(); }

void StageModel::Embed(Microbatch* mb, const int32_t* tokens) {
  std::copy(tokens, tokens + dims_.layer.tokens(), mb->tokens.begin());
  ops_.EmbedGather(params_.get() + embedding_offset_, tokens, dims_.layer.tokens(),
                   dims_.layer.hidden, Input(mb));
}

void StageModel::RunLayers(Microbatch* mb, float* out) {
  for (int l = 0; l < spec_.layers; ++l) {
    float* next = l + 1 < spec_.layers ? mb->layers[l + 1].x.get() : out;
    LayerForward(ops_, dims_.layer, Weights(params_.get(), l), &mb->layers[l], next, scratch_);
  }
}

void StageModel::Forward(Microbatch* mb, float* out) { RunLayers(mb, out); }

double StageModel::ForwardLoss(Microbatch* mb, const int32_t* targets, float grad_scale) {
  const int64_t t = dims_.layer.tokens(), h = dims_.layer.hidden;
  RunLayers(mb, mb->last.get());
  ops_.LayerNorm(mb->last.get(), mb->normed.get(), t, h);
  ops_.Gemm(t, dims_.vocab, h, mb->normed.get(), params_.get() + head_offset_, mb->logits.get(),
            false);
  return ops_.CrossEntropy(mb->logits.get(), targets, t, dims_.vocab, grad_scale);
}

void StageModel::Backward(Microbatch* mb, const float* dout, float* dx, bool accumulate,
                          const GradientsReady& ready) {
  const int64_t t = dims_.layer.tokens(), h = dims_.layer.hidden, v = dims_.vocab;
  auto done = [&](int64_t from, int64_t to) {
    if (ready) ready(from, to - from);
  };
  const float* g = dout;
  if (spec_.head) {
    ops_.Transpose(mb->normed.get(), t, h, scratch_.tall.get());
    ops_.Gemm(h, v, t, scratch_.tall.get(), mb->logits.get(), grads_.get() + head_offset_,
              accumulate);
    done(head_offset_, param_count_);
    ops_.Gemm(t, h, v, mb->logits.get(), transposed_.get() + head_offset_, dx2_.get(), false);
    ops_.Zero(dx1_.get(), t * h);
    ops_.LayerNormBackwardAdd(mb->last.get(), dx2_.get(), dx1_.get(), t, h);
    g = dx1_.get();
  }
  for (int l = spec_.layers - 1; l >= 0; --l) {
    float* out = l == 0 && !spec_.embedding ? dx : g == dx1_.get() ? dx2_.get() : dx1_.get();
    LayerBackward(ops_, dims_.layer, Transposed(l), mb->layers[l], g, out, Weights(grads_.get(), l),
                  accumulate, scratch_);
    done(layer_offsets_[l], layer_offsets_[l + 1]);
    g = out;
  }
  if (spec_.embedding) {
    ops_.EmbedScatterAdd(g, mb->tokens.data(), t, h, grads_.get() + embedding_offset_);
    done(embedding_offset_, embedding_offset_ + v * h);
  }
}

}  // namespace trainsim::local
