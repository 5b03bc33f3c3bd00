#include "planner/job/job_elastic.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "planner/job/spot_capacity.h"

namespace trainsim::planner {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// D: a failed node's mean time down, its replacement's capacity wait and restart.
double DownTime_s(const ElasticShape& s) {
  return SpotWaitMean_s(s.capacity_chance, s.retry_s) + s.restart_s;
}

// f: the steady-state share of time a node is down.
double DownShare(const ElasticShape& s) {
  const double x = s.node_rate_per_s * DownTime_s(s);
  return x / (1 + x);
}

int Wave(const ElasticShape& s) { return std::max(1, std::min(s.wave_nodes, s.nodes)); }

}  // namespace

double LiveShare(const ElasticShape& s) { return std::pow(1 - DownShare(s), s.nodes / s.groups); }

double TotalLossRate_per_s(const ElasticShape& s) {
  const double live = LiveShare(s);
  return s.nodes * s.node_rate_per_s * live * std::pow(1 - live, s.groups - 1);
}

double ExpectedElasticRun_s(const ElasticShape& s) {
  const double live = LiveShare(s);
  // Failure events that take a live group down; as many joins bring one back.
  const double changes_per_s = s.nodes * s.node_rate_per_s * live / Wave(s);
  const double paused = changes_per_s * (s.loss_pause_s + s.join_pause_s);
  if (!(paused < 1) || !(live > 0)) return kInf;
  const double interval = std::min(s.interval_s, s.work_s);
  const double writes = std::max(1.0, std::ceil(s.work_s / interval * (1 - 1e-12)));
  const double run = s.work_s / (live * (1 - paused)) + writes * s.checkpoint_write_s;
  const double redone = TotalLossRate_per_s(s) * run * (interval / 2 / live + DownTime_s(s));
  return s.download_s + run + redone;
}

double ExpectedElasticFailures(const ElasticShape& s) {
  const double training_s = ExpectedElasticRun_s(s) - s.download_s;
  return s.nodes * (1 - DownShare(s)) * s.node_rate_per_s / Wave(s) * training_s;
}

double ExpectedElasticBilled_s(const ElasticShape& s) {
  const double training_s = ExpectedElasticRun_s(s) - s.download_s;
  return s.nodes * (s.download_s + training_s * (1 - DownShare(s)));
}

ElasticSimulator::ElasticSimulator(const ElasticShape& shape, uint64_t seed)
    : shape_(shape),
      group_nodes_(shape.nodes / shape.groups),
      rng_(seed),
      back_s_(shape.nodes),
      since_s_(shape.nodes),
      down_in_group_(shape.groups),
      up_(shape.nodes),
      slot_(shape.nodes) {}

double ElasticSimulator::Uniform01() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

double ElasticSimulator::Exponential_s(double rate_per_s) {
  if (!(rate_per_s > 0)) return kInf;
  return -std::log(1.0 - Uniform01()) / rate_per_s;
}

double ElasticSimulator::CapacityWait_s() {
  if (shape_.capacity_chance >= 1) return 0;
  return SpotWaitDraw_s(shape_.capacity_chance, shape_.retry_s, Uniform01());
}

void ElasticSimulator::Stall(double pause_s) {
  blocked_until_s_ = std::max(blocked_until_s_, now_s_) + pause_s;
}

void ElasticSimulator::Fail() {
  ++out_.trial.interruptions;
  const int k = std::min(Wave(shape_), static_cast<int>(up_.size()));
  const double back_s = now_s_ + CapacityWait_s() + shape_.restart_s;
  const int live_before = live_groups_;
  for (int j = 0; j < k; ++j) {  // k distinct up nodes, uniformly
    const int n = static_cast<int>(up_.size());
    const int node = up_[std::min(n - 1, static_cast<int>(Uniform01() * n))];
    up_[slot_[node]] = up_.back();  // swap-remove from the up list
    slot_[up_.back()] = slot_[node];
    up_.pop_back();
    slot_[node] = -1;
    out_.trial.session_billed_instance_s += std::max(kMinimumSession_s, now_s_ - since_s_[node]);
    back_s_[node] = back_s;
    if (down_in_group_[node / group_nodes_]++ == 0) --live_groups_;
  }
  if (live_groups_ == live_before) return;
  if (live_groups_ > 0) {
    Stall(shape_.loss_pause_s);
    return;
  }
  ++out_.total_losses;  // the state is gone: back to the last checkpoint
  progress_s_ = saved_s_;
  writing_to_s_ = -1;
  blocked_until_s_ = now_s_;
}

