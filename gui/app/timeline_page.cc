#include "gui/app/timeline_page.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QValueAxis>
#include <QtConcurrent/QtConcurrentRun>

#include "planner/search/space.h"

namespace trainsim::gui {
namespace {

QString LegendHtml() {
  QString html;
  for (int t = 0; t < sim::kTrackCount; ++t) {
    html += QStringLiteral("<span style=\"color:%1\">\u25a0</span>&nbsp;%2&nbsp;&nbsp; ")
                .arg(TrackColor(t).name(), TrackName(t).toHtmlEscaped());
  }
  return html;
}

}  // namespace

TimelinePage::TimelinePage(QWidget* parent)
    : QWidget(parent), worker_(new TimelineWorker), model_(new TimelineModel(this)) {
  gantt_ = new GanttView;
  gantt_->setModel(model_);
  breakdown_view_ = makeBreakdownChart();
  auto* legend = new QLabel(LegendHtml());
  legend->setTextFormat(Qt::RichText);
  auto* top = new QWidget;
  auto* top_layout = new QVBoxLayout(top);
  top_layout->setContentsMargins(0, 0, 0, 0);
  top_layout->addWidget(makeToolbar());
  top_layout->addWidget(makeMeasuredBar());
  top_layout->addWidget(gantt_, 1);
  top_layout->addWidget(legend);
  compare_ = new QTableWidget(0, 4);
  compare_->setHorizontalHeaderLabels({QStringLiteral("measured beside simulated"),
                                       QStringLiteral("simulated ms"),
                                       QStringLiteral("measured ms"), QStringLiteral("error")});
  compare_->verticalHeader()->hide();
  compare_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  compare_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  compare_->setVisible(false);
  auto* bottom = new QWidget;
  auto* bottom_layout = new QHBoxLayout(bottom);
  bottom_layout->setContentsMargins(0, 0, 0, 0);
  bottom_layout->addWidget(breakdown_view_, 3);
  bottom_layout->addWidget(compare_, 2);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(top);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setSizes({520, 240});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split);

  connect(worker_.get(), &TimelineWorker::finished, this, &TimelinePage::onFinished);
  connect(worker_.get(), &TimelineWorker::progress, this,
          [this](quint64 id, int done, int total, const QString& what) {
            if (id != request_ || !busy_) return;
            progress_->setRange(0, total);
            progress_->setValue(done);
            status_->setText(QStringLiteral("Simulating %1: %2 (%3 of %4)\u2026")
                                 .arg(describe(wanted_), what)
                                 .arg(done)
                                 .arg(total));
          });
  connect(worker_.get(), &TimelineWorker::failed, this, &TimelinePage::onFailed);
  connect(model_, &QAbstractItemModel::modelReset, this, &TimelinePage::rebuildBreakdown);
}

QWidget* TimelinePage::makeToolbar() {
  auto* bar = new QWidget;
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  status_ = new QLabel(QStringLiteral("Plan a scenario and select a candidate."));
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // A long candidate description must not widen the window: the label takes
  // the room left and wraps.
  status_->setWordWrap(true);
  status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  progress_ = new QProgressBar;
  progress_->setMaximumWidth(160);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setTextVisible(false);
  cancel_ = new QPushButton(QStringLiteral("Cancel"));
  cancel_->setEnabled(false);
  span_ = new QLabel;
  auto* out = new QPushButton(QStringLiteral("\u2212"));
  auto* in = new QPushButton(QStringLiteral("+"));
  auto* fit = new QPushButton(QStringLiteral("Fit"));
  out->setToolTip(QStringLiteral("Zoom out (or the mouse wheel over the chart)"));
  in->setToolTip(QStringLiteral("Zoom in (or the mouse wheel over the chart)"));
  for (QPushButton* b : {out, in, fit}) b->setMaximumWidth(48);
  row->addWidget(status_, 1);
  row->addWidget(progress_);
  row->addWidget(cancel_);
  row->addSpacing(12);
  row->addWidget(span_);
  row->addWidget(out);
  row->addWidget(in);
  row->addWidget(fit);
  connect(cancel_, &QPushButton::clicked, this, &TimelinePage::cancel);
  connect(out, &QPushButton::clicked, gantt_, &GanttView::zoomOut);
  connect(in, &QPushButton::clicked, gantt_, &GanttView::zoomIn);
  connect(fit, &QPushButton::clicked, gantt_, &GanttView::fit);
  connect(gantt_, &GanttView::viewChanged, this, [this](double start_s, double span_s) {
    span_->setText(QStringLiteral("%1 \u2013 %2 ms")
                       .arg(start_s * 1e3, 0, 'f', 3)
                       .arg((start_s + span_s) * 1e3, 0, 'f', 3));
  });
  return bar;
}

