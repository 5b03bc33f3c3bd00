// The scenario's "sweep" section and its expansion into scenarios. Points are built on the
// position-carrying JSON tree: each grid value keeps the position it has in the file, so a
// point's errors point into the file that the user wrote.
#include "core/sweep_grid.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <utility>

#include "core/scenario_fields.h"
#include "core/scenario_sections.h"

namespace trainsim {
namespace {

bool IsSweepable(std::string_view field) {
  for (const std::string& f : SweepableFields()) {
    if (f == field) return true;
  }
  return false;
}

nlohmann::json ToJson(const JsonValue& v) {
  if (v.type == JsonValue::Type::kBool) return v.boolean;
  if (v.is_string()) return v.text;
  if (v.is_integer && std::abs(v.number) < 9.0e15) return static_cast<int64_t>(v.number);
  return v.number;
}

// A grid value as labels show it: numbers as written, strings without quotes.
std::string Label(const JsonValue& v) { return v.is_string() ? v.text : Describe(v); }

// The grid field `m.key` exists and may vary.
Status CheckField(const JsonValue& root, std::string_view file, const JsonMember& m) {
  if (!IsSweepable(m.key)) {
    return ErrorAt(file, m.key_pos,
                   Cat("sweep.grid: \"", m.key,
                       "\" cannot be swept; sweepable fields: ", Join(SweepableFields())));
  }
  const JsonValue* model = root.Find("model");
  if (m.key == "model" && model && !model->is_string()) {
    return ErrorAt(file, m.key_pos,
                   Cat("sweep.grid: \"model\" can be swept only where the scenario's model is a "
                       "preset name (here it is ",
                       model->is_object() ? "an object" : Describe(*model), ")"));
  }
  return Status::Ok();
}

// A non-empty array of distinct scalars.
Status ReadAxis(std::string_view file, const JsonMember& m, SweepAxis* axis) {
  const std::string path = Cat("sweep.grid[\"", m.key, "\"]");
  const JsonValue& list = m.value;
  if (!list.is_array() || list.items.empty()) {
    return ErrorAt(file, list.pos,
                   Cat(path, ": expected a non-empty array of values, got ", Describe(list)));
  }
  axis->field = m.key;
  for (size_t i = 0; i < list.items.size(); ++i) {
    const JsonValue& item = list.items[i];
    const bool scalar = item.is_number() || item.is_string() || item.type == JsonValue::Type::kBool;
    if (!scalar) {
      return ErrorAt(
          file, item.pos,
          Cat(path, "[", i, "]: expected a number, a string or a boolean, got ", Describe(item)));
    }
    nlohmann::json value = ToJson(item);
    for (const nlohmann::json& earlier : axis->values) {
      if (earlier == value) {
        return ErrorAt(file, item.pos,
                       Cat(path, "[", i, "]: ", Describe(item), " is listed twice"));
      }
    }
    axis->values.push_back(std::move(value));
  }
  return Status::Ok();
}

// The value stored under `key` in `object`, added (an empty object at `at`) when absent.
JsonValue& MemberOf(JsonValue* object, std::string_view key, SourcePos at) {
  for (JsonMember& m : object->members) {
    if (m.key == key) return m.value;
  }
  JsonMember added;
  added.key = std::string(key);
  added.key_pos = at;
  added.value.type = JsonValue::Type::kObject;
  added.value.pos = at;
  object->members.push_back(std::move(added));
  return object->members.back().value;
}

// Sets `field` ("cluster.nodes", "model") of `root` to `value`; a section or key the file
// lacks is added at `at`, the grid key's position.
void Substitute(JsonValue* root, std::string_view field, SourcePos at, const JsonValue& value) {
  JsonValue* object = root;
  if (size_t dot = field.find('.'); dot != std::string_view::npos) {
    object = &MemberOf(root, field.substr(0, dot), at);
    field = field.substr(dot + 1);
  }
  MemberOf(object, field, at) = value;
}

// The length of the "file:L:C: " that starts `message`, or 0.
size_t LocationLength(std::string_view file, std::string_view message) {
  if (message.substr(0, file.size()) != file) return 0;
  size_t i = file.size();
  for (int part = 0; part < 2; ++part) {  // ":L", ":C"
    if (i >= message.size() || message[i] != ':') return 0;
    const size_t digits = ++i;
    while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i]))) ++i;
    if (i == digits) return 0;
  }
  return message.substr(i, 2) == ": " ? i + 2 : 0;
}

// "file:L:C: message" -> "file:L:C: <point>: message"; anything else gets "file: <point>: ".
Status WithPoint(std::string_view file, const Status& inner, const std::string& point) {
  const std::string& message = inner.message();
  const size_t at = LocationLength(file, message);
  const std::string out = at ? Cat(message.substr(0, at), point, ": ", message.substr(at))
                             : Cat(file, ": ", point, ": ", message);
  switch (inner.code()) {
    case Status::Code::kNotFound:
      return Status::NotFound(out);
    case Status::Code::kInternal:
      return Status::Internal(out);
    default:
      return Status::InvalidInput(out);
  }
}

using ParseRoot = std::function<Expected<PlanningScenario>(const JsonValue& root)>;

