// The local trainer's model: gradients against finite differences, the
// pipeline split against the whole model, and the pieces the schedule and
// the layout rest on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "launch/local/counter_rng.h"
#include "launch/local/stage_model.h"
#include "launch/local/task.h"
#include "launch/local/trainer.h"

namespace trainsim::local {
namespace {

// 2 layers, hidden 8 in 2 heads, FFN 16, 2 sequences of 5 tokens, vocab 11.
ModelDims TinyDims() {
  ModelDims d;
  d.layers = 2;
  d.vocab = 11;
  d.layer = LayerDims{2, 5, 8, 2, 16};
  return d;
}

struct Batch {
  std::vector<int32_t> inputs, targets;
};

Batch TinyBatch(const ModelDims& d) {
  Batch b;
  b.inputs.resize(d.layer.tokens());
  b.targets.resize(d.layer.tokens());
  FillSamples(7, static_cast<int>(d.vocab), static_cast<int>(d.layer.seq), 1, 0, d.layer.batch,
              b.inputs.data(), b.targets.data());
  return b;
}

// The mean loss of the whole model (one stage) on the batch.
double Loss(StageModel& m, const Batch& b) {
  StageModel::Microbatch* mb = m.Acquire();
  m.Embed(mb, b.inputs.data());
  const double tokens = static_cast<double>(b.inputs.size());
  const double loss = m.ForwardLoss(mb, b.targets.data(), 1.0f) / tokens;
  m.Release(mb);
  return loss;
}

// Fills m.grads() with the gradient of Loss.
void Gradient(StageModel& m, const Batch& b) {
  m.BeginStep();
  StageModel::Microbatch* mb = m.Acquire();
  m.Embed(mb, b.inputs.data());
  m.ForwardLoss(mb, b.targets.data(), 1.0f / static_cast<float>(b.inputs.size()));
  m.Backward(mb, nullptr, nullptr, false, {});
  m.Release(mb);
}

// Weights ten times the initial scale: attention far from uniform and GELU
// well inside its curved part, so that a wrong term shows.
void Roughen(StageModel& m) {
  for (int64_t i = 0; i < m.param_count(); ++i) m.params()[i] *= 10;
}

// The directional derivative of Loss along v (restricted to tensor t), by
// central differences with a step of norm eps.
double NumericDerivative(StageModel& m, const Batch& b, const ParamTensor& t,
                         const std::vector<double>& v, double eps) {
  float* p = m.params() + t.offset;
  const std::vector<float> saved(p, p + t.size());
  for (int64_t i = 0; i < t.size(); ++i) p[i] = static_cast<float>(saved[i] + eps * v[i]);
  const double plus = Loss(m, b);
  for (int64_t i = 0; i < t.size(); ++i) p[i] = static_cast<float>(saved[i] - eps * v[i]);
  const double minus = Loss(m, b);
  std::copy(saved.begin(), saved.end(), p);
  return (plus - minus) / (2 * eps);
}

std::vector<double> Unit(std::vector<double> v) {
  double norm = 0;
  for (double x : v) norm += x * x;
  for (double& x : v) x /= std::sqrt(norm);
  return v;
}

// Every tensor, along its own gradient (the derivative must be the
// gradient's norm) and along a random direction.
TEST(LocalModel, GradientsMatchFiniteDifferences) {
  const ModelDims d = TinyDims();
  StageModel m(d, StageOf(d.layers, 1, 0));
  m.Initialize(3);
  Roughen(m);
  const Batch b = TinyBatch(d);
  Gradient(m, b);
  for (const ParamTensor& t : m.tensors()) {
    std::vector<double> along(t.size()), random(t.size());
    for (int64_t i = 0; i < t.size(); ++i) {
      along[i] = m.grads()[t.offset + i];
      random[i] = Normal(11, t.index, i);
    }
    for (const std::vector<double>& v : {Unit(along), Unit(random)}) {
      double analytic = 0;
      for (int64_t i = 0; i < t.size(); ++i) analytic += m.grads()[t.offset + i] * v[i];
      const double numeric = NumericDerivative(m, b, t, v, 1e-2);
      EXPECT_NEAR(numeric, analytic, 1e-2 * std::abs(analytic) + 1e-4) << t.name;
    }
  }
}

// Stage 0 and stage 1 of a 2-stage split, chained by hand, give the whole
// model's gradients bit for bit: same initial weights, same arithmetic.
TEST(LocalModel, PipelineStagesReproduceTheWholeModel) {
  ModelDims d = TinyDims();
  d.layers = 3;
  StageModel whole(d, StageOf(3, 1, 0));
  StageModel first(d, StageOf(3, 2, 0)), last(d, StageOf(3, 2, 1));
  for (StageModel* m : {&whole, &first, &last}) m->Initialize(5);
  const Batch b = TinyBatch(d);
  Gradient(whole, b);

  const int64_t width = d.layer.tokens() * d.layer.hidden;
  std::vector<float> activation(width), gradient(width);
  const float scale = 1.0f / static_cast<float>(b.inputs.size());
  first.BeginStep();
  last.BeginStep();
  StageModel::Microbatch* a = first.Acquire();
  StageModel::Microbatch* z = last.Acquire();
  first.Embed(a, b.inputs.data());
  first.Forward(a, activation.data());
  std::copy(activation.begin(), activation.end(), last.Input(z));
  last.ForwardLoss(z, b.targets.data(), scale);
  last.Backward(z, nullptr, gradient.data(), false, {});
  first.Backward(a, gradient.data(), nullptr, false, {});

  std::map<std::string, const float*> split_params, split_grads;
  for (StageModel* m : {&first, &last}) {
    for (const ParamTensor& t : m->tensors()) {
      split_params[t.name] = m->params() + t.offset;
      split_grads[t.name] = m->grads() + t.offset;
    }
  }
  ASSERT_EQ(split_params.size(), whole.tensors().size());
  for (const ParamTensor& t : whole.tensors()) {
    const size_t bytes = t.size() * sizeof(float);
    EXPECT_EQ(std::memcmp(split_params[t.name], whole.params() + t.offset, bytes), 0) << t.name;
    EXPECT_EQ(std::memcmp(split_grads[t.name], whole.grads() + t.offset, bytes), 0) << t.name;
  }
}

// Gradients finish from the end of the buffer to its start, one unit each:
// head, the layers from the last, embedding.
TEST(LocalModel, BackwardReportsEachUnitOnceInReverseOrder) {
  const ModelDims d = TinyDims();
  StageModel m(d, StageOf(d.layers, 1, 0));
  m.Initialize(1);
  const Batch b = TinyBatch(d);
  m.BeginStep();
  StageModel::Microbatch* mb = m.Acquire();
  m.Embed(mb, b.inputs.data());
  m.ForwardLoss(mb, b.targets.data(), 1.0f);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  m.Backward(mb, nullptr, nullptr, false,
             [&](int64_t offset, int64_t count) { ranges.emplace_back(offset, count); });
  ASSERT_EQ(ranges.size(), 4u);  // head, layer 1, layer 0, embedding
  int64_t end = m.param_count();
  for (const auto& [offset, count] : ranges) {
    EXPECT_EQ(offset + count, end);
    end = offset;
  }
  EXPECT_EQ(end, 0);
}

TEST(LocalModel, LayersSplitLikeTheSimulator) {
  // 5 layers over 3 stages: the first 5 % 3 = 2 stages take one more.
  const StageSpec s0 = StageOf(5, 3, 0), s1 = StageOf(5, 3, 1), s2 = StageOf(5, 3, 2);
  EXPECT_EQ(s0.first_layer, 0);
  EXPECT_EQ(s0.layers, 2);
  EXPECT_EQ(s1.first_layer, 2);
  EXPECT_EQ(s1.layers, 2);
  EXPECT_EQ(s2.first_layer, 4);
  EXPECT_EQ(s2.layers, 1);
  EXPECT_TRUE(s0.embedding && !s0.head && !s1.embedding && !s1.head && s2.head);
}

std::string Describe(const std::vector<Pass>& order) {
  std::string s;
  for (const Pass& p : order) s += (p.forward ? "F" : "B") + std::to_string(p.microbatch) + " ";
  return s;
}

TEST(LocalModel, ScheduleOrders) {
  EXPECT_EQ(Describe(ScheduleOrder(Schedule::k1F1B, 4, 0, 6)),
            "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
  EXPECT_EQ(Describe(ScheduleOrder(Schedule::k1F1B, 4, 3, 3)), "F0 B0 F1 B1 F2 B2 ");
  EXPECT_EQ(Describe(ScheduleOrder(Schedule::k1F1B, 4, 0, 2)), "F0 F1 B0 B1 ");
  EXPECT_EQ(Describe(ScheduleOrder(Schedule::kGpipe, 2, 1, 3)), "F0 F1 F2 B0 B1 B2 ");
}

TEST(LocalModel, RanksAreStageMajor) {
  const RankLayout l = RankLayout::Of(5, 6, 3);  // pp 3 x dp 2
  EXPECT_EQ(l.dp, 2);
  EXPECT_EQ(l.stage, 2);
  EXPECT_EQ(l.replica, 1);
  EXPECT_FALSE(l.reports());
  EXPECT_TRUE(RankLayout::Of(4, 6, 3).reports());
  EXPECT_EQ(l.RankAt(1, 1), 3);
}

// The task: every token after the first follows the rule; samples depend
// only on (seed, step, index).
TEST(LocalTask, SamplesFollowTheRuleAndDependOnlyOnTheirIndex) {
  const int vocab = 64, seq = 6;
  std::vector<int32_t> in(4 * seq), out(4 * seq), in2(2 * seq), out2(2 * seq);
  FillSamples(9, vocab, seq, 3, 10, 4, in.data(), out.data());
  FillSamples(9, vocab, seq, 3, 12, 2, in2.data(), out2.data());
  EXPECT_TRUE(std::equal(in2.begin(), in2.end(), in.begin() + 2 * seq));
  const AffineRule r = RuleOf(9, vocab);
  EXPECT_NE(r.a, 1);
  for (int i = 0; i < 4 * seq; ++i) {
    EXPECT_EQ(out[i], (r.a * in[i] + r.c) % vocab);
    if (i % seq != seq - 1) {
      EXPECT_EQ(in[i + 1], out[i]);
    }
  }
}

}  // namespace
}  // namespace trainsim::local
