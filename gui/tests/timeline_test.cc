// The timeline's data: lanes built from a trace, TimelineModel under
// QAbstractItemModelTester, and TimelineWorker on a real QThread running the
// real simulator (QSignalSpy): the trace ends at the step the plan simulated,
// a newer request supersedes an older one, a cancel discards the result.
#include <QAbstractItemModelTester>
#include <QSet>
#include <QSignalSpy>
#include <QThread>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <set>

#include "gui/models/timeline_model.h"
#include "gui/models/timeline_worker.h"
#include "gui/models/worker_thread.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {
namespace {

double MaxEnd(const Timeline& t) {
  double end = 0;
  for (const TimelineLane& l : t.lanes) {
    for (const TimelineEvent& e : l.events) end = std::max(end, e.end_s);
  }
  return end;
}

bool CloseRelative(double a, double b, double tolerance) {
  return std::abs(a - b) <= tolerance * std::max(std::abs(a), std::abs(b));
}

// The first confirmed candidate that is not the recommendation.
int NotRecommended(const planner::Plan& plan) { return plan.best == 0 ? 1 : 0; }

}  // namespace

class TimelineTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<WorkerThread<TimelineWorker>> thread_;
  TimelineWorker* worker_ = nullptr;

 private slots:
  void init() {
    worker_ = new TimelineWorker;
    thread_ = std::make_unique<WorkerThread<TimelineWorker>>(worker_);
  }
  void cleanup() {
    thread_.reset();  // cancels, ends the thread, deletes the worker
    worker_ = nullptr;
  }

  void buildsLanesFromATrace() {
    sim::StepResult step;
    step.step_time_s = 0.5;
    step.breakdown.compute_s = 0.4;
    step.breakdown.pipeline_bubble_s = 0.1;
    step.trace = {{1, sim::kTrackCompute, "b", 0.2, 0.5},
                  {0, sim::kTrackTp, "tp", 0.0, 0.05},
                  {1, sim::kTrackCompute, "a", 0.0, 0.1},
                  {0, sim::kTrackCompute, "c", 0.0, 0.3}};
    const Timeline t = BuildTimeline(step);
    QCOMPARE(static_cast<int>(t.lanes.size()), 3);  // (0 compute) (0 TP) (1 compute)
    QCOMPARE(t.lanes[0].gpu, 0);
    QCOMPARE(t.lanes[0].track, int(sim::kTrackCompute));
    QCOMPARE(t.lanes[1].track, int(sim::kTrackTp));
    QCOMPARE(LaneName(t.lanes[1]), QStringLiteral("GPU 0 \u00b7 TP"));
    const TimelineLane& two = t.lanes[2];
    QCOMPARE(two.events.front().name, QStringLiteral("a"));  // sorted by start
    QCOMPARE(two.busy_s, 0.1 + 0.3);
    QCOMPARE(two.longest_event_s, 0.3);
    QCOMPARE(t.end_s, 0.5);
    const std::vector<BreakdownPart> parts = BreakdownParts(step.breakdown);
    QCOMPARE(static_cast<int>(parts.size()), 2);  // the zero parts are left out
    QCOMPARE(parts[0].name, QStringLiteral("compute"));
    QCOMPARE(parts[1].name, QStringLiteral("bubble"));
  }

  void modelUnderTester() {
    TimelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.eventCount(), 0);
    const auto plan = PipelinePlan();
    Expected<Timeline> t = SimulateTimeline(*MakePlanned(PipelineScenario(), plan), plan->best);
    QVERIFY2(t.ok(), t.status().message().c_str());
    model.setTimeline(std::make_shared<const Timeline>(*t));
    QCOMPARE(model.rowCount(), static_cast<int>(t->lanes.size()));
    QVERIFY(model.rowCount() > 2);
    std::set<int> gpus;
    for (int r = 0; r < model.rowCount(); ++r) {
      const TimelineLane& lane = t->lanes[r];
      gpus.insert(lane.gpu);
      QVERIFY(!lane.events.empty());  // only lanes with events
      const auto events =
          model.index(r, 0).data(TimelineModel::kEventsRole).value<QList<TimelineEvent>>();
      QCOMPARE(events.size(), static_cast<qsizetype>(lane.events.size()));
      QCOMPARE(model.index(r, TimelineModel::kEvents).data().toInt(), events.size());
      QCOMPARE(model.index(r, TimelineModel::kBusyMs).data(Qt::UserRole).toDouble(),
               lane.busy_s * 1e3);
      QCOMPARE(model.index(r, TimelineModel::kLane).data().toString(), LaneName(lane));
    }
    // Reduced mode simulates one GPU per pipeline stage.
    QCOMPARE(static_cast<int>(gpus.size()), plan->confirmed[plan->best].candidate.pp);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
  }

  void workerTraceEndsAtThePlannedStep_data() {
    QTest::addColumn<bool>("pipeline");
    QTest::newRow("small, not recommended") << false;
    QTest::newRow("pipeline, recommended") << true;
  }
  void workerTraceEndsAtThePlannedStep() {
    QFETCH(bool, pipeline);
    const auto plan = pipeline ? PipelinePlan() : SmallPlan();
    const int confirmed = pipeline ? plan->best : NotRecommended(*plan);
    QSignalSpy started(worker_, &TimelineWorker::started);
    QSignalSpy progress(worker_, &TimelineWorker::progress);
    QSignalSpy finished(worker_, &TimelineWorker::finished);
    QSignalSpy failed(worker_, &TimelineWorker::failed);
    const quint64 id = worker_->request(
        MakePlanned(pipeline ? PipelineScenario() : SmallScenario(), plan), confirmed);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(started.count(), 1);
    // Its progress, before the result: every part of the simulation in order (a stage's DP
    // collectives report each collective too), the step last.
    const int pp = plan->confirmed[confirmed].candidate.pp;
    QVERIFY(progress.count() >= 2 * pp + 2);
    QSet<int> parts_seen;
    for (int i = 0; i < progress.count(); ++i) {
      QCOMPARE(progress.at(i).at(0).value<quint64>(), id);
      const int done = progress.at(i).at(1).toInt();
      if (i > 0) QVERIFY(done >= progress.at(i - 1).at(1).toInt());
      parts_seen.insert(done);
      QCOMPARE(progress.at(i).at(2).toInt(), 2 * pp + 2);
    }
    QCOMPARE(parts_seen.size(), 2 * pp + 2);
    QCOMPARE(progress.last().at(3).toString(), QStringLiteral("the step"));
    QCOMPARE(started.at(0).at(1).toInt(), confirmed);
    QCOMPARE(finished.at(0).at(0).value<quint64>(), id);
    const auto t = finished.at(0).at(1).value<std::shared_ptr<const Timeline>>();
    QVERIFY(t);
    QCOMPARE(t->confirmed, confirmed);
    QVERIFY(!t->lanes.empty());
    const double planned_step = plan->confirmed[confirmed].simulated.step.step_time_s;
    QVERIFY2(CloseRelative(t->step_s, planned_step, 1e-9),
             qPrintable(QStringLiteral("%1 vs %2").arg(t->step_s).arg(planned_step)));
    QVERIFY2(CloseRelative(MaxEnd(*t), planned_step, 1e-9),
             qPrintable(QStringLiteral("%1 vs %2").arg(MaxEnd(*t)).arg(planned_step)));
    double parts = 0;
    for (const BreakdownPart& p : BreakdownParts(t->breakdown)) parts += p.seconds;
    QVERIFY(CloseRelative(parts, t->step_s, 1e-6));
    // The candidate's error band comes along for the summary.
    QVERIFY(t->band.has_value());
    QCOMPARE(t->band->lo, plan->confirmed[confirmed].band->lo);
  }

  void stepSummaryShowsTheBand() {
    Timeline t;
    t.step_s = 0.5;
    QCOMPARE(StepSummary(t), QStringLiteral("step 500.000 ms"));
    Band b;
    b.lo = 0.8;  // measured throughput 0.8-1.25 x predicted: steps 400-625 ms
    b.hi = 1.25;
    b.points = 12;
    t.band = b;
    QCOMPARE(StepSummary(t), QStringLiteral("step 500.000 ms (80% band 400.0-625.0 ms)"));
    t.band->note = "no published measurement of zero3 on H100";
    QCOMPARE(StepSummary(t), QStringLiteral("step 500.000 ms (80% band 400.0-625.0 ms *)"));
  }

  void newerRequestSupersedes() {
    const auto plan = SmallPlan();
    const auto planned = MakePlanned(SmallScenario(), plan);
    QSignalSpy finished(worker_, &TimelineWorker::finished);
    QSignalSpy cancelled(worker_, &TimelineWorker::cancelled);
    worker_->request(planned, 0);
    worker_->request(planned, 2);
    const quint64 last = worker_->request(planned, 1);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QCOMPARE(finished.at(0).at(0).value<quint64>(), last);
    QCOMPARE(finished.at(0).at(1).value<std::shared_ptr<const Timeline>>()->confirmed, 1);
    QTest::qWait(50);  // nothing stale follows
    QCOMPARE(finished.count(), 1);
    QCOMPARE(cancelled.count(), 0);
  }

  void cancelDiscardsTheResult() {
    const auto planned = MakePlanned(SmallScenario(), SmallPlan());
    QSignalSpy finished(worker_, &TimelineWorker::finished);
    QSignalSpy cancelled(worker_, &TimelineWorker::cancelled);
    const quint64 id = worker_->request(planned, 0);
    worker_->cancel();
    QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 60000);
    QCOMPARE(cancelled.at(0).at(0).value<quint64>(), id);
    QTest::qWait(50);
    QCOMPARE(finished.count(), 0);
    // The cancel applied to that request only.
    const quint64 next = worker_->request(planned, 0);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QCOMPARE(finished.at(0).at(0).value<quint64>(), next);
  }

  // The flag reaches the simulator: a raised one stops it (sim/isolate.h
  // kills the process; tested in sim_tests RunIsolated.*).
  void aRaisedStopFlagCancelsTheSimulation() {
    const auto planned = MakePlanned(SmallScenario(), SmallPlan());
    std::atomic<bool> stop{true};
    Expected<Timeline> t = SimulateTimeline(*planned, 0, &stop);
    QVERIFY(!t.ok());
    QCOMPARE(t.status().code(), Status::Code::kCancelled);
    stop = false;
    QVERIFY(SimulateTimeline(*planned, 0, &stop).ok());
  }

  void failsOnAMissingCandidate() {
    QSignalSpy failed(worker_, &TimelineWorker::failed);
    worker_->request(MakePlanned(SmallScenario(), SmallPlan()), 99);
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
    QCOMPARE(failed.at(0).at(1).toString(), QStringLiteral("no such candidate: 99"));
  }
};

std::unique_ptr<QObject> MakeTimelineTest() { return std::make_unique<TimelineTest>(); }

}  // namespace trainsim::gui::test

#include "timeline_test.moc"
