// The part of the model one pipeline stage holds, its parameters and
// gradients, and its forward and backward passes over microbatches.
//
// The whole model: token embedding (vocab x hidden), `layers` transformer
// layers (layer.h), a final LayerNorm (no parameters) and an output head
// (hidden x vocab, untied), softmax cross-entropy. Layers are split over the
// stages as the simulator splits them: contiguous, the first layers % pp
// stages one more. Stage 0 holds the embedding, the last stage the head.
//
// Parameters and gradients are two flat buffers, laid out embedding, layers
// in order, head, so that each unit's gradient is one contiguous range and
// the backward pass finishes them from the end of the buffer to its start.
// Initialisation depends only on the seed and each tensor's place in the
// whole model, not on the stage split; it is drawn on the host and copied
// to the Ops's memory, so every backend starts from the same weights. All
// buffers belong to the Ops (ops.h): params() and grads() point into its
// memory (the GPU's for CudaOps). Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "launch/local/layer.h"

namespace trainsim::local {

struct ModelDims {
  int layers = 1;
  LayerDims layer;  // batch = the micro batch
  int64_t vocab = 2;
};

struct StageSpec {
  int first_layer = 0, layers = 0;
  bool embedding = false, head = false;
};

StageSpec StageOf(int layers, int pp, int stage);

// One parameter tensor: rows x cols floats at `offset` of the flat buffers.
struct ParamTensor {
  std::string name;  // "embedding", "layer3.qkv", "head"
  int64_t offset = 0, rows = 0, cols = 0;
  uint64_t index = 0;  // in the whole model: embedding 0, layer L's 1 + 4 L .., head 1 + 4 layers
  int64_t size() const { return rows * cols; }
};

class StageModel {
 public:
  // One microbatch in flight: what its backward pass needs.
  struct Microbatch;
  // Called with a range [offset, offset + count) of the gradient buffer once
  // this microbatch's backward pass has finished it.
  using GradientsReady = std::function<void(int64_t offset, int64_t count)>;

  // `ops` (kept, not owned) does the work; nullptr: a CpuOps of its own.
  StageModel(const ModelDims& dims, const StageSpec& spec, Ops* ops = nullptr);
  ~StageModel();

  const StageSpec& spec() const { return spec_; }
  const ModelDims& dims() const { return dims_; }
  int64_t param_count() const { return param_count_; }
  Ops& ops() { return ops_; }
  float* params() { return params_.get(); }
  float* grads() { return grads_.get(); }
  const std::vector<ParamTensor>& tensors() const { return tensors_; }

  // N(0, 0.02) weights, the residual branches' outputs (proj, down) scaled
  // by 1 / sqrt(2 layers) as GPT-2 does; tensors drawn by their place in the
  // whole model.
  void Initialize(uint64_t seed);

  // Before each step's first pass: transposes the weights for the backward
  // pass and zeroes the embedding gradient (scatter-added).
  void BeginStep();

  // A microbatch's activation storage, reused after Release; the model owns it
  // (one never released is freed with the model).
  Microbatch* Acquire();
  void Release(Microbatch* mb);
  // tokens x hidden: where a stage other than the first receives its input.
  float* Input(Microbatch* mb);

  // First stage: looks up the tokens (host, tokens x 1) into the input.
  void Embed(Microbatch* mb, const int32_t* tokens);
  // Not the last stage: the layers, output to `out` (tokens x hidden).
  void Forward(Microbatch* mb, float* out);
  // Last stage: the layers, final norm, head and loss; returns the summed
  // loss of the microbatch's tokens (targets on the host); gradients are
  // scaled by grad_scale.
  double ForwardLoss(Microbatch* mb, const int32_t* targets, float grad_scale);
  // Backward from `dout` (the next stage's input gradient; ignored on the
  // last stage), writing the input gradient to `dx` (ignored on the first
  // stage, whose embedding gradient takes it). `accumulate`: add to the
  // gradients rather than overwrite them (false on a step's first backward).
  void Backward(Microbatch* mb, const float* dout, float* dx, bool accumulate,
                const GradientsReady& ready);

 private:
  void AddTensor(const std::string& name, int64_t rows, int64_t cols, uint64_t index);
  LayerWeights Weights(float* base, int local_layer) const;
  LayerWeights Transposed(int local_layer) const;
  void RunLayers(Microbatch* mb, float* out);

  std::unique_ptr<Ops> owned_ops_;
  Ops& ops_;
  ModelDims dims_;
  StageSpec spec_;
  std::vector<ParamTensor> tensors_;
  int64_t param_count_ = 0;
  int64_t embedding_offset_ = -1, head_offset_ = -1;
  std::vector<int64_t> layer_offsets_;
  FloatBuffer params_, grads_, transposed_;
  LayerScratch scratch_;
  FloatBuffer dx1_, dx2_;
  // Every microbatch made (owned here, freed with the model) and those free for reuse.
  std::vector<std::unique_ptr<Microbatch>> microbatches_;
  std::vector<Microbatch*> free_;
};

}  // namespace trainsim::local
