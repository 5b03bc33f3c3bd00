#include "gui/models/profile_curves_model.h"

#include <cmath>
#include <map>

namespace trainsim::gui {
namespace {

constexpr const char* kDtypes[] = {"fp32", "tf32", "fp16", "bf16", "fp8"};

std::optional<Precision> PrecisionOf(const std::string& dtype) {
  static const std::map<std::string, Precision> kByName = {{"fp32", Precision::kFp32},
                                                           {"tf32", Precision::kTf32},
                                                           {"fp16", Precision::kFp16},
                                                           {"bf16", Precision::kBf16},
                                                           {"fp8", Precision::kFp8}};
  const auto it = kByName.find(dtype);
  if (it == kByName.end()) return std::nullopt;
  return it->second;
}

QString GpuName(const LoadedProfile& p) { return QString::fromStdString(p.profile.gpu); }

// The host<->device copies go over PCIe, not device memory: no memory peak.
bool IsDeviceMemoryTest(const std::string& what) {
  return what != "h2d_pinned" && what != "d2h_pinned";
}

void AddGemmCurves(const LoadedProfile& p, std::vector<ProfileCurve>* out) {
  for (const char* dtype : kDtypes) {
    const auto table = p.profile.gemm_tables.find(dtype);
    if (table == p.profile.gemm_tables.end()) continue;
    ProfileCurve c;
    c.kind = ProfileCurve::kGemm;
    c.name = QString::fromLatin1(dtype);
    for (const TablePoint& t : table->second) c.points.emplace_back(t.x, t.y / 1e12);
    const std::optional<Precision> precision = PrecisionOf(dtype);
    if (p.catalog_gpu && precision) {
      if (std::optional<double> peak = p.catalog_gpu->PeakFlops(*precision)) {
        c.peak = *peak / 1e12;
        c.peak_name = QStringLiteral("%1 %2 peak").arg(GpuName(p), c.name);
      }
    }
    out->push_back(std::move(c));
  }
}

// One curve per key, in the order the keys first appear.
ProfileCurve* CurveFor(const QString& name, ProfileCurve::Kind kind,
                       std::vector<ProfileCurve>* out) {
  for (ProfileCurve& c : *out) {
    if (c.kind == kind && c.name == name) return &c;
  }
  ProfileCurve c;
  c.kind = kind;
  c.name = name;
  out->push_back(std::move(c));
  return &out->back();
}

void AddMemoryCurves(const LoadedProfile& p, std::vector<ProfileCurve>* out) {
  for (const ProfilePoint& point : p.profile.points) {
    if (point.kind != "memory") continue;
    ProfileCurve* c = CurveFor(QString::fromStdString(point.what), ProfileCurve::kMemory, out);
    c->points.emplace_back(point.bytes, point.rate / 1e9);
    if (p.catalog_gpu && p.catalog_gpu->hbm_GBps && IsDeviceMemoryTest(point.what)) {
      c->peak = *p.catalog_gpu->hbm_GBps;
      c->peak_name = QStringLiteral("%1 memory bandwidth").arg(GpuName(p));
    }
  }
}

void AddCollectiveCurves(const LoadedProfile& p, std::vector<ProfileCurve>* out) {
  for (const ProfilePoint& point : p.profile.points) {
    if (point.kind != "collective") continue;
    QString name = QStringLiteral("%1 %2 %3")
                       .arg(QString::fromStdString(point.what))
                       .arg(point.ranks)
                       .arg(point.ranks == 1 ? QStringLiteral("rank") : QStringLiteral("ranks"));
    if (point.nodes > 1) name += QStringLiteral(" on %1 nodes").arg(point.nodes);
    ProfileCurve* c = CurveFor(name, ProfileCurve::kCollective, out);
    c->ranks = point.ranks;
    c->points.emplace_back(point.bytes, point.rate / 1e9);
    // NVLink joins the GPUs of one node only; one rank moves nothing.
    if (p.catalog_nvlink_GBps && point.nodes == 1 && point.ranks > 1) {
      c->peak = *p.catalog_nvlink_GBps;
      c->peak_name = QStringLiteral("%1 NVLink per GPU").arg(GpuName(p));
    }
  }
}

// "268 MFLOP", "1.1 TFLOP".
QString FormatFlops(double flops) {
  static const char* const kUnits[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
  int unit = 0;
  while (unit < 5 && flops >= 1000) {
    flops /= 1000;
    ++unit;
  }
  return QStringLiteral("%1 %2").arg(flops, 0, 'g', 3).arg(QLatin1String(kUnits[unit]));
}

// "4 MiB", "1.5 KiB" (binary units, as trainsim-calibrate prints them).
QString FormatBytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024) {
    bytes /= 1024;
    ++unit;
  }
  return QStringLiteral("%1 %2").arg(bytes, 0, 'g', 4).arg(QLatin1String(kUnits[unit]));
}

QString RateUnit(const ProfileCurve& c) {
  return c.kind == ProfileCurve::kGemm ? QStringLiteral("TFLOP/s") : QStringLiteral("GB/s");
}

QString KindName(ProfileCurve::Kind kind) {
  switch (kind) {
    case ProfileCurve::kGemm:
      return QStringLiteral("GEMM");
    case ProfileCurve::kMemory:
      return QStringLiteral("memory");
    case ProfileCurve::kCollective:
      return QStringLiteral("collective");
  }
  return {};
}

}  // namespace

