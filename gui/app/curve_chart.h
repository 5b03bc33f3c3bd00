// Draws measured profile curves into a QChart: one line with point markers
// per curve on a logarithmic x axis, and each distinct catalog figure as a
// dashed horizontal line across the measured range, in its curve's colour.
// The series hold log10(x), under a category axis labelled in the x unit
// ("1G" FLOPs, "64 KiB"): Qt's log axis labels only numbers, and too many.
#pragma once

#include <QString>
#include <vector>

#include "gui/models/profile_curves_model.h"

class QChart;

namespace trainsim::gui {

enum class XUnit { kFlops, kBytes };

struct CurveChartText {
  XUnit x_unit = XUnit::kBytes;
  QString title, x_title, y_title;
  QString empty;  // the title when there is no curve ("no GEMM measured")
};

// Replaces the chart's series and axes. Returns the number of peak lines.
int DrawCurves(QChart* chart, const std::vector<const ProfileCurve*>& curves,
               const CurveChartText& text);

}  // namespace trainsim::gui
