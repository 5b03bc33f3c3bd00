// The measured curves of a hardware profile beside the catalog's figure for
// the same GPU, as a table with one row per measured point:
//   GEMM: the fitted table per dtype, TFLOP/s against FLOPs per GEMM, with
//         the catalog peak of that dtype;
//   memory: the raw points per test (copy, layernorm, ...), GB/s against
//         bytes, with the catalog memory bandwidth for device-memory tests
//         (none for the host<->device copies);
//   collectives: the raw points per (op, ranks, nodes), bus GB/s against
//         bytes, with the catalog's per-GPU NVLink rate where it is known.
// A catalog figure that is not known (no catalog GPU, no peak for that dtype)
// is null: an invalid QVariant, and no peak in the curve.
#pragma once

#include <QAbstractTableModel>
#include <QPointF>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "gui/models/loaded_profile.h"

namespace trainsim::gui {

struct ProfileCurve {
  enum Kind { kGemm, kMemory, kCollective };
  Kind kind = kGemm;
  QString name;                 // "fp32", "copy", "all_reduce 8 ranks"
  int ranks = 0;                // collectives
  std::vector<QPointF> points;  // x: FLOPs per GEMM or bytes; y: TFLOP/s or GB/s
  std::optional<double> peak;   // the catalog figure, in y's unit
  QString peak_name;            // "H100-SXM5-80GB bf16 peak"; "" without a peak
};

// Every curve of `p`, GEMMs (in fp32, tf32, fp16, bf16, fp8 order) first,
// then memory tests and collectives in the order the profile lists them.
std::vector<ProfileCurve> ProfileCurves(const LoadedProfile& p);

class ProfileCurvesModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kKind, kCurve, kSize, kMeasured, kCatalogPeak, kShareOfPeak, kColumnCount };
  enum Role {
    kRawRole = Qt::UserRole,  // the number (x, y, peak, share); null when not known
    kCurveIndexRole,          // index into curves()
  };

  explicit ProfileCurvesModel(QObject* parent = nullptr);

  void setProfile(std::shared_ptr<const LoadedProfile> profile);
  void clear() { setProfile(nullptr); }
  const std::shared_ptr<const LoadedProfile>& profile() const { return profile_; }
  const std::vector<ProfileCurve>& curves() const { return curves_; }

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QVariant raw(const ProfileCurve& c, const QPointF& p, int column) const;
  QVariant display(const ProfileCurve& c, const QPointF& p, int column) const;

  std::shared_ptr<const LoadedProfile> profile_;
  std::vector<ProfileCurve> curves_;
  std::vector<std::pair<int, int>> rows_;  // row -> (curve, point)
};

}  // namespace trainsim::gui
