#include "gui/models/scenario_document.h"

#include <QFile>
#include <QRegularExpression>
#include <string_view>

#include "core/durable_file.h"
#include "core/json_doc.h"
#include "core/scenario_sections.h"

namespace trainsim::gui {

ScenarioError ParseScenarioError(const QString& message) {
  ScenarioError e;
  e.message = message;
  e.detail = message;
  static const QRegularExpression location(QStringLiteral(R"(^(.*):(\d+):(\d+): (.*)$)"),
                                           QRegularExpression::DotMatchesEverythingOption);
  const QRegularExpressionMatch m = location.match(message);
  if (!m.hasMatch()) return e;
  e.file = m.captured(1);
  e.line = m.captured(2).toInt();
  e.column = m.captured(3).toInt();
  e.detail = m.captured(4);
  // "path: ...", "unknown field path (...", "missing required field path ..."
  static const QString kPath =
      QStringLiteral(R"([A-Za-z_]\w*(?:\[\d+\])*(?:\.[A-Za-z_]\w*(?:\[\d+\])*)*)");
  static const QRegularExpression named(
      QStringLiteral("^(?:unknown field |missing required field )(") + kPath + QStringLiteral(")"));
  static const QRegularExpression leading(QStringLiteral("^(") + kPath +
                                          QStringLiteral(")(?::| =)"));
  QRegularExpressionMatch f = named.match(e.detail);
  if (!f.hasMatch()) f = leading.match(e.detail);
  if (f.hasMatch()) e.field = f.captured(1);
  return e;
}

ScenarioDocument::ScenarioDocument(QObject* parent) : QObject(parent) {}

bool ScenarioDocument::load(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    error_ = ParseScenarioError(path + QStringLiteral(": cannot read: ") + f.errorString());
    return false;
  }
  path_ = path;
  text_ = QString::fromUtf8(f.readAll());
  modified_ = false;
  scenario_.reset();
  emit textChanged();
  emit modifiedChanged(false);
  return true;
}

void ScenarioDocument::startNew(const QString& text) {
  path_.clear();
  text_ = text;
  modified_ = false;
  scenario_.reset();
  emit textChanged();
  emit modifiedChanged(false);
}

bool ScenarioDocument::save(const QString& path) {
  const QString to = path.isEmpty() ? path_ : path;
  const QByteArray bytes = text_.toUtf8();
  const Status written =
      to.isEmpty()
          ? Status::InvalidInput("cannot write: the scenario has no file name yet")
          : WriteFileDurably(to.toStdString(), std::string_view(bytes.constData(), bytes.size()));
  if (!written.ok()) {
    error_ = ParseScenarioError(QString::fromStdString(written.message()));
    return false;
  }
  path_ = to;
  modified_ = false;
  emit modifiedChanged(false);
  return true;
}

void ScenarioDocument::setText(const QString& text) {
  if (text == text_) return;
  text_ = text;
  const bool was = modified_;
  modified_ = true;
  scenario_.reset();
  emit textChanged();
  if (!was) emit modifiedChanged(true);
}

bool ScenarioDocument::parse(const Catalog& catalog) {
  const std::string name = path_.isEmpty() ? std::string("untitled.json") : path_.toStdString();
  const std::string text = text_.toStdString();
  Expected<PlanningScenario> s = LoadPlanningText(text, name, catalog, profile_.toStdString());
  if (!s.ok()) {
    scenario_.reset();
    error_ = ParseScenarioError(QString::fromStdString(s.status().message()));
    emit parsed(false);
    return false;
  }
  scenario_ = std::move(*s);
  error_ = ScenarioError();
  emit parsed(true);
  return true;
}

}  // namespace trainsim::gui
