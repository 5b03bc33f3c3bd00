#include "planner/job/job_run.h"

#include <algorithm>
#include <cmath>

#include "planner/job/interruptions.h"
#include "planner/job/spot_capacity.h"

namespace trainsim::planner {

double MeanCapacityWait_s(const JobShape& s) {
  return SpotWaitMean_s(s.capacity_chance, s.retry_s);
}

double ExpectedRun_s(const JobShape& s) {
  const double r = s.restart_s + MeanCapacityWait_s(s);
  if (s.on_notice)
    return s.download_s + ExpectedOnNotice_s(s.progress_s, s.notice_write_s, r, s.mtbi_s);
  return s.download_s +
         static_cast<double>(s.full_segments) * ExpectedSegment_s(s.full_segment_s, r, s.mtbi_s) +
         ExpectedSegment_s(s.last_segment_s, r, s.mtbi_s);
}

double ExpectedInterruptions(const JobShape& s) {
  const double r = s.restart_s + MeanCapacityWait_s(s);
  if (s.on_notice) return ExpectedOnNoticeInterruptions(s.progress_s, r, s.mtbi_s);
  return static_cast<double>(s.full_segments) *
             ExpectedSegmentInterruptions(s.full_segment_s, r, s.mtbi_s) +
         ExpectedSegmentInterruptions(s.last_segment_s, r, s.mtbi_s);
}

JobSimulator::JobSimulator(const JobShape& shape, uint64_t seed)
    : shape_(shape), rng_(seed), session_start_s_(shape.nodes, 0.0), struck_(shape.nodes, 0) {
  if (shape.wave_nodes > 1) {
    order_.resize(shape.nodes);
    for (int i = 0; i < shape.nodes; ++i) order_[i] = i;
  }
}

TrialOutcome JobSimulator::RunTrial() {
  out_ = TrialOutcome();
  out_.start_wait_s = CapacityWait_s();
  if (std::isfinite(shape_.fallback_deadline_s)) {
    // Waiting for spot past the slack would miss the deadline even on demand: stop there.
    const double work_s = shape_.on_notice
                              ? shape_.progress_s
                              : static_cast<double>(shape_.full_segments) *
                                        (shape_.full_segment_s - shape_.checkpoint_write_s) +
                                    shape_.last_segment_s;
    const double slack_s =
        shape_.fallback_deadline_s - (shape_.download_s + shape_.restart_s + work_s);
    out_.start_wait_s = std::min(out_.start_wait_s, std::max(0.0, slack_s));
  }
  deadline_s_ = shape_.fallback_deadline_s - out_.start_wait_s;
  now_s_ = shape_.download_s;
  if (shape_.on_notice) {
    RunOnNotice();
  } else {
    RunPeriodic();
  }
  out_.run_s = now_s_;
  CloseSessions(out_.fallback_at_s >= 0 ? out_.fallback_at_s : out_.run_s);
  return out_;
}

bool JobSimulator::FallBack(double remaining_s, double reserve_s) {
  if (now_s_ + shape_.restart_s + remaining_s + reserve_s <= deadline_s_) return false;
  out_.fallback_at_s = now_s_;
  now_s_ += shape_.restart_s + remaining_s;
  out_.on_demand_billed_instance_s = shape_.nodes * std::max(kMinimumSession_s, remaining_s);
  return true;
}

double JobSimulator::Uniform01() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

double JobSimulator::NextGap_s() {
  if (std::isinf(shape_.mtbi_s)) return shape_.mtbi_s;
  return -shape_.mtbi_s * std::log(1.0 - Uniform01());
}

double JobSimulator::CapacityWait_s() {
  if (shape_.capacity_chance >= 1) return 0;  // no draw: the sequence stays that of q = 1
  return SpotWaitDraw_s(shape_.capacity_chance, shape_.retry_s, Uniform01());
}

void JobSimulator::RunPeriodic() {
  const double full_s = shape_.full_segment_s;
  const double per_full = 1 / full_s;
  int64_t full_left = shape_.full_segments;
  // On demand, the work left from the start of the segment in progress and one final write
  // (no periodic checkpoints without interruptions); and what losing that segment costs.
  auto left_s = [&] {
    return static_cast<double>(full_left) * (full_s - shape_.checkpoint_write_s) +
           shape_.last_segment_s;
  };
  auto reserve_s = [&] {
    return (full_left > 0 ? full_s : shape_.last_segment_s) + shape_.restart_s;
  };
  if (FallBack(left_s(), reserve_s())) return;
  double gap_s = NextGap_s();
  while (true) {
    if (full_left > 0) {
      // Whole segments that finish before the next failure, in one step
      // (truncation is the floor here: gap_s >= 0; infinity takes them all).
      const double fit = gap_s * per_full;
      int64_t done = fit >= static_cast<double>(full_left) ? full_left : static_cast<int64_t>(fit);
      // A segment on spot spends a write that on demand would not: the slack shrinks by one
      // write per segment, and the switch comes after the segment that exhausts it.
      if (std::isfinite(deadline_s_) && shape_.checkpoint_write_s > 0) {
        const double slack = deadline_s_ - (now_s_ + shape_.restart_s + left_s() + reserve_s());
        const double allowed = std::floor(std::max(0.0, slack) / shape_.checkpoint_write_s) + 1;
        if (allowed < static_cast<double>(done)) done = static_cast<int64_t>(allowed);
      }
      now_s_ += static_cast<double>(done) * full_s;
      gap_s = std::max(0.0, gap_s - static_cast<double>(done) * full_s);
      full_left -= done;
      if (FallBack(left_s(), reserve_s())) return;
    }
    const double segment_s = full_left > 0 ? full_s : shape_.last_segment_s;
    if (full_left == 0 && gap_s >= segment_s) {
      now_s_ += segment_s;
      return;
    }
    now_s_ += gap_s;  // the failure strikes inside the segment: its progress is lost
    gap_s = Interrupt();
    if (FallBack(left_s(), reserve_s())) return;
  }
}

void JobSimulator::RunOnNotice() {
  double left_s = shape_.progress_s;
  const double reserve_s = shape_.notice_write_s + shape_.restart_s;
  if (FallBack(left_s, reserve_s)) return;
  for (double gap_s = NextGap_s(); gap_s < left_s;) {
    now_s_ += gap_s + shape_.notice_write_s;  // nothing lost; the instance goes after the write
    left_s -= gap_s;
    gap_s = Interrupt();
    if (FallBack(left_s, reserve_s)) return;
  }
  now_s_ += left_s;
}

double JobSimulator::Interrupt() {
  double left_s = StrikeWave();  // until the restart is done
  while (true) {
    const double gap_s = NextGap_s();
    if (gap_s >= left_s) {
      now_s_ += left_s;
      // Given gap >= left, gap - left is again exponential with mean M (no
      // memory): the time from the end of the restart to the next failure.
      return gap_s - left_s;
    }
    now_s_ += gap_s;  // a failure during the restart: it ends when the last one is back
    left_s = std::max(left_s - gap_s, StrikeWave());
  }
}

double JobSimulator::StrikeWave() {
  ++out_.interruptions;
  const double back_s = CapacityWait_s() + shape_.restart_s;
  const int n = shape_.nodes, k = std::min(shape_.wave_nodes, n);
  if (k == n) {
    for (int i = 0; i < n; ++i) StrikeInstance(i, back_s);
    return back_s;
  }
  if (k == 1) {  // one instance, uniformly
    StrikeInstance(std::min(n - 1, static_cast<int>(Uniform01() * n)), back_s);
    return back_s;
  }
  // k distinct instances, uniformly: the first k of a partial Fisher-Yates shuffle of order_
  // (any permutation to start from gives a uniform k-subset), O(k).
  for (int j = 0; j < k; ++j) {
    const int r = j + std::min(n - 1 - j, static_cast<int>(Uniform01() * (n - j)));
    std::swap(order_[j], order_[r]);
    StrikeInstance(order_[j], back_s);
  }
  return back_s;
}

void JobSimulator::StrikeInstance(int i, double back_s) {
  double& start_s = session_start_s_[i];
  if (!struck_[i]) {
    struck_[i] = 1;
    touched_.push_back(i);
  }
  if (start_s <= now_s_) {  // running: its session ends now
    out_.session_billed_instance_s += std::max(kMinimumSession_s, now_s_ - start_s);
  }
  start_s = now_s_ + back_s;
}

void JobSimulator::CloseSessions(double end_s) {
  const double untouched = static_cast<double>(shape_.nodes - static_cast<int>(touched_.size()));
  out_.session_billed_instance_s += untouched * std::max(kMinimumSession_s, end_s);
  for (int i : touched_) {
    out_.session_billed_instance_s += std::max(kMinimumSession_s, end_s - session_start_s_[i]);
    session_start_s_[i] = 0;
    struck_[i] = 0;
  }
  touched_.clear();
}

}  // namespace trainsim::planner
