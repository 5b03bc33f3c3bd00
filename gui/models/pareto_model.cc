#include "gui/models/pareto_model.h"

#include "core/units.h"
#include "gui/models/candidate_table_model.h"

namespace trainsim::gui {

ParetoModel::ParetoModel(QObject* parent) : QAbstractTableModel(parent) {}

void ParetoModel::setPlan(std::shared_ptr<const planner::Plan> plan) {
  beginResetModel();
  plan_ = std::move(plan);
  front_.clear();
  all_.clear();
  if (plan_) {
    const std::vector<int> rows = CandidateRows(*plan_);
    auto make = [&](int c, int p, Point* out) {
      const planner::PricedJob& pj = plan_->confirmed[c].priced[p];
      if (!pj.job.cost_usd || rows[c] < 0) return false;
      const planner::Spread& h = pj.job.wall_s;
      const planner::Spread& d = *pj.job.cost_usd;
      *out = {pj.job.expected_wall_s / kSecondsPerHour,
              d.mean,
              h.p10 / kSecondsPerHour,
              h.p90 / kSecondsPerHour,
              d.p10,
              d.p90,
              c,
              p,
              rows[c],
              pj.pricing};
      return true;
    };
    Point pt;
    for (const auto& [c, p] : plan_->pareto) {
      if (make(c, p, &pt)) front_.push_back(pt);
    }
    for (int c = 0; c < static_cast<int>(plan_->confirmed.size()); ++c) {
      for (int p = 0; p < static_cast<int>(plan_->confirmed[c].priced.size()); ++p) {
        if (make(c, p, &pt)) all_.push_back(pt);
      }
    }
  }
  endResetModel();
}

const ParetoModel::Point* ParetoModel::at(Series s, int i) const {
  const std::vector<Point>& v = s == kFront ? front_ : all_;
  return i >= 0 && i < static_cast<int>(v.size()) ? &v[i] : nullptr;
}

int ParetoModel::pointCount(Series s) const {
  return static_cast<int>(s == kFront ? front_.size() : all_.size());
}

QPointF ParetoModel::point(Series s, int i) const {
  const Point* p = at(s, i);
  return p ? QPointF(p->hours, p->cost) : QPointF();
}

QRectF ParetoModel::spread(Series s, int i) const {
  const Point* p = at(s, i);
  return p ? QRectF(QPointF(p->hours_p10, p->cost_p10), QPointF(p->hours_p90, p->cost_p90))
           : QRectF();
}

int ParetoModel::candidateRow(Series s, int i) const {
  const Point* p = at(s, i);
  return p ? p->row : -1;
}

std::vector<int> ParetoModel::pointsOfRow(Series s, int row) const {
  std::vector<int> out;
  for (int i = 0; i < pointCount(s); ++i) {
    if (at(s, i)->row == row) out.push_back(i);
  }
  return out;
}

int ParetoModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(front_.size() + all_.size());
}

int ParetoModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant ParetoModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const int front = static_cast<int>(front_.size());
  const Series s = index.row() < front ? kFront : kAllOptions;
  const Point& p = *at(s, s == kFront ? index.row() : index.row() - front);
  switch (role) {
    case Qt::DisplayRole:
    case kSortRole:
      switch (index.column()) {
        case kHours:
          return role == kSortRole ? QVariant(p.hours) : QString::number(p.hours, 'f', 1);
        case kCost:
          return role == kSortRole ? QVariant(p.cost) : QString::number(p.cost, 'f', 0);
        case kPricing:
          return QString::fromLatin1(ToString(p.pricing));
        case kSeries:
          if (role == kSortRole) return static_cast<int>(s);
          return s == kFront ? QStringLiteral("front") : QStringLiteral("option");
        case kHoursP10:
        case kHoursP90: {
          const double h = index.column() == kHoursP10 ? p.hours_p10 : p.hours_p90;
          return role == kSortRole ? QVariant(h) : QString::number(h, 'f', 1);
        }
        case kCostP10:
        case kCostP90: {
          const double c = index.column() == kCostP10 ? p.cost_p10 : p.cost_p90;
          return role == kSortRole ? QVariant(c) : QString::number(c, 'f', 0);
        }
        default:
          return {};
      }
    case kCandidateRowRole:
      return p.row;
    case kConfirmedIndexRole:
      return p.confirmed;
    case kPricedIndexRole:
      return p.priced;
    default:
      return {};
  }
}

QVariant ParetoModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  switch (section) {
    case kHours:
      return QStringLiteral("hours");
    case kCost:
      return QStringLiteral("cost $");
    case kPricing:
      return QStringLiteral("pricing");
    case kSeries:
      return QStringLiteral("series");
    case kHoursP10:
      return QStringLiteral("hours P10");
    case kHoursP90:
      return QStringLiteral("hours P90");
    case kCostP10:
      return QStringLiteral("cost $ P10");
    case kCostP90:
      return QStringLiteral("cost $ P90");
    default:
      return {};
  }
}

}  // namespace trainsim::gui
