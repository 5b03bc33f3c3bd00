// From measurements to a hardware profile: backend choice, the profile's
// tables and provenance, the summary table, and writing without losing a
// good profile.
#pragma once

#include <memory>
#include <string>

#include "calibrate/measure.h"
#include "core/catalog.h"
#include "core/hardware_profile.h"
#include "core/instance_type.h"

namespace trainsim::calibrate {

struct ChosenBackend {
  std::unique_ptr<Backend> backend;
  DeviceInfo device;
  std::string note;  // why this backend ("no CUDA device is visible (...): using cpu")
};

// `name`: "cuda", "cpu" or "auto" (cuda when this build has it and a device
// is visible, else cpu). An explicit backend that cannot run is an error.
Expected<ChosenBackend> ChooseBackend(const std::string& name);

// The catalog GPU name of a CUDA device name ("NVIDIA H100 80GB HBM3" ->
// "H100-SXM5-80GB", the catalog's device_names); "" when the device is not a catalog GPU.
std::string CatalogGpuName(const Catalog& catalog, const std::string& device_name);

struct ProfileOptions {
  std::string tool = "trainsim-calibrate";
  std::string date;  // ISO 8601 UTC; the run's start
  std::string gpu;   // catalog GPU name; "" = from the device name (cuda) in `catalog`
  const Catalog* catalog = nullptr;  // not owned; nullptr: a cuda profile names no GPU
};

// The profile of a run: fitted tables, raw points, provenance, failures and
// what was not measured. The cpu backend's profile also carries a catalog
// entry for the machine (instance "local-cpu", one "GPU" per core).
HardwareProfile BuildProfile(const Measurements& m, const MeasurePlan& plan,
                             const ProfileOptions& options);

// A plain-text table of the main figures (for the end of a run); with the
// catalog's GPU, GEMM and memory figures are also given as a share of its
// peak and of its catalog memory bandwidth.
std::string SummaryTable(const HardwareProfile& profile, const GpuSpec* catalog_gpu);

// Writes the profile to `path` durably (core/durable_file.h). An
// incomplete profile (some measurement failed) does not replace a complete
// one already at `path` unless `force`: it goes to `path` + ".partial"
// instead, and *written_to says where it went.
Status WriteProfile(const HardwareProfile& profile, const std::string& path, bool force,
                    std::string* written_to);

}  // namespace trainsim::calibrate
