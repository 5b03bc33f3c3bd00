#include "gui/models/scenario_form.h"

#include <cmath>
#include <string>

#include "core/model_zoo.h"
#include "core/scenario_fields.h"
#include "core/search.h"

namespace trainsim::gui {

namespace {

constexpr int kLineWidth = 100;  // FormatScenarioJson puts short scalar groups on one line

QStringList Strings(const std::vector<std::string>& items) {
  QStringList out;
  for (const std::string& i : items) out << QString::fromStdString(i);
  return out;
}

// A field of the scenario's table (core/scenario_fields.h): its label, kind and choices, and
// its default as the hint, without the Markdown ("`\"bf16\"`" -> "bf16").
FormField FromTable(const ScenarioField& f) {
  const QString path = QString::fromStdString(f.path);
  QString section = QString::fromStdString(std::string(f.section()));  // "training" -> "Training"
  section[0] = section[0].toUpper();
  FieldKind kind = FieldKind::kText;
  switch (f.type) {
    case FieldType::kInteger:
      kind = FieldKind::kInteger;
      break;
    case FieldType::kNumber:
      kind = FieldKind::kNumber;
      break;
    case FieldType::kBool:
      kind = FieldKind::kBool;
      break;
    case FieldType::kChoice:
      kind = FieldKind::kChoice;
      break;
    case FieldType::kString:
    case FieldType::kList:
      kind = path == QLatin1String("cluster.instance") ? FieldKind::kInstance : FieldKind::kText;
      break;
  }
  QString hint = QString::fromStdString(f.default_text);
  hint.remove(QLatin1Char('`')).remove(QLatin1Char('"'));
  return FormField{path, section, QString::fromStdString(f.label), kind, Strings(f.choices),
                   hint, {}};
}

std::vector<FormField> MakeFields() {
  const QString m = QStringLiteral("Model"), s = QStringLiteral("Search");
  auto L = [](std::initializer_list<const char*> items) {
    QStringList l;
    for (const char* i : items) l << QString::fromLatin1(i);
    return l;
  };
  auto F = [](const char* path, const QString& section, const char* label, FieldKind kind,
              QStringList choices = {}, const char* hint = "", QStringList owns = {}) {
    return FormField{QString::fromLatin1(path),
                     section,
                     QString::fromUtf8(label),
                     kind,
                     std::move(choices),
                     QString::fromUtf8(hint),
                     std::move(owns)};
  };
  using K = FieldKind;
  std::vector<FormField> fields = {
      F("name", m, "Name", K::kText, {}, "the file name"),
      F("model", m, "Model", K::kModel, {}, "", L({"model.preset"})),
      F("model.layers", m, "Layers", K::kInteger),
      F("model.hidden", m, "Hidden size", K::kInteger),
      F("model.heads", m, "Attention heads", K::kInteger),
      F("model.kv_heads", m, "KV heads", K::kInteger, {}, "= heads"),
      F("model.ffn_hidden", m, "FFN hidden", K::kInteger, {}, "4 × hidden"),
      F("model.seq_len", m, "Sequence length", K::kInteger),
      F("model.vocab", m, "Vocabulary", K::kInteger),
      F("model.mlp", m, "MLP", K::kChoice,
        L({ToString(MlpKind::kGelu), ToString(MlpKind::kSwiGlu)}), ToString(MlpKind::kGelu)),
      F("model.bias", m, "Biases", K::kBool, {}, "true"),
      F("model.experts", m, "Experts (mixture of experts)", K::kInteger, {}, "none: dense"),
      F("model.experts_per_token", m, "Experts per token (top-k)", K::kInteger, {},
        "required with experts"),
      F("model.expert_ffn_hidden", m, "Expert FFN hidden", K::kInteger, {}, "FFN hidden"),
      F("model.shared_experts", m, "Shared experts", K::kInteger, {}, "0"),
      F("model.dense_layers", m, "Dense first layers", K::kInteger, {}, "0"),
      F("model.capacity_factor", m, "Capacity factor", K::kNumber, {}, "0: dropless"),
  };
  std::vector<FormField> search = {
      F("search.budget_usd", s, "Budget (USD)", K::kNumber, {}, "no limit"),
      F("search.deadline_hours", s, "Deadline (hours)", K::kNumber, {}, "no limit"),
      F("search.objective", s, "Objective", K::kNumberOrText,
        L({ToString(Objective::kMinCost), ToString(Objective::kMinTime)}),
        ToString(Objective::kMinCost)),
      F("search.spot_allowed", s, "Spot allowed", K::kBool, {}, "true"),
      F("search.instances", s, "Allowed instances", K::kInstanceList, {},
        "none checked: every AWS type"),
      F("search.nodes.min", s, "Nodes from", K::kInteger, {}, "1"),
      F("search.nodes.max", s, "Nodes to", K::kInteger, {}, "64", L({"search.nodes"})),
      F("search.confirm_top", s, "Simulate the best", K::kInteger, {}, "100"),
      F("search.pricing", s, "Ways of buying to compare", K::kChoiceList,
        Strings(FindScenarioField("cluster.pricing")->choices),
        "none checked: every option with a price"),
      F("search.reservation_gap_s", s, "Gap between reserved blocks (s)", K::kNumber, {},
        "0: back to back"),
      F("search.spot_capacity_chance", s, "Spot capacity: chance per request", K::kNumber, {},
        "not modelled"),
      F("search.spot_capacity_retry_s", s, "Spot capacity: retry every (s)", K::kNumber, {}, "600"),
      F("search.spot_reclaim_wave_nodes", s, "Spot reclaim wave (instances)", K::kInteger, {},
        "1: independent"),
      F("search.elastic_reconfigure_s", s, "Elastic: rebuild per change (s)", K::kNumber, {},
        "not counted"),
      F("search.warm_pool_keep_alive_s", s, "SageMaker warm pool keep-alive (s)", K::kNumber, {},
        "no warm pool"),
      F("search.image_bytes", s, "Container image (bytes)", K::kNumber, {}, "not counted"),
      F("search.stream_dataset", s, "Stream the dataset", K::kBool, {}, "false: download first"),
  };
  for (const ScenarioField& f : ScenarioFields()) {
    if (f.scalar()) fields.push_back(FromTable(f));
  }
  fields.insert(fields.end(), search.begin(), search.end());
  return fields;
}

QStringList SplitPath(const QString& path) { return path.split(QLatin1Char('.')); }

bool IsScalar(const OrderedJson& v) { return !v.is_object() && !v.is_array(); }

std::string Dump(const OrderedJson& v) {
  return v.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

// `{"a": 1, "b": 2}` / `[1, 2]`: a group of scalars on one line.
std::string Inline(const OrderedJson& v) {
  std::string out(1, v.is_object() ? '{' : '[');
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!first) out += ", ";
    first = false;
    if (v.is_object()) out += Dump(OrderedJson(it.key())) + ": ";
    out += Dump(*it);
  }
  out += v.is_object() ? '}' : ']';
  return out;
}

// `column`: where the value starts on its line.
void Format(const OrderedJson& v, int indent, int column, std::string* out) {
  if (IsScalar(v)) {
    *out += Dump(v);
    return;
  }
  if (v.empty()) {
    *out += v.is_object() ? "{}" : "[]";
    return;
  }
  bool scalars = true;
  for (const OrderedJson& item : v) scalars = scalars && IsScalar(item);
  if (indent > 0 && scalars) {
    const std::string one = Inline(v);
    if (column + static_cast<int>(one.size()) + 1 <= kLineWidth) {
      *out += one;
      return;
    }
  }
  const std::string pad(static_cast<size_t>(indent + 2), ' ');
  *out += v.is_object() ? "{\n" : "[\n";
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!first) *out += ",\n";
    first = false;
    *out += pad;
    int at = indent + 2;
    if (v.is_object()) {
      const std::string key = Dump(OrderedJson(it.key())) + ": ";
      *out += key;
      at += static_cast<int>(key.size());
    }
    Format(*it, indent + 2, at, out);
  }
  *out += "\n" + std::string(static_cast<size_t>(indent), ' ') + (v.is_object() ? "}" : "]");
}

}  // namespace

