// The instance catalog: built-in entries from instance-catalog/*.json plus
// entries a user adds from extra files.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/instance_type.h"
#include "core/status.h"

namespace trainsim {

// How a cluster's nodes are wired beyond the node (docs/catalog.md, "Fabric
// objects"): the scenario's cluster fabric fields. 0 = not confirmed by the
// sources (the scenario's own value or default stays).
struct Fabric {
  std::string name;
  int nodes_per_leaf = 0;
  int leaves_per_pod = 0;
  double oversubscription = 0;
  double pod_oversubscription = 0;
  std::vector<std::string> sources;
  std::string notes;
};

class Catalog {
 public:
  // Loads every built-in file from `dir` (sources.json, gpus.json, then
  // aws.json, reference-systems.json and fabrics.json). Built-in entries must cite sources.
  static Expected<Catalog> LoadBuiltin(const std::string& dir);
  // The directory of the built-in catalog: $TRAINSIM_CATALOG_DIR if set, else
  // the source tree's instance-catalog/ (compiled in).
  static std::string DefaultDir();
  // The built-in catalog (DefaultDir) plus `extra_file` when it is not empty:
  // what every command's --catalog option loads.
  static Expected<Catalog> LoadDefault(const std::string& extra_file = "");

  // Adds entries from an extra catalog file (same format as aws.json); an
  // entry may name a GPU from gpus.json. Re-defining a type is an error.
  Status AddFile(const std::string& path);
  Status AddFromString(std::string_view text, std::string_view filename);

  const InstanceType* Find(std::string_view name) const;
  // The GPU whose device_names match `device_name` (a CUDA device name), or nullptr. The
  // catalog's parts are SXM modules: a name that says PCIe matches none.
  const GpuSpec* FindGpuByDeviceName(std::string_view device_name) const;
  std::vector<std::string> Names() const;  // sorted
  const Fabric* FindFabric(std::string_view name) const;
  std::vector<std::string> FabricNames() const;  // sorted
  const std::map<std::string, std::string>& source_text() const { return source_text_; }

 private:
  std::map<std::string, GpuSpec, std::less<>> gpus_;
  std::map<std::string, InstanceType, std::less<>> types_;
  std::map<std::string, Fabric, std::less<>> fabrics_;
  std::map<std::string, std::string> source_text_;  // source id -> citation
};

}  // namespace trainsim
