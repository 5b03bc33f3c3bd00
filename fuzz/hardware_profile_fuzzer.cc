// Hardware profiles (core/hardware_profile.h ParseHardwareProfile), and a profile's own
// catalog entry added to the built-in catalog as LoadScenarioFile adds it.
//
// Checks:
// - every error starts "fuzz.json:L:C: " at a line and column the input has; the catalog a
//   profile carries is read from its re-written text (HardwareProfile::catalog_json), so its
//   errors start "fuzz.json (catalog):L:C: " at a place in that text;
// - round trip: the profile written by HardwareProfileToJson reads back, and written again
//   gives the same bytes;
// - the tables it holds can be read: every GEMM table interpolated below, inside and past its
//   points, every collective fit evaluated, each to a number that is not NaN.
#include <cmath>
#include <string>

#include "core/hardware_profile.h"
#include "fuzz/fuzz_util.h"

namespace {

using trainsim::Expected;
using trainsim::HardwareProfile;
using trainsim::fuzz::Check;

constexpr char kFile[] = "fuzz.json";

void CheckTables(const HardwareProfile& p) {
  for (const auto& [dtype, table] : p.gemm_tables) {
    for (double flops :
         {1.0, table.front().x, std::sqrt(table.front().x * table.back().x), table.back().x * 2}) {
      std::optional<double> rate = p.GemmFlopsPerSecond(dtype, flops);
      Check(rate && !std::isnan(*rate), "a GEMM table read as NaN", dtype);
    }
  }
  for (const trainsim::CollectiveFit& c : p.collectives) {
    Check(p.FindCollective(c.op, c.ranks, c.nodes) != nullptr, "a collective fit not found", c.op);
    for (double bytes : {0.0, c.ranges.front().min_bytes, c.ranges.back().max_bytes}) {
      Check(!std::isnan(c.Seconds(bytes)), "a collective fit read as NaN", c.op);
    }
  }
}

void CheckCatalog(const HardwareProfile& p) {
  if (p.catalog_json.empty()) return;
  const std::string file = std::string(kFile) + " (catalog)";
  trainsim::Catalog c = trainsim::fuzz::BuiltinCatalog();
  trainsim::Status s = c.AddFromString(p.catalog_json, file);
  if (!s.ok()) trainsim::fuzz::CheckLocated(s.message(), file, p.catalog_json);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  trainsim::fuzz::BuiltinCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = trainsim::fuzz::Text(data, size);
  Expected<HardwareProfile> p = trainsim::ParseHardwareProfile(text, kFile);
  if (!p.ok()) {
    trainsim::fuzz::CheckLocated(p.status().message(), kFile, text);
    return 0;
  }
  CheckTables(*p);
  CheckCatalog(*p);
  const std::string written = trainsim::HardwareProfileToJson(*p);
  Expected<HardwareProfile> again = trainsim::ParseHardwareProfile(written, kFile);
  Check(again.ok(), "the profile written does not read back", again.status().message());
  Check(trainsim::HardwareProfileToJson(*again) == written,
        "the profile read back is written differently", written);
  return 0;
}
