#include "planner/sweep/sweep_row.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/scenario_fields.h"
#include "core/scenario_sections.h"
#include "core/strategy.h"

namespace trainsim::planner {
namespace {

// The scenario columns (SweepScenarioColumns) as paths of the scenario's field table; "gpus" is
// the row's own. Each strategy's degree (core/strategy.h) follows parallel.ep.
const std::vector<std::string>& ColumnPaths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out = {"cluster.instance", "cluster.nodes", "gpus",
                                    "parallel.tp",      "parallel.pp",   "parallel.dp",
                                    "parallel.ep"};
    for (const Strategy* st : kStrategies) out.push_back(Cat("parallel.", st->name));
    for (const char* path : {"parallel.zero_stage", "parallel.shard_group", "training.micro_batch",
                             "training.recompute", "parallel.schedule", "cluster.pricing"}) {
      out.emplace_back(path);
    }
    return out;
  }();
  return paths;
}

// A scenario column's table field, or null for gpus.
const ScenarioField* ColumnField(size_t i) { return FindScenarioField(ColumnPaths()[i]); }

using nlohmann::json;
using nlohmann::ordered_json;

// Calls f(name, field) for every column of `row`, in column order. One list
// serves the header, both JSON directions and the CSV.
template <typename Row, typename F>
void ForEachColumn(Row& row, F&& f) {
  f("point", row.point);
  f("id", row.id);
  f("scenario", row.scenario);
  f("status", row.status);
  f("message", row.message);
  for (size_t i = 0; i < row.layout.size(); ++i) {
    f(SweepScenarioColumns()[i].c_str(), row.layout[i]);
  }
  f("pricing_terms", row.pricing_terms);
  f("step_time_s", row.step_time_s);
  f("step_time_low_s", row.step_time_low_s);
  f("step_time_high_s", row.step_time_high_s);
  f("samples_per_s", row.samples_per_s);
  f("tokens_per_s", row.tokens_per_s);
  f("mfu", row.mfu);
  f("time_to_train_h", row.time_to_train_h);
  f("time_to_train_p90_h", row.time_to_train_p90_h);
  f("cost_usd", row.cost_usd);
  f("cost_p90_usd", row.cost_p90_usd);
}

ordered_json ToJson(int v) { return v; }
ordered_json ToJson(const std::string& v) { return v; }
ordered_json ToJson(SweepStatus v) { return ToString(v); }
ordered_json ToJson(const std::optional<std::string>& v) { return v ? ordered_json(*v) : nullptr; }
ordered_json ToJson(const json& v) { return v; }
ordered_json ToJson(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? ordered_json(*v) : nullptr;
}

// JSON -> field; false when the value has the wrong type.
bool FromJson(const json& j, int* v) {
  if (!j.is_number_integer()) return false;
  *v = j.get<int>();
  return true;
}
bool FromJson(const json& j, std::string* v) {
  if (!j.is_string()) return false;
  *v = j.get<std::string>();
  return true;
}
bool FromJson(const json& j, SweepStatus* v) {
  for (SweepStatus s : {SweepStatus::kOk, SweepStatus::kDoesNotFit, SweepStatus::kError}) {
    if (j == ToString(s)) {
      *v = s;
      return true;
    }
  }
  return false;
}
// A scenario column `name`: null, or a value of its field's type (an integer for gpus).
bool ColumnFromJson(std::string_view name, const json& j, json* v) {
  const ScenarioField* f = nullptr;
  for (size_t i = 0; i < ColumnPaths().size(); ++i) {
    if (SweepScenarioColumns()[i] == name) f = ColumnField(i);
  }
  bool ok = j.is_null();
  if (!f) {
    ok = ok || j.is_number_integer();
  } else if (f->type == FieldType::kInteger) {
    ok = ok || j.is_number_integer();
  } else if (f->type == FieldType::kNumber) {
    ok = ok || j.is_number();
  } else if (f->type == FieldType::kBool) {
    ok = ok || j.is_boolean();
  } else {
    ok = ok || j.is_string();
  }
  if (ok) *v = j;
  return ok;
}
template <typename T>
bool FromJson(const json& j, std::optional<T>* v) {
  if (j.is_null()) {
    v->reset();
    return true;
  }
  if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) return false;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    if (!j.is_number_integer()) return false;
  } else {
    if (!j.is_number()) return false;
  }
  *v = j.get<T>();
  return true;
}

