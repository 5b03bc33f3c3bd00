// The launch page's parts: ChosenLaunchPlan for any candidate, BundleModel
// under QAbstractItemModelTester, the page's form messages and Write bundle,
// and LocalRunWorker on a real 2-rank CPU run (finished, and cancelled).
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QThread>
#include <QtCharts/QLineSeries>
#include <QtTest>
#include <chrono>
#include <cstdlib>

#include "gui/app/launch_page.h"
#include "gui/app/main_window.h"
#include "gui/models/bundle_model.h"
#include "gui/models/chosen_plan.h"
#include "gui/models/local_run_worker.h"
#include "gui/models/worker_thread.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"
#include "launch/bundle_writer.h"

namespace trainsim::gui::test {

namespace {

#ifdef TRAINSIM_TRAIN_BINARY
constexpr char kTrainer[] = TRAINSIM_TRAIN_BINARY;
#else
constexpr char kTrainer[] = "";
#endif
constexpr char kCalibrate[] = TRAINSIM_CALIBRATE_EXE;

// A quick cpu profile of this machine (about 5 s on 2 cores) and its cores; 0
// when trainsim-calibrate failed.
int QuickCpuProfile(const QString& path) {
  const std::string cmd = std::string(kCalibrate) + " --backend cpu --quick --out '" +
                          path.toStdString() + "' > /dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) return 0;
  Expected<int> cores = launch::ProfileCores(path.toStdString());
  return cores.ok() ? *cores : 0;
}

// What the window hands the pages after planning the small scenario.
std::shared_ptr<const PlannedScenario> SmallPlanned() {
  auto p = std::make_shared<PlannedScenario>();
  p->path = SmallScenarioPath();
  p->scenario = SmallScenario();  // with the file's document
  p->catalog = TheCatalog();
  p->plan = SmallPlan();
  return p;
}

// The small scenario planned with more candidates confirmed, so that some
// run on another instance type or node count than the recommendation.
std::shared_ptr<const PlannedScenario> WidePlanned() {
  static const std::shared_ptr<const PlannedScenario> planned = [] {
    auto p = std::make_shared<PlannedScenario>(*SmallPlanned());
    p->scenario.search.confirm_top = 24;
    planner::PlanOptions options;
    options.jobs = 2;
    Expected<planner::Plan> plan = planner::MakePlan(p->scenario, *p->catalog, options);
    if (!plan.ok()) std::abort();
    p->plan = std::make_shared<const planner::Plan>(std::move(*plan));
    return p;
  }();
  return planned;
}

// The small scenario with a model small enough for a local run of seconds
// (SizeLocalRun trains it as it is).
nlohmann::json TinyDocument() {
  QFile small(SmallScenarioPath());
  if (!small.open(QIODevice::ReadOnly)) std::abort();
  nlohmann::json doc = nlohmann::json::parse(small.readAll().toStdString());
  doc["model"] = {{"layers", 2},       {"hidden", 128}, {"heads", 4},
                  {"ffn_hidden", 512}, {"seq_len", 64}, {"vocab", 1024}};
  return doc;
}

// TinyDocument planned, as the window would hand it to the page.
std::shared_ptr<const PlannedScenario> TinyPlanned() {
  static const std::shared_ptr<const PlannedScenario> planned = [] {
    auto p = std::make_shared<PlannedScenario>();
    p->path = QStringLiteral("tiny-transformer.json");
    p->catalog = TheCatalog();
    Expected<PlanningScenario> s =
        ParsePlanningScenario(TinyDocument().dump(), "tiny-transformer.json", *p->catalog);
    if (!s.ok()) std::abort();
    p->scenario = *s;
    planner::PlanOptions options;
    options.jobs = 2;
    Expected<planner::Plan> plan = planner::MakePlan(p->scenario, *p->catalog, options);
    if (!plan.ok()) std::abort();
    p->plan = std::make_shared<const planner::Plan>(std::move(*plan));
    return p;
  }();
  return planned;
}

launch::LaunchOptions Options(const std::string& s3) {
  launch::LaunchOptions o;
  o.s3_uri = s3;
  return o;
}

// A candidate other than the recommendation on another instance type or node count.
int OtherCandidate(const planner::Plan& plan) {
  const planner::Candidate& best = plan.confirmed[plan.best].candidate;
  for (int i = 0; i < static_cast<int>(plan.confirmed.size()); ++i) {
    const planner::Candidate& c = plan.confirmed[i].candidate;
    if (c.instance != best.instance || c.nodes != best.nodes) return i;
  }
  return -1;
}

std::string FileOf(const launch::Bundle& b, const std::string& path) {
  for (const launch::BundleFile& f : b.files) {
    if (f.path == path) return f.content;
  }
  return {};
}

}  // namespace

class LaunchTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<WorkerThread<LocalRunWorker>> thread_;
  LocalRunWorker* worker_ = nullptr;
  QTemporaryDir run_dir_;

