#include "gui/models/candidate_table_model.h"

#include <QFont>

#include "core/units.h"

namespace trainsim::gui {

std::vector<int> CandidateRows(const planner::Plan& plan) {
  std::vector<int> rows(plan.confirmed.size(), -1);
  int row = 0;
  for (size_t i = 0; i < plan.confirmed.size(); ++i) {
    if (plan.confirmed[i].best_priced >= 0) rows[i] = row++;
  }
  return rows;
}

CandidateTableModel::CandidateTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void CandidateTableModel::setPlan(std::shared_ptr<const planner::Plan> plan) {
  beginResetModel();
  plan_ = std::move(plan);
  confirmed_.clear();
  rows_.clear();
  if (plan_) {
    rows_ = CandidateRows(*plan_);
    for (size_t i = 0; i < rows_.size(); ++i) {
      if (rows_[i] >= 0) confirmed_.push_back(static_cast<int>(i));
    }
  }
  endResetModel();
}

int CandidateTableModel::recommendedRow() const { return plan_ ? rowOfConfirmed(plan_->best) : -1; }

int CandidateTableModel::rowOfConfirmed(int confirmed) const {
  return confirmed >= 0 && confirmed < static_cast<int>(rows_.size()) ? rows_[confirmed] : -1;
}

int CandidateTableModel::confirmedOfRow(int row) const {
  return row >= 0 && row < static_cast<int>(confirmed_.size()) ? confirmed_[row] : -1;
}

int CandidateTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(confirmed_.size());
}

int CandidateTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

namespace {

QString ScheduleText(const planner::Candidate& k) {
  if (k.pp <= 1) return QStringLiteral("-");
  QString s = QString::fromLatin1(ToString(k.schedule));
  if (k.schedule == Schedule::kInterleaved) s += QStringLiteral(" x%1").arg(k.virtual_stages);
  return s;
}

}  // namespace

QVariant CandidateTableModel::raw(const planner::ConfirmedCandidate& c, int column, int row) const {
  const planner::Candidate& k = c.candidate;
  const planner::PricedJob& pj = c.priced[c.best_priced];
  switch (column) {
    case kRank:
      return row + 1;
    case kInstance:
      return QString::fromStdString(plan_->space.instances[k.instance]->name);
    case kNodes:
      return k.nodes;
    case kTp:
      return k.tp;
    case kPp:
      return k.pp;
    case kDp:
      return k.dp;
    case kZero:
      return k.zero_stage;
    case kShardGroup:
      return k.shard_group;
    case kEp:
      return k.ep;
    case kMicroBatch:
      return k.micro_batch;
    case kRecompute:
      return QString::fromLatin1(ToString(k.recompute));
    case kSchedule:
      return ScheduleText(k);
    case kStepSeconds:
      return c.simulated.step.step_time_s;
    case kStepBand:
      return Judged(c.band) ? QVariant(c.simulated.step.step_time_s / c.band->hi) : QVariant();
    case kMfu:
      return 100 * c.simulated.mfu;
    case kMemoryGib:
      return c.simulated.memory.total_bytes / kGiB;
    case kFits:
      return c.simulated.memory.fits;
    case kPricing:
      return QString::fromLatin1(ToString(pj.pricing));
    case kHours:
      return pj.job.expected_wall_s / kSecondsPerHour;
    case kCost:
      // Without a price the cost sorts last (an invalid QVariant sorts first).
      return pj.job.cost_usd ? pj.job.cost_usd->mean : std::numeric_limits<double>::infinity();
    default:
      if (column >= kFirstStrategy && column < kMicroBatch)
        return k.degrees[column - kFirstStrategy];
      return {};
  }
}

QVariant CandidateTableModel::display(const planner::ConfirmedCandidate& c, int column,
                                      int row) const {
  const QVariant v = raw(c, column, row);
  switch (column) {
    case kRank:
      return confirmedOfRow(row) == plan_->best ? QStringLiteral("%1 \u2605").arg(row + 1)
                                                : QString::number(row + 1);
    case kShardGroup:
      return v.toInt() > 0 ? v : QVariant(QStringLiteral("all"));
    case kStepSeconds:
      return QString::number(v.toDouble(), 'f', 3);
    case kStepBand: {
      if (!v.isValid()) return QStringLiteral("-");
      const double step = c.simulated.step.step_time_s;
      return QStringLiteral("%1-%2%3")
          .arg(step / c.band->hi, 0, 'f', 3)
          .arg(step / c.band->lo, 0, 'f', 3)
          .arg(c.band->note.empty() ? QString() : QStringLiteral(" *"));
    }
    case kMfu:
    case kMemoryGib:
      return QString::number(v.toDouble(), 'f', 1);
    case kFits:
      return v.toBool() ? QStringLiteral("yes") : QStringLiteral("no");
    case kHours:
      return QString::number(v.toDouble(), 'f', v.toDouble() < 10 ? 2 : 1);
    case kCost: {
      const planner::PricedJob& pj = c.priced[c.best_priced];
      return pj.job.cost_usd
                 ? QString::number(pj.job.cost_usd->mean, 'f', pj.job.cost_usd->mean < 100 ? 2 : 0)
                 : QStringLiteral("n/a");
    }
    default:
      return v;
  }
}

QVariant CandidateTableModel::data(const QModelIndex& index, int role) const {
  if (!plan_ ||
      !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const int confirmed = confirmedOfRow(index.row());
  const planner::ConfirmedCandidate& c = plan_->confirmed[confirmed];
  switch (role) {
    case Qt::DisplayRole:
      return display(c, index.column(), index.row());
    case kSortRole:
      return raw(c, index.column(), index.row());
    case kConfirmedIndexRole:
      return confirmed;
    case kRecommendedRole:
      return confirmed == plan_->best;
    case Qt::FontRole:
      if (confirmed == plan_->best) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      return {};
    case Qt::TextAlignmentRole: {
      const int col = index.column();
      const bool text = col == kInstance || col == kRecompute || col == kSchedule ||
                        col == kPricing || col == kFits;
      return QVariant::fromValue(Qt::Alignment(text ? Qt::AlignLeft | Qt::AlignVCenter
                                                    : Qt::AlignRight | Qt::AlignVCenter));
    }
    case Qt::ToolTipRole:
      if (index.column() == kStepBand && Judged(c.band)) {
        // Where the band comes from, and why it is wider (docs/validation.md section 0.7).
        return QString::fromStdString(c.band->family + ", " + std::to_string(c.band->points) +
                                      " published measurements" +
                                      (c.band->note.empty() ? "" : "; wider: " + c.band->note));
      }
      if (confirmed == plan_->best) return QStringLiteral("the recommendation");
      return {};
    default:
      return {};
  }
}

QVariant CandidateTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  static const char* const kNames[kColumnCount - kStrategyCount] = {
      "rank",        "instance", "nodes",       "tp",        "pp",       "dp",     "ZeRO",
      "shard group", "EP",       "micro batch", "recompute", "schedule", "step s", "80% band s",
      "MFU %",       "GiB/GPU",  "fits",        "pricing",   "hours",    "cost $"};
  if (section < 0 || section >= kColumnCount) return {};
  if (section >= kFirstStrategy && section < kMicroBatch) {  // "CP"
    return QString::fromStdString(UpperName(*kStrategies[section - kFirstStrategy]));
  }
  return QString::fromLatin1(kNames[section < kFirstStrategy ? section : section - kStrategyCount]);
}

}  // namespace trainsim::gui
