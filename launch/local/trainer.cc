#include "launch/local/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/scenario.h"
#include "launch/local/adam.h"
#include "launch/local/checkpoint.h"
#include "launch/local/stage_model.h"
#include "launch/local/task.h"

namespace trainsim::local {
namespace {

using Clock = std::chrono::steady_clock;

// Gradient ranges arrive from the end of the buffer to its start (the
// backward pass's order); adjacent ones are summed over the replicas in one
// bucket once it holds `bucket_floats`.
class Buckets {
 public:
  Buckets(Transport& transport, float* grads, int64_t bucket_floats)
      : transport_(transport), grads_(grads), bucket_floats_(bucket_floats) {}
  void Add(int64_t offset, int64_t count) {
    if (end_ > begin_ && offset + count != begin_) Flush();
    if (end_ == begin_) end_ = offset + count;
    begin_ = offset;
    if (end_ - begin_ >= bucket_floats_) Flush();
  }
  void Flush() {
    if (end_ > begin_) transport_.StartReplicaSum(grads_ + begin_, end_ - begin_);
    begin_ = end_ = 0;
  }

 private:
  Transport& transport_;
  float* grads_;
  int64_t bucket_floats_;
  int64_t begin_ = 0, end_ = 0;
};

// Message tags: activations and gradients of microbatch i.
int ActivationTag(int i) { return 2 * i; }
int GradientTag(int i) { return 2 * i + 1; }

class RankTrainer {
 public:
  RankTrainer(const RunConfig& c, const RankLayout& layout, Transport& transport, Ops& ops)
      : c_(c),
        layout_(layout),
        transport_(transport),
        ops_(ops),
        model_(Dims(c), StageOf(c.layers, c.pp, layout.stage), &ops),
        adam_(ops, model_.param_count(), c.lr),
        m_(static_cast<int>(MicrobatchesPerPipeline(c.global_batch, c.dp, c.micro_batch))),
        tokens_(c.tokens_per_microbatch()),
        width_(tokens_ * c.hidden),
        inputs_(m_ * tokens_),
        targets_(m_ * tokens_),
        sent_forward_(ops.Alloc(model_.spec().head ? 1 : m_ * width_)),
        sent_backward_(ops.Alloc(model_.spec().embedding ? 1 : m_ * width_)),
        received_(ops.Alloc(width_)),
        fields_(TrajectoryFields(c)),
        fingerprint_(Fingerprint(fields_, layout.world)) {
    model_.Initialize(static_cast<uint64_t>(c.seed));
  }

  Expected<TrainResult> Run(TrainObserver& observer, const std::function<bool()>& stop) {
    int start = 0;
    if (c_.resume) {
      Expected<int> resumed = Resume();
      if (!resumed.ok()) return resumed.status();
      start = *resumed;
    }
    TrainResult result;
    result.checkpoint_step = start;
    observer.OnStart(start + 1, model_.param_count());
    for (int step = start + 1; step <= c_.steps; ++step) {
      transport_.Barrier();
      const Clock::time_point begin = Clock::now();
      const double loss_sum = RunStep(step);
      ops_.Synchronize();
      double agreed[2] = {std::chrono::duration<double>(Clock::now() - begin).count(),
                          stop() ? 1.0 : 0.0};
      double loss = std::numeric_limits<double>::quiet_NaN();
      if (model_.spec().head) {
        loss =
            transport_.ReplicaSum(loss_sum) / (static_cast<double>(c_.global_batch) * c_.seq_len);
      }
      transport_.MaxOverAll(agreed, 2);
      result.steps.push_back(StepResult{step, loss, agreed[0]});
      observer.OnStep(result.steps.back());
      if (c_.checkpoint_every > 0 && step % c_.checkpoint_every == 0) {
        if (Status s = Checkpoint(step); !s.ok()) return s;
        result.checkpoint_step = step;
        observer.OnCheckpoint(step);
      }
      if (agreed[1] > 0 && step < c_.steps) {
        result.interrupted = true;
        break;
      }
    }
    return result;
  }

