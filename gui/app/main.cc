// trainsim-gui: the desktop GUI (docs/gui.md); the command line is in
// gui/models/app_options.h. With --export it plans without a window (no
// display needed); with --screenshots it saves every page and quits.
#include <QApplication>
#include <QCoreApplication>
#include <QTimer>
#include <iostream>

#include "gui/app/main_window.h"
#include "gui/models/app_options.h"

namespace {

int RunWindow(int argc, char** argv, const trainsim::gui::AppOptions& options) {
  using trainsim::gui::MainWindow;
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("trainsim-gui"));
  auto catalog = trainsim::gui::LoadCatalog(options.catalog_file);
  if (!catalog.ok()) {
    std::cerr << "trainsim-gui: " << catalog.status().message() << "\n";
    return 1;
  }
  MainWindow w(*catalog);
  w.setProfile(options.profile);
  w.resize(1280, 800);
  w.show();
  const bool opened = !options.scenario.isEmpty() && w.openScenario(options.scenario);
  if (options.screenshots_dir.isEmpty()) {
    if (opened && options.plan) w.startPlan();
    return app.exec();
  }
  // --screenshots: plan, then save every page.
  if (!opened) {
    std::cerr << "trainsim-gui: " << w.statusText().toStdString() << "\n";
    return 1;
  }
  int status = 1;
  QObject::connect(&w, &MainWindow::planFailed, &app, [&](const QString& message) {
    std::cerr << "trainsim-gui: " << message.toStdString() << "\n";
    app.exit(1);
  });
  QObject::connect(&w, &MainWindow::planShown, &app, [&] {
    QString error;
    status = w.saveScreenshots(options.screenshots_dir, &error) ? 0 : 1;
    if (status == 0)
      std::cerr << "screenshots written to " << options.screenshots_dir.toStdString() << "\n";
    else
      std::cerr << "trainsim-gui: " << error.toStdString() << "\n";
    app.exit(status);
  });
  QTimer::singleShot(0, &w, &MainWindow::startPlan);
  return app.exec();
}

}  // namespace

int main(int argc, char** argv) {
  QStringList arguments;
  for (int i = 0; i < argc; ++i) arguments << QString::fromLocal8Bit(argv[i]);
  auto options = trainsim::gui::ParseAppOptions(arguments);
  if (!options.ok()) {
    std::cerr << "trainsim-gui: " << options.status().message()
              << "\n(trainsim-gui --help lists the options)\n";
    return 1;
  }
  if (options->help) {
    std::cout << options->help_text.toStdString();
    return 0;
  }
  if (!options->export_path.isEmpty()) {
    QCoreApplication app(argc, argv);  // no display needed
    return trainsim::gui::RunExport(*options);
  }
  return RunWindow(argc, argv, *options);
}