const std::vector<FormField>& ScenarioFormFields() {
  static const std::vector<FormField> fields = MakeFields();
  return fields;
}

const FormField* FindFormField(const QString& path) {
  for (const FormField& f : ScenarioFormFields())
    if (f.path == path) return &f;
  return nullptr;
}

QString FormFieldForError(const QString& error_field) {
  if (error_field.isEmpty()) return QString();
  for (const FormField& f : ScenarioFormFields()) {
    if (f.path == error_field || f.owns.contains(error_field)) return f.path;
    // An element of an array field: "search.instances[2]".
    if ((f.kind == FieldKind::kInstanceList || f.kind == FieldKind::kChoiceList) &&
        error_field.startsWith(f.path + QLatin1Char('[')))
      return f.path;
  }
  return QString();
}

QString FormatScenarioJson(const OrderedJson& root) {
  std::string out;
  Format(root, 0, 0, &out);
  out += '\n';
  return QString::fromStdString(out);
}

QString NewScenarioText() {
  OrderedJson root = OrderedJson::object();
  root["version"] = 1;
  root["model"] = "llama2-7b";
  root["training"] = {{"global_batch", 512}, {"precision", "bf16"}, {"tokens", 100000000000LL}};
  root["cluster"] = {{"instance", "p4d.24xlarge"}, {"nodes", 4}};
  root["search"] = {{"instances", {"p4d.24xlarge", "p5.48xlarge"}},
                    {"nodes", {{"min", 1}, {"max", 16}}},
                    {"budget_usd", 100000},
                    {"objective", "min-cost"}};
  return FormatScenarioJson(root);
}

