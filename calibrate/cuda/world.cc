#include "calibrate/cuda/world.h"

#include <string>

#include "calibrate/cuda/cuda_backend.h"

namespace trainsim::calibrate::cuda {

Expected<std::unique_ptr<World>> JoinWorld() {
  const LaunchRanks launch = LaunchRanksFromEnvironment();
  if (!launch.multi()) return std::make_unique<World>();
#if TRAINSIM_HAVE_MPI
  return StartMpiWorld();
#else
  return Status::InvalidInput("started by a launcher with " + std::to_string(launch.size) +
                              " ranks, but trainsim-calibrate was built without MPI: install "
                              "libopenmpi-dev and rebuild, or run one process per node");
#endif
}

}  // namespace trainsim::calibrate::cuda
