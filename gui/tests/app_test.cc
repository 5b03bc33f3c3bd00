// trainsim-gui's command line and the ways a plan leaves the GUI: the
// options parser, --catalog, the headless --export (the real binary, with no
// display, byte-identical to `trainsim plan --out`), the window's Save plan,
// and --screenshots (a PNG of every page).
#include <QAction>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gui/app/main_window.h"
#include "gui/models/app_options.h"
#include "gui/models/plan_export.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {

namespace {

QByteArray ReadAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

struct ProcessResult {
  int exit_code = -1;
  QString err;
};

// Runs `program args` to its end (at most 120 s) with `env` changes applied.
ProcessResult RunProcess(const QString& program, const QStringList& args,
                         const QProcessEnvironment& env) {
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(program, args);
  if (!p.waitForFinished(120000)) {
    p.kill();
    p.waitForFinished();
    return {-1, QStringLiteral("timed out")};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromLocal8Bit(p.readAllStandardError())};
}

}  // namespace

class AppTest : public QObject {
  Q_OBJECT

 private slots:
  void parsesOptions() {
    auto o = ParseAppOptions({QStringLiteral("trainsim-gui"), QStringLiteral("s.json"),
                              QStringLiteral("--plan"), QStringLiteral("--catalog"),
                              QStringLiteral("c.json"), QStringLiteral("--profile"),
                              QStringLiteral("p.json")});
    QVERIFY(o.ok());
    QCOMPARE(o->scenario, QStringLiteral("s.json"));
    QVERIFY(o->plan);
    QCOMPARE(o->catalog_file, QStringLiteral("c.json"));
    QCOMPARE(o->profile, QStringLiteral("p.json"));
    QVERIFY(o->export_path.isEmpty());
  }

  void rejectsBadOptions() {
    auto error = [](QStringList args) {
      args.prepend(QStringLiteral("trainsim-gui"));
      auto o = ParseAppOptions(args);
      return o.ok() ? QString() : QString::fromStdString(o.status().message());
    };
    QCOMPARE(error({QStringLiteral("--export"), QStringLiteral("x.json")}),
             QStringLiteral("--export needs a scenario file"));
    QCOMPARE(error({QStringLiteral("--screenshots"), QStringLiteral("dir")}),
             QStringLiteral("--screenshots needs a scenario file"));
    QCOMPARE(error({QStringLiteral("a.json"), QStringLiteral("b.json")}),
             QStringLiteral("one scenario at most, got 2"));
    QCOMPARE(error({QStringLiteral("a.json"), QStringLiteral("--export"), QStringLiteral("p"),
                    QStringLiteral("--screenshots"), QStringLiteral("d")}),
             QStringLiteral("--export and --screenshots cannot be combined"));
    QCOMPARE(error({QStringLiteral("--nope")}), QStringLiteral("Unknown option 'nope'."));
    QCOMPARE(error({QStringLiteral("a.json"), QStringLiteral("--catalog")}),
             QStringLiteral("Missing value after '--catalog'."));
  }

  void extraCatalogAddsTypes() {
    QTemporaryDir dir;
    // One reference system under another name, as a user's own catalog file.
    std::ifstream in(TRAINSIM_SOURCE_DIR "/instance-catalog/reference-systems.json");
    nlohmann::json ref = nlohmann::json::parse(in);
    nlohmann::json mine = ref["instances"][0];
    mine["name"] = "lab-a100";
    const QString path = dir.filePath(QStringLiteral("lab.json"));
    std::ofstream(path.toStdString()) << nlohmann::json{{"version", 1}, {"instances", {mine}}};
    auto catalog = LoadCatalog(path);
    QVERIFY2(catalog.ok(), catalog.status().message().c_str());
    QVERIFY((*catalog)->Find("lab-a100") != nullptr);
    QVERIFY((*catalog)->Find("p4d.24xlarge") != nullptr);

    const QString missing = dir.filePath(QStringLiteral("missing.json"));
    auto bad = LoadCatalog(missing);
    QVERIFY(!bad.ok());
    QVERIFY2(QString::fromStdString(bad.status().message()).startsWith(missing),
             bad.status().message().c_str());
  }