// Columns added after sweep journals were first written (issues 17, 21): a row without them
// reads as null there, so that an older sweep resumes.
bool IsLaterColumn(std::string_view name) {
  for (const Strategy* st : kStrategies) {
    if (name == st->name) return true;
  }
  return name == "ep" || name == "pricing_terms";
}

std::string CsvText(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string CsvCell(int v) { return std::to_string(v); }
std::string CsvCell(const std::string& v) { return CsvText(v); }
std::string CsvCell(SweepStatus v) { return ToString(v); }
std::string CsvCell(const std::optional<std::string>& v) { return v ? CsvText(*v) : ""; }
std::string CsvCell(const json& v) {
  if (v.is_null()) return "";
  return v.is_string() ? CsvText(v.get<std::string>()) : v.dump();
}
// The same shortest round-trip digits as the JSON output.
std::string CsvCell(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? ordered_json(*v).dump() : "";
}

}  // namespace

const char* ToString(SweepStatus s) {
  switch (s) {
    case SweepStatus::kOk:
      return "ok";
    case SweepStatus::kDoesNotFit:
      return "does-not-fit";
    case SweepStatus::kError:
      return "error";
  }
  return "?";
}

const std::vector<std::string>& SweepScenarioColumns() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (size_t i = 0; i < ColumnPaths().size(); ++i) {
      const ScenarioField* f = ColumnField(i);
      out.emplace_back(f ? f->key() : ColumnPaths()[i]);
    }
    return out;
  }();
  return names;
}

json& SweepRow::column(std::string_view name) {
  const std::vector<std::string>& names = SweepScenarioColumns();
  const auto it = std::find(names.begin(), names.end(), name);
  return layout.at(static_cast<size_t>(it - names.begin()));
}

const json& SweepRow::column(std::string_view name) const {
  return const_cast<SweepRow*>(this)->column(name);
}

void SetScenarioColumns(const Scenario& s, SweepRow* row) {
  for (size_t i = 0; i < ColumnPaths().size(); ++i) {
    const ScenarioField* f = ColumnField(i);
    row->layout[i] = f ? f->value(s, *f) : json(s.total_gpus());
  }
}

const std::vector<std::string>& SweepColumns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> names;
    SweepRow row;
    ForEachColumn(row, [&](const char* name, const auto&) { names.push_back(name); });
    return names;
  }();
  return columns;
}

ordered_json RowToJson(const SweepRow& row) {
  ordered_json j = ordered_json::object();
  ForEachColumn(row, [&](const char* name, const auto& field) { j[name] = ToJson(field); });
  j["detail"] = row.detail;
  return j;
}

Expected<SweepRow> RowFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return Status::InvalidInput(where + ": a row must be a JSON object");
  SweepRow row;
  std::string bad;
  ForEachColumn(row, [&](const char* name, auto& field) {
    auto it = j.find(name);
    if (it == j.end() && IsLaterColumn(name)) return;  // a journal written before it: null
    if (!bad.empty()) return;
    bool read = it != j.end();
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(field)>, json>) {
      read = read && ColumnFromJson(name, *it, &field);
    } else {
      read = read && FromJson(*it, &field);
    }
    if (!read) bad = name;
  });
  if (!bad.empty())
    return Status::InvalidInput(where + ": the row's \"" + bad + "\" is missing or mistyped");
  auto detail = j.find("detail");
  if (detail == j.end() || !detail->is_object()) {
    return Status::InvalidInput(where + ": the row's \"detail\" is missing or not an object");
  }
  row.detail = *detail;
  return row;
}

std::string ResultsCsv(const std::vector<SweepRow>& rows) {
  std::string out;
  for (const std::string& name : SweepColumns()) out += (out.empty() ? "" : ",") + name;
  out += "\n";
  for (const SweepRow& row : rows) {
    std::string line;
    bool first = true;
    ForEachColumn(row, [&](const char*, const auto& field) {
      line += (first ? "" : ",") + CsvCell(field);
      first = false;
    });
    out += line + "\n";
  }
  return out;
}

std::string ResultsJson(const std::vector<SweepRow>& rows) {
  ordered_json doc = ordered_json::object();
  doc["version"] = 1;
  doc["points"] = rows.size();
  doc["rows"] = ordered_json::array();
  for (const SweepRow& row : rows) doc["rows"].push_back(RowToJson(row));
  return doc.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace trainsim::planner
