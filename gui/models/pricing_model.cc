#include "gui/models/pricing_model.h"

#include "core/units.h"
#include "planner/search/reasons.h"

namespace trainsim::gui {

PricingModel::PricingModel(QObject* parent) : QAbstractTableModel(parent) {}

void PricingModel::setCandidate(std::shared_ptr<const planner::Plan> plan, int confirmed) {
  beginResetModel();
  const bool valid = plan && confirmed >= 0 && confirmed < static_cast<int>(plan->confirmed.size());
  plan_ = valid ? std::move(plan) : nullptr;
  confirmed_ = valid ? confirmed : -1;
  priced_.clear();
  if (valid) {
    const auto& priced = plan_->confirmed[confirmed_].priced;
    for (size_t i = 0; i < priced.size(); ++i) {
      if (priced[i].job.cost_usd) priced_.push_back(static_cast<int>(i));
    }
  }
  endResetModel();
}

const planner::PricedJob& PricingModel::option(int row) const {
  return plan_->confirmed[confirmed_].priced[priced_[row]];
}

int PricingModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(priced_.size());
}

int PricingModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant PricingModel::raw(const planner::PricedJob& pj, int column) const {
  switch (column) {
    case kPricing:
      return QString::fromLatin1(ToString(pj.pricing));
    case kPriceUsdHr:
      return pj.price_usd_hr ? QVariant(*pj.price_usd_hr) : QVariant();
    case kHours:
      return pj.job.expected_wall_s / kSecondsPerHour;
    case kP90Hours:
      return pj.job.wall_s.p90 / kSecondsPerHour;
    case kCostMean:
      return pj.job.cost_usd->mean;
    case kCostP50:
      return pj.job.cost_usd->p50;
    case kCostP90:
      return pj.job.cost_usd->p90;
    case kInterruptions:
      return pj.job.expected_interruptions;
    case kTerms:
      return QString::fromStdString(planner::DescribeTerms(pj));
    default:
      return {};
  }
}

QVariant PricingModel::data(const QModelIndex& index, int role) const {
  if (!plan_ ||
      !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const planner::PricedJob& pj = option(index.row());
  const QVariant v = raw(pj, index.column());
  switch (role) {
    case Qt::DisplayRole:
      if (index.column() == kPricing || index.column() == kTerms || !v.isValid()) return v;
      if (index.column() == kInterruptions) return QString::number(v.toDouble(), 'f', 1);
      return QString::number(v.toDouble(), 'f', 2);
    case kSortRole:
      return v;
    case kPricedIndexRole:
      return priced_[index.row()];
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(
          Qt::Alignment((index.column() == kPricing || index.column() == kTerms ? Qt::AlignLeft
                                                                                : Qt::AlignRight) |
                        Qt::AlignVCenter));
    default:
      return {};
  }
}

QVariant PricingModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  static const char* const kNames[kColumnCount] = {
      "pricing", "$/h", "hours", "P90 h", "cost $", "P50 $", "P90 $", "interruptions", "terms"};
  return section >= 0 && section < kColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

}  // namespace trainsim::gui
