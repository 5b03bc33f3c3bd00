#include "gui/models/attach_profile.h"

#include <QDir>
#include <QFileInfo>

#include "gui/models/scenario_form.h"

namespace trainsim::gui {

Expected<QString> AttachProfileToScenario(const QString& scenario_text,
                                          const QString& scenario_path,
                                          const QString& profile_path) {
  ScenarioForm form;
  if (!form.setText(scenario_text)) {
    return Status::InvalidInput("the scenario is not valid JSON (" +
                                form.syntaxError().toStdString() +
                                "): fix it before attaching a profile");
  }
  const QString absolute = QFileInfo(profile_path).absoluteFilePath();
  const QString value = scenario_path.isEmpty()
                            ? absolute
                            : QFileInfo(scenario_path).absoluteDir().relativeFilePath(absolute);
  form.setValue(QStringLiteral("cluster.profile"), OrderedJson(value.toStdString()));
  return form.text();
}

}  // namespace trainsim::gui
