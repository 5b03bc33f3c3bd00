// CalibrationRun with QSignalSpy: the real trainsim-calibrate (--backend cpu
// --quick, about 15 s on a busy 2-core machine) to the end and cancelled
// mid-run; a tool error; an executable that is missing; one that ignores the
// interrupt (a shell script) is killed after the grace period.
#include "gui/models/calibration_run.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/models/loaded_profile.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {
namespace {

const QString kTool = QStringLiteral(TRAINSIM_CALIBRATE_EXE);

CalibrationOptions QuickCpu(const QString& out) {
  CalibrationOptions o;
  o.backend = QStringLiteral("cpu");
  o.quick = true;
  o.out = out;
  return o;
}

}  // namespace

class CalibrationRunTest : public QObject {
  Q_OBJECT

 private slots:
  void parsesTheToolsLines() {
    const std::optional<ProgressLine> p =
        ParseProgressLine(QStringLiteral("[gemm 12/180] bf16 8192x12288x6144"));
    QVERIFY(p);
    QCOMPARE(p->phase, QStringLiteral("gemm"));
    QCOMPARE(p->index, 12);
    QCOMPARE(p->total, 180);
    QCOMPARE(p->item, QStringLiteral("bf16 8192x12288x6144"));
    QVERIFY(ParseProgressLine(QStringLiteral("[collectives 72/72] send_recv 2 ranks 16 MiB")));
    for (const char* bad : {"trainsim-calibrate: measuring x", "[gemm 0/3] fp32 1x1x1",
                            "[gemm 4/3] fp32 1x1x1", "fp32          0.032      0.00", ""})
      QVERIFY2(!ParseProgressLine(QString::fromLatin1(bad)), bad);
    QCOMPARE(*ParseWrittenLine(QStringLiteral("profile written to /tmp/p.json")),
             QStringLiteral("/tmp/p.json"));
    QCOMPARE(*ParseWrittenLine(QStringLiteral(
                 "profile written to p.json.partial (incomplete: the complete profile at --out is "
                 "kept; --force replaces it)")),
             QStringLiteral("p.json.partial"));
    QVERIFY(!ParseWrittenLine(QStringLiteral("memory copy             1.4 GB/s")));
    CalibrationOptions o = QuickCpu(QStringLiteral("/tmp/p.json"));
    o.force = true;
    o.gpu = QStringLiteral("H100-SXM5-80GB");
    QCOMPARE(CalibrateArguments(o),
             QStringList({"--backend", "cpu", "--quick", "--out", "/tmp/p.json", "--force", "--gpu",
                          "H100-SXM5-80GB"}));
  }

  void findsTheToolInTheBuildTree() {
    const QString built = QFileInfo(kTool).canonicalFilePath();
    // build/gui (where trainsim-gui and gui_tests are) -> build/calibrate.
    QCOMPARE(QFileInfo(FindCalibrateExecutable(QCoreApplication::applicationDirPath()))
                 .canonicalFilePath(),
             built);
    QCOMPARE(
        QFileInfo(FindCalibrateExecutable(QFileInfo(kTool).absolutePath())).canonicalFilePath(),
        built);
    QTemporaryDir empty;
    const QByteArray path = qgetenv("PATH");
    qputenv("PATH", empty.path().toLocal8Bit());
    const QString none = FindCalibrateExecutable(empty.path());
    qputenv("PATH", path);
    QCOMPARE(none, QString());
  }

