// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// The processes a sweep runs in: this process alone, or the ranks of an MPI
// job when trainsim was started by mpirun (planner/sweep/sweep_mpi.cc; the only
// file that includes mpi.h). The runner needs only ranks and one collective.
#pragma once

#include <functional>
#include <memory>

#include "core/status.h"

namespace trainsim::planner {

class SweepWorld {
 public:
  virtual ~SweepWorld() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Processes on this machine (a default for threads per process).
  virtual int local_size() const = 0;
  // Waits until every process has called it and returns the largest `value`
  // given. Waiting leaves the cores to the processes still working.
  virtual int MaxOverAll(int value) = 0;
};

// This process alone: rank 0 of 1.
std::unique_ptr<SweepWorld> SingleProcessWorld();

// Whether an MPI launcher started this process: one of OMPI_COMM_WORLD_SIZE
// (Open MPI), PMI_SIZE (MPICH, Slurm) or PMIX_RANK (PMIx) is set.
bool StartedByMpiLauncher(const std::function<const char*(const char*)>& getenv);

// Whether this build can run sweeps over MPI ranks (TRAINSIM_HAVE_MPI).
bool SweepsCanUseMpi();

// Under an MPI launcher: initialises MPI and returns the world of its ranks
// (MPI is finalised when the world is destroyed). Otherwise this process
// alone, and MPI is not touched. An error under a launcher when the build has
// no MPI. At most one world per process.
Expected<std::unique_ptr<SweepWorld>> OpenSweepWorld();

}  // namespace trainsim::planner
