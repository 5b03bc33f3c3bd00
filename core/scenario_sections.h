// Inside the scenario reader: the optional sections kept in their own files
// (core/search.cc, core/sweep_grid.cc) and the parse of an already-read JSON
// tree. Callers outside core/ use core/scenario.h, core/search.h and core/sweep_grid.h.
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/catalog.h"
#include "core/json_doc.h"
#include "core/scenario.h"
#include "core/search.h"
#include "core/status.h"

namespace trainsim {

// ---- helpers the readers share --------------------------------------------------------------

template <typename... Args>
std::string Cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

std::string Join(const std::vector<std::string>& items);  // "a, b, c"

// An invalid-input error "file:line:col: message".
Status ErrorAt(std::string_view file, SourcePos pos, const std::string& message);

// The file names of an enum's first `count` values, in enum order (from ToString).
template <typename E>
std::vector<std::string> EnumNames(int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.emplace_back(ToString(static_cast<E>(i)));
  return names;
}

// ---- sections ---------------------------------------------------------------------------------

// Reads the top-level "search" object into *out (which holds the defaults).
// Errors name `file`, the position and the field ("search.nodes.max").
Status ReadSearchSection(const JsonValue& search, std::string_view file, const Catalog& catalog,
                         SearchConfig* out);

// Reads the top-level "sweep" object of `root` into *out, in file order.
// Checks the grid's shape only: each point is checked when it is expanded.
Status ReadSweepSection(const JsonValue& root, std::string_view file, std::vector<SweepAxis>* out);

// ParsePlanningScenario and LoadPlanningScenario on a document already read:
// `root`'s positions are those its values had in `file`.
Expected<PlanningScenario> ParsePlanningRoot(const JsonValue& root, std::string_view file,
                                             const Catalog& catalog);
Expected<PlanningScenario> LoadPlanningRoot(const JsonValue& root, const std::string& path,
                                            const Catalog& catalog,
                                            const std::string& profile_path);

}  // namespace trainsim
