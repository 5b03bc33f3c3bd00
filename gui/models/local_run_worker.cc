#include "gui/models/local_run_worker.h"

#include "launch/names.h"

namespace trainsim::gui {
namespace {

// Forwards RunLocal's progress as the worker's signals (emitted on the
// worker's thread; queued to receivers on the GUI thread).
class Observer : public launch::LocalObserver {
 public:
  explicit Observer(LocalRunWorker* w) : w_(w) {}
  void Starting(const launch::LocalReport& r) override {
    const QVariant predicted = r.predicted_step_s ? QVariant(*r.predicted_step_s) : QVariant();
    emit w_->starting(predicted, r.config.config.steps,
                      QString::fromStdString(launch::ShellJoin(r.command)));
  }
  void Step(const launch::StepLine& s) override { emit w_->step(s.step, s.step_s, s.loss); }

 private:
  LocalRunWorker* w_;
};

}  // namespace

LocalRunWorker::LocalRunWorker(QObject* parent) : QObject(parent) {
  RegisterMetaTypes();
  qRegisterMetaType<std::shared_ptr<const trainsim::launch::LaunchPlan>>();
  qRegisterMetaType<trainsim::launch::LocalOptions>();
  qRegisterMetaType<std::shared_ptr<const trainsim::launch::LocalReport>>();
}

void LocalRunWorker::run(std::shared_ptr<const launch::LaunchPlan> plan,
                         launch::LocalOptions options, std::shared_ptr<const Catalog> catalog) {
  if (stop_.exchange(false)) {  // a cancel applies to one run
    emit failed(QStringLiteral("local run cancelled"));
    return;
  }
  if (!plan || !catalog) {
    emit failed(QStringLiteral("no plan to run"));
    return;
  }
  options.stop = &stop_;
  Observer observer(this);
  Expected<launch::LocalReport> report = launch::RunLocal(*plan, options, *catalog, &observer);
  stop_ = false;
  if (!report.ok()) {
    emit failed(QString::fromStdString(report.status().message()));
    return;
  }
  emit finished(std::make_shared<const launch::LocalReport>(std::move(*report)));
}

}  // namespace trainsim::gui
