// Runs the trainsim-calibrate executable (docs/calibration.md) as a child
// process, without blocking the GUI thread: its stderr progress lines become
// progress() signals, every output line a line() signal, and its end
// finished() (a profile was written: exit 0, or 2 when incomplete) or
// failed() (exit 1, a crash, a kill, an executable that does not start).
//
// cancel() sends SIGINT, as Ctrl-C would: the tool ends after the current
// measurement and writes what it measured (an incomplete profile, exit 2).
// Should it not end within the grace period, it is killed.
//
// Lives on the GUI thread (QProcess is event-driven); one run at a time.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QTimer>
#include <optional>

namespace trainsim::gui {

struct CalibrationOptions {
  QString backend = QStringLiteral("auto");  // "auto", "cpu" or "cuda"
  bool quick = false;                        // --quick
  QString out;                               // --out (the tool's default when empty)
  bool force = false;                        // --force
  QString gpu;                               // --gpu CATALOG_GPU; "" = from the device
};

// The tool's arguments for `options`.
QStringList CalibrateArguments(const CalibrationOptions& options);

// One "[gemm 12/180] bf16 8192x12288x6144" line: measuring item `index`
// (1-based) of `total` in `phase`.
struct ProgressLine {
  QString phase;  // "gemm", "memory", "collectives"
  int index = 0, total = 0;
  QString item;
};
std::optional<ProgressLine> ParseProgressLine(const QString& line);

// The profile path of the tool's "profile written to PATH[ (incomplete: ...)]"
// line; nullopt for any other line.
std::optional<QString> ParseWrittenLine(const QString& line);

// Where the GUI finds trainsim-calibrate: `app_dir` (installed side by side),
// then `app_dir`/../calibrate (the build tree: build/gui and build/calibrate),
// then PATH. "" when none has it.
QString FindCalibrateExecutable(const QString& app_dir);

class CalibrationRun : public QObject {
  Q_OBJECT

 public:
  explicit CalibrationRun(QObject* parent = nullptr);
  ~CalibrationRun() override;  // a running child is killed

  void setExecutable(const QString& path) { executable_ = path; }
  const QString& executable() const { return executable_; }
  // How long cancel() waits for the tool to write its profile before killing it.
  void setCancelGraceMs(int ms) { grace_ms_ = ms; }
  bool running() const { return process_.state() != QProcess::NotRunning; }
  bool cancelling() const { return cancelling_; }

 public slots:
  // Starts a run; ignored while one runs. Failing to start gives failed().
  void start(const trainsim::gui::CalibrationOptions& options);
  void cancel();

 signals:
  void started();
  // `done` of `total` items of `phase` measured; total 0: busy (not known yet).
  void progress(int done, int total, QString phase);
  void line(QString text);  // one line of the tool's output (stderr or stdout)
  // The tool wrote a profile at `profile_path`: exit code 0 (complete) or 2
  // (incomplete: a measurement failed or the run was cancelled).
  void finished(QString profile_path, int exit_code);
  void failed(QString message);

 private:
  void readStderr();
  void readStdout();
  void onFinished(int exit_code, QProcess::ExitStatus status);
  void onError(QProcess::ProcessError error);
  void killAfterGrace();
  QString lastError() const;

  QProcess process_;
  QTimer kill_timer_;
  QString executable_;
  int grace_ms_ = 30000;
  bool cancelling_ = false;
  bool interrupted_ = false;              // SIGINT was sent
  bool killed_ = false;                   // SIGKILL was sent
  QByteArray stderr_rest_, stdout_rest_;  // an unfinished last line
  QString written_;                       // from "profile written to ..."
  QString last_error_line_;               // the last "trainsim-calibrate: ..." line
  ProgressLine last_progress_;
};

}  // namespace trainsim::gui
