#include "gui/app/main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QProgressBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

#include "gui/app/confirm_discard.h"
#include "gui/models/app_options.h"
#include "gui/models/attach_profile.h"
#include "gui/models/plan_export.h"
#include "gui/models/png_file.h"

namespace trainsim::gui {

MainWindow::MainWindow(std::shared_ptr<const Catalog> catalog, QWidget* parent)
    : QMainWindow(parent), document_(new ScenarioDocument(this)), worker_(new PlanWorker) {
  setWindowTitle(QStringLiteral("trainsim"));
  QString catalog_error;
  if (catalog) {
    catalog_ = std::move(catalog);
  } else if (Expected<std::shared_ptr<const Catalog>> builtin = LoadCatalog(QString());
             builtin.ok()) {
    catalog_ = *builtin;
  } else {
    catalog_error = QString::fromStdString(builtin.status().message());
  }
  makeToolbar();
  makePages();
  connectPages();
  connectWorker();
  if (!catalog_)
    showStatus(QStringLiteral("cannot load the instance catalog: ") + catalog_error);
  else
    showStatus(QStringLiteral("Open a scenario to plan."));
}

// Open, Plan, Cancel, Save plan and the plan's progress; the status line.
void MainWindow::makeToolbar() {
  QToolBar* tools = addToolBar(QStringLiteral("Plan"));
  tools->setObjectName(QStringLiteral("tools"));
  open_action_ = tools->addAction(QStringLiteral("Open scenario\u2026"));
  open_action_->setShortcut(QKeySequence::Open);
  plan_action_ = tools->addAction(QStringLiteral("Plan"));
  plan_action_->setEnabled(false);
  cancel_action_ = tools->addAction(QStringLiteral("Cancel"));
  cancel_action_->setEnabled(false);
  save_plan_action_ = tools->addAction(QStringLiteral("Save plan\u2026"));
  save_plan_action_->setEnabled(false);
  progress_ = new QProgressBar;
  progress_->setMaximumWidth(240);
  progress_->setTextVisible(true);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  tools->addSeparator();
  tools->addWidget(progress_);
  status_ = new QLabel;
  statusBar()->addWidget(status_, 1);
  connect(open_action_, &QAction::triggered, this, &MainWindow::openDialog);
  connect(plan_action_, &QAction::triggered, this, &MainWindow::startPlan);
  connect(cancel_action_, &QAction::triggered, this, &MainWindow::cancelPlan);
  connect(save_plan_action_, &QAction::triggered, this, &MainWindow::savePlanDialog);
}

// The pages, in the order of the work: edit, plan, look closer, launch; and calibration,
// which needs no plan.
void MainWindow::makePages() {
  tabs_ = new QTabWidget;
  scenario_page_ = new ScenarioPage(document_, catalog_);
  plan_page_ = new PlanPage;
  timeline_page_ = new TimelinePage;
  scaling_page_ = new ScalingPage;
  launch_page_ = new LaunchPage;
  calibration_page_ = new CalibrationPage(catalog_);
  tabs_->addTab(scenario_page_, QStringLiteral("Scenario"));
  tabs_->addTab(plan_page_, QStringLiteral("Plan"));
  tabs_->addTab(timeline_page_, QStringLiteral("Timeline"));
  tabs_->addTab(scaling_page_, QStringLiteral("Scaling"));
  tabs_->addTab(launch_page_, QStringLiteral("Launch"));
  tabs_->addTab(calibration_page_, QStringLiteral("Calibration"));
  setCentralWidget(tabs_);
}

// The document, the plan and the selection reach the pages; the pages' profiles the scenario.
void MainWindow::connectPages() {
  connect(document_, &ScenarioDocument::modifiedChanged, this, &MainWindow::updateTitle);
  connect(document_, &ScenarioDocument::textChanged, this, [this] {
    plan_action_->setEnabled(catalog_ && !planning_ && !document_->text().isEmpty());
  });
  // The plan page last: showing a plan selects its recommendation, and the
  // other pages must have the new plan by then.
  connect(this, &MainWindow::plannedChanged, timeline_page_, &TimelinePage::setPlanned);
  connect(this, &MainWindow::plannedChanged, scaling_page_, &ScalingPage::setPlanned);
  connect(this, &MainWindow::plannedChanged, launch_page_, &LaunchPage::setPlanned);
  connect(this, &MainWindow::plannedChanged, plan_page_, &PlanPage::setPlanned);
  connect(calibration_page_, &CalibrationPage::useInScenario, this, &MainWindow::useProfile);
  connect(timeline_page_, &TimelinePage::useInScenario, this, &MainWindow::useProfile);
  connect(plan_page_, &PlanPage::candidateSelected, this, [this](int confirmed) {
    timeline_page_->showCandidate(planned_, confirmed);
    scaling_page_->showCandidate(planned_, confirmed);
    launch_page_->setCandidate(confirmed);
  });
}

// The plan worker on its thread: requests out, progress and results back.
void MainWindow::connectWorker() {
  connect(this, &MainWindow::planRequested, worker_.get(), &PlanWorker::run);
  connect(worker_.get(), &PlanWorker::estimated, this, [this](qint64 n) {
    showStatus(QStringLiteral("%1 candidates estimated; simulating the best\u2026").arg(n));
  });
  connect(worker_.get(), &PlanWorker::progress, this, [this](int done, int total) {
    progress_->setRange(0, total);
    progress_->setValue(done);
  });
  connect(worker_.get(), &PlanWorker::finished, this, &MainWindow::onFinished);
  connect(worker_.get(), &PlanWorker::failed, this, &MainWindow::onFailed);
}

QString MainWindow::statusText() const { return status_->text(); }

void MainWindow::closeEvent(QCloseEvent* event) {
  if (ConfirmDiscard(this, *document_)) {
    event->accept();
  } else {
    event->ignore();
  }
}

void MainWindow::showStatus(const QString& text) { status_->setText(text); }

void MainWindow::openDialog() {
  if (!ConfirmDiscard(this, *document_)) return;
  const QString path = QFileDialog::getOpenFileName(
      this, QStringLiteral("Open scenario"), QString(), QStringLiteral("Scenarios (*.json)"));
  if (!path.isEmpty()) openScenario(path);
}

bool MainWindow::openScenario(const QString& path) {
  if (!document_->load(path)) {
    showStatus(document_->error().message);
    return false;
  }
  tabs_->setCurrentWidget(scenario_page_);
  setPlanned(nullptr);
  plan_action_->setEnabled(catalog_ && !planning_);
  showStatus(QStringLiteral("%1 opened; press Plan.").arg(path));
  return true;
}

void MainWindow::savePlanDialog() {
  if (!planned_) return;
  const QString suggested =
      QFileInfo(planned_->path).completeBaseName() + QStringLiteral(".plan.json");
  const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Save plan"), suggested,
                                                    QStringLiteral("Plans (*.plan.json *.json)"));
  if (!path.isEmpty()) savePlan(path);
}