  bool haveTrainer() {
    if (std::string(kTrainer).empty()) return false;
    qputenv("TRAINSIM_TRAIN", kTrainer);
    if (geteuid() == 0) {  // Open MPI refuses root without these (as tests/launch sets them)
      qputenv("OMPI_ALLOW_RUN_AS_ROOT", "1");
      qputenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    return true;
  }

  void startRun(int steps) {
    auto plan = ChosenLaunchPlan(*TinyPlanned(), TinyPlanned()->plan->best);
    QVERIFY2(plan.ok(), plan.status().message().c_str());
    launch::LocalOptions o;
    o.ranks = 2;
    o.steps = steps;
    o.warmup_steps = 1;
    o.checkpoint_every = 0;
    o.out_dir = run_dir_.path().toStdString();
    QMetaObject::invokeMethod(worker_, "run", Qt::QueuedConnection,
                              Q_ARG(std::shared_ptr<const trainsim::launch::LaunchPlan>,
                                    std::make_shared<const launch::LaunchPlan>(std::move(*plan))),
                              Q_ARG(trainsim::launch::LocalOptions, o),
                              Q_ARG(std::shared_ptr<const trainsim::Catalog>, TheCatalog()));
  }

 private slots:
  void init() {
    worker_ = new LocalRunWorker;
    thread_ = std::make_unique<WorkerThread<LocalRunWorker>>(worker_);
  }
  void cleanup() {
    thread_.reset();  // cancels, ends the thread, deletes the worker
    worker_ = nullptr;
  }

  void chosenPlanIsThatCandidate() {
    const auto planned = WidePlanned();
    const planner::Plan& plan = *planned->plan;
    Expected<launch::LaunchPlan> best = ChosenLaunchPlan(*planned, plan.best);
    QVERIFY2(best.ok(), best.status().message().c_str());
    QCOMPARE(best->plan.dump(),
             planner::ToJson(planned->scenario, plan, planned->scenario.document).dump());

    const int other = OtherCandidate(plan);
    QVERIFY2(other >= 0, "the small plan's candidates all share the recommendation's instance");
    Expected<launch::LaunchPlan> chosen = ChosenLaunchPlan(*planned, other);
    QVERIFY2(chosen.ok(), chosen.status().message().c_str());
    const planner::ConfirmedCandidate& c = plan.confirmed[other];
    const InstanceType& type = *plan.space.instances[c.candidate.instance];
    QCOMPARE(chosen->scenario.instance.name, type.name);
    QCOMPARE(chosen->scenario.cluster.nodes, c.candidate.nodes);
    QCOMPARE(chosen->scenario.parallel.tp, c.candidate.tp);
    QCOMPARE(chosen->step_time_s, c.simulated.step.step_time_s);
    Expected<launch::Bundle> bundle = launch::MakeBundle(*chosen, Options("s3://my-bucket/run"));
    QVERIFY2(bundle.ok(), bundle.status().message().c_str());
    const nlohmann::json request =
        nlohmann::json::parse(FileOf(*bundle, "sagemaker/create_training_job.json"));
    QCOMPARE(request["ResourceConfig"]["InstanceType"].get<std::string>(), "ml." + type.name);
    QCOMPARE(request["ResourceConfig"]["InstanceCount"].get<int>(), c.candidate.nodes);

    QCOMPARE(QString::fromStdString(ChosenLaunchPlan(*planned, 99).status().message()),
             QStringLiteral("candidate 99 is not in the plan (%1 confirmed)")
                 .arg(plan.confirmed.size()));
  }

  void bundleModelUnderTester() {
    BundleModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), int(BundleModel::kColumnCount));
    const auto plan = ChosenLaunchPlan(*SmallPlanned(), SmallPlan()->best);
    QVERIFY(plan.ok());
    QVERIFY(model.make(*plan, Options("s3://my-bucket/run")));
    const launch::Bundle expected = *launch::MakeBundle(*plan, Options("s3://my-bucket/run"));
    QCOMPARE(model.rowCount(), static_cast<int>(expected.files.size()));
    QCOMPARE(model.warnings().size(), static_cast<int>(expected.warnings.size()));
    bool any_script = false;
    for (int r = 0; r < model.rowCount(); ++r) {
      const launch::BundleFile& f = expected.files[r];
      QCOMPARE(model.index(r, BundleModel::kPath).data().toString(),
               QString::fromStdString(f.path));
      QCOMPARE(model.index(r, BundleModel::kBytes).data(Qt::UserRole).toLongLong(),
               static_cast<qlonglong>(f.content.size()));
      QCOMPARE(model.index(r, BundleModel::kExecutable).data(Qt::UserRole).toBool(), f.executable);
      QCOMPARE(model.index(r, 0).data(BundleModel::kContentRole).toString().toStdString(),
               f.content);
      any_script = any_script || f.executable;
    }
    QVERIFY(any_script);
    QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("README.md"));

    // Refused options: no files, MakeBundle's message.
    QVERIFY(!model.make(*plan, Options("http://my-bucket")));
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.error().toStdString(),
             launch::MakeBundle(*plan, Options("http://my-bucket")).status().message());
    model.clear();
    QVERIFY(model.error().isEmpty());
  }

  void pageShowsTheMessageAndWritesThePreviewedBytes() {
    LaunchPage page;
    QVERIFY(!page.formError()->text().isEmpty());  // no plan yet: says what to do
    page.setPlanned(SmallPlanned());
    // SageMaker is a target and no S3 URI is given: MakeBundle's message, no files.
    QCOMPARE(page.bundle()->rowCount(), 0);
    QCOMPARE(page.formError()->text().toStdString(),
             launch::MakeBundle(*page.launchPlan(), Options("")).status().message());
    page.s3Uri()->setText(QStringLiteral("s3:/bad"));
    QCOMPARE(page.bundle()->rowCount(), 0);
    QCOMPARE(page.formError()->text().toStdString(),
             launch::MakeBundle(*page.launchPlan(), Options("s3:/bad")).status().message());
    QVERIFY(page.preview()->toPlainText().isEmpty());
    page.s3Uri()->setText(QStringLiteral("s3://my-bucket/run"));
    QVERIFY(page.formError()->text().isEmpty());
    QVERIFY(page.bundle()->rowCount() > 0);
    QCOMPARE(page.preview()->toPlainText(),
             page.bundle()->index(0, 0).data(BundleModel::kContentRole).toString());

    // Another candidate of another plan: its nodes.
    page.setPlanned(WidePlanned());
    const int other = OtherCandidate(*WidePlanned()->plan);
    QVERIFY(other >= 0);
    page.setCandidate(other);
    const planner::Candidate& c = WidePlanned()->plan->confirmed[other].candidate;
    QCOMPARE(page.launchPlan()->scenario.cluster.nodes, c.nodes);
    QVERIFY(page.candidateLabel()->text().startsWith(
        QStringLiteral("<b>Candidate %1</b>").arg(other + 1)));

    // Written: the previewed bytes, scripts executable.
    QTemporaryDir tmp;
    const QString dir = tmp.filePath(QStringLiteral("bundle"));
    QVERIFY2(page.writeBundle(dir), qPrintable(page.status()->text()));
    for (int r = 0; r < page.bundle()->rowCount(); ++r) {
      const QModelIndex i = page.bundle()->index(r, 0);
      QFile f(dir + QLatin1Char('/') + i.data().toString());
      QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
      QCOMPARE(QString::fromUtf8(f.readAll()), i.data(BundleModel::kContentRole).toString());
      QCOMPARE(bool(f.permissions() & QFileDevice::ExeOwner),
               page.bundle()->index(r, BundleModel::kExecutable).data(Qt::UserRole).toBool());
    }
    // A folder of someone else's files is refused, with WriteBundle's message.
    const QString foreign = tmp.filePath(QStringLiteral("foreign"));
    QVERIFY(QDir().mkpath(foreign));
    QFile mine(foreign + QStringLiteral("/notes.txt"));
    QVERIFY(mine.open(QIODevice::WriteOnly));
    mine.close();
    QVERIFY(!page.writeBundle(foreign));
    QCOMPARE(page.status()->text().toStdString(),
             launch::WriteBundle(foreign.toStdString(), *page.bundle()->bundle()).message());
    QVERIFY(page.status()->text().contains(QStringLiteral("not written by `trainsim launch`")));
  }

  void localRunStreamsEveryStep() {
    if (!haveTrainer()) QSKIP("trainsim-train was not built (no MPI)");
    QSignalSpy starting(worker_, &LocalRunWorker::starting);
    QSignalSpy steps(worker_, &LocalRunWorker::step);
    QSignalSpy finished(worker_, &LocalRunWorker::finished);
    QSignalSpy failed(worker_, &LocalRunWorker::failed);
    startRun(4);
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() == 1, 60000);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
    QCOMPARE(starting.count(), 1);
    QVERIFY(!starting.at(0).at(0).isValid());  // no profile: no prediction
    QCOMPARE(starting.at(0).at(1).toInt(), 4);
    QVERIFY2(starting.at(0).at(2).toString().startsWith(QStringLiteral("'mpirun' '-np' '2' ")),
             qPrintable(starting.at(0).at(2).toString()));
    QCOMPARE(steps.count(), 4);
    for (int i = 0; i < 4; ++i) QVERIFY(steps.at(i).at(1).toDouble() > 0);
    const auto report =
        finished.at(0).at(0).value<std::shared_ptr<const trainsim::launch::LocalReport>>();
    QCOMPARE(report->run.exit_code, 0);
    QVERIFY(!report->run.interrupted);
    QCOMPARE(static_cast<int>(report->run.steps.size()), 4);
    QVERIFY(report->measured_step_s.has_value());
    QVERIFY(!report->predicted_step_s.has_value());
  }

  void cancelStopsTheRunAfterItsStep() {
    if (!haveTrainer()) QSKIP("trainsim-train was not built (no MPI)");
    QSignalSpy steps(worker_, &LocalRunWorker::step);
    QSignalSpy finished(worker_, &LocalRunWorker::finished);
    QSignalSpy failed(worker_, &LocalRunWorker::failed);
    startRun(500);
    QTRY_VERIFY_WITH_TIMEOUT(steps.count() >= 1, 60000);
    const auto cancelled_at = std::chrono::steady_clock::now();
    worker_->cancel();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() == 1, 20000);
    const double stop_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - cancelled_at).count();
    QVERIFY2(stop_s < 10, qPrintable(QString::number(stop_s)));
    QCOMPARE(failed.count(), 0);
    const auto report =
        finished.at(0).at(0).value<std::shared_ptr<const trainsim::launch::LocalReport>>();
    QVERIFY(report->run.interrupted);
    QCOMPARE(report->run.exit_code, 130);  // the trainer's clean stop (docs/local-run.md)
    QVERIFY(report->run.steps.size() < 500);

    // The cancel applied to that run only: the next one runs.
    steps.clear();
    startRun(2);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 60000);
    QCOMPARE(steps.count(), 2);
  }

  // Run and Cancel on the page: steps drawn as they come, "no prediction"
  // said, and the run stopped after its step; the page is idle after.
  void pageRunsAndCancels() {
    if (!haveTrainer()) QSKIP("trainsim-train was not built (no MPI)");
    LaunchPage page;
    page.setPlanned(TinyPlanned());
    QVERIFY(page.runButton()->isEnabled());
    QVERIFY(!page.cancelButton()->isEnabled());
    page.runFolder()->setText(run_dir_.path());
    page.steps()->setValue(500);
    QSignalSpy ended(&page, &LaunchPage::localRunEnded);
    page.runButton()->click();
    QVERIFY(page.running());
    QVERIFY(!page.runButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(page.measuredSeries()->count() >= 2, 60000);
    QVERIFY2(page.runSummary()->text().startsWith(QStringLiteral("No prediction")),
             qPrintable(page.runSummary()->text()));
    QCOMPARE(page.predictedSeries()->count(), 0);
    QCOMPARE(page.progress()->maximum(), 500);
    QVERIFY(page.progress()->value() >= 2);
    page.cancelButton()->click();
    QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 20000);
    QVERIFY2(page.runSummary()->text().startsWith(QStringLiteral("Interrupted after ")),
             qPrintable(page.runSummary()->text()));
    QVERIFY(page.measuredSeries()->count() < 500);
    QVERIFY(!page.running());
    QVERIFY(page.runButton()->isEnabled());
    QVERIFY(!page.cancelButton()->isEnabled());
  }

  // The window after planning, on the Launch tab: the bundle of the
  // recommendation with a script in the preview, and a finished local run.
  void screenshot() {
    // The small scenario with a model small enough for a local run of seconds.
    QTemporaryDir tmp;
    const QString path = tmp.filePath(QStringLiteral("tiny-transformer.json"));
    QFile tiny(path);
    QVERIFY(tiny.open(QIODevice::WriteOnly));
    tiny.write(QByteArray::fromStdString(TinyDocument().dump(2)));
    tiny.close();
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openScenario(path));
    QSignalSpy shown(&w, &MainWindow::planShown);
    w.startPlan();
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
    LaunchPage* page = w.launchPage();
    w.tabs()->setCurrentWidget(page);
    QCOMPARE(page->launchPlan()->plan["recommendation"]["candidate"].get<int>(),
             w.planned()->plan->best);
    page->s3Uri()->setText(QStringLiteral("s3://my-bucket/tiny"));
    for (int r = 0; r < page->bundle()->rowCount(); ++r) {
      if (page->bundle()->index(r, 0).data().toString() == QStringLiteral("torchrun.sh"))
        page->fileView()->selectRow(r);
    }
    QVERIFY(page->preview()->toPlainText().startsWith(QStringLiteral("#!")));
    if (haveTrainer()) {
      page->runFolder()->setText(tmp.filePath(QStringLiteral("run")));
      // A prediction needs a profile whose cores are the ranks; more than 8
      // ranks would make the run too slow for a test.
      const QString profile = tmp.filePath(QStringLiteral("cpu.json"));
      const int cores = QuickCpuProfile(profile);
      if (cores >= 1 && cores <= 8) {
        page->profile()->setText(profile);
        page->ranks()->setValue(cores);
      }
      page->steps()->setValue(12);
      QSignalSpy ended(page, &LaunchPage::localRunEnded);
      page->runButton()->click();
      QVERIFY(page->running());
      QVERIFY(page->cancelButton()->isEnabled());
      QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 1, 60000);
      QCOMPARE(page->measuredSeries()->count(), 12);
      QCOMPARE(page->progress()->value(), 12);
      QVERIFY2(page->runSummary()->text().startsWith(QStringLiteral("Done: 12 steps.")),
               qPrintable(page->runSummary()->text()));
      QVERIFY(page->runSummary()->text().contains(QStringLiteral("Median step after warm-up")));
      if (!page->profile()->text().isEmpty()) {  // the dashed line at the prediction
        QCOMPARE(page->predictedSeries()->count(), 2);
        QVERIFY(page->predictedSeries()->at(0).y() > 0);
        QVERIFY2(page->runSummary()->text().contains(QStringLiteral(": error ")),
                 qPrintable(page->runSummary()->text()));
      }
    }
    QTest::qWait(100);  // let the chart lay out
    QCOMPARE(SaveScreenshot(w, QStringLiteral("launch")), QString());
  }
};

std::unique_ptr<QObject> MakeLaunchTest() { return std::make_unique<LaunchTest>(); }

}  // namespace trainsim::gui::test

#include "launch_test.moc"
