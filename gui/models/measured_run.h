// A measured run beside the Timeline page's simulated step (docs/gui.md, docs/observe.md):
// traces read back (Kineto or Chakra), their steady step, the last step's kernels as lanes on
// the simulated step's time axis, the compare rows, and the profile refitted from the traces.
#pragma once

#include <QString>
#include <QStringList>
#include <vector>

#include "core/status.h"
#include "gui/models/planned.h"
#include "gui/models/timeline.h"
#include "observe/kineto.h"
#include "observe/trace_refit.h"

namespace trainsim::gui {

struct MeasuredRun {
  std::vector<observe::KinetoTrace> traces;
  observe::SteadySteps steady;
  int warmup = 1;
};

// Reads the traces (the format detected from each file's first bytes) and their steps after
// `warmup`; the errors are observe's (file, line and column or byte).
Expected<MeasuredRun> LoadMeasuredRun(const QStringList& paths, int warmup);

// The first trace's last step as two lanes labelled "measured · compute" (GEMM, attention and
// other kernels) and "measured · comm", on the compute and DP tracks' colours; times
// from the step's start. Lanes without kernels are left out.
std::vector<TimelineLane> MeasuredLanes(const MeasuredRun& run);

// `simulated` with the measured lanes above its own (the same time axis).
Timeline WithMeasured(const Timeline& simulated, const MeasuredRun& run);

struct CompareRow {
  QString name;
  double predicted_s = 0, measured_s = 0;
};
// step, compute, exposed communication, idle: the simulated step against the measured medians.
std::vector<CompareRow> CompareRows(const Timeline& simulated, const MeasuredRun& run);

// The scenario of plan candidate `confirmed` (the planned scenario with its configuration).
Expected<Scenario> CandidateScenario(const PlannedScenario& planned, int confirmed);

struct RefitOutcome {
  observe::TraceRefit refit;
  double predicted_before_s = 0, predicted_after_s = 0;  // the candidate's step
};
// The profile at `base_path` refitted from the run's traces against the candidate's scenario
// (observe::RefitFromTraces), written to `out_path` (atomically), and the candidate's step
// simulated before and after. Refused: a trace of other hardware or another job size than the
// candidate's.
Expected<RefitOutcome> RefitAndSave(const MeasuredRun& run, const PlannedScenario& planned,
                                    int confirmed, const QString& base_path,
                                    const QString& out_path);

}  // namespace trainsim::gui
