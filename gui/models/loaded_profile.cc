#include "gui/models/loaded_profile.h"

#include <QFile>
#include <set>
#include <string_view>

#include "core/durable_file.h"

namespace trainsim::gui {
namespace {

// The catalog entry of the profile's GPU, and the NVLink rate its NVSwitch
// instances agree on.
void FindCatalogFigures(const Catalog& catalog, LoadedProfile* out) {
  std::set<double> nvlink;
  bool other_topology = false;
  for (const std::string& type : catalog.Names()) {
    const InstanceType* t = catalog.Find(type);
    if (t->gpu.name != out->profile.gpu) continue;
    out->catalog_gpu = t->gpu;
    if (t->topology == IntraTopology::kNvswitch && t->nvlink_GBps_per_gpu_per_dir)
      nvlink.insert(*t->nvlink_GBps_per_gpu_per_dir);
    else if (t->gpus > 1)
      other_topology = true;
  }
  if (nvlink.size() == 1 && !other_topology) out->catalog_nvlink_GBps = *nvlink.begin();
}

}  // namespace

Expected<LoadedProfile> ParseProfileText(const QByteArray& text, const QString& path,
                                         const Catalog* builtin) {
  Expected<HardwareProfile> parsed =
      ParseHardwareProfile(std::string_view(text.constData(), text.size()), path.toStdString());
  if (!parsed.ok()) return parsed.status();
  LoadedProfile out;
  out.path = path;
  out.text = text;
  out.profile = std::move(*parsed);
  if (out.profile.gpu.empty()) return out;
  if (!out.profile.catalog_json.empty()) {
    // As LoadScenarioFile does: the profile's own entry is read by the catalog's checks.
    Catalog own = builtin ? *builtin : Catalog();
    if (Status s = own.AddFromString(out.profile.catalog_json, path.toStdString() + " (catalog)");
        !s.ok())
      return s;
    FindCatalogFigures(own, &out);
    if (out.catalog_gpu) out.catalog_source = QStringLiteral("the profile's catalog");
    return out;
  }
  if (builtin) FindCatalogFigures(*builtin, &out);
  if (out.catalog_gpu) out.catalog_source = QStringLiteral("built-in catalog");
  return out;
}

Expected<LoadedProfile> LoadProfileFile(const QString& path, const Catalog* builtin) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly))
    return Status::NotFound(("cannot read " + path + ": " + file.errorString()).toStdString());
  return ParseProfileText(file.readAll(), path, builtin);
}

Status SaveProfileText(const LoadedProfile& profile, const QString& path) {
  return WriteFileDurably(path.toStdString(),
                          std::string_view(profile.text.constData(), profile.text.size()));
}

}  // namespace trainsim::gui
