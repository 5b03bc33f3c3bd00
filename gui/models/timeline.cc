#include "gui/models/timeline.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/strategy.h"

namespace trainsim::gui {

QString StepSummary(const Timeline& t) {
  QString out = QStringLiteral("step %1 ms").arg(t.step_s * 1e3, 0, 'f', 3);
  if (Judged(t.band)) {
    out += QStringLiteral(" (%1% band %2-%3 ms%4)")
               .arg(100 * t.band->coverage, 0, 'f', 0)
               .arg(t.step_s / t.band->hi * 1e3, 0, 'f', 1)
               .arg(t.step_s / t.band->lo * 1e3, 0, 'f', 1)
               .arg(t.band->note.empty() ? QString() : QStringLiteral(" *"));
  }
  return out;
}

QString TrackName(int track) {
  static const char* const kNames[sim::kTrackFirstStrategy] = {
      "compute",       "send fwd",      "send bwd",  "DP",           "TP",
      "wait / bubble", "weight gather", "host copy", "EP all-to-all"};
  if (track < 0 || track >= sim::kTrackCount) return QStringLiteral("track %1").arg(track);
  if (track < sim::kTrackFirstStrategy) return QString::fromLatin1(kNames[track]);
  const Strategy& st = *kStrategies[track - sim::kTrackFirstStrategy];  // "CP K/V ring"
  return QString::fromStdString(UpperName(st) + " " + std::string(st.exchange));
}

QColor TrackColor(int track) {
  // Tableau 10, in track order (again from the first past ten); waiting is grey so that bubbles
  // read as gaps.
  static const QColor kColors[] = {
      QColor(31, 119, 180),  QColor(44, 160, 44),   QColor(152, 223, 138), QColor(255, 127, 14),
      QColor(214, 39, 40),   QColor(170, 170, 170), QColor(148, 103, 189), QColor(140, 86, 75),
      QColor(227, 119, 194), QColor(188, 189, 34)};
  if (track < 0 || track >= sim::kTrackCount) return QColor(Qt::black);
  return kColors[track % std::size(kColors)];
}

QString LaneName(const TimelineLane& lane) {
  if (!lane.label.isEmpty()) return lane.label;
  return QStringLiteral("GPU %1 \u00b7 %2").arg(lane.gpu).arg(TrackName(lane.track));
}

Timeline BuildTimeline(const sim::StepResult& step) {
  Timeline t;
  t.step_s = step.step_time_s;
  t.critical_stage = step.critical_stage;
  t.breakdown = step.breakdown;
  std::map<std::pair<int, int>, TimelineLane> lanes;  // (gpu, track): ordered
  for (const sim::TraceEvent& e : step.trace) {
    TimelineLane& lane = lanes[{e.gpu, e.stream}];
    lane.gpu = e.gpu;
    lane.track = e.stream;
    lane.events.push_back({QString::fromStdString(e.name), e.start_s, e.end_s});
    lane.busy_s += e.end_s - e.start_s;
    lane.longest_event_s = std::max(lane.longest_event_s, e.end_s - e.start_s);
    t.end_s = std::max(t.end_s, e.end_s);
  }
  for (auto& [key, lane] : lanes) {
    std::stable_sort(
        lane.events.begin(), lane.events.end(),
        [](const TimelineEvent& a, const TimelineEvent& b) { return a.start_s < b.start_s; });
    t.lanes.push_back(std::move(lane));
  }
  return t;
}

std::vector<BreakdownPart> BreakdownParts(const sim::Breakdown& b) {
  // Coloured like the tracks the time shows on; the kernels in shades of blue.
  std::vector<BreakdownPart> all = {
      {QStringLiteral("compute"), b.compute_s, TrackColor(sim::kTrackCompute)},
      {QStringLiteral("recompute"), b.recompute_s, QColor(107, 174, 214)},
      {QStringLiteral("optimizer"), b.optimizer_s, QColor(23, 190, 207)},
      {QStringLiteral("TP"), b.tp_comm_s, TrackColor(sim::kTrackTp)},
      {QStringLiteral("EP all-to-all"), b.ep_comm_s, TrackColor(sim::kTrackEp)}};
  for (int i = 0; i < kStrategyCount; ++i) {  // "CP exposed"
    all.push_back({QString::fromStdString(UpperName(*kStrategies[i]) + " exposed"),
                   b.strategy_comm_s[i], TrackColor(sim::kTrackFirstStrategy + i)});
  }
  all.insert(
      all.end(),
      {
          {QStringLiteral("DP exposed"), b.dp_comm_exposed_s, TrackColor(sim::kTrackDp)},
          {QStringLiteral("weight gather"), b.weight_gather_exposed_s,
           TrackColor(sim::kTrackWeightGather)},
          {QStringLiteral("offload"), b.offload_exposed_s, TrackColor(sim::kTrackHostCopy)},
          {QStringLiteral("PP exposed"), b.pp_comm_exposed_s, TrackColor(sim::kTrackSendForward)},
          {QStringLiteral("bubble"), b.pipeline_bubble_s, TrackColor(sim::kTrackWait)},
          {QStringLiteral("data wait"), b.data_wait_s, QColor(188, 189, 34)},
      });
  std::vector<BreakdownPart> out;
  for (const BreakdownPart& p : all) {
    if (p.seconds > 0) out.push_back(p);
  }
  return out;
}

}  // namespace trainsim::gui
