#include "gui/models/scaling_model.h"

#include <QFont>

namespace trainsim::gui {

ScalingModel::ScalingModel(QObject* parent) : QAbstractTableModel(parent) {}

void ScalingModel::setPlan(std::shared_ptr<const planner::Plan> plan) {
  beginResetModel();
  plan_ = std::move(plan);
  endResetModel();
}

int ScalingModel::stopsPayingRow() const {
  if (!plan_ || plan_->scaling_stops_paying == 0) return -1;
  for (int r = 0; r < rowCount(); ++r) {
    if (point(r).nodes == plan_->scaling_stops_paying) return r;
  }
  return -1;
}

int ScalingModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !plan_ ? 0 : static_cast<int>(plan_->scaling.size());
}

int ScalingModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant ScalingModel::raw(const planner::ScalingPoint& p, int column, int row) const {
  switch (column) {
    case kNodes:
      return p.nodes;
    case kSamplesPerS:
      return p.samples_per_s;
    case kBand:
      return Judged(p.band) ? QVariant(p.samples_per_s * p.band->lo) : QVariant();
    case kEfficiency:
      return 100 * p.efficiency;
    case kHours:
      return p.expected_hours;
    case kCost:
      return p.expected_cost_usd ? QVariant(*p.expected_cost_usd) : QVariant();
    case kNote:
      return row == stopsPayingRow() ? QStringLiteral("adding nodes stops paying after this")
                                     : QString();
    default:
      return {};
  }
}

QVariant ScalingModel::display(const planner::ScalingPoint& p, int column, int row) const {
  const QVariant v = raw(p, column, row);
  switch (column) {
    case kSamplesPerS:  // "e": the estimator's figure (planner/search/scaling.h)
      return QString::number(v.toDouble(), 'f', 1) +
             (p.simulated ? QString() : QStringLiteral(" e"));
    case kBand:
      if (!Judged(p.band)) return QStringLiteral("-");
      return QStringLiteral("%1-%2%3")
          .arg(p.samples_per_s * p.band->lo, 0, 'f', 1)
          .arg(p.samples_per_s * p.band->hi, 0, 'f', 1)
          .arg(p.band->note.empty() ? QString() : QStringLiteral(" *"));
    case kEfficiency:
      return QString::number(v.toDouble(), 'f', 0) + QStringLiteral(" %");
    case kHours:
      return QString::number(v.toDouble(), 'f', v.toDouble() < 10 ? 2 : 1);
    case kCost:
      return v.isValid() ? QString::number(v.toDouble(), 'f', v.toDouble() < 100 ? 2 : 0)
                         : QVariant();
    default:
      return v;
  }
}

QVariant ScalingModel::data(const QModelIndex& index, int role) const {
  if (!plan_ ||
      !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const planner::ScalingPoint& p = point(index.row());
  switch (role) {
    case Qt::DisplayRole:
      return display(p, index.column(), index.row());
    case kSortRole:
      return raw(p, index.column(), index.row());
    case kStopsPayingRole:
      return index.row() == stopsPayingRow();
    case kBandLowRole:
    case kBandHighRole:
      if (!Judged(p.band)) return {};
      return p.samples_per_s * (role == kBandLowRole ? p.band->lo : p.band->hi);
    case Qt::ToolTipRole:
      if (index.column() == kBand && Judged(p.band)) {
        return QString::fromStdString(p.band->family + ", " + std::to_string(p.band->points) +
                                      " measurements" +
                                      (p.band->note.empty() ? "" : "; wider: " + p.band->note));
      }
      return {};
    case Qt::FontRole:
      if (index.row() == stopsPayingRow()) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      return {};
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::Alignment(
          (index.column() == kNote ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter));
    default:
      return {};
  }
}

QVariant ScalingModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  static const char* const kNames[kColumnCount] = {
      "nodes", "samples/s", "80% band samples/s", "efficiency", "hours", "cost $", ""};
  return section >= 0 && section < kColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

}  // namespace trainsim::gui
