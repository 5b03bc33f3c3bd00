#include "gui/tests/support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QPixmap>
#include <cstdlib>

#include "core/error_bands.h"
#include "gui/models/png_file.h"

namespace trainsim::gui::test {

std::shared_ptr<const Catalog> TheCatalog() {
  static const std::shared_ptr<const Catalog> catalog = [] {
    Expected<Catalog> c = Catalog::LoadBuiltin(Catalog::DefaultDir());
    if (!c.ok()) std::abort();
    return std::make_shared<const Catalog>(std::move(*c));
  }();
  return catalog;
}

QString SmallScenarioPath() {
  return QStringLiteral(TRAINSIM_SOURCE_DIR "/tests/cli/data/plan-small.json");
}

PlanningScenario SmallScenario() {
  Expected<PlanningScenario> s =
      LoadPlanningScenario(SmallScenarioPath().toStdString(), *TheCatalog());
  if (!s.ok()) std::abort();
  return *s;
}

std::shared_ptr<const planner::Plan> SmallPlan() {
  static const std::shared_ptr<const planner::Plan> plan = [] {
    planner::PlanOptions options;
    options.jobs = 2;
    options.bands = DefaultErrorBands();  // as the plan worker
    Expected<planner::Plan> p = planner::MakePlan(SmallScenario(), *TheCatalog(), options);
    if (!p.ok()) std::abort();
    return std::make_shared<const planner::Plan>(std::move(*p));
  }();
  return plan;
}

QString CpuProfilePath() {
  return QStringLiteral(TRAINSIM_SOURCE_DIR "/gui/tests/data/cpu-profile.json");
}

QByteArray ReadFile(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QString PipelineScenarioPath() {
  return QStringLiteral(TRAINSIM_SOURCE_DIR "/gui/tests/data/plan-pipeline.json");
}

PlanningScenario PipelineScenario() {
  Expected<PlanningScenario> s =
      LoadPlanningScenario(PipelineScenarioPath().toStdString(), *TheCatalog());
  if (!s.ok()) std::abort();
  return *s;
}

std::shared_ptr<const planner::Plan> PipelinePlan() {
  static const std::shared_ptr<const planner::Plan> plan = [] {
    planner::PlanOptions options;
    options.jobs = 2;
    options.bands = DefaultErrorBands();  // as the plan worker
    Expected<planner::Plan> p = planner::MakePlan(PipelineScenario(), *TheCatalog(), options);
    if (!p.ok()) std::abort();
    return std::make_shared<const planner::Plan>(std::move(*p));
  }();
  return plan;
}

std::shared_ptr<const PlannedScenario> MakePlanned(const PlanningScenario& s,
                                                   std::shared_ptr<const planner::Plan> plan) {
  auto planned = std::make_shared<PlannedScenario>();
  planned->scenario = s;
  planned->catalog = TheCatalog();
  planned->plan = std::move(plan);
  return planned;
}

QString SaveScreenshot(QWidget& w, const QString& page) {
  const QPixmap shot = w.grab();
  if (shot.size() != w.size() * shot.devicePixelRatio()) {
    return QStringLiteral("grab: %1x%2 pixels for a %3x%4 window")
        .arg(shot.width())
        .arg(shot.height())
        .arg(w.width())
        .arg(w.height());
  }
  const QString dir = QStringLiteral(TRAINSIM_SCREENSHOT_DIR);
  const QString path = dir + QStringLiteral("/%1.png").arg(page);
  if (!QDir().mkpath(dir)) return dir + QStringLiteral(": cannot create the folder");
  if (Status st = SavePng(shot.toImage(), path); !st.ok())
    return QString::fromStdString(st.message());
  if (QFileInfo(path).size() <= 10000) return path + QStringLiteral(": looks empty");
  if (!qEnvironmentVariableIsSet("TRAINSIM_UPDATE_DOCS_SCREENSHOTS")) return QString();
  const QString docs = QStringLiteral(TRAINSIM_SOURCE_DIR "/docs/images");
  const QString doc = docs + QStringLiteral("/gui-%1.png").arg(page);
  if (!QDir().mkpath(docs)) return docs + QStringLiteral(": cannot create the folder");
  if (Status st = SavePng(shot.toImage(), doc); !st.ok())
    return QString::fromStdString(st.message());
  return QString();
}

}  // namespace trainsim::gui::test
