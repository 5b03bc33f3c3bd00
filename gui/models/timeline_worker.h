// Simulates one confirmed candidate of a plan with the trace on, off the GUI
// thread, for the timeline page. The owner moves the worker to a QThread;
// request() and cancel() may be called from any thread.
//
// A cancelled or superseded run is stopped (the simulation's child process
// is killed, sim::SimulateOptions::cancel) and its result never reaches the
// signals. Requests that were superseded before they started are skipped
// without simulating.
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <memory>

#include "gui/models/metatypes.h"
#include "gui/models/timeline.h"
#include "sim/isolate.h"

namespace trainsim::gui {

class TimelineWorker : public QObject {
  Q_OBJECT

 public:
  explicit TimelineWorker(QObject* parent = nullptr);

  // Queues the simulation of planned->plan->confirmed[confirmed]; returns the
  // id the signals carry. It supersedes every earlier request.
  quint64 request(std::shared_ptr<const PlannedScenario> planned, int confirmed);
  // The latest request ends with cancelled(id) instead of its result.
  void cancel();

 signals:
  void started(quint64 request, int confirmed);
  // The simulation's progress (sim::Progress: the platform, each stage's
  // collectives, the step), from the worker thread.
  void progress(quint64 request, int done, int total, QString what);
  void finished(quint64 request, std::shared_ptr<const trainsim::gui::Timeline> timeline);
  void failed(quint64 request, QString message);
  void cancelled(quint64 request);

 private:
  void run(quint64 id, const std::shared_ptr<const PlannedScenario>& planned, int confirmed);
  bool cancelledOrStale(quint64 id);  // emits cancelled(id) when cancelled

  std::atomic<quint64> latest_{0};     // the newest request
  std::atomic<quint64> cancelled_{0};  // requests up to this one are cancelled
  // Stops the running simulation; raised after latest_ or cancelled_ moved,
  // so a run that sees it is stale or cancelled.
  std::atomic<bool> stop_{false};
};

// Simulates the candidate as the plan did (planner::MakePlan's Confirm: the
// reduced mode, default model parameters) with the trace recorded, so the
// step equals the plan's simulated step. A raised `cancel` stops it
// (Status::Cancelled).
Expected<Timeline> SimulateTimeline(const PlannedScenario& planned, int confirmed,
                                    const std::atomic<bool>* cancel = nullptr,
                                    const sim::ProgressFn& progress = {});

}  // namespace trainsim::gui

Q_DECLARE_METATYPE(std::shared_ptr<const trainsim::gui::Timeline>)
