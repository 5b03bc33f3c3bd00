// trainsim-gui [SCENARIO]: the desktop GUI (docs/gui.md).
#include <QApplication>
#include <QCommandLineParser>

#include "gui/app/main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("trainsim-gui"));
  QCommandLineParser cli;
  cli.setApplicationDescription(QStringLiteral("Plan GPU training jobs (trainsim)"));
  cli.addHelpOption();
  cli.addPositionalArgument(QStringLiteral("scenario"), QStringLiteral("scenario file to open"));
  QCommandLineOption plan(QStringLiteral("plan"), QStringLiteral("start planning at once"));
  cli.addOption(plan);
  cli.process(app);
  trainsim::gui::MainWindow w;
  const QStringList args = cli.positionalArguments();
  if (!args.isEmpty() && w.openScenario(args.first()) && cli.isSet(plan)) w.startPlan();
  w.resize(1280, 800);
  w.show();
  return app.exec();
}