void ElasticSimulator::Join(double at_s) {
  const int live_before = live_groups_;
  for (int node = 0; node < shape_.nodes; ++node) {
    if (back_s_[node] != at_s) continue;
    back_s_[node] = -1;
    since_s_[node] = at_s;
    slot_[node] = static_cast<int>(up_.size());
    up_.push_back(node);
    if (--down_in_group_[node / group_nodes_] == 0) ++live_groups_;
  }
  // The first group back after a total loss restarts from the checkpoint (its reload is in
  // restart_s); later ones join the running replicas.
  if (live_groups_ > live_before && live_before > 0) Stall(shape_.join_pause_s);
}

void ElasticSimulator::Reset() {
  up_.clear();
  for (int node = 0; node < shape_.nodes; ++node) {
    back_s_[node] = -1;
    since_s_[node] = 0;
    slot_[node] = node;
    up_.push_back(node);
  }
  std::fill(down_in_group_.begin(), down_in_group_.end(), 0);
  live_groups_ = shape_.groups;
  now_s_ = blocked_until_s_ = shape_.download_s;
  progress_s_ = saved_s_ = 0;
  writing_to_s_ = -1;
}

double ElasticSimulator::FailRate_per_s() const {
  const double up = static_cast<double>(up_.size());
  return up * shape_.node_rate_per_s / std::max(1.0, std::min<double>(Wave(shape_), up));
}

double ElasticSimulator::NextJoin_s() const {
  double join_at_s = kInf;
  for (double b : back_s_) {
    if (b >= 0) join_at_s = std::min(join_at_s, b);
  }
  return join_at_s;
}

ElasticOutcome ElasticSimulator::RunTrial() {
  out_ = ElasticOutcome();
  out_.trial.start_wait_s = CapacityWait_s();
  Reset();
  const double work_s = shape_.work_s;
  const double interval_s = std::min(shape_.interval_s, work_s);
  double live_s = 0;  // group-seconds live / groups
  double fail_at_s = now_s_ + Exponential_s(FailRate_per_s());
  while (true) {
    const double speed = static_cast<double>(live_groups_) / shape_.groups;
    const bool blocked = blocked_until_s_ > now_s_;
    const bool moving = live_groups_ > 0 && !blocked && writing_to_s_ < 0;
    const double boundary_s = std::min(work_s, saved_s_ + interval_s);
    const double reach_at_s = moving ? now_s_ + (boundary_s - progress_s_) / speed : kInf;
    // The end of a pause or write (now for a write of 0 s).
    const double unblock_at_s = live_groups_ > 0 && (blocked || writing_to_s_ >= 0)
                                    ? std::max(blocked_until_s_, now_s_)
                                    : kInf;
    const double join_at_s = NextJoin_s();
    const double t = std::min({fail_at_s, join_at_s, unblock_at_s, reach_at_s});
    if (moving) progress_s_ += (t - now_s_) * speed;
    live_s += (t - now_s_) * speed;
    now_s_ = t;
    if (t == unblock_at_s) {
      if (writing_to_s_ >= 0) {  // the write in flight is done
        saved_s_ = writing_to_s_;
        writing_to_s_ = -1;
        if (saved_s_ >= work_s) break;
      }
    } else if (t == reach_at_s) {
      progress_s_ = boundary_s;
      writing_to_s_ = boundary_s;
      Stall(shape_.checkpoint_write_s);
    } else if (t == join_at_s) {
      Join(t);
      fail_at_s = now_s_ + Exponential_s(FailRate_per_s());  // no memory: redrawn at the new rate
    } else {
      Fail();
      fail_at_s = now_s_ + Exponential_s(FailRate_per_s());
    }
  }
  for (int node : up_) {
    out_.trial.session_billed_instance_s += std::max(kMinimumSession_s, now_s_ - since_s_[node]);
  }
  out_.trial.run_s = now_s_;
  const double training_s = now_s_ - shape_.download_s;
  out_.live_share = training_s > 0 ? live_s / training_s : 1;
  return out_;
}

}  // namespace trainsim::planner
