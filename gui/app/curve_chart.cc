#include "gui/app/curve_chart.h"

#include <QPen>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace trainsim::gui {
namespace {

// matplotlib's "tab10": distinct on screen and in print.
QColor CurveColor(size_t i) {
  static const QColor kPalette[] = {
      {31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
      {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
  return kPalette[i % std::size(kPalette)];
}

struct Range {
  double x0 = std::numeric_limits<double>::max(), x1 = 0, y1 = 0;
};

Range MeasuredRange(const std::vector<const ProfileCurve*>& curves) {
  Range r;
  for (const ProfileCurve* c : curves) {
    for (const QPointF& p : c->points) {
      if (p.x() <= 0) continue;  // not on a log axis
      r.x0 = std::min(r.x0, p.x());
      r.x1 = std::max(r.x1, p.x());
      r.y1 = std::max(r.y1, p.y());
    }
    if (c->peak) r.y1 = std::max(r.y1, *c->peak);
  }
  return r;
}

void ClearChart(QChart* chart) {
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
}

QLineSeries* MeasuredSeries(const ProfileCurve& c, const QColor& color) {
  auto* s = new QLineSeries;
  s->setName(c.name);
  for (const QPointF& p : c.points) {
    if (p.x() > 0) s->append(std::log10(p.x()), p.y());
  }
  s->setPointsVisible(true);
  QPen pen(color);
  pen.setWidthF(2);
  s->setPen(pen);
  return s;
}

QLineSeries* PeakSeries(const ProfileCurve& c, const QColor& color, const Range& r) {
  auto* s = new QLineSeries;
  s->setName(QStringLiteral("catalog %1").arg(*c.peak, 0, 'g', 4));
  s->append(std::log10(r.x0), *c.peak);
  s->append(std::log10(r.x1), *c.peak);
  QPen pen(color);
  pen.setStyle(Qt::DashLine);
  pen.setWidthF(1.5);
  s->setPen(pen);
  return s;
}

// "1M", "10G" (FLOPs); "64 KiB" (bytes).
QString UnitLabel(XUnit unit, double x) {
  const bool flops = unit == XUnit::kFlops;
  static const char* const kSi[] = {"", "k", "M", "G", "T", "P"};
  static const char* const kBinary[] = {" B", " KiB", " MiB", " GiB", " TiB", " PiB"};
  const double step = flops ? 1000 : 1024;
  int i = 0;
  while (i < 5 && x >= step * (1 - 1e-9)) {
    x /= step;
    ++i;
  }
  return QStringLiteral("%1%2").arg(std::round(x)).arg(QLatin1String(flops ? kSi[i] : kBinary[i]));
}

// Labels at powers of 10 (FLOPs) or 2 (bytes), every `stride` of them so that
// at most 6 fit the range [lo, hi] (log10): more overlap in a narrow chart.
QCategoryAxis* UnitAxis(XUnit unit, double lo, double hi) {
  const double base = unit == XUnit::kFlops ? 10 : 2;
  const double log_base = std::log10(base);
  const int first = static_cast<int>(std::ceil(lo / log_base));
  const int last = static_cast<int>(std::floor(hi / log_base));
  int stride = 1;
  while ((last - first) / stride + 1 > 6) ++stride;
  if (unit == XUnit::kBytes) stride = std::max(stride, 2);
  auto* axis = new QCategoryAxis;
  axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  axis->setStartValue(lo);
  for (int e = first; e <= last; ++e) {
    if (e % stride != 0) continue;
    axis->append(UnitLabel(unit, std::pow(base, e)), e * log_base);
  }
  axis->setRange(lo, hi);
  return axis;
}

void AddAxes(QChart* chart, const CurveChartText& text, const Range& r) {
  QCategoryAxis* x = UnitAxis(text.x_unit, std::log10(r.x0 / 1.5), std::log10(r.x1 * 1.5));
  x->setTitleText(text.x_title);
  auto* y = new QValueAxis;
  y->setTitleText(text.y_title);
  y->setLabelFormat(QStringLiteral("%g"));
  y->setRange(0, r.y1 > 0 ? r.y1 * 1.08 : 1);
  y->applyNiceNumbers();
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (QAbstractSeries* s : chart->series()) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
}

}  // namespace

int DrawCurves(QChart* chart, const std::vector<const ProfileCurve*>& curves,
               const CurveChartText& text) {
  ClearChart(chart);
  const Range r = MeasuredRange(curves);
  if (curves.empty() || r.x1 <= 0) {
    chart->setTitle(text.empty);
    return 0;
  }
  chart->setTitle(text.title);
  std::set<double> peaks_drawn;  // curves sharing a catalog figure share its line
  for (size_t i = 0; i < curves.size(); ++i) {
    const QColor color = CurveColor(i);
    chart->addSeries(MeasuredSeries(*curves[i], color));
    if (curves[i]->peak && peaks_drawn.insert(*curves[i]->peak).second)
      chart->addSeries(PeakSeries(*curves[i], color, r));
  }
  AddAxes(chart, text, r);
  // A row of more than five entries is cut short in a chart this narrow: a column then.
  chart->legend()->setAlignment(chart->series().size() > 5 ? Qt::AlignRight : Qt::AlignBottom);
  QFont small = chart->legend()->font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  chart->legend()->setFont(small);
  return static_cast<int>(peaks_drawn.size());
}

}  // namespace trainsim::gui
