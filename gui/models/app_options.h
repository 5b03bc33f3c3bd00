// trainsim-gui's command line, and what it needs before a window exists:
// the catalog (built-in plus --catalog) and the headless export.
//
//   trainsim-gui [SCENARIO] [--plan] [--catalog FILE] [--profile FILE]
//                [--export PLAN_JSON] [--screenshots DIR]
//
// --export plans SCENARIO without a window (no display needed) and writes the
// plan JSON that `trainsim plan --out` writes; --screenshots plans in the
// window, saves a PNG of every page to DIR and quits.
#pragma once

#include <QString>
#include <QStringList>
#include <memory>

#include "core/catalog.h"
#include "core/status.h"

namespace trainsim::gui {

struct AppOptions {
  QString scenario;         // to open; empty: none
  bool plan = false;        // plan it at once
  QString catalog_file;     // instance types added to the built-in catalog
  QString profile;          // hardware profile for the scenario (like `trainsim plan --profile`)
  QString export_path;      // headless: plan SCENARIO, write the plan JSON here, exit
  QString screenshots_dir;  // plan SCENARIO, save every page as DIR/<page>.png, exit
  bool help = false;
  QString help_text;
};

// From the arguments (argv[0] first). Errors name the option.
Expected<AppOptions> ParseAppOptions(const QStringList& arguments);

// The built-in catalog plus `extra_file` (when not empty).
Expected<std::shared_ptr<const Catalog>> LoadCatalog(const QString& extra_file);

// Headless export: plans options.scenario with the GUI's document and worker
// and writes the plan JSON to options.export_path. Progress goes to stderr.
// Returns the process exit status (0 written, 1 an error, printed to stderr).
int RunExport(const AppOptions& options);

}  // namespace trainsim::gui