std::vector<ProfileCurve> ProfileCurves(const LoadedProfile& p) {
  std::vector<ProfileCurve> curves;
  AddGemmCurves(p, &curves);
  AddMemoryCurves(p, &curves);
  AddCollectiveCurves(p, &curves);
  return curves;
}

ProfileCurvesModel::ProfileCurvesModel(QObject* parent) : QAbstractTableModel(parent) {}

void ProfileCurvesModel::setProfile(std::shared_ptr<const LoadedProfile> profile) {
  beginResetModel();
  profile_ = std::move(profile);
  curves_ = profile_ ? ProfileCurves(*profile_) : std::vector<ProfileCurve>{};
  rows_.clear();
  for (size_t c = 0; c < curves_.size(); ++c) {
    for (size_t i = 0; i < curves_[c].points.size(); ++i)
      rows_.emplace_back(static_cast<int>(c), static_cast<int>(i));
  }
  endResetModel();
}

int ProfileCurvesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ProfileCurvesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant ProfileCurvesModel::raw(const ProfileCurve& c, const QPointF& p, int column) const {
  switch (column) {
    case kKind:
      return KindName(c.kind);
    case kCurve:
      return c.name;
    case kSize:
      return p.x();
    case kMeasured:
      return p.y();
    case kCatalogPeak:
      return c.peak ? QVariant(*c.peak) : QVariant();
    case kShareOfPeak:
      return c.peak && *c.peak > 0 ? QVariant(p.y() / *c.peak) : QVariant();
  }
  return {};
}

QVariant ProfileCurvesModel::display(const ProfileCurve& c, const QPointF& p, int column) const {
  const QVariant v = raw(c, p, column);
  if (!v.isValid()) return {};
  switch (column) {
    case kSize:
      return c.kind == ProfileCurve::kGemm ? FormatFlops(p.x()) : FormatBytes(p.x());
    case kMeasured:
    case kCatalogPeak:
      return QStringLiteral("%1 %2").arg(v.toDouble(), 0, 'g', 4).arg(RateUnit(c));
    case kShareOfPeak:
      return QStringLiteral("%1 %").arg(100 * v.toDouble(), 0, 'f', 1);
  }
  return v;
}

QVariant ProfileCurvesModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const auto [curve, point] = rows_[static_cast<size_t>(index.row())];
  const ProfileCurve& c = curves_[static_cast<size_t>(curve)];
  const QPointF& p = c.points[static_cast<size_t>(point)];
  switch (role) {
    case Qt::DisplayRole:
      return display(c, p, index.column());
    case kRawRole:
      return raw(c, p, index.column());
    case kCurveIndexRole:
      return curve;
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::Alignment(index.column() >= kSize
                                                   ? Qt::AlignRight | Qt::AlignVCenter
                                                   : Qt::AlignLeft | Qt::AlignVCenter));
  }
  return {};
}

QVariant ProfileCurvesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const kNames[] = {"kind",     "curve",   "size",
                                       "measured", "catalog", "of catalog"};
  if (section < 0 || section >= kColumnCount) return {};
  return QString::fromLatin1(kNames[section]);
}

}  // namespace trainsim::gui
