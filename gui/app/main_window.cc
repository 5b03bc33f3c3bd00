#include "gui/app/main_window.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QProgressBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTextEdit>
#include <QToolBar>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>

namespace trainsim::gui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      document_(new ScenarioDocument(this)),
      candidates_(new CandidateTableModel(this)),
      pareto_(new ParetoModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      worker_(new PlanWorker) {
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

  // Candidate table, sortable by the raw values.
  proxy_->setSourceModel(candidates_);
  proxy_->setSortRole(CandidateTableModel::kSortRole);
  table_ = new QTableView;
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(CandidateTableModel::kRank, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

  // Pareto chart: every priced option, and the front over it.
  auto* chart = new QChart;
  chart->setTitle(QStringLiteral("Expected time against expected cost"));
  options_series_ = new QScatterSeries;
  options_series_->setName(QStringLiteral("priced options"));
  options_series_->setMarkerSize(8);
  options_series_->setColor(QColor(160, 160, 160));
  front_series_ = new QScatterSeries;
  front_series_->setName(QStringLiteral("Pareto front"));
  front_series_->setMarkerSize(12);
  front_series_->setColor(QColor(31, 119, 180));
  front_series_->setSelectedColor(QColor(214, 39, 40));
  options_series_->setSelectedColor(QColor(214, 39, 40));
  chart->addSeries(options_series_);
  chart->addSeries(front_series_);
  auto* x = new QValueAxis;
  x->setTitleText(QStringLiteral("hours"));
  auto* y = new QValueAxis;
  y->setTitleText(QStringLiteral("cost $"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (QScatterSeries* s : {options_series_, front_series_}) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
  chart_view_ = new QChartView(chart);
  chart_view_->setRenderHint(QPainter::Antialiasing);
  chart_view_->setMinimumHeight(280);

  reasons_ = new QTextEdit;
  reasons_->setReadOnly(true);
  reasons_->setPlaceholderText(QStringLiteral("The recommendation's reasons appear here."));

  auto* bottom = new QSplitter(Qt::Horizontal);
  bottom->addWidget(chart_view_);
  bottom->addWidget(reasons_);
  bottom->setStretchFactor(0, 3);
  bottom->setStretchFactor(1, 2);
  bottom->setSizes({600, 400});  // proportions: the chart gets 3/5
  auto* main = new QSplitter(Qt::Vertical);
  main->addWidget(table_);
  main->addWidget(bottom);
  main->setSizes({400, 600});
  setCentralWidget(main);

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
  connect(candidates_, &QAbstractItemModel::modelReset, this,
          [this] { table_->sortByColumn(CandidateTableModel::kRank, Qt::AscendingOrder); });
  connect(pareto_, &QAbstractItemModel::modelReset, this, &MainWindow::rebuildChart);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &MainWindow::onTableSelection);
  // Queued: selecting a point restyles the series' markers, which must not
  // happen inside the chart's own mouse-release handling (Qt Charts 6.4
  // crashes on a marker deleted under its feet).
  auto on_click = [this](QScatterSeries* series, ParetoModel::Series which) {
    connect(
        series, &QXYSeries::clicked, this,
        [this, series, which](const QPointF& p) {
          const QList<QPointF> pts = series->points();
          const auto it = std::find(pts.begin(), pts.end(), p);
          if (it != pts.end()) selectPoint(which, static_cast<int>(it - pts.begin()));
        },
        Qt::QueuedConnection);
  };
  on_click(front_series_, ParetoModel::kFront);
  on_click(options_series_, ParetoModel::kAllOptions);

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
  candidates_->clear();
  pareto_->clear();
  reasons_->clear();
  plan_action_->setEnabled(catalog_ && !planning_);
  showStatus(QStringLiteral("%1 opened; press Plan.").arg(path));
  return true;
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
  candidates_->setPlan(plan);
  pareto_->setPlan(plan);
  QString text;
  if (plan && plan->best >= 0) {
    text += plan->meets_constraints ? QStringLiteral("<b>Recommendation</b>")
                                    : QStringLiteral("<b>Recommendation (misses a constraint)</b>");
    text += QStringLiteral("<ul>");
    for (const std::string& r : plan->reasons) {
      text += QStringLiteral("<li>") + QString::fromStdString(r).toHtmlEscaped() +
              QStringLiteral("</li>");
    }
    text += QStringLiteral("</ul>");
  }
  reasons_->setHtml(text);
  const int row = candidates_->recommendedRow();
  if (row >= 0) {
    table_->selectRow(proxy_->mapFromSource(candidates_->index(row, 0)).row());
  }
  showStatus(QStringLiteral("%1 candidates confirmed; %2 on the Pareto front.")
                 .arg(candidates_->rowCount())
                 .arg(pareto_->pointCount(ParetoModel::kFront)));
  emit planShown();
}

void MainWindow::onFailed(const QString& message) {
  setPlanning(false);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  showStatus(message);
  emit planFailed(message);
}

void MainWindow::rebuildChart() {
  QList<QPointF> front, all;
  for (int i = 0; i < pareto_->pointCount(ParetoModel::kFront); ++i)
    front.append(pareto_->point(ParetoModel::kFront, i));
  for (int i = 0; i < pareto_->pointCount(ParetoModel::kAllOptions); ++i)
    all.append(pareto_->point(ParetoModel::kAllOptions, i));
  front_series_->replace(front);
  options_series_->replace(all);
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  if (!all.isEmpty()) {
    x0 = x1 = all.first().x();
    y0 = y1 = all.first().y();
    for (const QPointF& p : all) {
      x0 = std::min(x0, p.x());
      x1 = std::max(x1, p.x());
      y0 = std::min(y0, p.y());
      y1 = std::max(y1, p.y());
    }
    const double dx = std::max((x1 - x0) * 0.08, 0.05 * std::max(1.0, x1));
    const double dy = std::max((y1 - y0) * 0.08, 0.05 * std::max(1.0, y1));
    x0 = std::max(0.0, x0 - dx);
    x1 += dx;
    y0 = std::max(0.0, y0 - dy);
    y1 += dy;
  }
  const auto axes = chart_view_->chart()->axes();
  for (QAbstractAxis* a : axes) {
    if (a->orientation() == Qt::Horizontal)
      a->setRange(x0, x1);
    else
      a->setRange(y0, y1);
  }
}

void MainWindow::selectPoint(ParetoModel::Series series, int index) {
  const int row = pareto_->candidateRow(series, index);
  if (row < 0) return;
  table_->selectRow(proxy_->mapFromSource(candidates_->index(row, 0)).row());
  table_->scrollTo(table_->currentIndex());
}

void MainWindow::onTableSelection() {
  front_series_->deselectAllPoints();
  options_series_->deselectAllPoints();
  const QModelIndexList rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return;
  const int row = proxy_->mapToSource(rows.first()).row();
  for (int i : pareto_->pointsOfRow(ParetoModel::kFront, row)) front_series_->selectPoint(i);
  for (int i : pareto_->pointsOfRow(ParetoModel::kAllOptions, row)) options_series_->selectPoint(i);
}

}  // namespace trainsim::gui
