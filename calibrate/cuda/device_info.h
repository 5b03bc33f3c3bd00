// What the cuda backend measures on: the visible devices, this process's
// device, and the versions of the libraries it measures through.
#pragma once

#include "calibrate/cuda/world.h"
#include "calibrate/measure.h"
#include "core/status.h"

namespace trainsim::calibrate::cuda {

// Number of CUDA devices this process sees; NotFound("no CUDA device is
// visible (<the runtime's reason>)") when there are none.
Expected<int> CountDevices();

// DeviceInfo of `device` (one of `count` visible), with the run's devices
// per node and nodes as `world` sees them.
Expected<DeviceInfo> DescribeDevices(const World& world, int device, int count);

}  // namespace trainsim::calibrate::cuda