  // --catalog reaches the planner: a scenario on a type only the extra file
  // has plans with it (headless and in a window given that catalog) and is
  // refused without it.
  void catalogOptionReachesThePlanner() {
    QTemporaryDir dir;
    std::ifstream in(TRAINSIM_SOURCE_DIR "/instance-catalog/reference-systems.json");
    nlohmann::json mine = nlohmann::json::parse(in)["instances"][0];
    mine["name"] = "lab-a100";
    const QString catalog = dir.filePath(QStringLiteral("lab.json"));
    std::ofstream(catalog.toStdString()) << nlohmann::json{{"version", 1}, {"instances", {mine}}};
    std::ifstream small(SmallScenarioPath().toStdString());
    nlohmann::json scenario = nlohmann::json::parse(small);
    scenario["cluster"]["instance"] = "lab-a100";
    scenario["search"]["instances"] = {"lab-a100"};
    scenario["search"].erase("budget_usd");        // the reference system has no price:
    scenario["search"]["objective"] = "min-time";  // plan it by time
    const QString path = dir.filePath(QStringLiteral("lab-scenario.json"));
    std::ofstream(path.toStdString()) << scenario.dump(2);

    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    const QString out = dir.filePath(QStringLiteral("lab.plan.json"));
    ProcessResult r = RunProcess(
        QStringLiteral(TRAINSIM_GUI_BINARY),
        {path, QStringLiteral("--catalog"), catalog, QStringLiteral("--export"), out}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    const nlohmann::json plan = nlohmann::json::parse(ReadAll(out).toStdString());
    QCOMPARE(
        QString::fromStdString(plan["recommendation"]["config"]["instance"].get<std::string>()),
        QStringLiteral("lab-a100"));
    r = RunProcess(QStringLiteral(TRAINSIM_GUI_BINARY), {path, QStringLiteral("--export"), out},
                   env);
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains(QStringLiteral("lab-a100")), qPrintable(r.err));

    auto loaded = LoadCatalog(catalog);
    QVERIFY(loaded.ok());
    MainWindow w(*loaded);
    QVERIFY(w.openScenario(path));
    QSignalSpy shown(&w, &MainWindow::planShown);
    w.startPlan();
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
    const planner::Plan& p = *w.planned()->plan;
    QCOMPARE(p.space.instances.at(p.confirmed.at(p.best).candidate.instance)->name,
             std::string("lab-a100"));
  }

  // The real binary, without a display: the plan file equals the CLI's.
  void headlessExportEqualsTheCli() {
    QTemporaryDir dir;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    const QString gui_plan = dir.filePath(QStringLiteral("gui.plan.json"));
    const QString cli_plan = dir.filePath(QStringLiteral("cli.plan.json"));
    ProcessResult gui =
        RunProcess(QStringLiteral(TRAINSIM_GUI_BINARY),
                   {SmallScenarioPath(), QStringLiteral("--export"), gui_plan}, env);
    QVERIFY2(gui.exit_code == 0, qPrintable(gui.err));
    QVERIFY(gui.err.contains(QStringLiteral("plan written to ") + gui_plan));
    ProcessResult cli = RunProcess(
        QStringLiteral(TRAINSIM_BINARY),
        {QStringLiteral("plan"), SmallScenarioPath(), QStringLiteral("--out"), cli_plan}, env);
    QVERIFY2(cli.exit_code == 0, qPrintable(cli.err));
    const QByteArray bytes = ReadAll(gui_plan);
    QVERIFY(bytes.size() > 1000);
    QCOMPARE(bytes, ReadAll(cli_plan));
  }