 private:
  static ModelDims Dims(const RunConfig& c) {
    ModelDims d;
    d.layers = c.layers;
    d.vocab = c.vocab;
    d.layer = LayerDims{c.micro_batch, c.seq_len, c.hidden, c.heads, c.ffn_hidden};
    return d;
  }

  // The parameters and moments, staged on the host for checkpoints.
  struct HostState {
    explicit HostState(int64_t n) : params(n), m(n), v(n) {}
    RankState state() {
      return RankState{params.data(), m.data(), v.data(), static_cast<int64_t>(params.size())};
    }
    std::vector<float> params, m, v;
  };

  HostState ToHost() {
    HostState h(model_.param_count());
    ops_.CopyToHost(model_.params(), h.params.data(), model_.param_count());
    ops_.CopyToHost(adam_.first_moment(), h.m.data(), model_.param_count());
    ops_.CopyToHost(adam_.second_moment(), h.v.data(), model_.param_count());
    return h;
  }

  void FromHost(const HostState& h) {
    ops_.CopyFromHost(h.params.data(), model_.params(), model_.param_count());
    ops_.CopyFromHost(h.m.data(), adam_.first_moment(), model_.param_count());
    ops_.CopyFromHost(h.v.data(), adam_.second_moment(), model_.param_count());
    ops_.Synchronize();
  }

  // True on every rank when `ok` is true on every rank.
  bool AllOk(bool ok) {
    double failed = ok ? 0 : 1;
    transport_.MaxOverAll(&failed, 1);
    return failed == 0;
  }

  static Status PeerFailed() { return Status::Internal(""); }

  Expected<int> Resume() {
    Expected<std::optional<int64_t>> latest = ReadLatest(c_.checkpoint_dir, layout_.world, fields_);
    if (!latest.ok()) return latest.status();
    if (!*latest) return 0;
    const int step = static_cast<int>(**latest);
    HostState h(model_.param_count());
    Status s = ReadRankCheckpoint(c_.checkpoint_dir, step, layout_.rank, fingerprint_, h.state());
    if (!AllOk(s.ok())) return s.ok() ? PeerFailed() : s;
    FromHost(h);
    return step;
  }

  Status Checkpoint(int step) {
    Status s =
        WriteRankCheckpoint(c_.checkpoint_dir, step, layout_.rank, fingerprint_, ToHost().state());
    if (!AllOk(s.ok())) return s.ok() ? PeerFailed() : s;
    if (layout_.rank == 0) s = WriteLatest(c_.checkpoint_dir, step, layout_.world, fields_);
    if (!AllOk(s.ok())) return s.ok() ? PeerFailed() : s;
    return Status::Ok();
  }

