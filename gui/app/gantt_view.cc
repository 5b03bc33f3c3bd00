#include "gui/app/gantt_view.h"

#include <QHelpEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace trainsim::gui {
namespace {

constexpr int kLabelWidth = 150;           // px, the lane names
constexpr int kAxisHeight = 26;            // px, the time axis
constexpr int kLaneHeight = 20;            // px per lane
constexpr int kScrollUnits = 1000000;      // horizontal scroll bar steps over the whole step
constexpr double kMinSpanFraction = 1e-5;  // deepest zoom, as a fraction of the step

// A tick spacing of 1, 2 or 5 x 10^k at least `raw`.
double NiceStep(double raw) {
  const double base = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * base >= raw) return m * base;
  }
  return 10 * base;
}

// The first event of `lane` that may end at or after `t_s`: events are sorted
// by start, and none that starts more than the longest event before t_s can.
std::vector<TimelineEvent>::const_iterator FirstReaching(const TimelineLane& lane, double t_s) {
  const double earliest = t_s - lane.longest_event_s;
  return std::partition_point(lane.events.begin(), lane.events.end(),
                              [&](const TimelineEvent& e) { return e.start_s < earliest; });
}

QString Ms(double s) { return QString::number(s * 1e3, 'g', 6) + QStringLiteral(" ms"); }

}  // namespace

GanttView::GanttView(QWidget* parent) : QAbstractScrollArea(parent) {
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
  viewport()->setMouseTracking(true);
  connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, [this](int v) {
    if (!syncing_) setView(totalS() * v / kScrollUnits, span_s_);
  });
  connect(verticalScrollBar(), &QScrollBar::valueChanged, viewport(),
          qOverload<>(&QWidget::update));
}

void GanttView::setModel(TimelineModel* model) {
  model_ = model;
  connect(model_, &QAbstractItemModel::modelReset, this, &GanttView::fit);
  fit();
}

double GanttView::totalS() const {
  if (!model_ || !model_->timeline()) return 1e-3;
  return std::max({model_->timeline()->step_s, model_->timeline()->end_s, 1e-9});
}

int GanttView::plotWidth() const { return std::max(1, viewport()->width() - kLabelWidth); }

double GanttView::xOf(double t_s) const {
  return kLabelWidth + (t_s - start_s_) / span_s_ * plotWidth();
}

double GanttView::timeAt(double x) const {
  return start_s_ + (x - kLabelWidth) / plotWidth() * span_s_;
}

int GanttView::laneY(int row) const {
  return kAxisHeight + row * kLaneHeight - verticalScrollBar()->value();
}

void GanttView::zoomIn() { zoomBy(0.5, start_s_ + span_s_ / 2); }
void GanttView::zoomOut() { zoomBy(2, start_s_ + span_s_ / 2); }
void GanttView::fit() { setView(0, totalS()); }

void GanttView::zoomBy(double factor, double anchor_s) {
  const double total = totalS();
  const double span = std::clamp(span_s_ * factor, total * kMinSpanFraction, total);
  setView(anchor_s - (anchor_s - start_s_) * span / span_s_, span);
}

void GanttView::setView(double start_s, double span_s) {
  const double total = totalS();
  span_s_ = std::clamp(span_s, total * kMinSpanFraction, total);
  start_s_ = std::clamp(start_s, 0.0, total - span_s_);
  syncScrollBars();
  viewport()->update();
  emit viewChanged(start_s_, span_s_);
}

void GanttView::syncScrollBars() {
  syncing_ = true;
  const double total = totalS();
  const int page = static_cast<int>(std::lround(span_s_ / total * kScrollUnits));
  horizontalScrollBar()->setRange(0, kScrollUnits - page);
  horizontalScrollBar()->setPageStep(std::max(1, page));
  horizontalScrollBar()->setSingleStep(std::max(1, page / 10));
  horizontalScrollBar()->setValue(static_cast<int>(std::lround(start_s_ / total * kScrollUnits)));
  const int lanes = model_ ? model_->rowCount() : 0;
  const int height = viewport()->height() - kAxisHeight;
  verticalScrollBar()->setRange(0, std::max(0, lanes * kLaneHeight - height));
  verticalScrollBar()->setPageStep(std::max(1, height));
  verticalScrollBar()->setSingleStep(kLaneHeight);
  syncing_ = false;
}

void GanttView::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  syncScrollBars();
}

void GanttView::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;
  if (notches == 0) return QAbstractScrollArea::wheelEvent(event);
  zoomBy(std::pow(0.8, notches), timeAt(event->position().x()));
  event->accept();
}

