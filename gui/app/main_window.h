// The main window: a toolbar (Open scenario, Plan, Cancel, Save plan, progress) over
// one tab per page. The window owns what the pages share -- the catalog, the
// scenario document, the plan and the selected candidate -- and runs the
// planner in a PlanWorker on its own thread; the pages show and connect.
#pragma once

#include <QMainWindow>
#include <memory>
#include <optional>

#include "gui/app/calibration_page.h"
#include "gui/app/launch_page.h"
#include "gui/app/plan_page.h"
#include "gui/app/scaling_page.h"
#include "gui/app/scenario_page.h"
#include "gui/app/timeline_page.h"
#include "gui/models/plan_worker.h"
#include "gui/models/planned.h"
#include "gui/models/scenario_document.h"
#include "gui/models/worker_thread.h"

class QAction;
class QLabel;
class QProgressBar;
class QTabWidget;

namespace trainsim::gui {

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // `catalog`: what scenarios are parsed and planned against, and what the
  // pages pick instances from (trainsim-gui --catalog adds a file); null: the
  // built-in one.
  explicit MainWindow(std::shared_ptr<const Catalog> catalog = nullptr, QWidget* parent = nullptr);

  // A hardware profile attached to every scenario (trainsim-gui --profile).
  void setProfile(const QString& path) { document_->setProfile(path); }
  bool openScenario(const QString& path);  // false: a message is shown in the status line
  // Writes the plan JSON (as `trainsim plan --out`); false: a message is shown.
  bool savePlan(const QString& path);
  // Sets the scenario's cluster.profile to `profile` (the Calibration page's
  // "Use in scenario"); false: a message is shown.
  bool useProfile(const QString& profile);
  // Shows every page in turn, waits while a page says it is busy (a "busy"
  // property), and saves DIR/<page>.png. False and *error on a failure.
  bool saveScreenshots(const QString& dir, QString* error);

  // For the tests.
  QAction* planAction() const { return plan_action_; }
  QAction* cancelAction() const { return cancel_action_; }
  QAction* savePlanAction() const { return save_plan_action_; }
  QTabWidget* tabs() const { return tabs_; }
  PlanPage* planPage() const { return plan_page_; }
  CalibrationPage* calibrationPage() const { return calibration_page_; }
  ScenarioPage* scenarioPage() const { return scenario_page_; }
  TimelinePage* timelinePage() const { return timeline_page_; }
  ScalingPage* scalingPage() const { return scaling_page_; }
  LaunchPage* launchPage() const { return launch_page_; }
  ScenarioDocument* document() const { return document_; }
  const std::shared_ptr<const PlannedScenario>& planned() const { return planned_; }
  QString statusText() const;
  bool planning() const { return planning_; }

 public slots:
  void startPlan();
  void cancelPlan();

 signals:
  void planRequested(trainsim::PlanningScenario scenario,
                     std::shared_ptr<const trainsim::Catalog> catalog);
  // A new plan (null: the scenario changed and there is none).
  void plannedChanged(std::shared_ptr<const trainsim::gui::PlannedScenario> planned);
  void planShown();
  void planFailed(QString message);

 protected:
  // A modified scenario asks before the window closes.
  void closeEvent(QCloseEvent* event) override;

 private:
  void makeToolbar();
  void makePages();
  void connectPages();
  void connectWorker();
  void openDialog();
  void savePlanDialog();
  void onFinished(std::shared_ptr<const trainsim::planner::Plan> plan);
  void onFailed(const QString& message);
  void setPlanned(std::shared_ptr<const PlannedScenario> planned);
  void setPlanning(bool on);
  void showStatus(const QString& text);
  void updateTitle();  // the file name, and * while modified

  std::shared_ptr<const Catalog> catalog_;
  ScenarioDocument* document_;
  std::shared_ptr<const PlannedScenario> planned_;
  std::optional<PlanningScenario> planning_scenario_;  // what the running plan was asked for
  WorkerThread<PlanWorker> worker_;                    // on its own thread
  bool planning_ = false;

  QAction *open_action_, *plan_action_, *cancel_action_, *save_plan_action_;
  QProgressBar* progress_;
  QLabel* status_;
  QTabWidget* tabs_;
  PlanPage* plan_page_;
  CalibrationPage* calibration_page_;
  ScenarioPage* scenario_page_;
  TimelinePage* timeline_page_;
  ScalingPage* scaling_page_;
  LaunchPage* launch_page_;
};

}  // namespace trainsim::gui
