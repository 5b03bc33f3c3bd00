// NCCL communicators for the collective phase (TRAINSIM_HAVE_NCCL builds
// only): the ranks of one communicator that this process drives, each with
// its device and stream.
#pragma once

#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "calibrate/cuda/cuda_util.h"
#include "calibrate/cuda/world.h"
#include "core/status.h"

namespace trainsim::calibrate::cuda {

// Ok for ncclSuccess, else Internal("<what>: <NCCL's message> (<its last error>)").
Status NcclCheck(ncclResult_t result, const std::string& what);

struct LocalRank {
  int device = 0;
  int rank = 0;  // in the communicator
  ncclComm_t comm = nullptr;
  Stream stream;
};

// All ranks of a communicator in one process (ncclCommInitAll), or this
// process's one rank of a communicator across an MPI world. Destruction
// finalises and destroys the communicators, or aborts them once marked
// broken (after an NCCL error); the ranks of an MPI world must agree on it.
class Communicator {
 public:
  explicit Communicator(int size) : size_(size) {}
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int size() const { return size_; }  // ranks in total
  std::vector<LocalRank>& local() { return local_; }
  std::vector<DeviceStream> Streams() const;
  // The first asynchronous error of a local rank's communicator (a network
  // or peer failure), or ok.
  Status AsyncError() const;
  void MarkBroken() { broken_ = true; }

 private:
  int size_;
  bool broken_ = false;
  std::vector<LocalRank> local_;
};

// Devices 0 .. ranks-1 of this process.
Expected<std::unique_ptr<Communicator>> ConnectLocal(int ranks);
// One rank per process of `world`, this one on `device`. Collective: every
// rank calls it.
Expected<std::unique_ptr<Communicator>> ConnectAcrossProcesses(World& world, int device);

}  // namespace trainsim::calibrate::cuda
