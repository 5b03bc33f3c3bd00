#include "gui/app/calibration_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTextEdit>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <algorithm>

#include "gui/app/curve_chart.h"

namespace trainsim::gui {
namespace {

QChartView* NewChartView() {
  auto* view = new QChartView(new QChart);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(300, 220);
  return view;
}

std::vector<const ProfileCurve*> CurvesOf(const std::vector<ProfileCurve>& all,
                                          ProfileCurve::Kind kind, int ranks = -1) {
  std::vector<const ProfileCurve*> out;
  for (const ProfileCurve& c : all) {
    if (c.kind == kind && (ranks < 0 || c.ranks == ranks)) out.push_back(&c);
  }
  return out;
}

// The collectives over the most ranks: the whole machine's.
int MostRanks(const std::vector<ProfileCurve>& all) {
  int most = 0;
  for (const ProfileCurve& c : all) {
    if (c.kind == ProfileCurve::kCollective) most = std::max(most, c.ranks);
  }
  return most;
}

QString HtmlList(const QStringList& items) {
  QString html = QStringLiteral("<ul>");
  for (const QString& i : items) html += QStringLiteral("<li>%1</li>").arg(i.toHtmlEscaped());
  return html + QStringLiteral("</ul>");
}

QString Rate(const std::optional<double>& GBps) {
  return GBps ? QStringLiteral("%1 GB/s").arg(*GBps, 0, 'g', 4) : QStringLiteral("not measured");
}

}  // namespace

CalibrationPage::CalibrationPage(std::shared_ptr<const Catalog> catalog, QWidget* parent)
    : QWidget(parent),
      catalog_(std::move(catalog)),
      run_(new CalibrationRun(this)),
      curves_(new ProfileCurvesModel(this)) {
  run_->setExecutable(FindCalibrateExecutable(QCoreApplication::applicationDirPath()));
  log_ = new QPlainTextEdit;
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(20000);
  log_->setPlaceholderText(QStringLiteral("trainsim-calibrate's output appears here."));
  summary_ = new QTextEdit;
  summary_->setReadOnly(true);
  summary_->setPlaceholderText(QStringLiteral("Run a calibration or load a profile."));
  auto* left = new QSplitter(Qt::Vertical);
  left->addWidget(log_);
  left->addWidget(summary_);
  auto* main = new QSplitter(Qt::Horizontal);
  main->addWidget(left);
  main->addWidget(makeCharts());
  main->setSizes({280, 1000});
  status_ = new QLabel;
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(makeControls());
  layout->addWidget(main, 1);
  layout->addWidget(status_);

  connect(run_, &CalibrationRun::progress, this, &CalibrationPage::onProgress);
  connect(run_, &CalibrationRun::line, log_, &QPlainTextEdit::appendPlainText);
  connect(run_, &CalibrationRun::finished, this, &CalibrationPage::onFinished);
  connect(run_, &CalibrationRun::failed, this, &CalibrationPage::onFailed);
  connect(curves_, &QAbstractItemModel::modelReset, this, &CalibrationPage::rebuildCharts);
  setRunning(false);
  showStatus(run_->executable().isEmpty()
                 ? QStringLiteral("trainsim-calibrate was not found next to trainsim-gui, in "
                                  "../calibrate or on PATH: Run is not available.")
                 : QStringLiteral("Run a calibration, or load a profile."));
}

QWidget* CalibrationPage::makeControls() {
  backend_ = new QComboBox;
  backend_->addItems({QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")});
  backend_->setToolTip(QStringLiteral("auto: cuda when a GPU is visible, else cpu"));
  quick_ = new QCheckBox(QStringLiteral("Quick"));
  quick_->setToolTip(QStringLiteral("a short pass: a few shapes and sizes, fewer repetitions"));
  output_ =
      new QLineEdit(QDir::current().absoluteFilePath(QStringLiteral("trainsim-profile.json")));
  output_->setMinimumWidth(220);
  browse_button_ = new QPushButton(QStringLiteral("…"));
  browse_button_->setMaximumWidth(32);
  run_button_ = new QPushButton(QStringLiteral("Run"));
  cancel_button_ = new QPushButton(QStringLiteral("Cancel"));
  progress_ = new QProgressBar;
  progress_->setMinimumWidth(200);
  load_button_ = new QPushButton(QStringLiteral("Load profile…"));
  save_button_ = new QPushButton(QStringLiteral("Save profile as…"));
  use_button_ = new QPushButton(QStringLiteral("Use in scenario"));
  use_button_->setToolTip(QStringLiteral("Set the scenario's cluster.profile to this profile"));
  use_button_->setEnabled(false);
  auto* w = new QWidget;
  auto* row = new QHBoxLayout(w);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(new QLabel(QStringLiteral("Backend")));
  row->addWidget(backend_);
  row->addWidget(quick_);
  row->addWidget(new QLabel(QStringLiteral("Output")));
  row->addWidget(output_, 1);
  row->addWidget(browse_button_);
  row->addWidget(run_button_);
  row->addWidget(cancel_button_);
  row->addWidget(progress_);
  row->addSpacing(12);
  row->addWidget(load_button_);
  row->addWidget(save_button_);
  row->addWidget(use_button_);
  connect(browse_button_, &QPushButton::clicked, this, &CalibrationPage::chooseOutput);
  connect(run_button_, &QPushButton::clicked, this, &CalibrationPage::startRun);
  connect(cancel_button_, &QPushButton::clicked, this, &CalibrationPage::cancelRun);
  connect(load_button_, &QPushButton::clicked, this, &CalibrationPage::loadDialog);
  connect(save_button_, &QPushButton::clicked, this, &CalibrationPage::saveDialog);
  connect(use_button_, &QPushButton::clicked, this, [this] {
    if (curves_->profile()) emit useInScenario(curves_->profile()->path);
  });
  return w;
}

QWidget* CalibrationPage::makeCharts() {
  gemm_chart_ = NewChartView();
  memory_chart_ = NewChartView();
  collective_chart_ = NewChartView();
  table_ = new QTableView;
  table_->setModel(curves_);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  auto* w = new QWidget;
  auto* grid = new QGridLayout(w);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->addWidget(gemm_chart_, 0, 0);
  grid->addWidget(memory_chart_, 0, 1);
  grid->addWidget(collective_chart_, 1, 0);
  grid->addWidget(table_, 1, 1);
  grid->setColumnStretch(0, 6);  // room for the collectives' legend
  grid->setColumnStretch(1, 5);
  return w;
}

QString CalibrationPage::statusText() const { return status_->text(); }

void CalibrationPage::showStatus(const QString& text) { status_->setText(text); }

void CalibrationPage::setRunning(bool on) {
  run_button_->setEnabled(!on && !run_->executable().isEmpty());
  cancel_button_->setEnabled(on);
  for (QWidget* w :
       std::initializer_list<QWidget*>{backend_, quick_, output_, browse_button_, load_button_})
    w->setEnabled(!on);
  save_button_->setEnabled(!on && curves_->profile());
  use_button_->setEnabled(!on && curves_->profile());
  if (!on) progress_->setRange(0, std::max(1, progress_->maximum()));
}

void CalibrationPage::chooseOutput() {
  const QString path =
      QFileDialog::getSaveFileName(this, QStringLiteral("Profile to write"), output_->text(),
                                   QStringLiteral("Profiles (*.json)"));
  if (!path.isEmpty()) output_->setText(path);
}

void CalibrationPage::startRun() {
  if (run_->running()) return;
  const QString out = output_->text().trimmed();
  if (out.isEmpty()) {
    showStatus(QStringLiteral("Output: give the profile file to write."));
    return;
  }
  CalibrationOptions options;
  options.backend = backend_->currentText();
  options.quick = quick_->isChecked();
  options.out = QDir::current().absoluteFilePath(out);
  log_->clear();
  setRunning(true);
  showStatus(QStringLiteral("Calibrating with the %1 backend%2…")
                 .arg(options.backend, options.quick ? QStringLiteral(", quick") : QString()));
  run_->start(options);
}

void CalibrationPage::cancelRun() {
  if (!run_->running()) return;
  run_->cancel();
  showStatus(
      QStringLiteral("Cancelling: trainsim-calibrate finishes the current measurement and "
                     "writes what it measured…"));
}

void CalibrationPage::onProgress(int done, int total, const QString& phase) {
  if (total <= 0) {
    progress_->setRange(0, 0);  // busy until the first measurement
    return;
  }
  progress_->setRange(0, total);
  progress_->setValue(done);
  progress_->setFormat(phase + QStringLiteral(" %v/%m"));
}

void CalibrationPage::onFinished(const QString& path, int exit_code) {
  setRunning(false);
  const bool loaded = loadProfile(path);
  if (loaded) {
    showStatus(exit_code == 0 ? QStringLiteral("Profile written to %1.").arg(path)
                              : QStringLiteral("Incomplete profile written to %1: its failures "
                                               "are listed in the summary.")
                                    .arg(path));
  }
  emit runEnded();
}

void CalibrationPage::onFailed(const QString& message) {
  setRunning(false);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setFormat(QStringLiteral("%p%"));
  showStatus(message);
  log_->appendPlainText(message);
  emit runEnded();
}

void CalibrationPage::loadDialog() {
  const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Load profile"), QString(),
                                                    QStringLiteral("Profiles (*.json)"));
  if (!path.isEmpty()) loadProfile(path);
}

void CalibrationPage::saveDialog() {
  if (!curves_->profile()) return;
  const QString path =
      QFileDialog::getSaveFileName(this, QStringLiteral("Save profile as"),
                                   curves_->profile()->path, QStringLiteral("Profiles (*.json)"));
  if (!path.isEmpty()) saveProfileAs(path);
}

bool CalibrationPage::loadProfile(const QString& path) {
  Expected<LoadedProfile> loaded = LoadProfileFile(path, catalog_.get());
  if (!loaded.ok()) {
    showStatus(QString::fromStdString(loaded.status().message()));
    return false;
  }
  showProfile(std::make_shared<const LoadedProfile>(std::move(*loaded)));
  showStatus(QStringLiteral("%1 loaded.").arg(path));
  emit profileShown(path);
  return true;
}

bool CalibrationPage::saveProfileAs(const QString& path) {
  if (!curves_->profile()) {
    showStatus(QStringLiteral("No profile to save: run a calibration or load a profile."));
    return false;
  }
  if (Status s = SaveProfileText(*curves_->profile(), path); !s.ok()) {
    showStatus(QString::fromStdString(s.message()));
    return false;
  }
  showStatus(QStringLiteral("Profile saved as %1.").arg(path));
  return true;
}

void CalibrationPage::showProfile(std::shared_ptr<const LoadedProfile> profile) {
  curves_->setProfile(std::move(profile));
  save_button_->setEnabled(!run_->running());
  use_button_->setEnabled(!run_->running());
  showSummary();
}

void CalibrationPage::showSummary() {
  const std::shared_ptr<const LoadedProfile>& lp = curves_->profile();
  if (!lp) {
    summary_->clear();
    return;
  }
  const HardwareProfile& p = lp->profile;
  const ProfileProvenance& v = p.provenance;
  QString html = QStringLiteral("<b>%1</b><br>").arg(lp->path.toHtmlEscaped());
  html += QStringLiteral("%1 x %2 (%3 backend), measured %4%5<br>")
              .arg(QString::fromStdString(v.device).toHtmlEscaped())
              .arg(v.devices)
              .arg(QString::fromStdString(v.backend), QString::fromStdString(v.date),
                   v.quick ? QStringLiteral(", quick") : QString());
  html += v.complete ? QStringLiteral("complete<br>")
                     : QStringLiteral("<b>incomplete</b>: some measurements failed<br>");
  html += p.gpu.empty() ? QStringLiteral("names no catalog GPU<br>")
          : lp->catalog_gpu
              ? QStringLiteral("GPU %1 (dashed: %2)<br>")
                    .arg(QString::fromStdString(p.gpu).toHtmlEscaped(), lp->catalog_source)
              : QStringLiteral("GPU %1: not in the catalog<br>")
                    .arg(QString::fromStdString(p.gpu).toHtmlEscaped());
  html += QStringLiteral("memory %1; host to device %2; device to host %3")
              .arg(Rate(p.memory_GBps), Rate(p.host_to_device_GBps), Rate(p.device_to_host_GBps));
  QStringList failures, not_measured;
  for (const auto& [what, error] : p.failures)
    failures << QString::fromStdString(what + ": " + error);
  for (const std::string& n : p.not_measured) not_measured << QString::fromStdString(n);
  if (!failures.isEmpty()) html += QStringLiteral("<br><b>failures</b>") + HtmlList(failures);
  if (!not_measured.isEmpty())
    html += QStringLiteral("<br><b>not measured</b>") + HtmlList(not_measured);
  summary_->setHtml(html);
}

void CalibrationPage::rebuildCharts() {
  table_->hideColumn(ProfileCurvesModel::kKind);  // the curve names say it
  const std::vector<ProfileCurve>& all = curves_->curves();
  DrawCurves(gemm_chart_->chart(), CurvesOf(all, ProfileCurve::kGemm),
             {XUnit::kFlops, QStringLiteral("GEMM throughput"), QStringLiteral("FLOPs per GEMM"),
              QStringLiteral("TFLOP/s"), QStringLiteral("GEMM: none measured")});
  DrawCurves(memory_chart_->chart(), CurvesOf(all, ProfileCurve::kMemory),
             {XUnit::kBytes, QStringLiteral("Memory bandwidth"), QStringLiteral("buffer bytes"),
              QStringLiteral("GB/s"), QStringLiteral("Memory: none measured")});
  const int ranks = MostRanks(all);
  DrawCurves(collective_chart_->chart(), CurvesOf(all, ProfileCurve::kCollective, ranks),
             {XUnit::kBytes, QStringLiteral("Collectives over %1 ranks").arg(ranks),
              QStringLiteral("message bytes"), QStringLiteral("bus GB/s"),
              QStringLiteral("Collectives: none measured")});
}

}  // namespace trainsim::gui
