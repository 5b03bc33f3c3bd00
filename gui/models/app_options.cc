#include "gui/models/app_options.h"

#include <QCommandLineParser>
#include <iostream>

#include "gui/models/plan_export.h"
#include "gui/models/plan_worker.h"
#include "gui/models/scenario_document.h"

namespace trainsim::gui {

Expected<AppOptions> ParseAppOptions(const QStringList& arguments) {
  QCommandLineParser cli;
  cli.setApplicationDescription(QStringLiteral("Plan GPU training jobs (trainsim)"));
  const QCommandLineOption help = cli.addHelpOption();
  cli.addPositionalArgument(QStringLiteral("scenario"), QStringLiteral("scenario file to open"));
  const QCommandLineOption plan(QStringLiteral("plan"), QStringLiteral("start planning at once"));
  const QCommandLineOption catalog(QStringLiteral("catalog"),
                                   QStringLiteral("add instance types from a catalog file"),
                                   QStringLiteral("FILE"));
  const QCommandLineOption profile(QStringLiteral("profile"),
                                   QStringLiteral("hardware profile for the scenario's GPU"),
                                   QStringLiteral("FILE"));
  const QCommandLineOption export_path(
      QStringLiteral("export"),
      QStringLiteral("plan SCENARIO without a window and write the plan JSON to FILE"),
      QStringLiteral("FILE"));
  const QCommandLineOption screenshots(
      QStringLiteral("screenshots"),
      QStringLiteral("plan SCENARIO, save a PNG of every page to DIR and quit"),
      QStringLiteral("DIR"));
  cli.addOptions({plan, catalog, profile, export_path, screenshots});
  if (!cli.parse(arguments)) return Status::InvalidInput(cli.errorText().toStdString());
  AppOptions o;
  o.help = cli.isSet(help);
  o.help_text = cli.helpText();
  const QStringList positional = cli.positionalArguments();
  if (positional.size() > 1) {
    return Status::InvalidInput("one scenario at most, got " + std::to_string(positional.size()));
  }
  if (!positional.isEmpty()) o.scenario = positional.first();
  o.plan = cli.isSet(plan);
  o.catalog_file = cli.value(catalog);
  o.profile = cli.value(profile);
  o.export_path = cli.value(export_path);
  o.screenshots_dir = cli.value(screenshots);
  if ((!o.export_path.isEmpty() || !o.screenshots_dir.isEmpty()) && o.scenario.isEmpty()) {
    return Status::InvalidInput(
        std::string(o.export_path.isEmpty() ? "--screenshots" : "--export") +
        " needs a scenario file");
  }
  if (!o.export_path.isEmpty() && !o.screenshots_dir.isEmpty())
    return Status::InvalidInput("--export and --screenshots cannot be combined");
  return o;
}

Expected<std::shared_ptr<const Catalog>> LoadCatalog(const QString& extra_file) {
  Expected<Catalog> catalog = Catalog::LoadDefault(extra_file.toStdString());
  if (!catalog.ok()) return catalog.status();
  return std::make_shared<const Catalog>(std::move(*catalog));
}

int RunExport(const AppOptions& options) {
  auto fail = [](const std::string& message) {
    std::cerr << "trainsim-gui: " << message << "\n";
    return 1;
  };
  Expected<std::shared_ptr<const Catalog>> catalog = LoadCatalog(options.catalog_file);
  if (!catalog.ok()) return fail(catalog.status().message());
  ScenarioDocument document;
  document.setProfile(options.profile);
  if (!document.load(options.scenario)) return fail(document.error().message.toStdString());
  if (!document.parse(**catalog)) return fail(document.error().message.toStdString());

  // The worker runs in this thread: its signals arrive before run() returns.
  PlanWorker worker;
  std::shared_ptr<const planner::Plan> plan;
  std::string error;
  QObject::connect(&worker, &PlanWorker::estimated,
                   [](qint64 n) { std::cerr << n << " candidates estimated\n"; });
  QObject::connect(&worker, &PlanWorker::progress, [](int done, int total) {
    std::cerr << "simulated " << done << "/" << total << "\n";
  });
  QObject::connect(&worker, &PlanWorker::finished,
                   [&plan](std::shared_ptr<const planner::Plan> p) { plan = std::move(p); });
  QObject::connect(&worker, &PlanWorker::failed,
                   [&error](const QString& message) { error = message.toStdString(); });
  worker.run(*document.scenario(), *catalog);
  if (!plan) return fail(error.empty() ? "planning failed" : error);

  PlannedScenario planned;
  planned.path = document.path();
  planned.scenario = *document.scenario();
  planned.catalog = *catalog;
  planned.plan = plan;
  if (Status st = SavePlanJson(planned, options.export_path); !st.ok()) return fail(st.message());
  std::cerr << "plan written to " << options.export_path.toStdString() << "\n";
  return 0;
}

}  // namespace trainsim::gui
