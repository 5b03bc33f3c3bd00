// The step timeline: the candidate selected in the plan view, simulated with
// the trace on (TimelineWorker on its own thread), as a Gantt chart of every
// GPU's streams with zoom, and the step's breakdown as one stacked bar.
// "Open measured…" reads a trace of the real run (Kineto or Chakra): its last
// step's kernels are drawn above the simulated lanes on the same time axis,
// and a table sets the measured steady step beside the simulated one; "Refit
// profile…" refits a hardware profile from the trace against the candidate
// (docs/observe.md section 3c) and "Use in scenario" attaches it.
// The page simulates only while it is visible: a selection made while it is
// hidden waits until it is shown. A newer selection supersedes an older one;
// Cancel discards the running simulation's result (the child process that
// runs it cannot be stopped, sim/isolate.h).
#pragma once

#include <QWidget>
#include <memory>
#include <optional>

#include "gui/app/gantt_view.h"
#include "gui/models/measured_run.h"
#include "gui/models/planned.h"
#include "gui/models/timeline_model.h"
#include "gui/models/timeline_worker.h"
#include "gui/models/worker_thread.h"

class QChartView;
class QHorizontalStackedBarSeries;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace trainsim::gui {

class TimelinePage : public QWidget {
  Q_OBJECT
  // True while a simulation runs (MainWindow::saveScreenshots waits for it).
  Q_PROPERTY(bool busy READ busy)

 public:
  explicit TimelinePage(QWidget* parent = nullptr);

  // For the tests.
  GanttView* gantt() const { return gantt_; }
  TimelineModel* model() const { return model_; }
  QHorizontalStackedBarSeries* breakdownSeries() const { return breakdown_; }
  QPushButton* cancelButton() const { return cancel_; }
  QPushButton* refitButton() const { return refit_; }
  QPushButton* useButton() const { return use_; }
  QTableWidget* compareTable() const { return compare_; }
  QString measuredText() const;
  QProgressBar* progress() const { return progress_; }
  QString statusText() const;
  bool busy() const { return busy_; }
  // The Plan::confirmed index on screen; -1 when none.
  int shownCandidate() const;

 public slots:
  // A new plan: clears the page unless it already shows one of its candidates.
  void setPlanned(std::shared_ptr<const trainsim::gui::PlannedScenario> planned);
  // Shows planned->plan->confirmed[confirmed] (-1: nothing).
  void showCandidate(std::shared_ptr<const trainsim::gui::PlannedScenario> planned, int confirmed);
  void cancel();
  // Reads the traces of a measured run off the GUI thread; measuredRead(ok) when done (the
  // reason of a failure is in measuredText()).
  void openMeasured(const QStringList& paths);
  // Refits the profile at `base` from the measured run against the shown candidate and writes it
  // to `out`, off the GUI thread; refitDone(ok) when done (the outcome in measuredText()).
  void refitProfile(const QString& base, const QString& out);

 signals:
  void timelineShown(int confirmed);
  // "Use in scenario": the refitted profile's file, for the window to attach.
  void useInScenario(QString path);
  void measuredRead(bool ok);
  void refitDone(bool ok);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  QWidget* makeToolbar();
  QWidget* makeMeasuredBar();
  void showTimeline();  // the simulated step, with the measured lanes and table when they fit
  QChartView* makeBreakdownChart();
  void start();
  void setBusy(bool on);
  void onFinished(quint64 id, std::shared_ptr<const trainsim::gui::Timeline> timeline);
  void onFailed(quint64 id, const QString& message);
  void rebuildBreakdown();
  QString describe(int confirmed) const;

  WorkerThread<TimelineWorker> worker_;  // on its own thread
  std::shared_ptr<const PlannedScenario> planned_;
  int wanted_ = -1;       // the candidate to show
  bool pending_ = false;  // wanted_ waits for the page to be shown
  quint64 request_ = 0;   // the worker request whose signals count
  bool busy_ = false;

  TimelineModel* model_;
  GanttView* gantt_;
  QChartView* breakdown_view_;
  QHorizontalStackedBarSeries* breakdown_;
  QLabel *status_, *span_;
  QProgressBar* progress_;
  QPushButton* cancel_;

  std::shared_ptr<const Timeline> simulated_;  // the candidate's, as the worker gave it
  std::optional<MeasuredRun> measured_;
  QString refitted_;        // the last refitted profile's file
  bool measuring_ = false;  // a read or a refit runs (the buttons wait)
  QLabel* measured_status_;
  QPushButton *open_, *refit_, *use_;
  QTableWidget* compare_;
};

}  // namespace trainsim::gui
