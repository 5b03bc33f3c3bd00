// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// One result row of a sweep, and how rows are written: the same fixed columns
// for every kind of point (a simulated scenario, a grid point, a plan), so
// that every sweep's results.csv has the same header. See docs/sweep.md.
//
// Unknown stays unknown: an unset optional is an empty CSV cell and JSON null,
// never 0. Non-finite numbers are unknown too.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/scenario.h"
#include "core/status.h"

namespace trainsim::planner {

enum class SweepStatus { kOk, kDoesNotFit, kError };

// The columns a row shows of its scenario, in order: "instance", "nodes", "gpus", "tp", ...
// Each is a field of the scenario's table (core/scenario_fields.h) under its key ("tp" is
// parallel.tp), but "gpus" (nodes x GPUs per instance).
const std::vector<std::string>& SweepScenarioColumns();

const char* ToString(SweepStatus s);  // "ok", "does-not-fit", "error"

struct SweepRow {
  int point = 0;         // the point's index; set by the runner
  std::string id;        // the point's id; set by the runner
  std::string scenario;  // the scenario's name ("stem" or "stem[field=value,...]")
  SweepStatus status = SweepStatus::kError;
  std::string message;  // why, for does-not-fit and error rows
  // The scenario's columns (SweepScenarioColumns()), as the scenario file writes them (enums by
  // name); null = unknown. Read and set them by name with column().
  std::vector<nlohmann::json> layout = std::vector<nlohmann::json>(SweepScenarioColumns().size());
  // Plans: what the option's time and cost rest on (planner::DescribeTerms: blocks booked,
  // a commitment's share, interruptions expected, fallbacks, live replicas).
  std::optional<std::string> pricing_terms;
  // step_time_low_s / high_s: the 80% error band (core/error_bands.h); time_to_train_p90_h and
  // cost_p90_usd: plans' P90, with the model's error and interruptions.
  std::optional<double> step_time_s, step_time_low_s, step_time_high_s, samples_per_s, tokens_per_s,
      mfu;
  std::optional<double> time_to_train_h, time_to_train_p90_h, cost_usd, cost_p90_usd;
  // Free-form figures of the evaluation; written to results.json only.
  nlohmann::json detail = nlohmann::json::object();

  // The scenario column `name` ("tp"); it must be one of SweepScenarioColumns().
  nlohmann::json& column(std::string_view name);
  const nlohmann::json& column(std::string_view name) const;
};

// The row's scenario columns, from a parsed scenario.
void SetScenarioColumns(const Scenario& s, SweepRow* row);

// The column names, in order: point, id, scenario, status, message, the scenario
// columns (instance, nodes, ...), pricing_terms, step_time_s, ..., cost_p90_usd (results.csv's
// header; results.json's keys, then detail).
const std::vector<std::string>& SweepColumns();

// The row as one JSON object: the columns in order, then "detail".
nlohmann::ordered_json RowToJson(const SweepRow& row);
// The inverse of RowToJson (which it reads back exactly). `where` prefixes
// errors ("out/journal-0.jsonl:3").
Expected<SweepRow> RowFromJson(const nlohmann::json& j, const std::string& where);

// results.csv: the header and one line per row, RFC 4180 quoting, "\n" ends.
std::string ResultsCsv(const std::vector<SweepRow>& rows);
// results.json: {"version": 1, "points": N, "rows": [RowToJson...]}, indented.
std::string ResultsJson(const std::vector<SweepRow>& rows);

}  // namespace trainsim::planner