QWidget* TimelinePage::makeMeasuredBar() {
  auto* bar = new QWidget;
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  open_ = new QPushButton(QStringLiteral("Open measured\u2026"));
  open_->setToolTip(QStringLiteral(
      "A PyTorch profiler (Kineto) or Chakra trace of the real run: its last step is drawn "
      "above the simulated one"));
  refit_ = new QPushButton(QStringLiteral("Refit profile\u2026"));
  refit_->setToolTip(QStringLiteral(
      "Refit a hardware profile's GEMMs and memory-bound rate from the trace, against this "
      "candidate"));
  refit_->setEnabled(false);
  use_ = new QPushButton(QStringLiteral("Use in scenario"));
  use_->setEnabled(false);
  measured_status_ = new QLabel(QStringLiteral("No measured run."));
  measured_status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  measured_status_->setWordWrap(true);
  measured_status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  row->addWidget(open_);
  row->addWidget(refit_);
  row->addWidget(use_);
  row->addWidget(measured_status_, 1);
  connect(open_, &QPushButton::clicked, this, [this] {
    const QStringList paths =
        QFileDialog::getOpenFileNames(this, QStringLiteral("Open measured trace"), QString(),
                                      QStringLiteral("Traces (*.json *.et);;All files (*)"));
    if (!paths.isEmpty()) openMeasured(paths);
  });
  connect(refit_, &QPushButton::clicked, this, [this] {
    const QString base = QFileDialog::getOpenFileName(
        this, QStringLiteral("Profile to refit"), QString(), QStringLiteral("Profiles (*.json)"));
    if (base.isEmpty()) return;
    const QString out = QFileDialog::getSaveFileName(
        this, QStringLiteral("Save the refitted profile"),
        QFileInfo(base).dir().filePath(QFileInfo(base).completeBaseName() +
                                       QStringLiteral("-refit.json")),
        QStringLiteral("Profiles (*.json)"));
    if (!out.isEmpty()) refitProfile(base, out);
  });
  connect(use_, &QPushButton::clicked, this, [this] {
    if (!refitted_.isEmpty()) emit useInScenario(refitted_);
  });
  return bar;
}

QString TimelinePage::measuredText() const { return measured_status_->text(); }

void TimelinePage::openMeasured(const QStringList& paths) {
  if (measuring_) return;
  measuring_ = true;
  open_->setEnabled(false);
  refit_->setEnabled(false);
  measured_status_->setText(
      QStringLiteral("Reading %1\u2026").arg(paths.join(QStringLiteral(", "))));
  auto* watcher = new QFutureWatcher<Expected<MeasuredRun>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
    watcher->deleteLater();
    measuring_ = false;
    open_->setEnabled(true);
    Expected<MeasuredRun> run = watcher->result();
    if (!run.ok()) {
      measured_status_->setText(QString::fromStdString(run.status().message()));
      refit_->setEnabled(measured_ && simulated_);
      emit measuredRead(false);
      return;
    }
    measured_ = std::move(*run);
    refitted_.clear();
    use_->setEnabled(false);
    showTimeline();
    emit measuredRead(true);
  });
  watcher->setFuture(QtConcurrent::run([paths] { return LoadMeasuredRun(paths, 1); }));
}

