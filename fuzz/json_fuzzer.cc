// The located JSON reader (core/json_doc.h ParseJson).
//
// Checks:
// - an error starts "fuzz.json:L:C: invalid JSON: " at a line and column the input has;
// - a document read back from its writing (WriteJson: members in order, numbers as written)
//   is the same tree: written again, the same bytes;
// - every number is finite and is what its text says; is_integer is true exactly for a
//   number written without '.', 'e' or 'E';
// - what it reads as valid UTF-8 nlohmann::json reads too (the two readers meet in the
//   profile and plan code, which parse one text with both).
#include <cmath>
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_util.h"

namespace {

using trainsim::JsonValue;
using trainsim::fuzz::Check;

constexpr char kFile[] = "fuzz.json";

void CheckNumbers(const JsonValue& v) {
  if (v.is_number()) {
    Check(std::isfinite(v.number), "a number that is not finite", v.text);
    Check(v.number == std::strtod(v.text.c_str(), nullptr), "a number unlike its text", v.text);
    const bool integer = v.text.find_first_of(".eE") == std::string::npos;
    Check(v.is_integer == integer, "is_integer unlike the number's text", v.text);
  }
  for (const JsonValue& item : v.items) CheckNumbers(item);
  for (const trainsim::JsonMember& m : v.members) CheckNumbers(m.value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = trainsim::fuzz::Text(data, size);
  trainsim::Expected<JsonValue> doc = trainsim::ParseJson(text, kFile);
  if (!doc.ok()) {
    const std::string& message = doc.status().message();
    trainsim::fuzz::CheckLocated(message, kFile, text);
    Check(message.find(": invalid JSON: ") != std::string::npos, "not an invalid-JSON message",
          message);
    return 0;
  }
  CheckNumbers(*doc);
  const std::string written = trainsim::fuzz::WriteJson(*doc);
  trainsim::Expected<JsonValue> again = trainsim::ParseJson(written, kFile);
  Check(again.ok(), "its own writing does not read back", again.status().message());
  Check(trainsim::fuzz::WriteJson(*again) == written, "read back, written again, it differs",
        written);
  if (trainsim::fuzz::IsUtf8(text)) {
    Check(nlohmann::json::accept(text), "nlohmann::json refuses what ParseJson read", written);
  }
  return 0;
}
