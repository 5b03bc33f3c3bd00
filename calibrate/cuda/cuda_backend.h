// What the trainsim-calibrate tool needs to know about the cuda backend
// beyond calibrate/measure.h: whether this process is the one that reports.
//
// Under mpirun (or srun, mpiexec) every rank runs the tool and the backend;
// only rank 0 fills Measurements, so only rank 0 should write a profile or
// print results. Everything here is header-only and reads the launcher's
// environment, so it links in builds without CUDA or MPI too.
#pragma once

#include <cstdlib>
#include <initializer_list>

namespace trainsim::calibrate {

// How a launcher started this process, from its environment variables.
struct LaunchRanks {
  int rank = 0;           // OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK; 0 when not launched
  int size = 1;           // OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_NTASKS when launched
                          // (at least rank + 1); 1 when not launched
  bool launched = false;  // one of the rank variables is set
  bool multi() const { return size > 1; }
};

namespace launch_detail {
// The first of `names` that is set, as an integer; -1 when none is (or it is not a number).
inline int FirstIntFromEnv(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    const long parsed = std::strtol(value, &end, 10);
    return (*end == '\0' && parsed >= 0) ? static_cast<int>(parsed) : -1;
  }
  return -1;
}
}  // namespace launch_detail

inline LaunchRanks LaunchRanksFromEnvironment() {
  LaunchRanks r;
  const int rank =
      launch_detail::FirstIntFromEnv({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"});
  if (rank < 0) return r;  // not started by a launcher: a single process
  const int size =
      launch_detail::FirstIntFromEnv({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"});
  r.launched = true;
  r.rank = rank;
  r.size = size > rank ? size : rank + 1;
  return r;
}

// True unless this process was started by a launcher as a rank other than 0.
inline bool IsPrimaryRank() { return LaunchRanksFromEnvironment().rank == 0; }

}  // namespace trainsim::calibrate