// ---- ScenarioForm -----------------------------------------------------------------------------

bool ScenarioForm::setText(const QString& text) {
  OrderedJson parsed;
  try {
    parsed = OrderedJson::parse(text.toStdString());
  } catch (const OrderedJson::exception& e) {
    ok_ = false;
    syntax_error_ = QString::fromUtf8(e.what());
    return false;
  }
  if (!parsed.is_object()) {
    ok_ = false;
    syntax_error_ = QStringLiteral("a scenario is one JSON object");
    return false;
  }
  root_ = std::move(parsed);
  ok_ = true;
  syntax_error_.clear();
  return true;
}

OrderedJson ScenarioForm::value(const QString& path) const {
  const OrderedJson* at = &root_;
  for (const QString& part : SplitPath(path)) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(part.toStdString());
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return *at;
}

QString ScenarioForm::fieldText(const QString& path) const {
  if (path == QLatin1String("model")) return modelPreset();
  return TextFromValue(value(path));
}

QStringList ScenarioForm::fieldList(const QString& path) const {
  QStringList items;
  const OrderedJson v = value(path);
  if (!v.is_array()) return items;
  for (const OrderedJson& item : v) items << TextFromValue(item);
  return items;
}

void ScenarioForm::setValue(const QString& path, const OrderedJson& value) {
  const QStringList parts = SplitPath(path);
  if (!value.is_null()) {
    OrderedJson* at = &root_;
    for (int i = 0; i + 1 < parts.size(); ++i) {
      OrderedJson& next = (*at)[parts[i].toStdString()];
      if (!next.is_object()) next = OrderedJson::object();
      at = &next;
    }
    (*at)[parts.last().toStdString()] = value;
    return;
  }
  // Removal: the key, then the objects it leaves empty, deepest first.
  std::vector<OrderedJson*> chain{&root_};
  for (int i = 0; i + 1 < parts.size(); ++i) {
    OrderedJson* at = chain.back();
    auto it = at->find(parts[i].toStdString());
    if (it == at->end() || !it->is_object()) return;
    chain.push_back(&*it);
  }
  chain.back()->erase(parts.last().toStdString());
  for (int i = static_cast<int>(chain.size()) - 1; i >= 1; --i) {
    if (!chain[static_cast<size_t>(i)]->empty()) break;
    const QString& key = parts[i - 1];
    const bool required =
        i == 1 && (key == QLatin1String("training") || key == QLatin1String("cluster") ||
                   key == QLatin1String("model"));
    if (required) break;
    chain[static_cast<size_t>(i - 1)]->erase(key.toStdString());
  }
}

void ScenarioForm::setFieldText(const QString& path, const QString& text) {
  if (path == QLatin1String("model")) {
    setModelPreset(text.trimmed());
    return;
  }
  const FormField* field = FindFormField(path);
  const OrderedJson v = ValueFromText(text, field ? field->kind : FieldKind::kText);
  if (!path.startsWith(QLatin1String("model."))) {
    setValue(path, v);
    return;
  }
  const std::string key = path.mid(6).toStdString();
  switch (modelForm()) {
    case ModelForm::kPreset:
      if (!v.is_null()) {
        OrderedJson preset = root_["model"];
        root_["model"] = {{"preset", std::move(preset)}, {key, v}};
      }
      return;
    case ModelForm::kOverrides: {
      OrderedJson& model = root_["model"];
      if (v.is_null())
        model.erase(key);
      else
        model[key] = v;
      if (model.size() == 1) model = OrderedJson(model["preset"]);  // no overrides left
      return;
    }
    case ModelForm::kCustom:
    case ModelForm::kLayerList:
      if (v.is_null())
        root_["model"].erase(key);
      else
        root_["model"][key] = v;
      return;
    case ModelForm::kAbsent:
    case ModelForm::kOther:
      if (!v.is_null()) root_["model"] = {{key, v}};
      return;
  }
}

