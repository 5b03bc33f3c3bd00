#include "gui/models/instance_picker_model.h"

#include <QBrush>
#include <QColor>

namespace trainsim::gui {

InstancePickerModel::InstancePickerModel(QObject* parent) : QAbstractListModel(parent) {}

bool InstancePickerModel::isListed(const QModelIndex& index) const {
  return index.isValid() && index.model() == this && !index.parent().isValid() &&
         index.column() == 0 && index.row() < static_cast<int>(rows_.size());
}

void InstancePickerModel::setCatalog(const Catalog* catalog) {
  catalog_ = catalog;
  rebuild();
}

void InstancePickerModel::setChecked(const QStringList& names) {
  QStringList unique;
  for (const QString& n : names)
    if (!unique.contains(n)) unique << n;
  // Same rows (every name is listed already): only the check boxes change.
  bool listed = true;
  for (const QString& n : unique) listed = listed && rowOf(n) >= 0;
  bool stale = false;  // rows of names the catalog lacks that are no longer checked
  for (const Row& r : rows_) stale = stale || (!r.known && !unique.contains(r.name));
  if (listed && !stale) {
    const QStringList before = checked_;
    checked_ = unique;
    for (int i = 0; i < static_cast<int>(rows_.size()); ++i) {
      const QString& name = rows_[static_cast<size_t>(i)].name;
      if (before.contains(name) != checked_.contains(name)) {
        const QModelIndex at = index(i);
        emit dataChanged(at, at, {Qt::CheckStateRole});
      }
    }
    return;
  }
  checked_ = unique;
  rebuild();
}

int InstancePickerModel::rowOf(const QString& name) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].name == name) return static_cast<int>(i);
  return -1;
}

void InstancePickerModel::rebuild() {
  beginResetModel();
  rows_.clear();
  if (catalog_) {
    for (const std::string& name : catalog_->Names()) {
      const InstanceType* t = catalog_->Find(name);
      Row r;
      r.name = QString::fromStdString(name);
      r.aws = t->is_aws;
      r.detail = QStringLiteral("%1 × %2").arg(t->gpus).arg(QString::fromStdString(t->gpu.name));
      if (t->price_on_demand_usd_hr)
        r.detail += QStringLiteral(", $%1/h").arg(*t->price_on_demand_usd_hr, 0, 'f', 2);
      else if (!t->is_aws)
        r.detail += QStringLiteral(", reference system (no price)");
      rows_.push_back(std::move(r));
    }
  }
  for (const QString& name : checked_) {
    if (rowOf(name) >= 0) continue;
    Row r;
    r.name = name;
    r.known = false;
    r.aws = false;
    r.detail = QStringLiteral("not in the catalog");
    rows_.push_back(std::move(r));
  }
  endResetModel();
}

int InstancePickerModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant InstancePickerModel::data(const QModelIndex& index, int role) const {
  if (!isListed(index)) return QVariant();
  const Row& r = rows_[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return QStringLiteral("%1  —  %2").arg(r.name, r.detail);
    case Qt::ToolTipRole:
      return r.detail;
    case Qt::CheckStateRole:
      return checked_.contains(r.name) ? Qt::Checked : Qt::Unchecked;
    case Qt::ForegroundRole:
      if (!r.known) return QBrush(QColor(198, 40, 40));
      return QVariant();
    case kNameRole:
      return r.name;
    case kKnownRole:
      return r.known;
    case kAwsRole:
      return r.aws;
    default:
      return QVariant();
  }
}

bool InstancePickerModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::CheckStateRole || !isListed(index)) return false;
  const QString& name = rows_[static_cast<size_t>(index.row())].name;
  const bool on = value.toInt() == Qt::Checked;
  if (on == checked_.contains(name)) return true;
  if (on)
    checked_ << name;
  else
    checked_.removeAll(name);
  emit dataChanged(index, index, {Qt::CheckStateRole});
  emit checkedChanged();
  return true;
}

Qt::ItemFlags InstancePickerModel::flags(const QModelIndex& index) const {
  if (!isListed(index)) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable |
         Qt::ItemNeverHasChildren;
}

QHash<int, QByteArray> InstancePickerModel::roleNames() const {
  QHash<int, QByteArray> names = QAbstractListModel::roleNames();
  names[kNameRole] = "name";
  names[kKnownRole] = "known";
  names[kAwsRole] = "aws";
  return names;
}

}  // namespace trainsim::gui
