#include "gui/models/timeline_model.h"

namespace trainsim::gui {

TimelineModel::TimelineModel(QObject* parent) : QAbstractTableModel(parent) {}

void TimelineModel::setTimeline(std::shared_ptr<const Timeline> timeline) {
  beginResetModel();
  timeline_ = std::move(timeline);
  endResetModel();
}

int TimelineModel::eventCount() const {
  int n = 0;
  if (timeline_) {
    for (const TimelineLane& l : timeline_->lanes) n += static_cast<int>(l.events.size());
  }
  return n;
}

int TimelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !timeline_ ? 0 : static_cast<int>(timeline_->lanes.size());
}

int TimelineModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant TimelineModel::raw(const TimelineLane& lane, int column) const {
  switch (column) {
    case kLane:
      return LaneName(lane);
    case kGpu:
      return lane.gpu;
    case kTrack:
      return TrackName(lane.track);
    case kEvents:
      return static_cast<int>(lane.events.size());
    case kBusyMs:
      return lane.busy_s * 1e3;
    default:
      return {};
  }
}

QVariant TimelineModel::data(const QModelIndex& index, int role) const {
  if (!timeline_ ||
      !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const TimelineLane& l = lane(index.row());
  switch (role) {
    case Qt::DisplayRole:
      if (index.column() == kBusyMs) return QString::number(l.busy_s * 1e3, 'f', 2);
      return raw(l, index.column());
    case kSortRole:
      return raw(l, index.column());
    case kEventsRole:
      return QVariant::fromValue(QList<TimelineEvent>(l.events.begin(), l.events.end()));
    case kTrackRole:
      return l.track;
    case Qt::DecorationRole:
      return index.column() == kLane ? QVariant(TrackColor(l.track)) : QVariant();
    default:
      return {};
  }
}

QVariant TimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  static const char* const kNames[kColumnCount] = {"lane", "GPU", "track", "events", "busy ms"};
  return section >= 0 && section < kColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

}  // namespace trainsim::gui
