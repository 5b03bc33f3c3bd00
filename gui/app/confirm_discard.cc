#include "gui/app/confirm_discard.h"

#include <QFileInfo>
#include <QMessageBox>

#include "gui/models/scenario_document.h"

namespace trainsim::gui {

bool ConfirmDiscard(QWidget* parent, const ScenarioDocument& document) {
  if (!document.modified()) return true;
  const QString name = document.path().isEmpty() ? QStringLiteral("the new scenario")
                                                 : QFileInfo(document.path()).fileName();
  return QMessageBox::question(parent, QStringLiteral("Unsaved changes"),
                               QStringLiteral("Discard the unsaved changes to %1?").arg(name),
                               QMessageBox::Discard | QMessageBox::Cancel,
                               QMessageBox::Cancel) == QMessageBox::Discard;
}

}  // namespace trainsim::gui
