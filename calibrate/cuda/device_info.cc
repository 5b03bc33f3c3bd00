#include "calibrate/cuda/device_info.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "calibrate/cuda/cuda_util.h"
#include "calibrate/cuda/phases.h"

namespace trainsim::calibrate::cuda {
namespace {

// 13000 -> "13.0"
std::string VersionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// Device 0's name, noting the first device that differs from it.
Expected<std::string> DeviceNames(int device, int count, const cudaDeviceProp& prop) {
  std::string name = prop.name;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp other{};
    Status st = CudaCheck(cudaGetDeviceProperties(&other, d), "cudaGetDeviceProperties");
    if (!st.ok()) return st;
    if (d != device && name != other.name) {
      return name + " (not all alike: device " + std::to_string(d) + " is " + other.name + ")";
    }
  }
  return name;
}

Status FillVersions(DeviceInfo* info) {
  int driver = 0, runtime = 0;
  Status st = CudaCheck(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  if (st.ok()) st = CudaCheck(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  if (!st.ok()) return st;
  info->driver = "CUDA driver " + VersionText(driver);
  info->runtime = "CUDA runtime " + VersionText(runtime);
  info->blas = BlasVersion();
  info->collectives = CollectivesVersion();
  return Status::Ok();
}

}  // namespace

Expected<int> CountDevices() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  std::string reason =
      err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount found 0 devices";
  if (err == cudaSuccess && count > 0) return count;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    reason += "; CUDA_VISIBLE_DEVICES=" + std::string(visible);
  }
  return Status::NotFound("no CUDA device is visible (" + reason + ")");
}

Expected<DeviceInfo> DescribeDevices(const World& world, int device, int count) {
  cudaDeviceProp prop{};
  Status st = CudaCheck(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  if (!st.ok()) return st;
  DeviceInfo info;
  info.backend = "cuda";
  Expected<std::string> name = world.multi_process() ? Expected<std::string>(std::string(prop.name))
                                                     : DeviceNames(device, count, prop);
  if (!name.ok()) return name.status();
  info.name = *name;
  info.devices = world.multi_process() ? world.ranks_on_first_node() : count;
  info.nodes = world.nodes();
  info.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  st = FillVersions(&info);
  if (!st.ok()) return st;
  info.dtypes = SupportedDtypes(prop.major, prop.minor);
  info.host = HostName();
  return info;
}

}  // namespace trainsim::calibrate::cuda