  void quickCpuRunWritesAProfile() {
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("cpu.json"));
    CalibrationRun run;
    run.setExecutable(kTool);
    QSignalSpy progress(&run, &CalibrationRun::progress);
    QSignalSpy lines(&run, &CalibrationRun::line);
    QSignalSpy finished(&run, &CalibrationRun::finished);
    QSignalSpy failed(&run, &CalibrationRun::failed);
    QElapsedTimer clock;
    clock.start();
    run.start(QuickCpu(out));
    QVERIFY(clock.elapsed() < 2000);  // start() does not wait for the tool
    QVERIFY(run.running());
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() == 1, 55000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
    QCOMPARE(finished.at(0).at(0).toString(), out);
    QCOMPARE(finished.at(0).at(1).toInt(), 0);
    QVERIFY(!run.running());
    // Busy first, then each phase counted, the last one to its end.
    QCOMPARE(progress.first().at(1).toInt(), 0);
    QStringList phases;
    for (const QList<QVariant>& p : progress) {
      if (!p.at(2).toString().isEmpty() && !phases.contains(p.at(2).toString()))
        phases << p.at(2).toString();
    }
    QCOMPARE(phases, QStringList({"gemm", "memory", "collectives"}));
    QCOMPARE(progress.last().at(2).toString(), QStringLiteral("collectives"));
    QCOMPARE(progress.last().at(0).toInt(), progress.last().at(1).toInt());
    bool saw_summary = false;
    for (const QList<QVariant>& l : lines)
      saw_summary |= l.at(0).toString() == QStringLiteral("profile written to ") + out;
    QVERIFY(saw_summary);
    Expected<LoadedProfile> lp = LoadProfileFile(out, TheCatalog().get());
    QVERIFY2(lp.ok(), lp.status().message().c_str());
    QVERIFY(lp->profile.provenance.complete);
    QCOMPARE(lp->profile.provenance.backend, std::string("cpu"));
  }

  void cancelWritesAnIncompleteProfile() {
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("cut.json"));
    CalibrationRun run;
    run.setExecutable(kTool);
    QSignalSpy progress(&run, &CalibrationRun::progress);
    QSignalSpy finished(&run, &CalibrationRun::finished);
    QSignalSpy failed(&run, &CalibrationRun::failed);
    run.start(QuickCpu(out));
    // Once the first measurement has begun, the tool's interrupt handler is in place.
    QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty() && progress.last().at(1).toInt() > 0, 30000);
    run.cancel();
    QVERIFY(run.cancelling());
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() == 1, 30000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
    QCOMPARE(finished.at(0).at(0).toString(), out);
    QCOMPARE(finished.at(0).at(1).toInt(), 2);
    Expected<LoadedProfile> lp = LoadProfileFile(out, TheCatalog().get());
    QVERIFY2(lp.ok(), lp.status().message().c_str());
    QVERIFY(!lp->profile.provenance.complete);
    QVERIFY(!lp->profile.failures.empty());
    QCOMPARE(lp->profile.failures.back().first, std::string("calibration"));
    QVERIFY(!run.running());
  }

  void toolErrorIsFailed() {
    CalibrationRun run;
    run.setExecutable(kTool);
    QSignalSpy finished(&run, &CalibrationRun::finished);
    QSignalSpy failed(&run, &CalibrationRun::failed);
    CalibrationOptions o;
    o.backend = QStringLiteral("tpu");
    run.start(o);
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    QCOMPARE(failed.at(0).at(0).toString(),
             QStringLiteral("trainsim-calibrate exited with status 1: trainsim-calibrate: "
                            "--backend: expected cuda, cpu or auto, got \"tpu\""));
    QCOMPARE(finished.count(), 0);
  }

  void missingExecutableIsFailed() {
    CalibrationRun run;
    QSignalSpy failed(&run, &CalibrationRun::failed);
    run.setExecutable(QStringLiteral("/nonexistent/trainsim-calibrate"));
    run.start(QuickCpu(QStringLiteral("/tmp/unused.json")));
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    QVERIFY2(failed.at(0).at(0).toString().startsWith(
                 QStringLiteral("cannot start /nonexistent/trainsim-calibrate: ")),
             qPrintable(failed.at(0).at(0).toString()));
    QVERIFY(!run.running());

    run.setExecutable(QString());  // none was found
    run.start(QuickCpu(QStringLiteral("/tmp/unused.json")));
    QCOMPARE(failed.count(), 2);
    QVERIFY(failed.at(1).at(0).toString().startsWith(
        QStringLiteral("trainsim-calibrate not found (looked next to trainsim-gui")));
  }

  void killedWhenItIgnoresTheInterrupt() {
    QTemporaryDir dir;
    const QString script = dir.filePath(QStringLiteral("stubborn"));
    QFile f(script);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("#!/bin/sh\ntrap '' INT\necho '[gemm 1/3] fp32 128x128x128' >&2\nexec sleep 30\n");
    f.close();
    QVERIFY(f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    CalibrationRun run;
    run.setExecutable(script);
    run.setCancelGraceMs(300);
    QSignalSpy progress(&run, &CalibrationRun::progress);
    QSignalSpy failed(&run, &CalibrationRun::failed);
    run.start(QuickCpu(dir.filePath(QStringLiteral("p.json"))));
    QTRY_VERIFY_WITH_TIMEOUT(progress.count() == 2, 10000);  // busy, then [gemm 1/3]
    run.cancel();
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    QCOMPARE(failed.at(0).at(0).toString(),
             QStringLiteral("cancelled: trainsim-calibrate did not stop within 0.3 s of the "
                            "interrupt and was killed; no profile was written"));
    QVERIFY(!run.running());
  }
};

std::unique_ptr<QObject> MakeCalibrationRunTest() { return std::make_unique<CalibrationRunTest>(); }

}  // namespace trainsim::gui::test

#include "calibration_run_test.moc"
