#include "planner/sweep/sweep_world.h"

#include <cstdlib>

#include "planner/sweep/sweep_mpi.h"

namespace trainsim::planner {
namespace {

class SingleProcess : public SweepWorld {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_size() const override { return 1; }
  int MaxOverAll(int value) override { return value; }
};

}  // namespace

std::unique_ptr<SweepWorld> SingleProcessWorld() { return std::make_unique<SingleProcess>(); }

bool StartedByMpiLauncher(const std::function<const char*(const char*)>& getenv) {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (getenv(name) != nullptr) return true;
  }
  return false;
}

Expected<std::unique_ptr<SweepWorld>> OpenSweepWorld() {
  if (!StartedByMpiLauncher([](const char* name) { return std::getenv(name); })) {
    return SingleProcessWorld();
  }
  return OpenMpiWorld();
}

}  // namespace trainsim::planner
