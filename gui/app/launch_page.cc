#include "gui/app/launch_page.h"

#include <QCheckBox>
#include <QDir>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>

#include "gui/models/chosen_plan.h"
#include "launch/bundle_writer.h"

namespace trainsim::gui {
namespace {

QLabel* MessageLabel() {
  auto* l = new QLabel;
  l->setWordWrap(true);
  l->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return l;
}

void ShowError(QLabel* label, const QString& text) {
  label->setStyleSheet(text.isEmpty() ? QString() : QStringLiteral("color: #b00020;"));
  label->setText(text);
}

QString Seconds(double s) { return QString::number(s, 'f', 4) + QStringLiteral(" s"); }

}  // namespace

LaunchPage::LaunchPage(QWidget* parent)
    : QWidget(parent), bundle_(new BundleModel(this)), worker_(new LocalRunWorker) {
  auto* top = new QSplitter(Qt::Horizontal);
  top->addWidget(makeForm());
  top->addWidget(makeFiles());
  top->setStretchFactor(1, 1);
  top->setSizes({380, 900});
  auto* main = new QSplitter(Qt::Vertical);
  main->addWidget(top);
  main->addWidget(makeLocalRun());
  main->setSizes({420, 380});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(main);

  connect(this, &LaunchPage::runRequested, worker_.get(), &LocalRunWorker::run);
  connect(worker_.get(), &LocalRunWorker::starting, this, &LaunchPage::onStarting);
  connect(worker_.get(), &LocalRunWorker::step, this, &LaunchPage::onStep);
  connect(worker_.get(), &LocalRunWorker::finished, this, &LaunchPage::onFinished);
  connect(worker_.get(), &LocalRunWorker::failed, this, &LaunchPage::onFailed);
  rebuildPlan();
}

QWidget* LaunchPage::makeForm() {
  candidate_ = MessageLabel();
  job_name_ = new QLineEdit;
  job_name_->setPlaceholderText(QStringLiteral("the scenario's name"));
  s3_uri_ = new QLineEdit;
  s3_uri_->setPlaceholderText(QStringLiteral("s3://BUCKET/PREFIX"));
  role_arn_ = new QLineEdit;
  role_arn_->setPlaceholderText(QString::fromLatin1(launch::kRolePlaceholder));
  image_ = new QLineEdit;
  image_->setPlaceholderText(QStringLiteral("the SDK's PyTorch image"));
  sagemaker_ = new QCheckBox(QStringLiteral("SageMaker"));
  slurm_ = new QCheckBox(QStringLiteral("Slurm"));
  scripts_ = new QCheckBox(QStringLiteral("torchrun / mpirun"));
  hyperpod_slurm_ = new QCheckBox(QStringLiteral("HyperPod (Slurm)"));
  hyperpod_eks_ = new QCheckBox(QStringLiteral("HyperPod (EKS)"));
  auto* targets = new QHBoxLayout;
  for (QCheckBox* c : {sagemaker_, slurm_, scripts_, hyperpod_slurm_, hyperpod_eks_}) {
    c->setChecked(true);
    targets->addWidget(c);
    connect(c, &QCheckBox::toggled, this, &LaunchPage::rebuildBundle);
  }
  for (QLineEdit* e : {job_name_, s3_uri_, role_arn_, image_})
    connect(e, &QLineEdit::textChanged, this, &LaunchPage::rebuildBundle);
  form_error_ = MessageLabel();
  warnings_ = MessageLabel();
  write_ = new QPushButton(QStringLiteral("Write bundle…"));
  connect(write_, &QPushButton::clicked, this, &LaunchPage::chooseFolder);
  status_ = MessageLabel();

  auto* box = new QGroupBox(QStringLiteral("Launch bundle"));
  auto* form = new QFormLayout;
  form->addRow(QStringLiteral("Job name (--job-name)"), job_name_);
  form->addRow(QStringLiteral("S3 URI (--s3)"), s3_uri_);
  form->addRow(QStringLiteral("Role ARN (--role)"), role_arn_);
  form->addRow(QStringLiteral("Image (--image)"), image_);
  form->addRow(QStringLiteral("Targets"), targets);
  auto* v = new QVBoxLayout(box);
  v->addWidget(candidate_);
  v->addLayout(form);
  v->addWidget(form_error_);
  v->addWidget(warnings_);
  v->addWidget(write_);
  v->addWidget(status_);
  v->addStretch(1);
  return box;
}

QWidget* LaunchPage::makeFiles() {
  files_ = new QTableView;
  files_->setModel(bundle_);
  files_->setSelectionBehavior(QAbstractItemView::SelectRows);
  files_->setSelectionMode(QAbstractItemView::SingleSelection);
  files_->verticalHeader()->hide();
  files_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  files_->horizontalHeader()->setSectionResizeMode(BundleModel::kPath, QHeaderView::Stretch);
  connect(files_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &LaunchPage::showFile);
  preview_ = new QPlainTextEdit;
  preview_->setReadOnly(true);
  preview_->setLineWrapMode(QPlainTextEdit::NoWrap);
  preview_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  preview_->setPlaceholderText(QStringLiteral("Select a file to see what will be written."));
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(files_);
  split->addWidget(preview_);
  split->setStretchFactor(1, 1);
  split->setSizes({380, 520});
  return split;
}

QWidget* LaunchPage::makeLocalRun() {
  ranks_ = new QSpinBox;
  ranks_->setRange(1, 256);
  ranks_->setValue(launch::LocalOptions().ranks);
  steps_ = new QSpinBox;
  steps_->setRange(1, 100000);
  steps_->setValue(launch::LocalOptions().steps);
  profile_ = new QLineEdit;
  profile_->setPlaceholderText(QStringLiteral("none: no prediction"));
  profile_->setToolTip(
      QStringLiteral("A cpu profile from `trainsim-calibrate --backend cpu` (its cores = the "
                     "ranks); without one the run is measured but not predicted."));
  auto* browse = new QPushButton(QStringLiteral("Profile…"));
  connect(browse, &QPushButton::clicked, this, &LaunchPage::chooseProfile);
  run_folder_ = new QLineEdit(QDir::temp().filePath(QStringLiteral("trainsim-launch-out")));
  run_folder_->setToolTip(QStringLiteral("The run's files go to FOLDER/local/ (--out)."));
  run_ = new QPushButton(QStringLiteral("Run locally"));
  cancel_ = new QPushButton(QStringLiteral("Cancel"));
  cancel_->setEnabled(false);
  connect(run_, &QPushButton::clicked, this, &LaunchPage::startLocalRun);
  connect(cancel_, &QPushButton::clicked, this, &LaunchPage::cancelLocalRun);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setFormat(QStringLiteral("%v / %m steps"));

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(QStringLiteral("Ranks")));
  controls->addWidget(ranks_);
  controls->addWidget(new QLabel(QStringLiteral("Steps")));
  controls->addWidget(steps_);
  controls->addWidget(new QLabel(QStringLiteral("Profile")));
  controls->addWidget(profile_, 1);
  controls->addWidget(browse);
  controls->addWidget(new QLabel(QStringLiteral("Folder")));
  controls->addWidget(run_folder_, 1);
  controls->addWidget(run_);
  controls->addWidget(cancel_);
  controls->addWidget(progress_);

