// Runs launch::RunLocal (the plan's structure trained for real on this
// machine under mpirun, docs/local-run.md) off the GUI thread. The owner
// moves the worker to a QThread and calls run() through a queued connection;
// each measured step comes back as a signal. cancel() may be called from any
// thread: the trainer stops after its step, as on Ctrl-C in the CLI, and
// finished() reports the run as interrupted.
#pragma once

#include <QObject>
#include <QString>
#include <QVariant>
#include <atomic>
#include <memory>

#include "gui/models/metatypes.h"
#include "launch/local_run.h"
#include "launch/plan_file.h"

namespace trainsim::gui {

class LocalRunWorker : public QObject {
  Q_OBJECT

 public:
  explicit LocalRunWorker(QObject* parent = nullptr);

  // Thread-safe. While a run goes on: it stops after the current step. Before
  // one starts: the next run() fails with "local run cancelled".
  void cancel() { stop_ = true; }
  // Forgets a cancel that no run has consumed (called before queueing run()).
  void clearCancel() { stop_ = false; }

 public slots:
  // options.stop is the worker's own flag; the catalog must outlive the run.
  void run(std::shared_ptr<const trainsim::launch::LaunchPlan> plan,
           trainsim::launch::LocalOptions options,
           std::shared_ptr<const trainsim::Catalog> catalog);

 signals:
  // Before the trainer starts: the predicted step in seconds (invalid QVariant:
  // no profile, no prediction), the run's steps and the mpirun command line.
  void starting(QVariant predicted_step_s, int steps, QString command);
  void step(int index, double seconds, double loss);
  // The run ended, completed or not (report->run: exit code, interrupted).
  void finished(std::shared_ptr<const trainsim::launch::LocalReport> report);
  // The run could not start: bad options, a profile that does not fit, no mpirun.
  void failed(QString message);

 private:
  std::atomic<bool> stop_{false};
};

}  // namespace trainsim::gui

Q_DECLARE_METATYPE(std::shared_ptr<const trainsim::launch::LaunchPlan>)
Q_DECLARE_METATYPE(trainsim::launch::LocalOptions)
Q_DECLARE_METATYPE(std::shared_ptr<const trainsim::launch::LocalReport>)
