#include "gui/app/main_window.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QProgressBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

namespace trainsim::gui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), document_(new ScenarioDocument(this)), worker_(new PlanWorker) {
  setWindowTitle(QStringLiteral("trainsim"));
  Expected<Catalog> catalog = Catalog::LoadBuiltin(Catalog::DefaultDir());
  if (catalog.ok()) catalog_ = std::make_shared<const Catalog>(std::move(*catalog));

  // Toolbar.
  QToolBar* tools = addToolBar(QStringLiteral("Plan"));
  tools->setObjectName(QStringLiteral("tools"));
  open_action_ = tools->addAction(QStringLiteral("Open scenario…"));
  open_action_->setShortcut(QKeySequence::Open);
  plan_action_ = tools->addAction(QStringLiteral("Plan"));
  plan_action_->setEnabled(false);
  cancel_action_ = tools->addAction(QStringLiteral("Cancel"));
  cancel_action_->setEnabled(false);
  progress_ = new QProgressBar;
  progress_->setMaximumWidth(240);
  progress_->setTextVisible(true);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  tools->addSeparator();
  tools->addWidget(progress_);
  status_ = new QLabel;
  statusBar()->addWidget(status_, 1);

  // Pages.
  tabs_ = new QTabWidget;
  plan_page_ = new PlanPage;
  tabs_->addTab(plan_page_, QStringLiteral("Plan"));
  setCentralWidget(tabs_);
  connect(this, &MainWindow::plannedChanged, plan_page_, &PlanPage::setPlanned);
  launch_page_ = new LaunchPage;
  tabs_->addTab(launch_page_, QStringLiteral("Launch"));
  connect(this, &MainWindow::plannedChanged, launch_page_, &LaunchPage::setPlanned);
  connect(plan_page_, &PlanPage::candidateSelected, launch_page_, &LaunchPage::setCandidate);

  // The worker on its thread.
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  connect(this, &MainWindow::planRequested, worker_, &PlanWorker::run);
  connect(worker_, &PlanWorker::estimated, this, [this](qint64 n) {
    showStatus(QStringLiteral("%1 candidates estimated; simulating the best…").arg(n));
  });
  connect(worker_, &PlanWorker::progress, this, [this](int done, int total) {
    progress_->setRange(0, total);
    progress_->setValue(done);
  });
  connect(worker_, &PlanWorker::finished, this, &MainWindow::onFinished);
  connect(worker_, &PlanWorker::failed, this, &MainWindow::onFailed);
  thread_.start();

  connect(open_action_, &QAction::triggered, this, &MainWindow::openDialog);
  connect(plan_action_, &QAction::triggered, this, &MainWindow::startPlan);
  connect(cancel_action_, &QAction::triggered, this, &MainWindow::cancelPlan);

  if (!catalog_)
    showStatus(QStringLiteral("cannot load the instance catalog: ") +
               QString::fromStdString(catalog.status().message()));
  else
    showStatus(QStringLiteral("Open a scenario to plan."));
}

MainWindow::~MainWindow() {
  worker_->cancel();
  thread_.quit();
  thread_.wait();
}

QString MainWindow::statusText() const { return status_->text(); }

void MainWindow::showStatus(const QString& text) { status_->setText(text); }

void MainWindow::openDialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, QStringLiteral("Open scenario"), QString(), QStringLiteral("Scenarios (*.json)"));
  if (!path.isEmpty()) openScenario(path);
}

bool MainWindow::openScenario(const QString& path) {
  if (!document_->load(path)) {
    showStatus(document_->error().message);
    return false;
  }
  setWindowTitle(QStringLiteral("trainsim — %1").arg(QFileInfo(path).fileName()));
  setPlanned(nullptr);
  plan_action_->setEnabled(catalog_ && !planning_);
  showStatus(QStringLiteral("%1 opened; press Plan.").arg(path));
  return true;
}

void MainWindow::setPlanned(std::shared_ptr<const PlannedScenario> planned) {
  planned_ = std::move(planned);
  emit plannedChanged(planned_);
}

void MainWindow::startPlan() {
  if (planning_ || !catalog_ || document_->path().isEmpty()) return;
  if (!document_->parse(*catalog_)) {
    onFailed(document_->error().message);
    return;
  }
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
  plan_action_->setEnabled(!on && catalog_ && !document_->path().isEmpty());
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
  planned->document =
      nlohmann::json::parse(document_->text().toStdString(), nullptr, /*allow_exceptions=*/false);
  if (planned->document.is_discarded()) planned->document = nullptr;
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
