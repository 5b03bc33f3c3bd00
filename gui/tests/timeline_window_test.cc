// The Timeline and Scaling pages in the window, offscreen: the timeline
// follows the plan view's selection (simulated on the page's worker thread),
// zooms, and waits while hidden; the scaling chart has one point per
// Plan::scaling entry and the stops-paying mark; the pricing bars follow the
// selection. Then the screenshots of both pages.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QItemSelectionModel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtTest>

#include "core/hardware_profile.h"
#include "gui/app/main_window.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {
namespace {

// Plans `path` in `w` and waits for the plan (the window then shows the
// plan tab); with `show_timeline`, then shows the timeline tab and waits for
// the recommendation's timeline.
bool PlanAndWait(MainWindow& w, const QString& path, bool show_timeline = false) {
  if (!w.openScenario(path)) return false;
  QSignalSpy shown(&w, &MainWindow::planShown);
  w.startPlan();
  if (!shown.wait(60000) && shown.isEmpty()) return false;
  if (!show_timeline) return true;
  QSignalSpy timeline(w.timelinePage(), &TimelinePage::timelineShown);
  w.tabs()->setCurrentWidget(w.timelinePage());
  return !timeline.isEmpty() || timeline.wait(60000);
}

// Reads a measured run on the page (off its thread) and waits: whether it was read.
bool OpenMeasured(TimelinePage* page, const QStringList& paths) {
  QSignalSpy read(page, &TimelinePage::measuredRead);
  page->openMeasured(paths);
  return read.wait(60000) && read.at(0).at(0).toBool();
}

// Selects the table row of confirmed candidate `confirmed` in the plan view.
void SelectConfirmed(MainWindow& w, int confirmed) {
  const int row = w.planPage()->candidates()->rowOfConfirmed(confirmed);
  const QModelIndex source = w.planPage()->candidates()->index(row, 0);
  w.planPage()->tableView()->selectRow(w.planPage()->proxy()->mapFromSource(source).row());
}

}  // namespace

class TimelineWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void timelineFollowsTheSelection() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(PlanAndWait(w, SmallScenarioPath(), /*show_timeline=*/true));
    TimelinePage* page = w.timelinePage();
    const auto plan = w.planned()->plan;
    QCOMPARE(page->shownCandidate(), plan->best);

    // A candidate that is not the recommendation.
    const int other = plan->best == 0 ? 1 : 0;
    QSignalSpy shown(page, &TimelinePage::timelineShown);
    SelectConfirmed(w, other);
    QVERIFY(page->busy());
    QVERIFY(page->cancelButton()->isEnabled());
    QCOMPARE(page->shownCandidate(), -1);  // the old trace is gone at once
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
    QCOMPARE(shown.at(0).at(0).toInt(), other);
    QCOMPARE(page->shownCandidate(), other);
    QVERIFY(!page->busy());
    QVERIFY(page->model()->rowCount() > 0);
    QCOMPARE(page->model()->timeline()->step_s, plan->confirmed[other].simulated.step.step_time_s);
    QVERIFY(page->statusText().startsWith(QStringLiteral("#%1 ").arg(other + 1)));
    QVERIFY2(page->statusText().contains(QStringLiteral("80% band")),
             qPrintable(page->statusText()));
    QVERIFY(page->breakdownSeries()->count() > 0);

    // Zoom: + halves the span, the wheel keeps the time under the cursor.
    GanttView* g = page->gantt();
    QCOMPARE(g->visibleStartS(), 0.0);
    const double span = g->visibleSpanS();
    QVERIFY(span >= page->model()->timeline()->step_s);
    g->zoomIn();
    QVERIFY(std::abs(g->visibleSpanS() - span / 2) <= 1e-12 * span);
    const QPoint at(g->viewport()->width() * 3 / 4, 40);
    const double t = g->timeAt(at.x());
    QWheelEvent wheel(at, g->viewport()->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(g->viewport(), &wheel);
    QVERIFY(g->visibleSpanS() < span / 2);
    QVERIFY(std::abs(g->timeAt(at.x()) - t) <= 1e-9 * span);
    g->fit();
    QCOMPARE(g->visibleSpanS(), span);
    // The event under a bar's pixel is found for its tooltip.
    int lane = -1;
    const TimelineEvent& first = page->model()->lane(0).events.front();
    const double mid = (first.start_s + first.end_s) / 2;
    QCOMPARE(g->eventAt(QPoint(static_cast<int>(g->xOf(mid)), g->laneY(0) + 10), &lane), &first);
    QCOMPARE(lane, 0);
  }

  void ganttPaintsOnlyWhatIsInView() {
    // 40 lanes of 5000 back-to-back 10 us events: 200000 events over 50 ms.
    sim::StepResult step;
    step.step_time_s = 0.05;
    for (int gpu = 0; gpu < 5; ++gpu) {
      for (int track = 0; track < sim::kTrackCount; ++track) {
        for (int i = 0; i < 5000; ++i)
          step.trace.push_back({gpu, track, "op", i * 1e-5, (i + 1) * 1e-5});
      }
    }
    TimelineModel model;
    model.setTimeline(std::make_shared<const Timeline>(BuildTimeline(step)));
    GanttView g;
    g.setModel(&model);
    g.resize(1000, 400);
    g.show();
    QVERIFY(QTest::qWaitForWindowExposed(&g));
    QElapsedTimer timer;
    timer.start();
    g.viewport()->repaint();
    // Fitted: at most one bar per pixel column of each lane in view.
    const int lanes_in_view = 400 / 20;
    QVERIFY2(g.paintedBars() <= lanes_in_view * g.viewport()->width(),
             qPrintable(QString::number(g.paintedBars())));
    QVERIFY(g.paintedBars() > 0);
    for (int i = 0; i < 10; ++i) g.zoomIn();  // 1/1024 of the step: about 5 events per lane
    g.viewport()->repaint();
    QVERIFY2(g.paintedBars() <= lanes_in_view * 8, qPrintable(QString::number(g.paintedBars())));
    QVERIFY(g.paintedBars() >= lanes_in_view - 2);
    // The tooltip's event is found by time in the zoomed view.
    const double mid = g.visibleStartS() + g.visibleSpanS() / 2;
    const TimelineEvent* e = g.eventAt(QPoint(static_cast<int>(g.xOf(mid)), g.laneY(3) + 10));
    QVERIFY(e);
    QVERIFY(e->start_s - 1e-6 <= mid && mid <= e->end_s + 1e-6);
    QCOMPARE(&*model.lane(3).events.begin() + static_cast<int>(e->start_s / 1e-5 + 0.5), e);
    qInfo("two paints of 200000 events: %lld ms", static_cast<long long>(timer.elapsed()));
  }

  void hiddenTimelineWaitsUntilShown() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(PlanAndWait(w, SmallScenarioPath()));  // the plan tab is current
    TimelinePage* page = w.timelinePage();
    QVERIFY(!page->busy());
    QCOMPARE(page->shownCandidate(), -1);
    QSignalSpy shown(page, &TimelinePage::timelineShown);
    w.tabs()->setCurrentWidget(page);
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
    QCOMPARE(page->shownCandidate(), w.planned()->plan->best);
    // A selection made while hidden waits, and the run it supersedes never shows.
    SelectConfirmed(w, 1);
    QVERIFY(page->busy());
    w.tabs()->setCurrentWidget(w.planPage());
    SelectConfirmed(w, 2);
    QVERIFY(!page->busy());
    QVERIFY(page->statusText().contains(QStringLiteral("when this tab is shown")));
    QTest::qWait(300);  // the superseded simulation of 1 ends meanwhile
    QCOMPARE(shown.count(), 1);
    QCOMPARE(page->shownCandidate(), -1);
    w.tabs()->setCurrentWidget(page);
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 2, 60000);
    QCOMPARE(page->shownCandidate(), 2);
    // A new plan clears the page.
    w.openScenario(SmallScenarioPath());
    QCOMPARE(page->shownCandidate(), -1);
    QVERIFY(!page->busy());
  }

  void cancelDiscardsTheTimeline() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(PlanAndWait(w, SmallScenarioPath(), /*show_timeline=*/true));
    TimelinePage* page = w.timelinePage();
    QSignalSpy shown(page, &TimelinePage::timelineShown);
    SelectConfirmed(w, 2);
    QVERIFY(page->busy());
    page->cancelButton()->click();
    QVERIFY(!page->busy());
    QVERIFY(!page->cancelButton()->isEnabled());
    QVERIFY(page->statusText().startsWith(QStringLiteral("Cancelled")));
    QTest::qWait(300);  // the discarded simulation ends meanwhile
    QCOMPARE(shown.count(), 0);
    QVERIFY(page->statusText().startsWith(QStringLiteral("Cancelled")));
    QCOMPARE(page->shownCandidate(), -1);
    // Selecting it again simulates it.
    SelectConfirmed(w, 0);
    SelectConfirmed(w, 2);
    QTRY_COMPARE_WITH_TIMEOUT(shown.count(), 1, 60000);
    QCOMPARE(page->shownCandidate(), 2);
  }

  void scalingChartAndPricing() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(PlanAndWait(w, SmallScenarioPath()));
    ScalingPage* page = w.scalingPage();
    auto plan = w.planned()->plan;
    QCOMPARE(page->throughputSeries()->count(), static_cast<int>(plan->scaling.size()));
    QCOMPARE(plan->scaling_stops_paying, 1);  // simulated: the second node pays too little
    QCOMPARE(page->stopsPayingSeries()->count(), 1);

    QVERIFY(PlanAndWait(w, PipelineScenarioPath()));
    plan = w.planned()->plan;
    QCOMPARE(page->throughputSeries()->count(), static_cast<int>(plan->scaling.size()));
    int priced_points = 0;
    for (const planner::ScalingPoint& p : plan->scaling)
      priced_points += p.expected_cost_usd ? 1 : 0;
    QCOMPARE(page->costSeries()->count(), priced_points);
    const Pricing pricing = plan->confirmed[plan->best].priced[plan->best_priced].pricing;
    QVERIFY(page->costSeries()->name().contains(QString::fromLatin1(ToString(pricing))));
    QVERIFY(plan->scaling_stops_paying > 0);
    QCOMPARE(page->stopsPayingSeries()->count(), 1);
    QCOMPARE(page->stopsPayingSeries()->at(0).x(), double(plan->scaling_stops_paying));
    // The error band, shaded between its ends at every node count.
    QCOMPARE(page->bandSeries()->upperSeries()->count(), static_cast<int>(plan->scaling.size()));
    QCOMPARE(page->bandSeries()->lowerSeries()->count(), static_cast<int>(plan->scaling.size()));
    QCOMPARE(page->bandSeries()->upperSeries()->at(0).y(),
             plan->scaling[0].samples_per_s * plan->scaling[0].band->hi);

    // The pricing bars: the recommendation's options, then another candidate's.
    QCOMPARE(page->pricing()->confirmed(), plan->best);
    QCOMPARE(page->pricingSeries()->count(), 3);  // expected, P50, P90
    QCOMPARE(page->pricingSeries()->barSets().at(2)->count(), page->pricing()->rowCount());
    QCOMPARE(page->pricingSeries()->barSets().at(2)->at(0),
             page->pricing()->option(0).job.cost_usd->p90);
    SelectConfirmed(w, plan->best == 0 ? 1 : 0);
    QCOMPARE(page->pricing()->confirmed(), plan->best == 0 ? 1 : 0);
  }

  // A measured trace beside the simulated step: its last step's kernels above the simulated
  // lanes, the compare table, a refit of a profile against the candidate, "Use in scenario";
  // a trace of other hardware is refused. The trace is synthetic (Kineto's format, made-up
  // times): 3 steps of 100 ms, each 40 + 20 ms of GEMMs (two shapes), 5 ms of other kernels
  // and 10 ms of NCCL, 5 of them exposed.
  void measuredRunBesideTheTimeline() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(PlanAndWait(w, SmallScenarioPath(), /*show_timeline=*/true));
    TimelinePage* page = w.timelinePage();
    const int simulated_lanes = page->model()->rowCount();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto write_trace = [&](const QString& name, const QString& device) {
      QString events;
      for (int i = 0; i < 3; ++i) {
        const double t0 = i * 100000.0;
        events +=
            QStringLiteral(
                R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%1", "ts": %2, "dur": 100000},
{"ph": "X", "cat": "kernel", "name": "ampere_bf16_s16816gemm", "pid": 0, "ts": %3, "dur": 40000, "args": {"M": 4096, "N": 4096, "K": 4096}},
{"ph": "X", "cat": "kernel", "name": "ampere_bf16_s16816gemm", "pid": 0, "ts": %4, "dur": 20000, "args": {"M": 2048, "N": 4096, "K": 4096}},
{"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "pid": 0, "ts": %5, "dur": 5000},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 0, "ts": %6, "dur": 10000},
)")
                .arg(i + 1)
                .arg(t0, 0, 'f', 0)
                .arg(t0, 0, 'f', 0)
                .arg(t0 + 40000, 0, 'f', 0)
                .arg(t0 + 60000, 0, 'f', 0)
                .arg(t0 + 60000, 0, 'f', 0);
      }
      events.chop(2);  // the last ",\n"
      const QString path = dir.filePath(name);
      QFile f(path);
      if (!f.open(QIODevice::WriteOnly)) return QString();
      f.write(QStringLiteral(R"({"deviceProperties": [{"id": 0, "name": "%1"}], "traceEvents": [
%2
]})")
                  .arg(device, events)
                  .toUtf8());
      return path;
    };
    const QString trace = write_trace(QStringLiteral("a100.json"), "NVIDIA A100-SXM4-40GB");
    QVERIFY(OpenMeasured(page, {trace}));
    QCOMPARE(page->model()->rowCount(), simulated_lanes + 2);
    QCOMPARE(LaneName(page->model()->lane(0)), QStringLiteral("measured \u00b7 compute"));
    QCOMPARE(page->model()->lane(0).events.size(), size_t{3});
    QCOMPARE(LaneName(page->model()->lane(1)), QStringLiteral("measured \u00b7 comm"));
    QVERIFY(page->compareTable()->isVisibleTo(page));
    QCOMPARE(page->compareTable()->rowCount(), 4);
    QCOMPARE(page->compareTable()->item(0, 2)->text(), QStringLiteral("100.000"));  // measured
    QCOMPARE(page->compareTable()->item(1, 2)->text(), QStringLiteral("65.000"));   // compute
    QCOMPARE(page->compareTable()->item(2, 2)->text(), QStringLiteral("5.000"));    // exposed comm
    QVERIFY(page->refitButton()->isEnabled());
    QTest::qWait(100);  // let the table lay out
    QCOMPARE(SaveScreenshot(w, QStringLiteral("timeline-measured")), QString());

    // Refit a profile of the A100 against the candidate, and attach it.
    HardwareProfile base;
    base.provenance.backend = "cuda";
    base.gpu = "A100-SXM4-40GB";
    base.memory_GBps = 1300;
    const QString base_path = dir.filePath(QStringLiteral("base.json"));
    QFile bf(base_path);
    QVERIFY(bf.open(QIODevice::WriteOnly));
    bf.write(QByteArray::fromStdString(HardwareProfileToJson(base)));
    bf.close();
    const QString out = dir.filePath(QStringLiteral("refit.json"));
    QSignalSpy refitted(page, &TimelinePage::refitDone);
    page->refitProfile(base_path, out);
    QVERIFY(refitted.wait(60000));
    QVERIFY2(refitted.at(0).at(0).toBool(), qPrintable(page->measuredText()));
    QVERIFY(page->measuredText().startsWith(QStringLiteral("Refitted 2 GEMM shapes")));
    Expected<HardwareProfile> refit = LoadHardwareProfile(out.toStdString());
    QVERIFY(refit.ok());
    // The memory-bound rate: the simulated work at 1300 GB/s set to the 5 ms the trace's other
    // kernels took (the status says both rates).
    QVERIFY(refit->memory_GBps && *refit->memory_GBps != 1300);
    QVERIFY2(
        page->measuredText().contains(QStringLiteral("memory-bound rate 1300.00 \u2192 %1 GB/s")
                                          .arg(*refit->memory_GBps, 0, 'f', 2)),
        qPrintable(page->measuredText()));
    QVERIFY(page->useButton()->isEnabled());
    page->useButton()->click();
    QVERIFY(w.document()->text().contains(QStringLiteral("refit.json")));

    // Another GPU's trace: refused, the simulated lanes alone.
    const QString h100 = write_trace(QStringLiteral("h100.json"), "NVIDIA H100 80GB HBM3");
    QVERIFY(OpenMeasured(page, {h100}));
    QCOMPARE(page->model()->rowCount(), simulated_lanes);
    QVERIFY(page->measuredText().contains(QStringLiteral("traced on NVIDIA H100 80GB HBM3")));
    QVERIFY(!page->compareTable()->isVisibleTo(page));
    // A cut file: the parser's error.
    QFile cut(dir.filePath(QStringLiteral("cut.json")));
    QVERIFY(cut.open(QIODevice::WriteOnly));
    cut.write("{\"traceEvents\": [{\"ph\": ");
    cut.close();
    QVERIFY(!OpenMeasured(page, {cut.fileName()}));
    QVERIFY(page->measuredText().contains(QStringLiteral("cut short?")));
  }

  void screenshots() {
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(PlanAndWait(w, PipelineScenarioPath(), /*show_timeline=*/true));
    QVERIFY(w.planned()->plan->confirmed[w.planned()->plan->best].candidate.pp > 1);
    QTest::qWait(100);  // let the charts lay out
    QCOMPARE(SaveScreenshot(w, QStringLiteral("timeline")), QString());
    w.tabs()->setCurrentWidget(w.scalingPage());
    QTest::qWait(100);
    QCOMPARE(SaveScreenshot(w, QStringLiteral("scaling")), QString());
  }
};

std::unique_ptr<QObject> MakeTimelineWindowTest() { return std::make_unique<TimelineWindowTest>(); }

}  // namespace trainsim::gui::test

#include "timeline_window_test.moc"
