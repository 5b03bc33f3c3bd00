// The processes of one calibration run. Normally one process drives every
// local GPU (this base class). Started by mpirun/srun with several ranks and
// built with MPI, each rank drives one GPU and the collectives span all
// ranks and nodes (mpi_world.cc): the ranks then call every method here in
// the same order, and the methods that combine values block until all have.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/status.h"

namespace trainsim::calibrate::cuda {

class World {
 public:
  virtual ~World() = default;

  virtual bool multi_process() const { return false; }
  virtual int rank() const { return 0; }
  virtual int size() const { return 1; }
  // Distinct hosts among the ranks.
  virtual int nodes() const { return 1; }
  // Ranks on rank 0's host: the GPUs per node of the run.
  virtual int ranks_on_first_node() const { return 1; }
  // The CUDA device this rank drives among `visible` ones.
  virtual int DeviceFor(int /*visible*/) const { return 0; }

  // True when `ok` is true on every rank.
  virtual bool AllOk(bool ok) { return ok; }
  // Element-wise maximum over the ranks (every rank passes the same length).
  virtual Status MaxOverRanks(std::vector<double>* /*values*/) { return Status::Ok(); }
  // Copies rank 0's `bytes` bytes at `data` to every rank.
  virtual Status BroadcastFromFirst(void* /*data*/, size_t /*bytes*/) { return Status::Ok(); }
};

// The world this process belongs to, from the launcher's environment
// (calibrate/cuda/cuda_backend.h): a single process unless launched with
// more than one rank; then an MPI world, or InvalidInput when this build
// has no MPI.
Expected<std::unique_ptr<World>> JoinWorld();

#if TRAINSIM_HAVE_MPI
// Initialises MPI unless the program did (then MPI_Finalize runs at exit) and
// learns every rank's host.
Expected<std::unique_ptr<World>> StartMpiWorld();
#endif

}  // namespace trainsim::calibrate::cuda
