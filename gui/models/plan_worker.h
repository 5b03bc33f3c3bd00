// Runs planner::MakePlan off the GUI thread. The owner moves the worker to a
// QThread and calls run() through a queued connection; progress and the
// result come back as signals. cancel() may be called from any thread.
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <memory>

#include "gui/models/metatypes.h"

namespace trainsim::gui {

class PlanWorker : public QObject {
  Q_OBJECT

 public:
  explicit PlanWorker(QObject* parent = nullptr);

  // Simulations run at once (PlanOptions::jobs); default: the hardware threads.
  void setJobs(int jobs) { jobs_ = jobs; }
  // Thread-safe: the running plan (or the next one, when none runs) stops
  // and failed("<scenario>: planning cancelled") is emitted.
  void cancel() { cancel_ = true; }
  // Forgets a cancel that no plan has consumed (called before queueing run()).
  void clearCancel() { cancel_ = false; }

 public slots:
  // The plan keeps `catalog` alive: its search space points into it.
  void run(trainsim::PlanningScenario scenario, std::shared_ptr<const trainsim::Catalog> catalog);

 signals:
  void estimated(qint64 candidates);
  void progress(int done, int total);
  void finished(std::shared_ptr<const trainsim::planner::Plan> plan);
  void failed(QString message);

 private:
  std::atomic<bool> cancel_{false};
  int jobs_ = 0;
};

}  // namespace trainsim::gui
