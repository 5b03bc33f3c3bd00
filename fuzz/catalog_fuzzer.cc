// Extra catalog files (core/catalog.h Catalog::AddFromString), added to the built-in catalog
// as `--catalog FILE` adds them.
//
// Checks:
// - every error starts "fuzz.json:L:C: " at a line and column the input has;
// - round trip: there is no catalog writer, so the document is written back compactly
//   (fuzz_util.h WriteJson) and added to another copy of the built-in catalog: it must be
//   accepted and give the same instance types, fabrics and sources;
// - every instance type a file adds can be found by its name, and has GPUs;
// - a file that added an instance type, a fabric or a source cannot be added twice (a
//   re-definition is an error), and that error is located too.
#include <string>

#include "fuzz/fuzz_util.h"

namespace {

using trainsim::Catalog;
using trainsim::Expected;
using trainsim::Status;
using trainsim::fuzz::Check;

constexpr char kFile[] = "fuzz.json";

// What a catalog holds, as text, for comparing two.
std::string Contents(const Catalog& c) {
  std::string out;
  for (const std::string& name : c.Names()) {
    const trainsim::InstanceType* t = c.Find(name);
    out += name + " " + t->gpu.name + " " + std::to_string(t->gpus) + " " +
           std::to_string(t->nics) + " " + std::to_string(t->nic_gbps) + "\n";
  }
  for (const std::string& name : c.FabricNames()) out += "fabric " + name + "\n";
  for (const auto& [id, text] : c.source_text()) out += "source " + id + ": " + text + "\n";
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  trainsim::fuzz::BuiltinCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = trainsim::fuzz::Text(data, size);
  const Catalog& builtin = trainsim::fuzz::BuiltinCatalog();
  Catalog c = builtin;
  if (Status s = c.AddFromString(text, kFile); !s.ok()) {
    trainsim::fuzz::CheckLocated(s.message(), kFile, text);
    Check(Contents(c) == Contents(builtin), "a refused file changed the catalog", s.message());
    return 0;
  }
  for (const std::string& name : c.Names()) {
    const trainsim::InstanceType* t = c.Find(name);
    Check(t != nullptr && t->name == name, "an instance type not found by its name", name);
    Check(t->gpus >= 1, "an instance type without GPUs", name);
  }
  const std::string contents = Contents(c);
  Catalog again = builtin;
  Expected<trainsim::JsonValue> doc = trainsim::ParseJson(text, kFile);
  Check(doc.ok(), "an accepted catalog whose JSON does not parse");
  Status s = again.AddFromString(trainsim::fuzz::WriteJson(*doc), kFile);
  Check(s.ok(), "the catalog written back is refused", s.message());
  Check(Contents(again) == contents, "the catalog written back reads differently", contents);
  if (contents != Contents(builtin)) {
    Status twice = c.AddFromString(text, kFile);
    Check(!twice.ok(), "a file added twice: its entries defined again");
    trainsim::fuzz::CheckLocated(twice.message(), kFile, text);
  }
  return 0;
}