void TimelinePage::refitProfile(const QString& base, const QString& out) {
  if (measuring_ || !measured_ || !simulated_ || !planned_) {
    measured_status_->setText(
        QStringLiteral("Open a measured trace beside a simulated candidate first."));
    emit refitDone(false);
    return;
  }
  measuring_ = true;
  open_->setEnabled(false);
  refit_->setEnabled(false);
  measured_status_->setText(QStringLiteral("Refitting %1\u2026").arg(base));
  auto* watcher = new QFutureWatcher<Expected<RefitOutcome>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, out] {
    watcher->deleteLater();
    measuring_ = false;
    open_->setEnabled(true);
    refit_->setEnabled(true);
    Expected<RefitOutcome> r = watcher->result();
    if (!r.ok()) {
      measured_status_->setText(QString::fromStdString(r.status().message()));
      emit refitDone(false);
      return;
    }
    refitted_ = out;
    use_->setEnabled(true);
    QString memory;
    if (r->refit.memory) {
      memory = QStringLiteral("; memory-bound rate %1 \u2192 %2 GB/s")
                   .arg(r->refit.memory->rate_GBps, 0, 'f', 2)
                   .arg(r->refit.memory->refitted_GBps, 0, 'f', 2);
    }
    measured_status_->setText(
        QStringLiteral("Refitted %1 GEMM shapes%2: the step simulated %3 ms \u2192 %4 ms with "
                       "the refit (measured %5 ms); saved to %6")
            .arg(r->refit.gemm_shapes)
            .arg(memory)
            .arg(r->predicted_before_s * 1e3, 0, 'f', 3)
            .arg(r->predicted_after_s * 1e3, 0, 'f', 3)
            .arg(measured_->steady.wall_s * 1e3, 0, 'f', 3)
            .arg(out));
    emit refitDone(true);
  });
  // The run and the plan are copied into the task: the page may change them meanwhile.
  watcher->setFuture(
      QtConcurrent::run([run = *measured_, planned = planned_, confirmed = simulated_->confirmed,
                         base, out] { return RefitAndSave(run, *planned, confirmed, base, out); }));
}

void TimelinePage::showTimeline() {
  compare_->setVisible(false);
  refit_->setEnabled(false);
  if (measured_) {
    const observe::KinetoTrace& t = measured_->traces.front();
    measured_status_->setText(QStringLiteral("%1: %2 steps after %3 warm-up, step %4 ms median")
                                  .arg(QString::fromStdString(t.file))
                                  .arg(measured_->steady.steps)
                                  .arg(measured_->warmup)
                                  .arg(measured_->steady.wall_s * 1e3, 0, 'f', 3));
  }
  if (!simulated_) return;
  if (!measured_) {
    model_->setTimeline(simulated_);
    return;
  }
  Expected<Scenario> s = CandidateScenario(*planned_, simulated_->confirmed);
  const Status fit = s.ok() ? observe::CheckTracesFit(measured_->traces, *s) : s.status();
  if (!fit.ok()) {
    measured_status_->setText(QString::fromStdString(fit.message()));
    model_->setTimeline(simulated_);
    return;
  }
  model_->setTimeline(std::make_shared<const Timeline>(WithMeasured(*simulated_, *measured_)));
  const std::vector<CompareRow> rows = CompareRows(*simulated_, *measured_);
  compare_->setRowCount(static_cast<int>(rows.size()));
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const CompareRow& r = rows[i];
    const QString error = r.measured_s > 0
                              ? QStringLiteral("%1%2%")
                                    .arg(r.predicted_s >= r.measured_s ? "+" : "")
                                    .arg(100 * (r.predicted_s / r.measured_s - 1), 0, 'f', 1)
                              : QStringLiteral("-");
    const QString cells[4] = {r.name, QString::number(r.predicted_s * 1e3, 'f', 3),
                              QString::number(r.measured_s * 1e3, 'f', 3), error};
    for (int c = 0; c < 4; ++c) compare_->setItem(i, c, new QTableWidgetItem(cells[c]));
  }
  compare_->setVisible(true);
  refit_->setEnabled(!measuring_);
}

QChartView* TimelinePage::makeBreakdownChart() {
  auto* chart = new QChart;
  breakdown_ = new QHorizontalStackedBarSeries;
  chart->addSeries(breakdown_);
  auto* y = new QBarCategoryAxis;
  y->append(QStringLiteral("step"));
  auto* x = new QValueAxis;
  x->setLabelFormat(QStringLiteral("%g ms"));
  chart->addAxis(y, Qt::AlignLeft);
  chart->addAxis(x, Qt::AlignBottom);
  breakdown_->attachAxis(y);
  breakdown_->attachAxis(x);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setTitle(QStringLiteral("Step breakdown"));
  auto* view = new QChartView(chart);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(200);
  return view;
}

QString TimelinePage::statusText() const { return status_->text(); }

