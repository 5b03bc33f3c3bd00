// A checkable list of the catalog's instance types: the scenario editor's
// search.instances. One row per catalog type (sorted by name), then any
// checked name the catalog lacks (so that editing the list keeps it; the
// parser reports it). checked() keeps the order the names were given in,
// with newly checked ones appended.
#pragma once

#include <QAbstractListModel>
#include <QStringList>
#include <vector>

#include "core/catalog.h"

namespace trainsim::gui {

class InstancePickerModel : public QAbstractListModel {
  Q_OBJECT

 public:
  enum Role {
    kNameRole = Qt::UserRole,  // QString: the catalog name
    kKnownRole,                // bool: the catalog has it
    kAwsRole,                  // bool: an AWS type (false: a reference system)
  };

  explicit InstancePickerModel(QObject* parent = nullptr);

  // The types to list (null: none). Keeps the checked names.
  void setCatalog(const Catalog* catalog);
  // Checks these names and unchecks the rest (no checkedChanged).
  void setChecked(const QStringList& names);
  const QStringList& checked() const { return checked_; }
  // The row of a name; -1 when not listed.
  int rowOf(const QString& name) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  QHash<int, QByteArray> roleNames() const override;

 signals:
  // A check box was toggled through setData (by the user): checked() changed.
  void checkedChanged();

 private:
  struct Row {
    QString name;
    QString detail;  // "8 × A100-SXM4-40GB, $32.77/h"
    bool known = true;
    bool aws = true;
  };
  void rebuild();
  bool isListed(const QModelIndex& index) const;  // a valid index of one of the rows

  const Catalog* catalog_ = nullptr;
  std::vector<Row> rows_;
  QStringList checked_;
};

}  // namespace trainsim::gui
