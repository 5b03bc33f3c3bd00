// The files of a launch bundle (launch/bundle.h) as a table: path, size in
// bytes, executable; the file's text in kContentRole. make() builds the
// bundle with MakeBundle; when MakeBundle refuses the options, the model is
// empty and error() holds its message, so no file is shown that could not
// be written.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>
#include <optional>

#include "launch/bundle.h"

namespace trainsim::gui {

class BundleModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kPath, kBytes, kExecutable, kColumnCount };
  static constexpr int kContentRole = Qt::UserRole + 1;  // QString: the file's bytes as UTF-8

  explicit BundleModel(QObject* parent = nullptr);

  // Returns false (and empties the model) when MakeBundle fails.
  bool make(const launch::LaunchPlan& plan, const launch::LaunchOptions& options);
  // Empties the model; `reason` becomes error() (empty: none).
  void clear(const QString& reason = QString());

  const std::optional<launch::Bundle>& bundle() const { return bundle_; }
  QString error() const { return error_; }
  QStringList warnings() const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 signals:
  void changed();  // after every make() or clear()

 private:
  std::optional<launch::Bundle> bundle_;
  QString error_;
};

}  // namespace trainsim::gui
