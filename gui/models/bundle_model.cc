#include "gui/models/bundle_model.h"

namespace trainsim::gui {

BundleModel::BundleModel(QObject* parent) : QAbstractTableModel(parent) {}

bool BundleModel::make(const launch::LaunchPlan& plan, const launch::LaunchOptions& options) {
  Expected<launch::Bundle> made = launch::MakeBundle(plan, options);
  beginResetModel();
  if (made.ok()) {
    bundle_ = std::move(*made);
    error_.clear();
  } else {
    bundle_.reset();
    error_ = QString::fromStdString(made.status().message());
  }
  endResetModel();
  emit changed();
  return bundle_.has_value();
}

void BundleModel::clear(const QString& reason) {
  beginResetModel();
  bundle_.reset();
  error_ = reason;
  endResetModel();
  emit changed();
}

QStringList BundleModel::warnings() const {
  QStringList out;
  if (bundle_) {
    for (const std::string& w : bundle_->warnings) out << QString::fromStdString(w);
  }
  return out;
}

int BundleModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !bundle_ ? 0 : static_cast<int>(bundle_->files.size());
}

int BundleModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant BundleModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const launch::BundleFile& f = bundle_->files[index.row()];
  if (role == kContentRole) return QString::fromStdString(f.content);
  const auto bytes = static_cast<qlonglong>(f.content.size());
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kPath:
        return QString::fromStdString(f.path);
      case kBytes:
        return bytes;
      case kExecutable:
        return f.executable ? QStringLiteral("yes") : QString();
    }
  }
  if (role == Qt::UserRole) {  // raw values, for sorting and tests
    if (index.column() == kBytes) return bytes;
    if (index.column() == kExecutable) return f.executable;
    return QString::fromStdString(f.path);
  }
  if (role == Qt::TextAlignmentRole && index.column() == kBytes)
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant BundleModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kPath:
      return QStringLiteral("File");
    case kBytes:
      return QStringLiteral("Bytes");
    case kExecutable:
      return QStringLiteral("Executable");
  }
  return {};
}

}  // namespace trainsim::gui
