// Attaching a hardware profile to a scenario: the Calibration page's "Use in
// scenario". Writes cluster.profile into the scenario's JSON (the rest of the
// file is kept, as the form keeps it), relative to the scenario's folder when
// the scenario has a file, as the loader resolves it (core/scenario.h).
#pragma once

#include <QString>

#include "core/status.h"

namespace trainsim::gui {

// The scenario text with cluster.profile = `profile_path` (made relative to
// the folder of `scenario_path` when that is not empty, else absolute).
// Fails when the text is not a JSON object.
Expected<QString> AttachProfileToScenario(const QString& scenario_text,
                                          const QString& scenario_path,
                                          const QString& profile_path);

}  // namespace trainsim::gui
