// The Gantt chart of a simulated step: one row per TimelineModel lane (GPU x
// trace track), time in milliseconds across, one coloured bar per event
// (TrackColor). The mouse wheel zooms around the cursor, zoomIn / zoomOut /
// fit keep the centre, the horizontal scroll bar pans; a tooltip names the
// event under the cursor and its duration. Only the events in view are
// painted (each lane is searched by start time).
#pragma once

#include <QAbstractScrollArea>

#include "gui/models/timeline_model.h"

namespace trainsim::gui {

class GanttView : public QAbstractScrollArea {
  Q_OBJECT

 public:
  explicit GanttView(QWidget* parent = nullptr);

  void setModel(TimelineModel* model);

  double visibleStartS() const { return start_s_; }
  double visibleSpanS() const { return span_s_; }
  double totalS() const;  // the whole step: the later of the step time and the last event
  // Multiplies the visible span by `factor` keeping the time `anchor_s` at
  // the same place on screen (clamped to the step).
  void zoomBy(double factor, double anchor_s);
  // The event under a viewport position, or null; *lane gets its row.
  const TimelineEvent* eventAt(QPoint pos, int* lane = nullptr) const;
  // The viewport x of a time, and back.
  double xOf(double t_s) const;
  double timeAt(double x) const;
  int laneY(int row) const;                          // the viewport y of a lane's top
  int paintedBars() const { return painted_bars_; }  // in the last paint

 public slots:
  void zoomIn();
  void zoomOut();
  void fit();

 signals:
  void viewChanged(double start_s, double span_s);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool viewportEvent(QEvent* event) override;

 private:
  void setView(double start_s, double span_s);
  void syncScrollBars();
  void paintLanes(QPainter& p) const;
  void paintLane(QPainter& p, const TimelineLane& lane, int y) const;
  void paintAxis(QPainter& p) const;
  int plotWidth() const;

  TimelineModel* model_ = nullptr;
  double start_s_ = 0, span_s_ = 1;
  bool syncing_ = false;  // the scroll bars are being set from the view
  mutable int painted_bars_ = 0;
};

}  // namespace trainsim::gui
