// The scenario editor's form over a scenario's JSON, without widgets: which
// fields the form has (FormField), reading a field's value from the JSON and
// writing one back at its dotted path (everything else in the file is kept,
// in its order), the model's four forms (preset name, preset with overrides,
// explicit dimensions, layer list), and which form field a parse error
// (ScenarioError::field) belongs to. The page (gui/app/scenario_page.h) puts a
// widget on each field and shows the error beside it.
#pragma once

#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace trainsim::gui {

using OrderedJson = nlohmann::ordered_json;

// How a field's text becomes a JSON value. Text the kind cannot read is still
// written (as a string) so that the parser, not the form, says what is wrong.
enum class FieldKind {
  kInteger,       // a line edit: 64, 3e11 (integral numbers are written as integers)
  kNumber,        // a line edit: 500, 0.5
  kText,          // a line edit: any string
  kChoice,        // a combo box of `choices` (and "(default)" = absent)
  kBool,          // a combo box: "(default)", true, false
  kNumberOrText,  // search.objective: "min-cost", "min-time" or a weight in [0, 1]
  kInstance,      // cluster.instance: an editable combo of the catalog's names
  kInstanceList,  // search.instances: a checkable list (InstancePickerModel)
  kChoiceList,    // search.pricing: a checkable list of `choices`; none checked = absent
  kModel,         // model: a preset name, or custom dimensions
};

struct FormField {
  QString path;     // "training.global_batch": where the value lives in the JSON
  QString section;  // "Model", "Training", "Cluster", "Parallel", "Search"
  QString label;
  FieldKind kind;
  QStringList choices;  // kChoice, kNumberOrText, kChoiceList
  QString hint;         // what absence means ("1", "bf16", "every AWS type")
  // Error paths, besides the field's own and those below it, whose errors are
  // shown beside this field ("search.nodes: max = 4 is less than min = 8").
  QStringList owns;
};

// Every field of the form, in the form's order.
const std::vector<FormField>& ScenarioFormFields();
const FormField* FindFormField(const QString& path);
// The form field that shows an error at `error_field` (ScenarioError::field):
// the field itself, the field an array element or sub-field belongs to
// ("search.instances[2]" -> "search.instances"), or one that owns it. Empty
// when the form has no such field (the error goes to the page's status).
QString FormFieldForError(const QString& error_field);

// A scenario's JSON text with a stable layout: two-space indent; objects and
// arrays whose members are all scalars on one line when that line is short.
QString FormatScenarioJson(const OrderedJson& root);
// A built-in scenario for "New".
QString NewScenarioText();

// One scenario document's JSON, edited field by field.
class ScenarioForm {
 public:
  enum class ModelForm {
    kAbsent,     // no "model"
    kPreset,     // "model": "gpt3-175b"
    kOverrides,  // "model": {"preset": "llama2-70b", "seq_len": 2048}
    kCustom,     // "model": {"layers": 8, "hidden": 1024, ...}
    kLayerList,  // "model": {"layer_list": [...]} (edited in the JSON tab only)
    kOther,      // a value of another type (the parser says what is wrong)
  };

  // Reads the text; false (and syntaxError()) when it is not a JSON object.
  // The form keeps its last good tree until the next good text.
  bool setText(const QString& text);
  bool ok() const { return ok_; }
  const QString& syntaxError() const { return syntax_error_; }
  // The tree as formatted text (FormatScenarioJson).
  QString text() const { return FormatScenarioJson(root_); }
  const OrderedJson& root() const { return root_; }

  // The value at a dotted path: null when absent (a null in the file reads
  // as absent too, and stays until the field is edited).
  OrderedJson value(const QString& path) const;
  // The text a form field shows for it: "" when absent.
  QString fieldText(const QString& path) const;
  // The strings of an array field (search.instances).
  QStringList fieldList(const QString& path) const;

  // Sets the field from its text ("" removes it). `path` must be a form
  // field (the kind says how the text is read); model.* dimensions turn a
  // preset name into a preset with overrides and back.
  void setFieldText(const QString& path, const QString& text);
  // Sets an array of strings (empty removes it).
  void setFieldList(const QString& path, const QStringList& items);
  // Writes a JSON value at a dotted path, making the objects on the way; a
  // null value removes the key, and objects it leaves empty (but not the
  // required top-level sections).
  void setValue(const QString& path, const OrderedJson& value);

  ModelForm modelForm() const;
  // The preset of kPreset and kOverrides; empty otherwise.
  QString modelPreset() const;
  // A preset: its overrides are kept (kOverrides); custom dimensions and a
  // layer list are replaced by the name.
  void setModelPreset(const QString& name);
  // Explicit dimensions, starting from the current preset's (with its
  // overrides), or from a small GPT when there is none.
  void setCustomModel();

  // The JSON value the form writes for a field's text (null for "").
  static OrderedJson ValueFromText(const QString& text, FieldKind kind);
  // The text the form shows for a JSON value ("" for null).
  static QString TextFromValue(const OrderedJson& value);

 private:
  OrderedJson root_ = OrderedJson::object();
  bool ok_ = true;
  QString syntax_error_;
};

}  // namespace trainsim::gui