// Walks the grid in row-major order: Next() moves the last field fastest.
class GridWalk {
 public:
  explicit GridWalk(const JsonValue& grid) : grid_(grid), index_(grid.members.size(), 0) {}

  int64_t count() const {
    int64_t n = 1;
    for (const JsonMember& m : grid_.members) n *= static_cast<int64_t>(m.value.items.size());
    return n;
  }
  void Next() {
    for (size_t a = index_.size(); a-- > 0;) {
      if (++index_[a] < grid_.members[a].value.items.size()) return;
      index_[a] = 0;
    }
  }
  const JsonValue& value(size_t axis) const {
    return grid_.members[axis].value.items[index_[axis]];
  }
  // "cluster.nodes=16" joined by `separator`.
  std::string Labels(std::string_view separator) const {
    std::string out;
    for (size_t a = 0; a < index_.size(); ++a) {
      out += Cat(a ? separator : "", grid_.members[a].key, "=", Label(value(a)));
    }
    return out;
  }
  // The file with this point's values put in, and no sweep.
  JsonValue Document(const JsonValue& plain) const {
    JsonValue doc = plain;
    for (size_t a = 0; a < index_.size(); ++a) {
      const JsonMember& m = grid_.members[a];
      Substitute(&doc, m.key, m.key_pos, value(a));
    }
    return doc;
  }

 private:
  const JsonValue& grid_;
  std::vector<size_t> index_;
};

Expected<std::vector<PlanningScenario>> Expand(const JsonValue& root, std::string_view file,
                                               const ParseRoot& parse) {
  Expected<PlanningScenario> base = parse(root);
  if (!base.ok()) return base.status();
  if (base->sweep.empty()) return std::vector<PlanningScenario>{std::move(base).value()};
  JsonValue plain = root;
  std::erase_if(plain.members, [](const JsonMember& m) { return m.key == "sweep"; });
  GridWalk walk(*root.Find("sweep")->Find("grid"));
  const int64_t count = walk.count();
  std::vector<PlanningScenario> points;
  points.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k, walk.Next()) {
    Expected<PlanningScenario> point = parse(walk.Document(plain));
    if (!point.ok()) {
      return WithPoint(file, point.status(),
                       Cat("sweep point ", k + 1, " of ", count, " (", walk.Labels(", "), ")"));
    }
    point->scenario.name = Cat(base->scenario.name, "[", walk.Labels(","), "]");
    points.push_back(std::move(point).value());
  }
  return points;
}

}  // namespace

const std::vector<std::string>& SweepableFields() {
  static const std::vector<std::string> fields = [] {
    std::vector<std::string> out = {"model"};
    for (const ScenarioField& f : ScenarioFields()) {
      if (f.scalar()) out.push_back(f.path);
    }
    return out;
  }();
  return fields;
}

Status ReadSweepSection(const JsonValue& root, std::string_view file, std::vector<SweepAxis>* out) {
  const JsonValue* sweep = root.Find("sweep");
  if (!sweep) return Status::Ok();
  ObjectReader r(*sweep, "sweep", std::string(file));
  const JsonValue* grid = r.Child("grid");
  if (Status s = r.Finish(); !s.ok()) return s;
  if (!grid) return ErrorAt(file, sweep->pos, "missing required field sweep.grid");
  if (!grid->is_object() || grid->members.empty()) {
    return ErrorAt(file, grid->pos,
                   Cat("sweep.grid: expected an object of fields and their values, like "
                       "{\"cluster.nodes\": [8, 16]}, got ",
                       Describe(*grid)));
  }
  int64_t points = 1;  // stops growing past the limit
  std::string sizes;
  for (const JsonMember& m : grid->members) {
    if (Status s = CheckField(root, file, m); !s.ok()) return s;
    SweepAxis axis;
    if (Status s = ReadAxis(file, m, &axis); !s.ok()) return s;
    points =
        std::min<int64_t>(points * static_cast<int64_t>(axis.values.size()), kMaxSweepPoints + 1);
    sizes += Cat(sizes.empty() ? "" : " x ", axis.values.size());
    out->push_back(std::move(axis));
  }
  if (points > kMaxSweepPoints) {
    return ErrorAt(file, grid->pos,
                   Cat("sweep.grid: ", sizes, " values give more than ", kMaxSweepPoints,
                       " points (the most a grid may have)"));
  }
  return Status::Ok();
}

Expected<std::vector<PlanningScenario>> ExpandSweepGrid(const std::string& path,
                                                        const Catalog& catalog,
                                                        const std::string& profile_path) {
  Expected<JsonValue> root = ParseJsonFile(path);
  if (!root.ok()) return root.status();
  return Expand(*root, path, [&](const JsonValue& doc) {
    return LoadPlanningRoot(doc, path, catalog, profile_path);
  });
}

Expected<std::vector<PlanningScenario>> ExpandSweepGridString(std::string_view text,
                                                              std::string_view filename,
                                                              const Catalog& catalog) {
  Expected<JsonValue> root = ParseJson(text, filename);
  if (!root.ok()) return root.status();
  return Expand(*root, filename,
                [&](const JsonValue& doc) { return ParsePlanningRoot(doc, filename, catalog); });
}

}  // namespace trainsim
