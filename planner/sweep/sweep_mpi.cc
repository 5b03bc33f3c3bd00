#include "planner/sweep/sweep_mpi.h"

#if TRAINSIM_HAVE_MPI
#include <dlfcn.h>
#include <mpi.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#endif

namespace trainsim::planner {

#if TRAINSIM_HAVE_MPI
namespace {

// Only the thread that opened the world calls MPI (MPI_THREAD_FUNNELED); the
// sweep's worker threads never do.
class MpiWorld : public SweepWorld {
 public:
  MpiWorld() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
  }
  ~MpiWorld() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }

  // A non-blocking all-reduce polled with sleeps: a blocking one would spin
  // and take a core from the ranks still evaluating points.
  int MaxOverAll(int value) override {
    int result = value;
    MPI_Request request;
    MPI_Iallreduce(&value, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &request);
    int done = 0;
    while (MPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return result;
  }

 private:
  int rank_ = 0, size_ = 1, local_size_ = 1;
};

// libsimgrid defines the MPI functions too (SMPI); whichever library comes
// first on the link line wins, and SMPI's MPI_Init aborts outside smpirun.
Status CheckMpiIsNotSmpi() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&MPI_Init_thread), &info) != 0 && info.dli_fname != nullptr &&
      std::strstr(info.dli_fname, "simgrid") != nullptr) {
    return Status::Internal(std::string("MPI_Init_thread comes from ") + info.dli_fname +
                            " (SimGrid's SMPI), not from the MPI library: this trainsim was "
                            "linked with SimGrid before MPI (see CMakeLists.txt)");
  }
  return Status::Ok();
}

}  // namespace

bool SweepsCanUseMpi() { return true; }

Expected<std::unique_ptr<SweepWorld>> OpenMpiWorld() {
  if (Status s = CheckMpiIsNotSmpi(); !s.ok()) return s;
  return std::unique_ptr<SweepWorld>(new MpiWorld());
}

#else

bool SweepsCanUseMpi() { return false; }

Expected<std::unique_ptr<SweepWorld>> OpenMpiWorld() {
  return Status::InvalidInput(
      "started by mpirun, but this trainsim was built without MPI: install Open MPI "
      "(libopenmpi-dev) and rebuild, or run the sweep without mpirun");
}

#endif

}  // namespace trainsim::planner