  auto* chart = new QChart;
  chart->setTitle(QStringLiteral("Local run: measured step time against the prediction"));
  measured_ = new QLineSeries;
  measured_->setName(QStringLiteral("measured step"));
  measured_->setPointsVisible(true);
  predicted_ = new QLineSeries;
  predicted_->setName(QStringLiteral("predicted step (simulator on the profile)"));
  QPen dashed(QColor(214, 39, 40));
  dashed.setStyle(Qt::DashLine);
  dashed.setWidth(2);
  predicted_->setPen(dashed);
  chart->addSeries(measured_);
  chart->addSeries(predicted_);
  auto* x = new QValueAxis;
  x->setTitleText(QStringLiteral("step"));
  x->setLabelFormat(QStringLiteral("%d"));
  auto* y = new QValueAxis;
  y->setTitleText(QStringLiteral("seconds"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (QLineSeries* s : {measured_, predicted_}) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
  chart_view_ = new QChartView(chart);
  chart_view_->setRenderHint(QPainter::Antialiasing);
  summary_ = MessageLabel();

  auto* box =
      new QGroupBox(QStringLiteral("Local run (this machine, trainsim-train under mpirun)"));
  auto* v = new QVBoxLayout(box);
  v->addLayout(controls);
  v->addWidget(chart_view_, 1);
  v->addWidget(summary_);
  return box;
}

void LaunchPage::setPlanned(std::shared_ptr<const PlannedScenario> planned) {
  planned_ = std::move(planned);
  confirmed_ = planned_ && planned_->plan ? planned_->plan->best : -1;
  rebuildPlan();
}

void LaunchPage::setCandidate(int confirmed) {
  if (confirmed == confirmed_) return;
  confirmed_ = confirmed;
  rebuildPlan();
}

void LaunchPage::rebuildPlan() {
  plan_.reset();
  candidate_->clear();
  QString why = QStringLiteral("Plan a scenario, then choose a candidate in the Plan tab.");
  if (planned_ && confirmed_ >= 0) {
    Expected<launch::LaunchPlan> plan = ChosenLaunchPlan(*planned_, confirmed_);
    if (plan.ok()) {
      plan_ = std::make_shared<const launch::LaunchPlan>(std::move(*plan));
    } else {
      why = QString::fromStdString(plan.status().message());
    }
  }
  if (plan_) {
    const nlohmann::json& rec = plan_->plan["recommendation"];
    const std::string description =
        plan_->plan["candidates"][rec["candidate"].get<int>()].value("description", "");
    candidate_->setText(
        QStringLiteral("<b>Candidate %1%2</b>: %3, %4")
            .arg(confirmed_ + 1)
            .arg(confirmed_ == planned_->plan->best ? QStringLiteral(" (recommended)") : QString())
            .arg(QString::fromStdString(description).toHtmlEscaped())
            .arg(QString::fromStdString(rec["pricing"].get<std::string>())));
  }
  run_->setEnabled(plan_ && !running_);
  if (plan_) {
    rebuildBundle();
  } else {
    bundle_->clear();
    ShowError(form_error_, why);
    warnings_->clear();
    write_->setEnabled(false);
    preview_->clear();
  }
}

void LaunchPage::rebuildBundle() {
  if (!plan_) return;
  launch::LaunchOptions o;
  o.targets.clear();
  if (sagemaker_->isChecked()) o.targets.push_back(launch::Target::kSagemaker);
  if (slurm_->isChecked()) o.targets.push_back(launch::Target::kSlurm);
  if (scripts_->isChecked()) o.targets.push_back(launch::Target::kScripts);
  if (hyperpod_slurm_->isChecked()) o.targets.push_back(launch::Target::kHyperpodSlurm);
  if (hyperpod_eks_->isChecked()) o.targets.push_back(launch::Target::kHyperpodEks);
  o.job_name = job_name_->text().trimmed().toStdString();
  o.s3_uri = s3_uri_->text().trimmed().toStdString();
  o.role_arn = role_arn_->text().trimmed().toStdString();
  o.image_uri = image_->text().trimmed().toStdString();
  const QString shown = files_->currentIndex().data(Qt::UserRole).toString();
  const bool ok = bundle_->make(*plan_, o);
  ShowError(form_error_, bundle_->error());
  warnings_->setText(ok && !bundle_->warnings().isEmpty()
                         ? QStringLiteral("Before submitting: ") +
                               bundle_->warnings().join(QStringLiteral(" "))
                         : QString());
  write_->setEnabled(ok);
  // Keep the same file in view when it is still there.
  int row = 0;
  for (int r = 0; r < bundle_->rowCount(); ++r) {
    if (bundle_->index(r, 0).data(Qt::UserRole).toString() == shown) row = r;
  }
  if (ok) {
    files_->selectRow(row);
  } else {
    preview_->clear();
  }
}

void LaunchPage::showFile() {
  const QModelIndexList rows = files_->selectionModel()->selectedRows();
  preview_->setPlainText(rows.isEmpty() ? QString()
                                        : rows.first().data(BundleModel::kContentRole).toString());
}

void LaunchPage::chooseFolder() {
  const QString dir = QFileDialog::getExistingDirectory(
      this, QStringLiteral("Write the bundle into (a new or empty folder)"));
  if (!dir.isEmpty()) writeBundle(dir);
}

bool LaunchPage::writeBundle(const QString& dir) {
  if (!bundle_->bundle()) {
    ShowError(status_, QStringLiteral("nothing to write: ") + bundle_->error());
    return false;
  }
  const Status st = launch::WriteBundle(dir.toStdString(), *bundle_->bundle());
  if (!st.ok()) {
    ShowError(status_, QString::fromStdString(st.message()));
    return false;
  }
  status_->setStyleSheet(QString());
  status_->setText(QStringLiteral("Wrote %1 files to %2.")
                       .arg(bundle_->rowCount())
                       .arg(QDir::toNativeSeparators(dir)));
  return true;
}

void LaunchPage::chooseProfile() {
  const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Calibration profile"),
                                                    QString(), QStringLiteral("Profiles (*.json)"));
  if (!path.isEmpty()) profile_->setText(path);
}

void LaunchPage::startLocalRun() {
  if (running_ || !plan_ || !planned_) return;
  launch::LocalOptions o;
  o.ranks = ranks_->value();
  o.steps = steps_->value();
  o.profile = profile_->text().trimmed().toStdString();
  o.out_dir = run_folder_->text().trimmed().toStdString();
  measured_->clear();
  predicted_->clear();
  ShowError(summary_, QString());
  progress_->setRange(0, o.steps);
  progress_->setValue(0);
  status_->clear();
  worker_->clearCancel();  // a Cancel that came after the last run had ended
  setRunning(true);
  summary_->setText(QStringLiteral("Starting…"));
  emit runRequested(plan_, o, planned_->catalog);
}

void LaunchPage::cancelLocalRun() {
  if (!running_) return;
  worker_->cancel();
  summary_->setText(QStringLiteral("Stopping after the current step…"));
}

void LaunchPage::setRunning(bool on) {
  running_ = on;
  run_->setEnabled(!on && plan_);
  cancel_->setEnabled(on);
  for (QWidget* w : {static_cast<QWidget*>(ranks_), static_cast<QWidget*>(steps_),
                     static_cast<QWidget*>(profile_), static_cast<QWidget*>(run_folder_)})
    w->setEnabled(!on);
}

void LaunchPage::onStarting(const QVariant& predicted_step_s, int steps, const QString& command) {
  progress_->setRange(0, steps);
  if (predicted_step_s.isValid()) {
    const double p = predicted_step_s.toDouble();
    predicted_->replace({QPointF(1, p), QPointF(std::max(steps, 2), p)});
    summary_->setText(QStringLiteral("Predicted step: %1. Running: %2").arg(Seconds(p), command));
  } else {
    summary_->setText(
        QStringLiteral("No prediction: choose a cpu profile from `trainsim-calibrate --backend "
                       "cpu`. Running: %1")
            .arg(command));
  }
  fitAxes();
}

void LaunchPage::onStep(int index, double seconds, double /*loss*/) {
  measured_->append(index, seconds);
  progress_->setValue(std::min(progress_->maximum(), measured_->count()));
  fitAxes();
}

void LaunchPage::fitAxes() {
  double x1 = 2, y1 = 0;
  for (QLineSeries* s : {measured_, predicted_}) {
    for (const QPointF& p : s->points()) {
      x1 = std::max(x1, p.x());
      y1 = std::max(y1, p.y());
    }
  }
  x1 = std::max<double>(x1, progress_->maximum());
  for (QAbstractAxis* a : chart_view_->chart()->axes()) {
    if (a->orientation() == Qt::Horizontal)
      a->setRange(1, x1);
    else
      a->setRange(0, y1 > 0 ? y1 * 1.15 : 1);
  }
}

void LaunchPage::onFinished(const std::shared_ptr<const launch::LocalReport>& report) {
  setRunning(false);
  const launch::TrainerResult& run = report->run;
  QString text;
  if (run.interrupted) {
    text = QStringLiteral("Interrupted after %1 steps").arg(run.steps.size()) +
           (run.exit_code != 0 ? QStringLiteral(" (mpirun exited with %1).").arg(run.exit_code)
                               : QStringLiteral("."));
  } else if (run.exit_code != 0) {
    text = QStringLiteral(
               "The local run failed: mpirun exited with %1 after %2 steps (its "
               "messages are on the terminal).")
               .arg(run.exit_code)
               .arg(run.steps.size());
  } else {
    text = QStringLiteral("Done: %1 steps.").arg(run.steps.size());
  }
  if (report->measured_step_s) {
    text += QStringLiteral(" Median step after warm-up: measured %1")
                .arg(Seconds(*report->measured_step_s));
    if (report->predicted_step_s && report->error) {
      text += QStringLiteral(", predicted %1: error %2%.")
                  .arg(Seconds(*report->predicted_step_s))
                  .arg(QString::asprintf("%+.1f", 100 * *report->error));
    } else {
      text += QStringLiteral("; no prediction (no profile).");
    }
  }
  summary_->setText(
      text + QStringLiteral(" Run files: %1").arg(QString::fromStdString(report->config_file)));
  emit localRunEnded();
}

void LaunchPage::onFailed(const QString& message) {
  setRunning(false);
  ShowError(summary_, message);
  emit localRunEnded();
}

}  // namespace trainsim::gui