  // One optimizer step; returns this rank's summed loss (last stage).
  double RunStep(int step) {
    const StageSpec& spec = model_.spec();
    const int64_t first_sample = int64_t{layout_.replica} * m_ * c_.micro_batch;
    FillSamples(static_cast<uint64_t>(c_.seed), c_.vocab, c_.seq_len, step, first_sample,
                m_ * c_.micro_batch, inputs_.data(), targets_.data());
    const float grad_scale = 1.0f / (static_cast<float>(c_.global_batch) * c_.seq_len);
    const int prev = layout_.RankAt(layout_.stage - 1, layout_.replica);
    const int next = layout_.RankAt(layout_.stage + 1, layout_.replica);
    Buckets buckets(transport_, model_.grads(),
                    std::max<int64_t>(1, static_cast<int64_t>(c_.bucket_mb * (1 << 20) / 4)));
    const StageModel::GradientsReady ready = [&](int64_t offset, int64_t count) {
      buckets.Add(offset, count);
    };
    std::vector<StageModel::Microbatch*> in_flight(m_);
    double loss = 0;
    model_.BeginStep();
    for (const Pass& p : ScheduleOrder(c_.schedule, c_.pp, layout_.stage, m_)) {
      const int i = p.microbatch;
      if (p.forward) {
        StageModel::Microbatch* mb = in_flight[i] = model_.Acquire();
        if (spec.embedding) {
          model_.Embed(mb, inputs_.data() + i * tokens_);
        } else {
          transport_.Receive(prev, ActivationTag(i), model_.Input(mb), width_);
        }
        if (spec.head) {
          loss += model_.ForwardLoss(mb, targets_.data() + i * tokens_, grad_scale);
        } else {
          float* out = sent_forward_.get() + i * width_;
          model_.Forward(mb, out);
          transport_.Send(next, ActivationTag(i), out, width_);
        }
      } else {
        if (!spec.head) transport_.Receive(next, GradientTag(i), received_.get(), width_);
        float* dx = spec.embedding ? nullptr : sent_backward_.get() + i * width_;
        model_.Backward(in_flight[i], received_.get(), dx, i > 0,
                        i == m_ - 1 ? ready : StageModel::GradientsReady());
        if (!spec.embedding) transport_.Send(prev, GradientTag(i), dx, width_);
        model_.Release(in_flight[i]);
      }
    }
    transport_.WaitSends();
    buckets.Flush();
    transport_.WaitReplicaSums();
    adam_.Step(model_.params(), model_.grads(), step);
    return loss;
  }

  const RunConfig& c_;
  const RankLayout layout_;
  Transport& transport_;
  Ops& ops_;
  StageModel model_;
  Adam adam_;
  const int m_;  // microbatches per replica and step
  const int64_t tokens_, width_;
  std::vector<int32_t> inputs_, targets_;
  FloatBuffer sent_forward_, sent_backward_, received_;
  const ConfigFields fields_;
  const uint64_t fingerprint_;
};

}  // namespace

RankLayout RankLayout::Of(int rank, int world, int pp) {
  RankLayout l;
  l.rank = rank;
  l.world = world;
  l.pp = pp;
  l.dp = world / pp;
  l.stage = rank / l.dp;
  l.replica = rank % l.dp;
  return l;
}

std::vector<Pass> ScheduleOrder(Schedule schedule, int pp, int stage, int m) {
  std::vector<Pass> order;
  if (schedule == Schedule::kGpipe) {
    for (int i = 0; i < m; ++i) order.push_back(Pass{true, i});
    for (int i = 0; i < m; ++i) order.push_back(Pass{false, i});
    return order;
  }
  const int warmup = std::min(pp - stage - 1, m);
  int f = 0, b = 0;
  for (; f < warmup; ++f) order.push_back(Pass{true, f});
  while (f < m) {
    order.push_back(Pass{true, f++});
    order.push_back(Pass{false, b++});
  }
  while (b < m) order.push_back(Pass{false, b++});
  return order;
}

Expected<TrainResult> Train(const RunConfig& config, const RankLayout& layout, Transport& transport,
                            TrainObserver& observer, const std::function<bool()>& stop_requested) {
  CpuOps ops;
  return Train(config, layout, transport, ops, observer, stop_requested);
}

Expected<TrainResult> Train(const RunConfig& config, const RankLayout& layout, Transport& transport,
                            Ops& ops, TrainObserver& observer,
                            const std::function<bool()>& stop_requested) {
  RankTrainer trainer(config, layout, transport, ops);
  return trainer.Run(observer, stop_requested);
}

RunSummary Summarize(const std::vector<StepResult>& steps, int warmup) {
  RunSummary s;
  if (static_cast<int>(steps.size()) <= warmup) return s;
  std::vector<double> times;
  for (size_t i = warmup; i < steps.size(); ++i) times.push_back(steps[i].seconds);
  s.steps = static_cast<int>(times.size());
  double total = 0;
  for (double t : times) total += t;
  s.mean_step_s = total / s.steps;
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  s.median_step_s = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  s.first_loss = steps[warmup].loss;
  s.last_loss = steps.back().loss;
  return s;
}

}  // namespace trainsim::local
