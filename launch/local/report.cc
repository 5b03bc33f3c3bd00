#include "launch/local/report.h"

#include <nlohmann/json.hpp>

namespace trainsim::local {
namespace {

using Json = nlohmann::ordered_json;

Json Number(double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); }

// nlohmann's compact dump with a space after ':' and ','.
std::string Dump(const Json& j) {
  std::string out;
  const std::string compact = j.dump();
  bool in_string = false;
  for (size_t i = 0; i < compact.size(); ++i) {
    const char c = compact[i];
    out += c;
    if (c == '"' && (i == 0 || compact[i - 1] != '\\')) in_string = !in_string;
    if (!in_string && (c == ':' || c == ',')) out += ' ';
  }
  return out;
}

}  // namespace

std::string StepLine(const StepResult& step) {
  Json j;
  j["step"] = step.step;
  j["loss"] = Number(step.loss);
  j["step_s"] = Number(step.seconds);
  return Dump(j);
}

std::string SummaryLine(const RunSummary& s) {
  const bool any = s.steps > 0;
  Json inner;
  inner["steps"] = s.steps;
  inner["mean_step_s"] = any ? Number(s.mean_step_s) : Json(nullptr);
  inner["median_step_s"] = any ? Number(s.median_step_s) : Json(nullptr);
  inner["first_loss"] = any ? Number(s.first_loss) : Json(nullptr);
  inner["last_loss"] = any ? Number(s.last_loss) : Json(nullptr);
  Json j;
  j["summary"] = inner;
  return Dump(j);
}

}  // namespace trainsim::local
