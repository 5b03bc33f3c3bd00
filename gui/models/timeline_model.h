// The lanes of a simulated step (Timeline) as a table: one row per lane (GPU
// x trace track, only lanes with events), with its name, GPU, track, event
// count and busy milliseconds. kEventsRole gives the lane's events (a
// QList<TimelineEvent>); views that paint thousands of events read lane()
// instead. Qt::UserRole gives raw values for sorting.
#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <memory>

#include "gui/models/timeline.h"

namespace trainsim::gui {

class TimelineModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kLane, kGpu, kTrack, kEvents, kBusyMs, kColumnCount };
  enum Role {
    kSortRole = Qt::UserRole,  // the raw value
    kEventsRole,               // QList<TimelineEvent>
    kTrackRole,                // int, a sim::TraceTrack
  };

  explicit TimelineModel(QObject* parent = nullptr);

  void setTimeline(std::shared_ptr<const Timeline> timeline);
  void clear() { setTimeline(nullptr); }
  const std::shared_ptr<const Timeline>& timeline() const { return timeline_; }
  const TimelineLane& lane(int row) const { return timeline_->lanes[row]; }
  int eventCount() const;  // over all lanes

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QVariant raw(const TimelineLane& lane, int column) const;

  std::shared_ptr<const Timeline> timeline_;
};

}  // namespace trainsim::gui

Q_DECLARE_METATYPE(trainsim::gui::TimelineEvent)
