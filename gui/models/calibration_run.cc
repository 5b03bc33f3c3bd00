#include "gui/models/calibration_run.h"

#include <signal.h>

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>

namespace trainsim::gui {
namespace {

constexpr char kToolName[] = "trainsim-calibrate";
constexpr char kWrittenPrefix[] = "profile written to ";

bool IsExecutableFile(const QString& path) {
  const QFileInfo info(path);
  return info.isFile() && info.isExecutable();
}

}  // namespace

QStringList CalibrateArguments(const CalibrationOptions& options) {
  QStringList args = {QStringLiteral("--backend"), options.backend};
  if (options.quick) args << QStringLiteral("--quick");
  if (!options.out.isEmpty()) args << QStringLiteral("--out") << options.out;
  if (options.force) args << QStringLiteral("--force");
  if (!options.gpu.isEmpty()) args << QStringLiteral("--gpu") << options.gpu;
  return args;
}

std::optional<ProgressLine> ParseProgressLine(const QString& line) {
  // calibrate/main.cc StderrProgress: "[%s %d/%d] %s", the item 1-based.
  static const QRegularExpression kLine(QStringLiteral(R"(^\[(\w+) (\d+)/(\d+)\] (.*)$)"));
  const QRegularExpressionMatch m = kLine.match(line);
  if (!m.hasMatch()) return std::nullopt;
  ProgressLine p{m.captured(1), m.captured(2).toInt(), m.captured(3).toInt(), m.captured(4)};
  if (p.total < 1 || p.index < 1 || p.index > p.total) return std::nullopt;
  return p;
}

std::optional<QString> ParseWrittenLine(const QString& line) {
  if (!line.startsWith(QLatin1String(kWrittenPrefix))) return std::nullopt;
  QString path = line.mid(static_cast<int>(qstrlen(kWrittenPrefix)));
  // calibrate/main.cc appends this note when the profile went to FILE.partial.
  const qsizetype note = path.indexOf(QLatin1String(" (incomplete: "));
  if (note >= 0) path.truncate(note);
  if (path.isEmpty()) return std::nullopt;
  return path;
}

QString FindCalibrateExecutable(const QString& app_dir) {
  const QString name = QLatin1String(kToolName);
  for (const QString& dir : {app_dir, app_dir + QStringLiteral("/../calibrate")}) {
    const QString path = QDir(dir).absoluteFilePath(name);
    if (IsExecutableFile(path)) return QDir::cleanPath(path);
  }
  return QStandardPaths::findExecutable(name);
}

CalibrationRun::CalibrationRun(QObject* parent) : QObject(parent), process_(this) {
  kill_timer_.setSingleShot(true);
  connect(&kill_timer_, &QTimer::timeout, this, &CalibrationRun::killAfterGrace);
  connect(&process_, &QProcess::readyReadStandardError, this, &CalibrationRun::readStderr);
  connect(&process_, &QProcess::readyReadStandardOutput, this, &CalibrationRun::readStdout);
  connect(&process_, &QProcess::finished, this, &CalibrationRun::onFinished);
  connect(&process_, &QProcess::errorOccurred, this, &CalibrationRun::onError);
  connect(&process_, &QProcess::started, this, &CalibrationRun::started);
}

CalibrationRun::~CalibrationRun() {
  disconnect(&process_, nullptr, this, nullptr);
  if (running()) {
    process_.kill();
    process_.waitForFinished(5000);
  }
}

void CalibrationRun::start(const CalibrationOptions& options) {
  if (running()) return;
  cancelling_ = interrupted_ = killed_ = false;
  stderr_rest_.clear();
  stdout_rest_.clear();
  written_.clear();
  last_error_line_.clear();
  last_progress_ = {};
  if (executable_.isEmpty()) {
    emit failed(QStringLiteral("%1 not found (looked next to trainsim-gui, in ../calibrate and "
                               "on PATH); build it with: cmake --build build --target %1")
                    .arg(QLatin1String(kToolName)));
    return;
  }
  emit progress(0, 0, QString());
  process_.start(executable_, CalibrateArguments(options));
}

void CalibrationRun::cancel() {
  if (!running() || cancelling_) return;
  cancelling_ = true;
  const auto pid = static_cast<pid_t>(process_.processId());
  if (pid <= 0) {  // still starting: nothing measured yet (and kill(0) would hit our group)
    killed_ = true;
    process_.kill();
    return;
  }
  // SIGINT, like Ctrl-C: the tool finishes the current measurement and writes
  // what it measured. QProcess::terminate() would send SIGTERM, which it does
  // not handle (no profile).
  interrupted_ = true;
  ::kill(pid, SIGINT);
  kill_timer_.start(grace_ms_);
}

void CalibrationRun::killAfterGrace() {
  if (!running()) return;
  killed_ = true;
  process_.kill();
}

namespace {

// Splits the complete lines off `buffer` (keeping an unfinished last line).
QStringList TakeLines(QByteArray* buffer, const QByteArray& more) {
  buffer->append(more);
  QStringList lines;
  qsizetype end;
  while ((end = buffer->indexOf('\n')) >= 0) {
    lines << QString::fromLocal8Bit(buffer->left(end));
    buffer->remove(0, end + 1);
  }
  return lines;
}

}  // namespace

void CalibrationRun::readStderr() {
  for (const QString& text : TakeLines(&stderr_rest_, process_.readAllStandardError())) {
    if (text.startsWith(QLatin1String(kToolName) + QLatin1Char(':'))) last_error_line_ = text;
    if (std::optional<ProgressLine> p = ParseProgressLine(text)) {
      last_progress_ = *p;
      emit progress(p->index - 1, p->total, p->phase);  // item `index` is being measured
    }
    emit line(text);
  }
}

void CalibrationRun::readStdout() {
  for (const QString& text : TakeLines(&stdout_rest_, process_.readAllStandardOutput())) {
    if (std::optional<QString> path = ParseWrittenLine(text)) {
      written_ = QDir(process_.workingDirectory().isEmpty() ? QDir::currentPath()
                                                            : process_.workingDirectory())
                     .absoluteFilePath(*path);
    }
    emit line(text);
  }
}

QString CalibrationRun::lastError() const {
  if (last_error_line_.isEmpty()) return QStringLiteral("no message");
  return last_error_line_;
}

void CalibrationRun::onFinished(int exit_code, QProcess::ExitStatus status) {
  kill_timer_.stop();
  // A last line without its newline.
  stderr_rest_.append('\n');
  stdout_rest_.append('\n');
  readStderr();
  readStdout();
  const bool was_cancelled = cancelling_;
  cancelling_ = false;
  if (killed_) {
    emit failed(interrupted_ ? QStringLiteral("cancelled: %1 did not stop within %2 s of the "
                                              "interrupt and was killed; no profile was written")
                                   .arg(QLatin1String(kToolName))
                                   .arg(grace_ms_ / 1000.0)
                             : QStringLiteral("cancelled before %1 started; no profile was written")
                                   .arg(QLatin1String(kToolName)));
    return;
  }
  if (status == QProcess::CrashExit) {
    // An interrupt before the tool set up its handler ends it at once.
    emit failed(was_cancelled
                    ? QStringLiteral("cancelled before %1 began measuring; no profile "
                                     "was written")
                          .arg(QLatin1String(kToolName))
                    : QStringLiteral("%1 crashed (%2)").arg(QLatin1String(kToolName), lastError()));
    return;
  }
  if ((exit_code == 0 || exit_code == 2) && !written_.isEmpty()) {
    // The tool finishes the item it announced before it exits, even when interrupted.
    if (last_progress_.total > 0)
      emit progress(last_progress_.index, last_progress_.total, last_progress_.phase);
    emit finished(written_, exit_code);
    return;
  }
  emit failed(QStringLiteral("%1 exited with status %2: %3")
                  .arg(QLatin1String(kToolName))
                  .arg(exit_code)
                  .arg(lastError()));
}

void CalibrationRun::onError(QProcess::ProcessError error) {
  if (error != QProcess::FailedToStart) return;  // the others end in finished()
  emit failed(QStringLiteral("cannot start %1: %2").arg(executable_, process_.errorString()));
}

}  // namespace trainsim::gui
