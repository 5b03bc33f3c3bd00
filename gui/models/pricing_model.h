// The pricing options of one confirmed candidate (ConfirmedCandidate::priced)
// that have a price, one row each, in the plan's order: the Monte-Carlo job's
// expected, P50 and P90 cost and hours, the expected interruptions, and what the
// figures rest on (planner::DescribeTerms: blocks booked, a commitment's share).
// Options without a price (reference systems) are left out, never shown as 0.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "planner/search/plan.h"

namespace trainsim::gui {

class PricingModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kPricing,
    kPriceUsdHr,
    kHours,
    kP90Hours,
    kCostMean,
    kCostP50,
    kCostP90,
    kInterruptions,
    kTerms,
    kColumnCount
  };
  enum Role {
    kSortRole = Qt::UserRole,  // the raw value
    kPricedIndexRole,          // index into ConfirmedCandidate::priced
  };

  explicit PricingModel(QObject* parent = nullptr);

  // `confirmed` indexes plan->confirmed; -1 (or no plan) clears.
  void setCandidate(std::shared_ptr<const planner::Plan> plan, int confirmed);
  void clear() { setCandidate(nullptr, -1); }
  int confirmed() const { return confirmed_; }
  const planner::PricedJob& option(int row) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QVariant raw(const planner::PricedJob& pj, int column) const;

  std::shared_ptr<const planner::Plan> plan_;
  int confirmed_ = -1;
  std::vector<int> priced_;  // row -> index into priced
};

}  // namespace trainsim::gui
