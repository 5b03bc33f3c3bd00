// "Discard the unsaved changes?": asked before New, Open and closing the window replace a
// modified scenario (gui/models/scenario_document.h).
#pragma once

class QWidget;

namespace trainsim::gui {

class ScenarioDocument;

// True when `document` has no unsaved changes, or the user chose Discard in the question box;
// false when they cancelled (the caller then leaves the scenario as it is).
bool ConfirmDiscard(QWidget* parent, const ScenarioDocument& document);

}  // namespace trainsim::gui
