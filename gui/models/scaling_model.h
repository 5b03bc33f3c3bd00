// The plan's scaling curve (Plan::scaling: the recommendation's layout at
// every valid node count, estimated, not simulated) as a table, one row per
// node count. The row at Plan::scaling_stops_paying is marked (bold, a note,
// kStopsPayingRole). A point without a price keeps its cost empty. With error
// bands, kBand shows the samples/s 80% band ("low-high", "*" where widened; its
// family in the tooltip; raw: low) and kBandLowRole / kBandHighRole give its
// ends (the chart's shaded band); without, they are invalid.
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "planner/search/plan.h"

namespace trainsim::gui {

class ScalingModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kNodes, kSamplesPerS, kBand, kEfficiency, kHours, kCost, kNote, kColumnCount };
  enum Role {
    kSortRole = Qt::UserRole,  // the raw value; an empty cost stays invalid
    kStopsPayingRole,          // bool
    kBandLowRole,              // samples/s at the band's ends (any column)
    kBandHighRole,
  };

  explicit ScalingModel(QObject* parent = nullptr);

  void setPlan(std::shared_ptr<const planner::Plan> plan);
  void clear() { setPlan(nullptr); }

  const planner::ScalingPoint& point(int row) const { return plan_->scaling[row]; }
  // The row after which adding nodes stops paying; -1 when it never does.
  int stopsPayingRow() const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QVariant raw(const planner::ScalingPoint& p, int column, int row) const;
  QVariant display(const planner::ScalingPoint& p, int column, int row) const;

  std::shared_ptr<const planner::Plan> plan_;
};

}  // namespace trainsim::gui
