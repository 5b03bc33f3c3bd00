// A hardware profile file (docs/formats.md, "Hardware profile") as the
// Calibration page shows it: the parsed profile, the file's text (Save as
// writes it back unchanged) and the catalog figures of the GPU it describes,
// from the built-in catalog or from the profile's own catalog entry (the cpu
// backend's "local-cpu").
#pragma once

#include <QByteArray>
#include <QString>
#include <optional>

#include "core/catalog.h"
#include "core/hardware_profile.h"
#include "core/status.h"

namespace trainsim::gui {

struct LoadedProfile {
  QString path;
  QByteArray text;  // the file as read
  HardwareProfile profile;
  // The catalog's entry for profile.gpu; nullopt when the profile names no
  // GPU or the catalog does not know it.
  std::optional<GpuSpec> catalog_gpu;
  // The per-GPU NVLink rate (one direction, GB/s) of the catalog instances
  // with that GPU on an NVSwitch, when they all agree; nullopt otherwise.
  std::optional<double> catalog_nvlink_GBps;
  QString catalog_source;  // "built-in catalog", "the profile's catalog", "" when no GPU
};

// Errors: "cannot read FILE: REASON", or the profile parser's
// "FILE:LINE:COL: FIELD: MESSAGE" (a bad catalog inside the profile too).
// `builtin` may be null (then only the profile's own catalog is searched).
Expected<LoadedProfile> ParseProfileText(const QByteArray& text, const QString& path,
                                         const Catalog* builtin);
Expected<LoadedProfile> LoadProfileFile(const QString& path, const Catalog* builtin);

// Writes `profile.text` to `path` durably (core/durable_file.h); errors say
// "FILE: cannot write: REASON".
Status SaveProfileText(const LoadedProfile& profile, const QString& path);

}  // namespace trainsim::gui