void ScenarioForm::setFieldList(const QString& path, const QStringList& items) {
  if (items.isEmpty()) {
    setValue(path, nullptr);
    return;
  }
  OrderedJson array = OrderedJson::array();
  for (const QString& item : items) array.push_back(item.toStdString());
  setValue(path, array);
}

ScenarioForm::ModelForm ScenarioForm::modelForm() const {
  auto it = root_.find("model");
  if (it == root_.end() || it->is_null()) return ModelForm::kAbsent;
  if (it->is_string()) return ModelForm::kPreset;
  if (!it->is_object()) return ModelForm::kOther;
  if (it->contains("layer_list")) return ModelForm::kLayerList;
  if (it->contains("preset")) return ModelForm::kOverrides;
  return ModelForm::kCustom;
}

QString ScenarioForm::modelPreset() const {
  switch (modelForm()) {
    case ModelForm::kPreset:
      return QString::fromStdString(root_.at("model").get<std::string>());
    case ModelForm::kOverrides:
      return TextFromValue(root_.at("model").at("preset"));
    default:
      return QString();
  }
}

void ScenarioForm::setModelPreset(const QString& name) {
  if (name.isEmpty()) {
    setValue(QStringLiteral("model"), nullptr);
    return;
  }
  if (modelForm() == ModelForm::kOverrides)
    root_["model"]["preset"] = name.toStdString();
  else
    root_["model"] = name.toStdString();
}

void ScenarioForm::setCustomModel() {
  const ModelForm form = modelForm();
  if (form == ModelForm::kCustom) return;
  std::optional<ModelSpec> spec = FindModel(modelPreset().toStdString());
  if (!spec || spec->kind != ModelKind::kTransformer) spec = FindModel("gpt-1.7b");
  OrderedJson model = OrderedJson::object();
  model["layers"] = spec->layers;
  model["hidden"] = spec->hidden;
  model["heads"] = spec->heads;
  if (spec->kv_heads != spec->heads) model["kv_heads"] = spec->kv_heads;
  if (spec->ffn_hidden != 4 * spec->hidden) model["ffn_hidden"] = spec->ffn_hidden;
  model["seq_len"] = spec->seq_len;
  model["vocab"] = spec->vocab;
  if (spec->mlp == MlpKind::kSwiGlu) model["mlp"] = ToString(spec->mlp);
  if (!spec->bias) model["bias"] = false;
  if (!spec->tied_embeddings) model["tied_embeddings"] = false;
  if (!spec->learned_positions) model["learned_positions"] = false;
  if (spec->token_types > 0) model["token_types"] = spec->token_types;
  if (form == ModelForm::kOverrides) {  // the overrides win
    for (auto it = root_["model"].begin(); it != root_["model"].end(); ++it)
      if (it.key() != "preset") model[it.key()] = *it;
  }
  root_["model"] = std::move(model);
}

OrderedJson ScenarioForm::ValueFromText(const QString& text, FieldKind kind) {
  const QString t = text.trimmed();
  if (t.isEmpty()) return nullptr;
  switch (kind) {
    case FieldKind::kText:
    case FieldKind::kChoice:
    case FieldKind::kInstance:
    case FieldKind::kModel:
    case FieldKind::kInstanceList:
    case FieldKind::kChoiceList:
      return t.toStdString();
    case FieldKind::kBool:
      if (t == QLatin1String("true")) return true;
      if (t == QLatin1String("false")) return false;
      return t.toStdString();
    case FieldKind::kInteger:
    case FieldKind::kNumber:
    case FieldKind::kNumberOrText: {
      bool ok = false;
      const qlonglong i = t.toLongLong(&ok);
      if (ok) return static_cast<int64_t>(i);
      const double d = t.toDouble(&ok);
      if (ok && std::isfinite(d)) {
        if (d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<int64_t>(d);
        return d;
      }
      return t.toStdString();  // the parser says what is wrong with it
    }
  }
  return t.toStdString();
}

QString ScenarioForm::TextFromValue(const OrderedJson& value) {
  if (value.is_null()) return QString();
  if (value.is_string()) return QString::fromStdString(value.get<std::string>());
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15)
      return QString::number(static_cast<qlonglong>(d));
  }
  return QString::fromStdString(Dump(value));
}

}  // namespace trainsim::gui
