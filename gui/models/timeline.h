// A simulated training step as the timeline page shows it: plain data built
// from sim::StepResult. One lane per GPU and trace track (sim::TraceTrack)
// that has events, ordered by GPU then track; each lane's events sorted by
// start. Times are seconds from the start of the step, as the simulator
// gives them.
#pragma once

#include <QColor>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "core/error_bands.h"
#include "sim/engine.h"

namespace trainsim::gui {

struct TimelineEvent {
  QString name;  // the simulator's label ("fwd mb 3 chunk 0", "waiting for ...")
  double start_s = 0, end_s = 0;
};

struct TimelineLane {
  int gpu = 0;    // global rank; -1 for a measured lane (gui/models/measured_run.h)
  int track = 0;  // a sim::TraceTrack (its colour)
  QString label;  // the lane's name when not "GPU n · track" (LaneName)
  std::vector<TimelineEvent> events;
  double busy_s = 0;           // sum of the event durations
  double longest_event_s = 0;  // lets a view find the first visible event by start
};

struct Timeline {
  int confirmed = -1;      // index into Plan::confirmed
  QString candidate;       // planner::Describe of the candidate
  double step_s = 0;       // sim::StepResult::step_time_s
  int critical_stage = 0;  // the stage whose compute stream sets the step
  sim::Breakdown breakdown;
  std::vector<TimelineLane> lanes;
  double end_s = 0;          // the latest event end
  std::optional<Band> band;  // the candidate's error band (planner::ConfirmedCandidate::band)
};

// "step 25380.123 ms (80% band 22100-28900 ms *)": the step and, where there is
// one, its error band ("*": widened; docs/validation.md section 0.7).
QString StepSummary(const Timeline& t);

// The short name of a trace track ("compute", "send fwd", "DP", ...).
QString TrackName(int track);
// The colour of a trace track, shared by the lanes, the legend and the bars.
QColor TrackColor(int track);
// "GPU 3 · TP"
QString LaneName(const TimelineLane& lane);

// Groups the trace into lanes; keeps the step figures.
Timeline BuildTimeline(const sim::StepResult& step);

// One part of the step breakdown (the parts sum to the step time).
struct BreakdownPart {
  QString name;
  double seconds = 0;
  QColor color;  // the colour of the track the time shows on
};
// The breakdown's parts in a fixed order, zero parts left out.
std::vector<BreakdownPart> BreakdownParts(const sim::Breakdown& b);

}  // namespace trainsim::gui
