// A scenario file being edited: its text, where it lives, and the result of
// parsing it (the PlanningScenario, or the error with the field path and the line and
// column that a form shows beside the field).
#pragma once

#include <QObject>
#include <QString>
#include <optional>

#include "core/catalog.h"
#include "core/search.h"

namespace trainsim::gui {

// "file:line:col: field.path: message" split into its parts. Parts the
// message lacks stay empty / 0 (a JSON syntax error names no field).
struct ScenarioError {
  QString message;  // the whole message
  QString file;
  int line = 0, column = 0;
  QString field;   // "parallel.tp", "instances[0].gpus"; empty when none is named
  QString detail;  // the message after the location
};
ScenarioError ParseScenarioError(const QString& message);

class ScenarioDocument : public QObject {
  Q_OBJECT

 public:
  explicit ScenarioDocument(QObject* parent = nullptr);

  // Reads the file; false (and errorMessage()) when it cannot be read.
  bool load(const QString& path);
  // A new document with this text and no file yet (save() needs a path).
  void startNew(const QString& text);
  // Writes the text to `path` (empty: the current path) durably
  // (core/durable_file.h: a crash leaves the old file or the new one).
  bool save(const QString& path = QString());

  const QString& path() const { return path_; }
  const QString& text() const { return text_; }
  void setText(const QString& text);
  bool modified() const { return modified_; }

  // A hardware profile to attach instead of cluster.profile (like `trainsim
  // plan --profile`); empty: none.
  void setProfile(const QString& path) { profile_ = path; }

  // Parses the text like `trainsim plan` loads the file (cluster.profile
  // resolved next to the file). True and scenario() on success; false and
  // error() otherwise.
  bool parse(const Catalog& catalog);
  const std::optional<PlanningScenario>& scenario() const { return scenario_; }
  const ScenarioError& error() const { return error_; }

 signals:
  void textChanged();
  // modified() or path() may have changed (load, startNew, setText, save).
  void modifiedChanged(bool modified);
  void parsed(bool ok);

 private:
  QString path_, text_, profile_;
  bool modified_ = false;
  std::optional<PlanningScenario> scenario_;
  ScenarioError error_;
};

}  // namespace trainsim::gui
