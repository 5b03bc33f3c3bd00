// The MPI world: one rank per GPU, possibly across nodes. All MPI code of
// the backend is here; without MPI in the build this file is empty.
#include "calibrate/cuda/world.h"

#if TRAINSIM_HAVE_MPI

// The C API only: the deprecated C++ bindings that mpi.h would otherwise
// pull into C++ code need libraries MPI::MPI_C does not link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "calibrate/cuda/cuda_backend.h"

namespace trainsim::calibrate::cuda {
namespace {

constexpr int kHostChars = 256;

Status MpiCheck(int code, const std::string& what) {
  if (code == MPI_SUCCESS) return Status::Ok();
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Status::Internal(what + ": " + std::string(text, static_cast<size_t>(length)));
}

// kHostChars bytes, NUL-padded.
std::string PaddedHostName() {
  std::string name(kHostChars, '\0');
  gethostname(name.data(), kHostChars - 1);
  return name;
}

void FinalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

class MpiWorld final : public World {
 public:
  MpiWorld(int rank, int size) : rank_(rank), size_(size) {}

  bool multi_process() const override { return true; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int nodes() const override { return nodes_; }
  int ranks_on_first_node() const override { return first_node_ranks_; }
  int DeviceFor(int visible) const override { return visible > 0 ? local_rank_ % visible : 0; }

  bool AllOk(bool ok) override {
    int mine = ok ? 1 : 0, all = 0;
    const int code = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return code == MPI_SUCCESS && all == 1;
  }
  Status MaxOverRanks(std::vector<double>* values) override {
    return MpiCheck(MPI_Allreduce(MPI_IN_PLACE, values->data(), static_cast<int>(values->size()),
                                  MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                    "MPI_Allreduce");
  }
  Status BroadcastFromFirst(void* data, size_t bytes) override {
    return MpiCheck(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD),
                    "MPI_Bcast");
  }

  // Gathers every rank's host name: nodes, ranks on rank 0's node, and this
  // rank's index on its node (the launcher's local rank when it gives one).
  Status LearnHosts() {
    const std::string mine = PaddedHostName();
    std::vector<char> all(static_cast<size_t>(size_) * kHostChars);
    Status st = MpiCheck(MPI_Allgather(mine.data(), kHostChars, MPI_CHAR, all.data(), kHostChars,
                                       MPI_CHAR, MPI_COMM_WORLD),
                         "MPI_Allgather of host names");
    if (!st.ok()) return st;
    std::vector<std::string> hosts;
    for (int r = 0; r < size_; ++r) hosts.emplace_back(all.data() + r * kHostChars);
    nodes_ = static_cast<int>(std::set<std::string>(hosts.begin(), hosts.end()).size());
    first_node_ranks_ = static_cast<int>(std::count(hosts.begin(), hosts.end(), hosts[0]));
    const int from_env = launch_detail::FirstIntFromEnv(
        {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
    local_rank_ =
        from_env >= 0
            ? from_env
            : static_cast<int>(std::count(hosts.begin(), hosts.begin() + rank_, hosts[rank_]));
    return Status::Ok();
  }

 private:
  int rank_ = 0, size_ = 1;
  int nodes_ = 1, first_node_ranks_ = 1, local_rank_ = 0;
};

}  // namespace

Expected<std::unique_ptr<World>> StartMpiWorld() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) return Status::Internal("MPI was finalised already in this process");
  if (!initialized) {
    Status st = MpiCheck(MPI_Init(nullptr, nullptr), "MPI_Init");
    if (!st.ok()) return st;
    std::atexit(FinalizeAtExit);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  Status st = MpiCheck(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  if (st.ok()) st = MpiCheck(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  if (!st.ok()) return st;
  auto world = std::make_unique<MpiWorld>(rank, size);
  st = world->LearnHosts();
  if (!st.ok()) return st;
  return std::unique_ptr<World>(std::move(world));
}

}  // namespace trainsim::calibrate::cuda

#endif  // TRAINSIM_HAVE_MPI
