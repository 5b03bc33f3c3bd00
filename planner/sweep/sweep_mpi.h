// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// The MPI side of sweep_world.h: the one place that includes mpi.h, compiled
// the same with or without MPI (TRAINSIM_HAVE_MPI).
#pragma once

#include <memory>

#include "core/status.h"
#include "planner/sweep/sweep_world.h"

namespace trainsim::planner {

// Initialises MPI and returns the world of its ranks; an error when the build
// has no MPI.
Expected<std::unique_ptr<SweepWorld>> OpenMpiWorld();

}  // namespace trainsim::planner
