// The one table of the scenario's fields: every field of the training, cluster and parallel
// sections (docs/formats.md), with its type, range, choices, default and label. It drives
//   - the parser (core/scenario.cc reads each section's fields through it; what needs more
//     than one field is still checked there),
//   - the sweepable axes (core/sweep_grid.cc: every scalar field, and "model"),
//   - the GUI form's fields of those sections (gui/models/scenario_form.cc),
//   - the sweep's scenario columns (planner/sweep/sweep_row.cc),
// and a test holds docs/formats.md's field tables to it. A new scenario field is one row here
// and a member of TrainingConfig, ClusterConfig or ParallelConfig (core/scenario.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_doc.h"
#include "core/scenario.h"

namespace trainsim {

enum class FieldType {
  kInteger,  // an int, int64 or optional int member
  kNumber,   // a double member, in the file's unit (see ScenarioField::scale)
  kBool,
  kChoice,  // an enum member, written as one of `choices`
  kString,
  kList,  // an array the section reader reads itself (cluster.stragglers)
};

struct ScenarioField {
  std::string path;  // "training.micro_batch": section, dot, key
  FieldType type = FieldType::kString;
  // kInteger: the least and greatest value a file may give; kNumber: the same as doubles.
  int64_t int_min = 0, int_max = 0;
  double min = 0, max = 0;
  bool above_min = false;  // kNumber: the value must exceed `min` (training.epochs > 0)
  // kNumber: the stored value is the file's times this (parallel.bucket_mb is kept in bytes).
  double scale = 1;
  std::vector<std::string> choices;  // kChoice: the names, in enum order
  std::string default_text;          // what absence means: docs/formats.md's default column
  std::string label;                 // the GUI form's label

  // Reads the field, when the reader's object has it, into the scenario (checking type and
  // range); null for kList.
  void (*read)(ObjectReader* r, const ScenarioField& f, Scenario* s) = nullptr;
  // The field's value in a parsed scenario as a file writes it (enums by name, numbers in the
  // file's unit); null for an unset optional and for kList.
  nlohmann::json (*value)(const Scenario& s, const ScenarioField& f) = nullptr;

  std::string_view section() const;  // "training"
  std::string_view key() const;      // "micro_batch"
  bool scalar() const { return type != FieldType::kList; }
};

// Every field, section by section in docs/formats.md's order.
const std::vector<ScenarioField>& ScenarioFields();
// The field at `path` ("parallel.tp"), or null.
const ScenarioField* FindScenarioField(std::string_view path);

// Reads every field of `section` ("training") that `r`'s object has into *s and marks the
// section's list fields as known; r->Finish() then reports an unknown key or the first error.
void ReadSectionFields(std::string_view section, ObjectReader* r, Scenario* s);

// The type column docs/formats.md gives the field: "integer in [1, 1048576]", "number >= 1",
// "boolean", "string", or the choices as `"a"` \| `"b"`. A list's is "array".
std::string DocType(const ScenarioField& f);

}  // namespace trainsim
