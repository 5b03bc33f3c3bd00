// The plan's time-cost points for the Pareto chart: first the Pareto front
// (Plan::pareto, fastest first), then every priced option of every shown
// candidate (the cloud the front is drawn over). Each point knows its row in
// CandidateTableModel, so that clicking a point selects the row. Options
// without a cost (reference systems) have no point. Each point has its spread:
// the P10-P90 of the job's hours and of its cost from the Monte-Carlo, which
// draws spot interruptions and, with error bands, the model's error (the
// chart's error bars).
#pragma once

#include <QAbstractTableModel>
#include <QPointF>
#include <QRectF>
#include <memory>
#include <vector>

#include "planner/search/plan.h"

namespace trainsim::gui {

class ParetoModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Series { kFront = 0, kAllOptions = 1 };
  enum Column {
    kHours,
    kCost,
    kPricing,
    kSeries,
    kHoursP10,
    kHoursP90,
    kCostP10,
    kCostP90,
    kColumnCount
  };
  enum Role {
    kSortRole = Qt::UserRole,  // the raw value
    kCandidateRowRole,         // row in CandidateTableModel
    kConfirmedIndexRole,       // index into Plan::confirmed
    kPricedIndexRole,          // index into ConfirmedCandidate::priced
  };

  explicit ParetoModel(QObject* parent = nullptr);

  void setPlan(std::shared_ptr<const planner::Plan> plan);
  void clear() { setPlan(nullptr); }

  int pointCount(Series s) const;
  QPointF point(Series s, int i) const;  // (hours, cost $)
  // (hours P10, cost P10) to (hours P90, cost P90): the point's error bars.
  QRectF spread(Series s, int i) const;
  int candidateRow(Series s, int i) const;
  // The points of `s` that belong to a candidate row (to highlight a row's points).
  std::vector<int> pointsOfRow(Series s, int row) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  struct Point {
    double hours = 0, cost = 0;
    double hours_p10 = 0, hours_p90 = 0, cost_p10 = 0, cost_p90 = 0;
    int confirmed = -1, priced = -1, row = -1;
    Pricing pricing = Pricing::kOnDemand;
  };
  const Point* at(Series s, int i) const;

  std::shared_ptr<const planner::Plan> plan_;
  std::vector<Point> front_, all_;
};

}  // namespace trainsim::gui
