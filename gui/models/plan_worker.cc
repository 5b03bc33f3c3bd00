#include "gui/models/plan_worker.h"

#include <algorithm>
#include <thread>

#include "core/error_bands.h"

namespace trainsim::gui {

void RegisterMetaTypes() {
  qRegisterMetaType<trainsim::PlanningScenario>();
  qRegisterMetaType<std::shared_ptr<const trainsim::Catalog>>();
  qRegisterMetaType<std::shared_ptr<const trainsim::planner::Plan>>();
  qRegisterMetaType<std::shared_ptr<const trainsim::gui::PlannedScenario>>();
}

namespace {

// Forwards the planner's progress as the worker's signals (emitted from the
// planner's threads; queued to receivers in other threads).
class Observer : public planner::PlanObserver {
 public:
  explicit Observer(PlanWorker* w) : w_(w) {}
  void Estimated(int64_t candidates, double) override {
    emit w_->estimated(static_cast<qint64>(candidates));
  }
  void Simulated(int done, int total) override { emit w_->progress(done, total); }

 private:
  PlanWorker* w_;
};

}  // namespace

PlanWorker::PlanWorker(QObject* parent) : QObject(parent) { RegisterMetaTypes(); }

void PlanWorker::run(trainsim::PlanningScenario scenario,
                     std::shared_ptr<const trainsim::Catalog> catalog) {
  if (!catalog) {
    emit failed(QStringLiteral("no instance catalog"));
    return;
  }
  Observer observer(this);
  planner::PlanOptions options;
  options.jobs =
      jobs_ > 0 ? jobs_ : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.observer = &observer;
  options.cancel = &cancel_;
  options.bands = DefaultErrorBands();  // as `trainsim plan`; none when the file is unreadable
  Expected<planner::Plan> plan = planner::MakePlan(scenario, *catalog, options);
  cancel_ = false;  // a cancel applies to one plan
  if (!plan.ok()) {
    emit failed(QString::fromStdString(plan.status().message()));
    return;
  }
  // The deleter holds the catalog: the plan's instance pointers stay valid.
  std::shared_ptr<const planner::Plan> result(new planner::Plan(std::move(*plan)),
                                              [catalog](const planner::Plan* p) { delete p; });
  emit finished(result);
}

}  // namespace trainsim::gui
