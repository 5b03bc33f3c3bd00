// The plan's confirmed candidates as a table: one row per candidate with a
// price, with its best pricing option (ConfirmedCandidate::best_priced), in
// the plan's rank order. Qt::UserRole gives the raw value (numbers as
// numbers) for sorting through a QSortFilterProxyModel; the recommended row
// is bold and marked in the rank column.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "core/strategy.h"
#include "planner/search/plan.h"

namespace trainsim::gui {

// For each confirmed candidate, its row in CandidateTableModel (-1: not
// shown, no pricing option). Shared with ParetoModel.
std::vector<int> CandidateRows(const planner::Plan& plan);

class CandidateTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kRank,
    kInstance,
    kNodes,
    kTp,
    kPp,
    kDp,
    kZero,
    kShardGroup,  // hybrid sharding group; 0 (shown "all") = the whole DP group
    kEp,          // expert parallelism (parallel.ep); 1 without
    // kStrategyCount columns: each strategy's degree (parallel.<name>, core/strategy.h: cp);
    // 1 without.
    kFirstStrategy,
    kMicroBatch = kFirstStrategy + kStrategyCount,
    kRecompute,
    kSchedule,
    kStepSeconds,
    kStepBand,  // the step time's 80% error band, "low-high" (raw: low); "-" without bands
    kMfu,
    kMemoryGib,
    kFits,
    kPricing,
    kHours,
    kCost,
    kColumnCount
  };
  enum Role {
    kSortRole = Qt::UserRole,  // the raw value
    kConfirmedIndexRole,       // index into Plan::confirmed
    kRecommendedRole,          // bool
  };

  explicit CandidateTableModel(QObject* parent = nullptr);

  void setPlan(std::shared_ptr<const planner::Plan> plan);
  void clear() { setPlan(nullptr); }
  const std::shared_ptr<const planner::Plan>& plan() const { return plan_; }

  int recommendedRow() const;  // -1 without a plan
  int rowOfConfirmed(int confirmed) const;
  int confirmedOfRow(int row) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QVariant raw(const planner::ConfirmedCandidate& c, int column, int row) const;
  QVariant display(const planner::ConfirmedCandidate& c, int column, int row) const;

  std::shared_ptr<const planner::Plan> plan_;
  std::vector<int> confirmed_;  // row -> confirmed index
  std::vector<int> rows_;       // confirmed index -> row
};

}  // namespace trainsim::gui
