// The Calibration page offscreen: a loaded profile's charts (catalog figures
// dashed), Save as, errors in the status line, a run from the page cancelled
// into an incomplete profile, and the screenshot in the window.
#include "gui/app/calibration_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLineSeries>
#include <QtTest>

#include "gui/app/main_window.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {
namespace {

int DashedSeries(QChartView* view) {
  int dashed = 0;
  for (QAbstractSeries* s : view->chart()->series()) {
    auto* line = qobject_cast<QLineSeries*>(s);
    if (line && line->pen().style() == Qt::DashLine) ++dashed;
  }
  return dashed;
}

}  // namespace

class CalibrationPageTest : public QObject {
  Q_OBJECT

 private slots:
  void showsAProfileAgainstTheCatalog() {
    CalibrationPage page(TheCatalog());
    QSignalSpy shown(&page, &CalibrationPage::profileShown);
    QVERIFY(page.loadProfile(CpuProfilePath()));
    QCOMPARE(shown.count(), 1);
    QCOMPARE(page.statusText(), CpuProfilePath() + QStringLiteral(" loaded."));
    // GEMM: the fp32 table and the catalog's fp32 peak of the profile's own entry.
    QCOMPARE(page.gemmChart()->chart()->series().size(), 2);
    QCOMPARE(DashedSeries(page.gemmChart()), 1);
    // Memory: every test, one catalog bandwidth line shared by them.
    QVERIFY(page.memoryChart()->chart()->series().size() >= 3);
    QCOMPARE(DashedSeries(page.memoryChart()), 1);
    // Collectives over the most ranks (2 here): five ops and the NVLink figure.
    QCOMPARE(page.collectiveChart()->chart()->title(), QStringLiteral("Collectives over 2 ranks"));
    QCOMPARE(page.collectiveChart()->chart()->series().size(), 6);
    QCOMPARE(DashedSeries(page.collectiveChart()), 1);

    QTemporaryDir dir;
    const QString copy = dir.filePath(QStringLiteral("saved.json"));
    QVERIFY(page.saveProfileAs(copy));
    QCOMPARE(ReadFile(copy), ReadFile(CpuProfilePath()));
    QCOMPARE(page.statusText(), QStringLiteral("Profile saved as %1.").arg(copy));
  }

  void badFilesAreShownInTheStatusLine() {
    CalibrationPage page(TheCatalog());
    QTemporaryDir dir;
    const QString bad = dir.filePath(QStringLiteral("bad.json"));
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\n  \"version\": 2\n}\n");
    f.close();
    QVERIFY(!page.loadProfile(bad));
    QVERIFY2(page.statusText().startsWith(bad + QStringLiteral(":2:")),
             qPrintable(page.statusText()));
    QVERIFY2(page.statusText().contains(QStringLiteral("version")), qPrintable(page.statusText()));
    QVERIFY(!page.loadProfile(dir.filePath(QStringLiteral("none.json"))));
    QCOMPARE(page.statusText(), QStringLiteral("cannot read %1: No such file or directory")
                                    .arg(dir.filePath(QStringLiteral("none.json"))));
    QVERIFY(!page.saveProfileAs(dir.filePath(QStringLiteral("x.json"))));  // nothing loaded
    QCOMPARE(page.curves()->rowCount(), 0);
  }

  void runFromThePageAndCancel() {
    CalibrationPage page(TheCatalog());
    page.run()->setExecutable(QStringLiteral(TRAINSIM_CALIBRATE_EXE));
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("page.json"));
    page.backendBox()->setCurrentText(QStringLiteral("cpu"));
    page.quickBox()->setChecked(true);
    page.outputEdit()->setText(out);
    QSignalSpy ended(&page, &CalibrationPage::runEnded);
    QSignalSpy progress(page.run(), &CalibrationRun::progress);
    page.runButton()->click();
    QVERIFY(!page.runButton()->isEnabled());
    QVERIFY(page.cancelButton()->isEnabled());
    QVERIFY(!page.outputEdit()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty() && progress.last().at(1).toInt() > 0, 30000);
    QVERIFY(page.progressBar()->maximum() > 0);
    page.cancelButton()->click();
    QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 30000);
    QVERIFY2(page.statusText().startsWith(QStringLiteral("Incomplete profile written to ") + out),
             qPrintable(page.statusText()));
    QVERIFY(page.curves()->profile());
    QCOMPARE(page.curves()->profile()->path, out);
    QVERIFY(page.log()->toPlainText().contains(QStringLiteral("trainsim-calibrate: interrupted")));
    QVERIFY(page.runButton()->isEnabled());
    QVERIFY(!page.cancelButton()->isEnabled());
  }

  void emptyOutputIsRefused() {
    CalibrationPage page(TheCatalog());
    page.run()->setExecutable(QStringLiteral(TRAINSIM_CALIBRATE_EXE));
    page.outputEdit()->clear();
    page.runButton()->click();
    QVERIFY(!page.run()->running());
    QCOMPARE(page.statusText(), QStringLiteral("Output: give the profile file to write."));
  }

  void screenshot() {
    MainWindow w;
    w.resize(1280, 800);
    w.tabs()->setCurrentWidget(w.calibrationPage());
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.calibrationPage()->loadProfile(CpuProfilePath()));
    QTest::qWait(100);  // let the charts lay out
    QCOMPARE(SaveScreenshot(w, QStringLiteral("calibration")), QString());
  }
};

std::unique_ptr<QObject> MakeCalibrationPageTest() {
  return std::make_unique<CalibrationPageTest>();
}

}  // namespace trainsim::gui::test

#include "calibration_page_test.moc"
