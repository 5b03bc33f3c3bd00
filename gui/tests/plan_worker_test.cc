// PlanWorker on its own thread, observed with QSignalSpy.
#include "gui/models/plan_worker.h"

#include <QSignalSpy>
#include <QThread>
#include <QtTest>

#include "gui/models/worker_thread.h"
#include "gui/tests/support.h"
#include "gui/tests/tests.h"

namespace trainsim::gui::test {

class PlanWorkerTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<WorkerThread<PlanWorker>> thread_;
  PlanWorker* worker_ = nullptr;

  void start(const PlanningScenario& s) {
    QMetaObject::invokeMethod(worker_, "run", Qt::QueuedConnection,
                              Q_ARG(trainsim::PlanningScenario, s),
                              Q_ARG(std::shared_ptr<const trainsim::Catalog>, TheCatalog()));
  }

 private slots:
  void init() {
    worker_ = new PlanWorker;
    worker_->setJobs(2);
    thread_ = std::make_unique<WorkerThread<PlanWorker>>(worker_);
  }
  void cleanup() {
    thread_.reset();  // cancels, ends the thread, deletes the worker
    worker_ = nullptr;
  }

  void finishesWithAPlan() {
    QSignalSpy finished(worker_, &PlanWorker::finished);
    QSignalSpy failed(worker_, &PlanWorker::failed);
    QSignalSpy estimated(worker_, &PlanWorker::estimated);
    QSignalSpy progress(worker_, &PlanWorker::progress);
    start(SmallScenario());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QCOMPARE(failed.count(), 0);
    const auto plan = finished.at(0).at(0).value<std::shared_ptr<const trainsim::planner::Plan>>();
    QVERIFY(plan);
    QCOMPARE(plan->best, 0);
    QVERIFY(!plan->confirmed.empty());
    QCOMPARE(estimated.count(), 1);
    QCOMPARE(estimated.at(0).at(0).toLongLong(), static_cast<qint64>(plan->estimated));
    QCOMPARE(progress.count(), static_cast<int>(plan->confirmed.size()));
    QCOMPARE(progress.last().at(0).toInt(), progress.last().at(1).toInt());
  }

  void failsOnAScenarioWithNoWork() {
    QSignalSpy finished(worker_, &PlanWorker::finished);
    QSignalSpy failed(worker_, &PlanWorker::failed);
    PlanningScenario s = SmallScenario();
    s.scenario.training.tokens = 0;
    start(s);
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
    QCOMPARE(finished.count(), 0);
    QVERIFY2(
        failed.at(0).at(0).toString().contains(QStringLiteral("planning needs the amount of work")),
        qPrintable(failed.at(0).at(0).toString()));
  }

  void cancelBeforeRunFails() {
    QSignalSpy finished(worker_, &PlanWorker::finished);
    QSignalSpy failed(worker_, &PlanWorker::failed);
    worker_->cancel();
    start(SmallScenario());
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
    QCOMPARE(finished.count(), 0);
    QVERIFY2(failed.at(0).at(0).toString().endsWith(QStringLiteral("planning cancelled")),
             qPrintable(failed.at(0).at(0).toString()));
    // The cancel applied to that plan only: the next one runs.
    start(SmallScenario());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
  }
};

std::unique_ptr<QObject> MakePlanWorkerTest() { return std::make_unique<PlanWorkerTest>(); }

}  // namespace trainsim::gui::test

#include "plan_worker_test.moc"
