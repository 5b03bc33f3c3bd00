#include "launch/plan_file.h"

#include <fstream>
#include <sstream>

#include "core/strategy.h"

namespace trainsim::launch {
namespace {

using nlohmann::json;

// The value at a dotted path, or an error naming it and what was expected.
Expected<const json*> At(const json& root, const std::string& path, const std::string& file,
                         json::value_t type, const char* expected) {
  const json* v = &root;
  std::string::size_type start = 0;
  while (start <= path.size()) {
    const std::string::size_type dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!v->is_object() || !v->contains(key)) {
      return Status::InvalidInput(file + ": missing " + path + " (" + expected +
                                  "); is this a plan written by `trainsim plan`?");
    }
    v = &(*v)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  const bool number_ok = type == json::value_t::number_float && v->is_number();
  if (v->type() != type && !number_ok &&
      !(type == json::value_t::number_integer && v->is_number_unsigned())) {
    return Status::InvalidInput(file + ": " + path + ": expected " + expected + ", got " +
                                v->dump());
  }
  return v;
}

// ParsePlan, less the catch: a candidate's fields are read with nlohmann::json's at() and
// value(), which throw where the plan lacks one or gives it another type.
Expected<LaunchPlan> ReadPlan(const std::string& text, const std::string& file,
                              const Catalog& catalog) {
  const json plan = json::parse(text, nullptr, false);
  if (plan.is_discarded() || !plan.is_object()) {
    return Status::InvalidInput(file + ": not a JSON object; expected a plan from `trainsim plan`");
  }
  Expected<const json*> kind = At(plan, "kind", file, json::value_t::string, "\"trainsim-plan\"");
  if (!kind.ok()) return kind.status();
  if (**kind != "trainsim-plan") {
    return Status::InvalidInput(file + ": kind: expected \"trainsim-plan\", got " +
                                (*kind)->dump());
  }
  Expected<const json*> doc =
      At(plan, "scenario_json", file, json::value_t::object, "the scenario the plan was made from");
  if (!doc.ok()) return doc.status();
  Expected<const json*> rec =
      At(plan, "recommendation", file, json::value_t::object, "the recommended plan");
  if (!rec.ok()) return rec.status();
  Expected<const json*> index =
      At(plan, "recommendation.candidate", file, json::value_t::number_integer, "an integer");
  if (!index.ok()) return index.status();
  Expected<const json*> candidates =
      At(plan, "candidates", file, json::value_t::array, "the confirmed candidates");
  if (!candidates.ok()) return candidates.status();
  const int64_t i = (*index)->get<int64_t>();
  if (i < 0 || i >= static_cast<int64_t>((*candidates)->size())) {
    return Status::InvalidInput(file + ": recommendation.candidate: " + std::to_string(i) +
                                " is not a candidate index");
  }
  const json& cand = (**candidates)[i];
  const json& config = cand.at("config");
  // The scenario as written, with the recommendation applied.
  json s = **doc;
  s.erase("search");
  s.erase("sweep");
  // The plan's `scenario` is the name it was planned under (the file stem when the
  // scenario has no name of its own).
  const std::string planned_as = plan.contains("scenario") && plan["scenario"].is_string()
                                     ? plan["scenario"].get<std::string>()
                                     : std::string("plan");
  s["name"] = s.value("name", planned_as);
  json& cluster = s["cluster"];
  cluster.erase("profile");
  cluster["instance"] = config.at("instance");
  cluster["nodes"] = config.at("nodes");
  cluster["pricing"] = (*rec)->at("pricing");
  json& parallel = s["parallel"];
  for (const char* k : {"tp", "pp", "dp", "zero_stage", "schedule"}) parallel[k] = config.at(k);
  // Hybrid sharding (plans written before it have no shard_group: the whole DP group).
  if (config.value("shard_group", 0) > 0) {
    parallel["shard_group"] = config.at("shard_group");
  } else {
    parallel.erase("shard_group");
  }
  // Expert parallelism and each strategy (plans written before them have none: 1).
  std::vector<std::string> degrees = {"ep"};
  for (const Strategy* st : kStrategies) degrees.emplace_back(st->name);
  for (const std::string& k : degrees) {
    if (config.value(k, 1) > 1) {
      parallel[k] = config.at(k);
    } else {
      parallel.erase(k);
    }
  }
  if (config.at("schedule") == "interleaved") {
    parallel["virtual_stages"] = config.at("virtual_stages");
  } else {
    parallel.erase("virtual_stages");
  }
  s["training"]["micro_batch"] = config.at("micro_batch");
  s["training"]["recompute"] = config.at("recompute");
  // What qualifies one recompute mode goes when the planner chose another.
  if (config.at("recompute") != "full") s["training"].erase("recompute_every");
  if (config.at("recompute") != "selective") s["training"].erase("recompute_modules");
  Expected<Scenario> scenario = ParseScenario(s.dump(), file + " (recommended scenario)", catalog);
  if (!scenario.ok()) return scenario.status();
  LaunchPlan out;
  out.file = file;
  out.scenario = std::move(*scenario);
  out.steps = cand.value("steps", 0.0);
  out.step_time_s = cand.value("simulated_step_s", 0.0);
  for (const json& p : cand.at("pricing")) {
    if (p.at("pricing") != (*rec)->at("pricing")) continue;
    out.expected_hours = p.value("expected_hours", 0.0);
    if (p.contains("max_wait_s") && p["max_wait_s"].is_number()) out.max_wait_s = p["max_wait_s"];
    if (p.contains("max_runtime_s") && p["max_runtime_s"].is_number()) {
      out.max_runtime_s = p["max_runtime_s"];
    }
    if (p.contains("blocks") && p["blocks"].is_object()) {
      out.block_days = p["blocks"].at("days").get<std::vector<int>>();
    }
    if (p.value("checkpoint_interval_rule", "none") != "none") {
      out.checkpoint_interval_s = p.value("checkpoint_interval_s", 0.0);
    }
  }
  out.plan = plan;
  return out;
}

}  // namespace

Expected<LaunchPlan> ParsePlan(const std::string& text, const std::string& file,
                               const Catalog& catalog) {
  try {
    return ReadPlan(text, file, catalog);
  } catch (const json::exception& e) {  // a field missing or of another type
    return Status::InvalidInput(file + ": not a plan written by `trainsim plan`: " + e.what());
  }
}

Expected<LaunchPlan> LoadPlanFile(const std::string& path, const Catalog& catalog) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidInput(path + ": cannot read the plan");
  std::stringstream text;
  text << in.rdbuf();
  return ParsePlan(text.str(), path, catalog);
}

}  // namespace trainsim::launch
