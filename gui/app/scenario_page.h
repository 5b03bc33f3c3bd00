// The scenario editor: two views of the window's ScenarioDocument -- a form
// (model, training, cluster, parallel, search) and the raw JSON text. Editing
// the form rewrites the JSON at that field only (ScenarioForm); editing the
// JSON re-reads the form after a pause. Each change is parsed like
// `trainsim plan` loads the file, 300 ms after the last keystroke: an error at
// a form field shows in red beside it; any other error (JSON syntax, a field
// the form lacks) shows in the page's status line with its line:column and a
// link that puts the JSON cursor there. New, Save and Save as… are on the
// page's own bar.
#pragma once

#include <QHash>
#include <QTimer>
#include <QWidget>
#include <memory>

#include "core/catalog.h"
#include "gui/models/instance_picker_model.h"
#include "gui/models/scenario_document.h"
#include "gui/models/scenario_form.h"

class QAction;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListView;
class QListWidget;
class QPlainTextEdit;
class QScrollArea;
class QTabWidget;

namespace trainsim::gui {

class ScenarioPage : public QWidget {
  Q_OBJECT

 public:
  // `catalog` may be null (no validation, no instance lists).
  ScenarioPage(ScenarioDocument* document, std::shared_ptr<const Catalog> catalog,
               QWidget* parent = nullptr);

  // Writes the document to `path` (empty: its own path); false and a status
  // message when it cannot.
  bool saveTo(const QString& path);

  // For the tests.
  QTabWidget* views() const { return views_; }  // "Form", "JSON"
  QPlainTextEdit* jsonEdit() const { return json_; }
  QWidget* editor(const QString& path) const;     // the field's widget
  QLabel* errorLabel(const QString& path) const;  // the red label beside it
  QLabel* statusLabel() const { return status_; }
  InstancePickerModel* instancePicker() const { return picker_; }
  const ScenarioForm& form() const { return form_; }
  QString markedField() const { return marked_; }  // the field showing an error; "" = none
  QAction* newAction() const { return new_action_; }

 public slots:
  // Parses the document now (what the pause after an edit does).
  void validateNow();
  // Shows the JSON tab with the cursor at this line and column (1-based).
  void showJsonAt(int line, int column);

 signals:
  // After each parse: ok, or the error is shown (beside a field or in the status).
  void validated(bool ok);

 private:
  struct Field {
    const FormField* spec = nullptr;
    QLineEdit* line = nullptr;
    QComboBox* combo = nullptr;
    QListView* list = nullptr;
    QListWidget* choices = nullptr;  // kChoiceList
    QWidget* editor = nullptr;
    QLabel* error = nullptr;
  };

  QWidget* buildForm();
  QWidget* buildSection(const QString& section);
  Field makeField(const FormField& spec);
  QString widgetText(const Field& f) const;
  static QStringList checkedChoices(const Field& f);  // kChoiceList, in the choices' order
  void setWidgetText(Field& f, const QString& text);

  void onDocumentChanged();
  void onJsonEdited();
  void onFieldEdited(const QString& path);
  void onModelChosen();
  void onParsed(bool ok);
  void commitForm();
  void refreshForm();
  void refreshModel();
  void setJsonText(const QString& text);
  void showFieldError(const QString& path, const QString& message);
  void clearErrors();
  void highlightJsonLine(int line);
  void onStatusLink(const QString& link);  // "json:LINE:COLUMN" or "field:PATH"
  void setStatus(const QString& html, const QString& color);
  void newScenario();
  void saveDialog(bool ask);

  ScenarioDocument* document_;
  std::shared_ptr<const Catalog> catalog_;
  ScenarioForm form_;
  InstancePickerModel* picker_;
  QHash<QString, Field> fields_;
  bool refreshing_ = false;  // the form follows the JSON: no edits to commit
  QString marked_;

  QTabWidget* views_;
  QScrollArea* form_view_;
  QPlainTextEdit* json_;
  QLabel* status_;
  QAction *new_action_, *save_action_, *save_as_action_;
  QTimer pause_;             // the 300 ms after the last edit
  bool json_dirty_ = false;  // the JSON was edited: re-read the form at the pause
  bool writing_ = false;     // the page is setting the document's text
  bool setting_json_ = false;
};

}  // namespace trainsim::gui