bool MainWindow::savePlan(const QString& path) {
  const Status st = planned_
                        ? SavePlanJson(*planned_, path)
                        : Status::InvalidInput(path.toStdString() + ": there is no plan to save");
  showStatus(st.ok() ? QStringLiteral("plan written to %1").arg(path)
                     : QString::fromStdString(st.message()));
  return st.ok();
}

bool MainWindow::useProfile(const QString& profile) {
  if (document_->text().isEmpty()) {
    showStatus(QStringLiteral("Open or create a scenario first, then use the profile in it."));
    return false;
  }
  Expected<QString> text = AttachProfileToScenario(document_->text(), document_->path(), profile);
  if (!text.ok()) {
    showStatus(QString::fromStdString(text.status().message()));
    return false;
  }
  document_->setText(*text);
  tabs_->setCurrentWidget(scenario_page_);
  showStatus(
      QStringLiteral("The scenario's cluster.profile is now %1; Plan uses it (Save keeps it).")
          .arg(profile));
  return true;
}

bool MainWindow::saveScreenshots(const QString& dir, QString* error) {
  if (!QDir().mkpath(dir)) {
    *error = dir + QStringLiteral(": cannot create the folder");
    return false;
  }
  for (int i = 0; i < tabs_->count(); ++i) {
    tabs_->setCurrentIndex(i);
    QWidget* page = tabs_->widget(i);
    QElapsedTimer waited;
    waited.start();
    do {  // at least one pass, so that the page lays out
      QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
      QThread::msleep(20);
    } while (page->property("busy").toBool() && waited.elapsed() < 120000);
    if (page->property("busy").toBool()) {
      *error = tabs_->tabText(i) + QStringLiteral(": still busy after 120 s");
      return false;
    }
    const QString path =
        dir + QLatin1Char('/') + tabs_->tabText(i).toLower() + QStringLiteral(".png");
    if (Status st = SavePng(grab().toImage(), path); !st.ok()) {
      *error = QString::fromStdString(st.message());
      return false;
    }
  }
  return true;
}