  void headlessExportReportsErrors() {
    QTemporaryDir dir;
    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    const QString bad = QStringLiteral(TRAINSIM_SOURCE_DIR "/tests/cli/data/wrong-type.json");
    ProcessResult r =
        RunProcess(QStringLiteral(TRAINSIM_GUI_BINARY),
                   {bad, QStringLiteral("--export"), dir.filePath(QStringLiteral("x"))}, env);
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.startsWith(QStringLiteral("trainsim-gui: ") + bad + QLatin1Char(':')),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("x"))));
    // The output folder does not exist: the message names the file.
    const QString nowhere = dir.filePath(QStringLiteral("no/such/dir/p.json"));
    r = RunProcess(QStringLiteral(TRAINSIM_GUI_BINARY),
                   {SmallScenarioPath(), QStringLiteral("--export"), nowhere}, env);
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.contains(nowhere), qPrintable(r.err));
    r = RunProcess(QStringLiteral(TRAINSIM_GUI_BINARY), {QStringLiteral("--bogus")}, env);
    QCOMPARE(r.exit_code, 1);
    QVERIFY2(r.err.startsWith(QStringLiteral("trainsim-gui: Unknown option 'bogus'.")),
             qPrintable(r.err));
  }

  void windowSavesThePlan() {
    MainWindow w;
    QVERIFY(!w.savePlanAction()->isEnabled());
    QVERIFY(w.openScenario(SmallScenarioPath()));
    QSignalSpy shown(&w, &MainWindow::planShown);
    QSignalSpy planned(&w, &MainWindow::plannedChanged);
    w.startPlan();
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
    QVERIFY(w.savePlanAction()->isEnabled());
    QVERIFY(w.planned());
    QCOMPARE(planned.count(), 1);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("w.plan.json"));
    QVERIFY(w.savePlan(path));
    const QByteArray bytes = ReadAll(path);
    QCOMPARE(bytes, QByteArray::fromStdString(PlanJsonText(*w.planned())));
    // The scenario is embedded, as the launcher needs it.
    QVERIFY(nlohmann::json::parse(bytes.toStdString()).contains("scenario_json"));
    QVERIFY(!w.savePlan(dir.filePath(QStringLiteral("no/such/dir/p.json"))));
    QVERIFY(w.statusText().contains(QStringLiteral("no/such/dir")));
    // Opening another scenario drops the plan.
    QVERIFY(w.openScenario(SmallScenarioPath()));
    QVERIFY(!w.planned());
    QVERIFY(!w.savePlanAction()->isEnabled());
  }

  // The Calibration page's "Use in scenario": cluster.profile is written
  // relative to the scenario's folder, and the scenario then parses with the
  // profile (here a cpu profile, whose own catalog entry makes local-cpu known).
  void useProfileAttachesItToTheScenario() {
    QTemporaryDir dir;
    const QString scenario = dir.filePath(QStringLiteral("cpu.json"));
    QVERIFY(QFile::copy(QStringLiteral(TRAINSIM_SOURCE_DIR "/scenarios/local/cpu-transformer.json"),
                        scenario));
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("profiles")));
    const QString profile = dir.filePath(QStringLiteral("profiles/cpu-profile.json"));
    QVERIFY(QFile::copy(CpuProfilePath(), profile));

    MainWindow w;
    QVERIFY(!w.useProfile(profile));  // no scenario yet
    QVERIFY(w.statusText().startsWith(QStringLiteral("Open or create a scenario first")));
    QVERIFY(w.openScenario(scenario));
    QVERIFY(!w.document()->parse(*TheCatalog()));  // local-cpu comes with the profile
    QVERIFY(w.calibrationPage()->loadProfile(profile));
    QVERIFY(w.calibrationPage()->useButton()->isEnabled());
    w.calibrationPage()->useButton()->click();
    const nlohmann::json doc = nlohmann::json::parse(w.document()->text().toStdString());
    QCOMPARE(QString::fromStdString(doc["cluster"]["profile"].get<std::string>()),
             QStringLiteral("profiles/cpu-profile.json"));
    QCOMPARE(doc["cluster"]["instance"], "local-cpu");  // the rest is kept
    QVERIFY(w.document()->modified());
    QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.scenarioPage()));
    QVERIFY2(w.document()->parse(*TheCatalog()), qPrintable(w.document()->error().message));
    QVERIFY(w.document()->scenario()->scenario.profile != nullptr);

    // Not JSON: the message says so and the text stays.
    w.document()->setText(QStringLiteral("{ not json"));
    QVERIFY(!w.useProfile(profile));
    QVERIFY2(w.statusText().contains(QStringLiteral("not valid JSON")), qPrintable(w.statusText()));
    QCOMPARE(w.document()->text(), QStringLiteral("{ not json"));
  }

  // --screenshots: the real binary plans in the (offscreen) window and saves every page.
  void screenshotsEveryPage() {
    QTemporaryDir dir;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    ProcessResult r =
        RunProcess(QStringLiteral(TRAINSIM_GUI_BINARY),
                   {SmallScenarioPath(), QStringLiteral("--screenshots"), dir.path()}, env);
    QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    MainWindow w;  // the same pages as the binary's window
    QVERIFY(w.tabs()->count() >= 1);
    for (int i = 0; i < w.tabs()->count(); ++i) {
      const QString png = dir.filePath(w.tabs()->tabText(i).toLower() + QStringLiteral(".png"));
      QVERIFY2(QFileInfo(png).size() > 10000, qPrintable(png));
      QImage image(png);
      QCOMPARE(image.size(), QSize(1280, 800) * image.devicePixelRatio());
    }
  }
};

std::unique_ptr<QObject> MakeAppTest() { return std::make_unique<AppTest>(); }

}  // namespace trainsim::gui::test

#include "app_test.moc"