const TimelineEvent* GanttView::eventAt(QPoint pos, int* lane) const {
  if (!model_ || pos.x() < kLabelWidth || pos.y() < kAxisHeight) return nullptr;
  const int row = (pos.y() - kAxisHeight + verticalScrollBar()->value()) / kLaneHeight;
  if (row < 0 || row >= model_->rowCount()) return nullptr;
  const double t = timeAt(pos.x()), slack = span_s_ / plotWidth();  // one pixel
  const TimelineLane& l = model_->lane(row);
  for (auto it = FirstReaching(l, t - slack); it != l.events.end(); ++it) {
    if (it->start_s - slack > t) break;
    if (t <= it->end_s + slack) {
      if (lane) *lane = row;
      return &*it;
    }
  }
  return nullptr;
}

bool GanttView::viewportEvent(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QAbstractScrollArea::viewportEvent(event);
  const auto* help = static_cast<QHelpEvent*>(event);
  const TimelineEvent* e = eventAt(help->pos());
  if (!e) {
    QToolTip::hideText();
    return true;
  }
  QToolTip::showText(help->globalPos(),
                     QStringLiteral("%1\n%2 (from %3 to %4)")
                         .arg(e->name, Ms(e->end_s - e->start_s), Ms(e->start_s), Ms(e->end_s)),
                     viewport());
  return true;
}

void GanttView::paintEvent(QPaintEvent*) {
  painted_bars_ = 0;
  QPainter p(viewport());
  p.fillRect(viewport()->rect(), palette().base());
  if (!model_ || model_->rowCount() == 0) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(viewport()->rect(), Qt::AlignCenter,
               QStringLiteral("Select a candidate in the plan to simulate its step."));
    return;
  }
  paintLanes(p);
  paintAxis(p);
}

void GanttView::paintLanes(QPainter& p) const {
  const int first = std::max(0, verticalScrollBar()->value() / kLaneHeight);
  for (int row = first; row < model_->rowCount(); ++row) {
    const int y = laneY(row);
    if (y > viewport()->height()) break;
    if (row % 2) p.fillRect(0, y, viewport()->width(), kLaneHeight, palette().alternateBase());
    p.save();
    p.setClipRect(kLabelWidth, kAxisHeight, plotWidth(), viewport()->height() - kAxisHeight);
    paintLane(p, model_->lane(row), y);
    p.restore();
    p.setClipRect(0, kAxisHeight, kLabelWidth, viewport()->height() - kAxisHeight);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(6, y, kLabelWidth - 10, kLaneHeight), Qt::AlignVCenter | Qt::AlignLeft,
               LaneName(model_->lane(row)));
    p.setClipping(false);
  }
}

void GanttView::paintLane(QPainter& p, const TimelineLane& lane, int y) const {
  const double view_end = start_s_ + span_s_;
  auto it = FirstReaching(lane, start_s_);
  const QColor color = TrackColor(lane.track);
  int covered = -1;  // the right edge of the bars already painted: skip sub-pixel repeats
  for (; it != lane.events.end() && it->start_s <= view_end; ++it) {
    if (it->end_s < start_s_) continue;
    const int x0 = static_cast<int>(std::floor(xOf(it->start_s)));
    const int x1 = std::max(x0 + 1, static_cast<int>(std::ceil(xOf(it->end_s))));
    if (x1 <= covered) continue;
    const int from = std::max(x0, covered);
    p.fillRect(from, y + 3, x1 - from, kLaneHeight - 6, color);
    ++painted_bars_;
    if (x1 - x0 > 3) {  // a thin edge separates back-to-back events
      p.fillRect(x0, y + 3, 1, kLaneHeight - 6, color.darker(130));
    }
    covered = x1;
  }
}

void GanttView::paintAxis(QPainter& p) const {
  p.fillRect(0, 0, viewport()->width(), kAxisHeight, palette().window());
  p.setPen(palette().color(QPalette::Text));
  p.drawText(QRect(6, 0, kLabelWidth - 10, kAxisHeight), Qt::AlignVCenter,
             QStringLiteral("time (ms)"));
  const double step = NiceStep(span_s_ / std::max(1.0, plotWidth() / 90.0));
  p.setClipRect(kLabelWidth, 0, plotWidth(), viewport()->height());
  for (double t = std::ceil(start_s_ / step) * step; t <= start_s_ + span_s_; t += step) {
    const int x = static_cast<int>(std::lround(xOf(t)));
    p.setPen(QColor(0, 0, 0, 40));  // translucent: the bars show through
    p.drawLine(x, kAxisHeight - 5, x, viewport()->height());
    p.setPen(palette().color(QPalette::Text));
    p.drawText(x + 3, 2, 90, kAxisHeight - 6, Qt::AlignLeft | Qt::AlignVCenter,
               QString::number(t * 1e3, 'g', 6));
  }
  // The step ends where the critical stage's compute stream ends.
  const int x = static_cast<int>(std::lround(xOf(model_->timeline()->step_s)));
  p.setPen(QPen(Qt::black, 1, Qt::DashLine));
  p.drawLine(x, kAxisHeight, x, viewport()->height());
  p.setClipping(false);
  p.setPen(palette().color(QPalette::Mid));
  p.drawLine(0, kAxisHeight - 1, viewport()->width(), kAxisHeight - 1);
}

}  // namespace trainsim::gui