void MainWindow::setPlanned(std::shared_ptr<const PlannedScenario> planned) {
  planned_ = std::move(planned);
  save_plan_action_->setEnabled(planned_ != nullptr);
  emit plannedChanged(planned_);
}

void MainWindow::updateTitle() {
  const QString name = document_->path().isEmpty() ? QStringLiteral("untitled")
                                                   : QFileInfo(document_->path()).fileName();
  setWindowTitle(QStringLiteral("trainsim — %1%2")
                     .arg(name, document_->modified() ? QStringLiteral("*") : QString()));
}

void MainWindow::startPlan() {
  if (planning_ || !catalog_ || document_->text().isEmpty()) return;
  if (!document_->parse(*catalog_)) {  // the scenario page shows where
    tabs_->setCurrentWidget(scenario_page_);
    onFailed(document_->error().message);
    return;
  }
  tabs_->setCurrentWidget(plan_page_);
  worker_->clearCancel();  // a Cancel that came after the last plan had finished
  setPlanning(true);
  progress_->setRange(0, 0);  // busy until the first simulation
  showStatus(QStringLiteral("Planning %1…").arg(QFileInfo(document_->path()).fileName()));
  planning_scenario_ = *document_->scenario();
  emit planRequested(*document_->scenario(), catalog_);
}

void MainWindow::cancelPlan() {
  if (!planning_) return;
  worker_->cancel();
  showStatus(QStringLiteral("Cancelling…"));
}

void MainWindow::setPlanning(bool on) {
  planning_ = on;
  plan_action_->setEnabled(!on && catalog_ && !document_->text().isEmpty());
  cancel_action_->setEnabled(on);
  open_action_->setEnabled(!on);
}

void MainWindow::onFinished(std::shared_ptr<const planner::Plan> plan) {
  setPlanning(false);
  progress_->setRange(0, 1);
  progress_->setValue(1);
  auto planned = std::make_shared<PlannedScenario>();
  planned->path = document_->path();
  planned->scenario = std::move(*planning_scenario_);
  planning_scenario_.reset();
  planned->catalog = catalog_;
  planned->plan = std::move(plan);
  setPlanned(std::move(planned));
  showStatus(QStringLiteral("%1 candidates confirmed; %2 on the Pareto front.")
                 .arg(plan_page_->candidates()->rowCount())
                 .arg(plan_page_->pareto()->pointCount(ParetoModel::kFront)));
  emit planShown();
}

void MainWindow::onFailed(const QString& message) {
  setPlanning(false);
  planning_scenario_.reset();
  progress_->setRange(0, 1);
  progress_->setValue(0);
  showStatus(message);
  emit planFailed(message);
}

}  // namespace trainsim::gui
