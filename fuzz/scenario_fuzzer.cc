// Scenarios (core/search.h ParsePlanningScenario), with and without their `search` and `sweep`
// sections, against the built-in catalog; a scenario with a sweep grid is also expanded
// (core/sweep_grid.h ExpandSweepGridString) when the grid has at most kMaxPoints points.
//
// Checks:
// - every error starts "fuzz.json:L:C: " at a line and column the input has (the parse
//   loads no hardware profile, so the profile's "FILE: ..." errors cannot occur; a sweep
//   point's errors are "fuzz.json:L:C: sweep point K of N (...): ..." at the grid's value);
// - round trip: there is no scenario writer, so the document is written back compactly
//   (fuzz_util.h WriteJson: the same members, numbers as written) and read again: it must
//   parse, to the same scenario (PlanningScenarioDigest, every field the simulator and the
//   planner read, byte for byte);
// - a grid expands to as many scenarios as its axes' product, each named "NAME[...]" and
//   without a grid of its own.
#include <string>

#include "core/sweep_grid.h"
#include "fuzz/fuzz_util.h"

namespace {

using trainsim::Expected;
using trainsim::PlanningScenario;
using trainsim::fuzz::Check;

constexpr char kFile[] = "fuzz.json";
// Larger grids are parsed but not expanded (each point is a whole scenario parse).
constexpr int64_t kMaxPoints = 64;

void CheckGrid(std::string_view text, const PlanningScenario& base) {
  int64_t points = 1;
  for (const trainsim::SweepAxis& axis : base.sweep) {
    points *= static_cast<int64_t>(axis.values.size());
    if (points > kMaxPoints) return;
  }
  Expected<std::vector<PlanningScenario>> grid =
      trainsim::ExpandSweepGridString(text, kFile, trainsim::fuzz::BuiltinCatalog());
  if (!grid.ok()) {
    trainsim::fuzz::CheckLocated(grid.status().message(), kFile, text);
    return;
  }
  Check(static_cast<int64_t>(grid->size()) == points, "a grid of another size than its axes'");
  for (const PlanningScenario& point : *grid) {
    const std::string& name = point.scenario.name;
    Check(point.sweep.empty(), "a grid point with a grid", name);
    Check(name.rfind(base.scenario.name + "[", 0) == 0 && name.back() == ']',
          "a grid point not named NAME[...]", name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  trainsim::fuzz::BuiltinCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = trainsim::fuzz::Text(data, size);
  const trainsim::Catalog& catalog = trainsim::fuzz::BuiltinCatalog();
  Expected<PlanningScenario> s = trainsim::ParsePlanningScenario(text, kFile, catalog);
  if (!s.ok()) {
    trainsim::fuzz::CheckLocated(s.status().message(), kFile, text);
    return 0;
  }
  Expected<trainsim::JsonValue> doc = trainsim::ParseJson(text, kFile);
  Check(doc.ok(), "a scenario whose JSON does not parse");
  const std::string written = trainsim::fuzz::WriteJson(*doc);
  Expected<PlanningScenario> again = trainsim::ParsePlanningScenario(written, kFile, catalog);
  Check(again.ok(), "the scenario written back does not parse", again.status().message());
  const std::string digest = trainsim::fuzz::PlanningScenarioDigest(*s).dump();
  Check(trainsim::fuzz::PlanningScenarioDigest(*again).dump() == digest,
        "the scenario written back reads differently", digest);
  if (!s->sweep.empty()) CheckGrid(text, *s);
  return 0;
}