int TimelinePage::shownCandidate() const {
  return model_->timeline() ? model_->timeline()->confirmed : -1;
}

QString TimelinePage::describe(int confirmed) const {
  const planner::Plan& plan = *planned_->plan;
  return QStringLiteral("#%1 %2")
      .arg(confirmed + 1)
      .arg(QString::fromStdString(
          planner::Describe(plan.space, plan.confirmed[confirmed].candidate)));
}

void TimelinePage::setPlanned(std::shared_ptr<const PlannedScenario> planned) {
  if (planned != planned_) showCandidate(std::move(planned), -1);
}

void TimelinePage::showCandidate(std::shared_ptr<const PlannedScenario> planned, int confirmed) {
  const bool valid = planned && planned->plan && confirmed >= 0 &&
                     confirmed < static_cast<int>(planned->plan->confirmed.size());
  if (planned == planned_ && confirmed == wanted_ &&
      (busy_ || pending_ || shownCandidate() == wanted_))
    return;  // already there or on its way
  planned_ = std::move(planned);
  wanted_ = valid ? confirmed : -1;
  model_->clear();  // never a stale candidate's trace, even while the page is hidden
  simulated_.reset();
  compare_->setVisible(false);
  refit_->setEnabled(false);
  request_ = 0;  // whatever still runs is stale
  setBusy(false);
  pending_ = valid;
  if (!valid) {
    worker_->cancel();
    status_->setText(QStringLiteral("Plan a scenario and select a candidate."));
  } else if (isVisible()) {
    start();
  } else {
    status_->setText(
        QStringLiteral("%1 is simulated when this tab is shown.").arg(describe(wanted_)));
  }
}

void TimelinePage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (pending_) start();
}

void TimelinePage::start() {
  pending_ = false;
  model_->clear();
  simulated_.reset();
  request_ = worker_->request(planned_, wanted_);
  setBusy(true);
  status_->setText(QStringLiteral("Simulating %1\u2026").arg(describe(wanted_)));
}

void TimelinePage::cancel() {
  if (!busy_) return;
  worker_->cancel();
  // The result may already be on its way (queued to this thread): forget the
  // request here, so that nothing of it shows after Cancel.
  request_ = 0;
  setBusy(false);
  status_->setText(
      QStringLiteral("Cancelled: the simulation of %1 was stopped.").arg(describe(wanted_)));
}

void TimelinePage::setBusy(bool on) {
  busy_ = on;
  progress_->setRange(0, on ? 0 : 1);  // busy until the simulation's first progress report
  progress_->setValue(0);
  cancel_->setEnabled(on);
}

void TimelinePage::onFinished(quint64 id, std::shared_ptr<const Timeline> timeline) {
  if (id != request_) return;
  setBusy(false);
  simulated_ = std::move(timeline);
  showTimeline();
  status_->setText(QStringLiteral("%1: %2; %3 events in %4 lanes")
                       .arg(describe(wanted_))
                       .arg(StepSummary(*model_->timeline()))
                       .arg(model_->eventCount())
                       .arg(model_->rowCount()));
  emit timelineShown(wanted_);
}

void TimelinePage::onFailed(quint64 id, const QString& message) {
  if (id != request_) return;
  setBusy(false);
  status_->setText(message);
}

void TimelinePage::rebuildBreakdown() {
  breakdown_->clear();
  const std::shared_ptr<const Timeline>& t = model_->timeline();
  QChart* chart = breakdown_view_->chart();
  if (!t) {
    chart->setTitle(QStringLiteral("Step breakdown"));
    return;
  }
  for (const BreakdownPart& part : BreakdownParts(t->breakdown)) {
    auto* set = new QBarSet(part.name);
    set->setColor(part.color);
    set->setBorderColor(part.color);
    set->append(part.seconds * 1e3);
    breakdown_->append(set);
  }
  for (QAbstractAxis* a : chart->axes(Qt::Horizontal)) {
    a->setRange(0, t->step_s * 1e3);
    static_cast<QValueAxis*>(a)->applyNiceNumbers();
  }
  QString summary = StepSummary(*t);
  summary[0] = summary[0].toUpper();
  chart->setTitle(QStringLiteral("%1: where the time of the critical stage (%2) went")
                      .arg(summary)
                      .arg(t->critical_stage));
}

}  // namespace trainsim::gui
