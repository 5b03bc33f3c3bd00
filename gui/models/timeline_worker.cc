#include "gui/models/timeline_worker.h"

#include <QMetaObject>

#include "planner/search/space.h"
#include "sim/simulate.h"

namespace trainsim::gui {

Expected<Timeline> SimulateTimeline(const PlannedScenario& planned, int confirmed,
                                    const std::atomic<bool>* cancel,
                                    const sim::ProgressFn& progress) {
  if (!planned.plan || confirmed < 0 ||
      confirmed >= static_cast<int>(planned.plan->confirmed.size())) {
    return Status::InvalidInput("no such candidate: " + std::to_string(confirmed));
  }
  const planner::Plan& plan = *planned.plan;
  const planner::Candidate& c = plan.confirmed[confirmed].candidate;
  Scenario s = planned.scenario.scenario;
  planner::ApplyCandidate(plan.space, c, &s);
  sim::SimulateOptions options;  // as planner::MakePlan confirms, PlanOptions::params default
  options.trace = true;
  options.cancel = cancel;
  options.progress = progress;
  Expected<sim::SimulationResult> r = sim::Simulate(s, options);
  if (!r.ok()) return r.status();
  const std::string name = planner::Describe(plan.space, c);
  if (!r->simulated) return Status::InvalidInput(name + ": does not fit in GPU memory");
  Timeline t = BuildTimeline(r->step);
  t.confirmed = confirmed;
  t.candidate = QString::fromStdString(name);
  t.band = plan.confirmed[confirmed].band;
  return t;
}

TimelineWorker::TimelineWorker(QObject* parent) : QObject(parent) {
  RegisterMetaTypes();
  qRegisterMetaType<std::shared_ptr<const trainsim::gui::Timeline>>();
}

quint64 TimelineWorker::request(std::shared_ptr<const PlannedScenario> planned, int confirmed) {
  const quint64 id = ++latest_;
  stop_ = true;  // the running one is superseded
  QMetaObject::invokeMethod(
      this, [this, id, planned = std::move(planned), confirmed] { run(id, planned, confirmed); },
      Qt::QueuedConnection);
  return id;
}

void TimelineWorker::cancel() {
  cancelled_ = latest_.load();
  stop_ = true;
}

bool TimelineWorker::cancelledOrStale(quint64 id) {
  if (id <= cancelled_) {
    emit cancelled(id);
    return true;
  }
  return id != latest_;  // superseded: a newer request follows
}

void TimelineWorker::run(quint64 id, const std::shared_ptr<const PlannedScenario>& planned,
                         int confirmed) {
  if (cancelledOrStale(id)) return;
  stop_ = false;
  if (cancelledOrStale(id)) return;  // a request or cancel came before the reset
  emit started(id, confirmed);
  auto report = [this, id](const sim::Progress& p) {
    emit progress(id, p.done, p.total, QString::fromStdString(p.what));
  };
  Expected<Timeline> t = planned ? SimulateTimeline(*planned, confirmed, &stop_, report)
                                 : Expected<Timeline>(Status::InvalidInput("no plan"));
  if (cancelledOrStale(id)) return;
  if (!t.ok()) {
    emit failed(id, QString::fromStdString(t.status().message()));
    return;
  }
  emit finished(id, std::make_shared<const Timeline>(std::move(*t)));
}

}  // namespace trainsim::gui
