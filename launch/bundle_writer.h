// Puts a launch bundle (launch/bundle.h) on disk.
//
// The folder must be missing (it is created, with its parents), empty, or hold
// an earlier bundle, known by its manifest `.trainsim-launch` (the paths it
// wrote, one per line). Anything else is refused before a file is written, so
// `--out` never clobbers a folder of someone else's files. Each file is
// written durably (core/durable_file.h); scripts get mode 0755, the others
// 0644 (less the umask). Files of the earlier bundle that the new one lacks
// are removed; the manifest is written last.
#pragma once

#include <string>

#include "core/status.h"
#include "launch/bundle.h"

namespace trainsim::launch {

inline constexpr char kManifestName[] = ".trainsim-launch";

Status WriteBundle(const std::string& dir, const Bundle& bundle);

}  // namespace trainsim::launch
