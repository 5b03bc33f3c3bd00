#include "gui/models/measured_run.h"

#include <QFile>
#include <algorithm>
#include <memory>

#include "core/durable_file.h"
#include "observe/chakra.h"
#include "planner/search/space.h"
#include "sim/engine.h"
#include "sim/simulate.h"

namespace trainsim::gui {
namespace {

// The simulated step of `s` with the profile at `path` attached.
Expected<double> StepWith(Scenario s, const HardwareProfile& profile, const std::string& path) {
  if (Status st = AttachProfile(std::make_shared<const HardwareProfile>(profile), path, &s);
      !st.ok()) {
    return st;
  }
  Expected<sim::SimulationResult> r = sim::Simulate(s, sim::SimulateOptions());
  if (!r.ok()) return r.status();
  return r->step.step_time_s;
}

}  // namespace

Expected<MeasuredRun> LoadMeasuredRun(const QStringList& paths, int warmup) {
  MeasuredRun run;
  run.warmup = warmup;
  for (const QString& path : paths) {
    QFile f(path);
    const QByteArray head = f.open(QIODevice::ReadOnly) ? f.read(1 << 16) : QByteArray();
    const std::string file = path.toStdString();
    Expected<observe::KinetoTrace> t =
        observe::LooksLikeChakra(std::string_view(head.constData(), head.size()))
            ? observe::LoadChakraTrace(file)
            : observe::LoadKinetoTrace(file);
    if (!t.ok()) return t.status();
    run.traces.push_back(std::move(*t));
  }
  Expected<observe::SteadySteps> steady = observe::Steady(run.traces, warmup);
  if (!steady.ok()) return steady.status();
  run.steady = *steady;
  return run;
}

std::vector<TimelineLane> MeasuredLanes(const MeasuredRun& run) {
  TimelineLane compute, comm;
  compute.gpu = comm.gpu = -1;
  compute.track = sim::kTrackCompute;
  comm.track = sim::kTrackDp;
  compute.label = QStringLiteral("measured \u00b7 compute");
  comm.label = QStringLiteral("measured \u00b7 comm");
  if (run.traces.empty()) return {};
  for (const observe::StepKernel& k : run.traces.front().last_step) {
    TimelineLane& lane = k.kind == observe::KernelKind::kComm ? comm : compute;
    const QString name = k.kind == observe::KernelKind::kGemm        ? QStringLiteral("GEMM")
                         : k.kind == observe::KernelKind::kAttention ? QStringLiteral("attention")
                         : k.kind == observe::KernelKind::kComm ? QStringLiteral("communication")
                                                                : QStringLiteral("other kernel");
    lane.events.push_back({QStringLiteral("measured %1").arg(name), k.start_s, k.end_s});
    lane.busy_s += k.end_s - k.start_s;
    lane.longest_event_s = std::max(lane.longest_event_s, k.end_s - k.start_s);
  }
  std::vector<TimelineLane> out;
  for (TimelineLane* lane : {&compute, &comm}) {
    if (lane->events.empty()) continue;
    std::sort(lane->events.begin(), lane->events.end(),
              [](const TimelineEvent& a, const TimelineEvent& b) { return a.start_s < b.start_s; });
    out.push_back(std::move(*lane));
  }
  return out;
}

Timeline WithMeasured(const Timeline& simulated, const MeasuredRun& run) {
  Timeline t = simulated;
  std::vector<TimelineLane> lanes = MeasuredLanes(run);
  for (const TimelineLane& lane : lanes) {
    for (const TimelineEvent& e : lane.events) t.end_s = std::max(t.end_s, e.end_s);
  }
  lanes.insert(lanes.end(), std::make_move_iterator(t.lanes.begin()),
               std::make_move_iterator(t.lanes.end()));
  t.lanes = std::move(lanes);
  return t;
}

std::vector<CompareRow> CompareRows(const Timeline& simulated, const MeasuredRun& run) {
  const observe::StepParts p = observe::PartsOf(simulated.breakdown);
  const observe::SteadySteps& m = run.steady;
  return {{QStringLiteral("step"), simulated.step_s, m.wall_s},
          {QStringLiteral("compute"), p.compute_s, m.compute_s},
          {QStringLiteral("exposed communication"), p.exposed_comm_s, m.exposed_comm_s},
          {QStringLiteral("idle (bubbles, waits)"), p.idle_s, m.idle_s}};
}

Expected<Scenario> CandidateScenario(const PlannedScenario& planned, int confirmed) {
  if (!planned.plan || confirmed < 0 ||
      confirmed >= static_cast<int>(planned.plan->confirmed.size())) {
    return Status::InvalidInput("no such candidate: " + std::to_string(confirmed));
  }
  Scenario s = planned.scenario.scenario;
  planner::ApplyCandidate(planned.plan->space, planned.plan->confirmed[confirmed].candidate, &s);
  return s;
}

Expected<RefitOutcome> RefitAndSave(const MeasuredRun& run, const PlannedScenario& planned,
                                    int confirmed, const QString& base_path,
                                    const QString& out_path) {
  Expected<Scenario> s = CandidateScenario(planned, confirmed);
  if (!s.ok()) return s.status();
  const std::string base_file = base_path.toStdString(), out_file = out_path.toStdString();
  Expected<HardwareProfile> base = LoadHardwareProfile(base_file);
  if (!base.ok()) return base.status();
  if (Status st = observe::CheckTracesFit(run.traces, *s); !st.ok()) return st;
  Scenario with_base = *s;
  if (Status st =
          AttachProfile(std::make_shared<const HardwareProfile>(*base), base_file, &with_base);
      !st.ok()) {
    return st;
  }
  Expected<observe::TraceRefit> r =
      observe::RefitFromTraces(run.traces, run.warmup, *base, base_file, &with_base);
  if (!r.ok()) return r.status();
  if (Status st = WriteFileDurably(out_file, HardwareProfileToJson(r->profile)); !st.ok()) {
    return st;
  }
  RefitOutcome out;
  out.refit = std::move(*r);
  Expected<double> before = StepWith(*s, *base, base_file);
  if (!before.ok()) return before.status();
  Expected<double> after = StepWith(*s, out.refit.profile, out_file);
  if (!after.ok()) return after.status();
  out.predicted_before_s = *before;
  out.predicted_after_s = *after;
  return out;
}

}  // namespace trainsim::gui
