// Empty unless TRAINSIM_HAVE_NCCL.
#include "core/status.h"

#if TRAINSIM_HAVE_NCCL

#include <numeric>

#include "calibrate/cuda/nccl_comm.h"

namespace trainsim::calibrate::cuda {
namespace {

// Gives every local rank its own stream on its device.
Status AttachStreams(Communicator* c) {
  for (LocalRank& r : c->local()) {
    Status st = CudaCheck(cudaSetDevice(r.device), "cudaSetDevice");
    Expected<Stream> stream = st.ok() ? CreateStream() : Expected<Stream>(st);
    if (!stream.ok()) return stream.status();
    r.stream = std::move(stream).value();
  }
  return Status::Ok();
}

// Rank 0's fresh id, on every rank.
Expected<ncclUniqueId> ShareUniqueId(World& world) {
  ncclUniqueId id{};
  Status st = world.rank() == 0 ? NcclCheck(ncclGetUniqueId(&id), "ncclGetUniqueId") : Status::Ok();
  if (!world.AllOk(st.ok())) {
    return st.ok() ? Status::Internal("rank 0 could not create an NCCL id") : st;
  }
  st = world.BroadcastFromFirst(&id, sizeof id);
  if (!st.ok()) return st;
  return id;
}

}  // namespace

Status NcclCheck(ncclResult_t result, const std::string& what) {
  if (result == ncclSuccess) return Status::Ok();
  std::string text = what + ": " + ncclGetErrorString(result);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') text += " (" + std::string(last) + ")";
  return Status::Internal(text);
}

Communicator::~Communicator() {
  if (broken_) {
    for (LocalRank& r : local_) {
      if (r.comm != nullptr) ncclCommAbort(r.comm);
    }
    return;
  }
  // One thread driving several communicators finalises them in one group.
  ncclGroupStart();
  for (LocalRank& r : local_) {
    if (r.comm != nullptr) ncclCommFinalize(r.comm);
  }
  ncclGroupEnd();
  for (LocalRank& r : local_) {
    if (r.comm != nullptr) ncclCommDestroy(r.comm);
  }
}

std::vector<DeviceStream> Communicator::Streams() const {
  std::vector<DeviceStream> streams;
  for (const LocalRank& r : local_) streams.push_back({r.device, r.stream.get()});
  return streams;
}

Status Communicator::AsyncError() const {
  for (const LocalRank& r : local_) {
    ncclResult_t async = ncclSuccess;
    const ncclResult_t got = ncclCommGetAsyncError(r.comm, &async);
    if (got == ncclSuccess && async == ncclInProgress) continue;  // not an error
    Status st = NcclCheck(got != ncclSuccess ? got : async, "NCCL asynchronous error");
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Expected<std::unique_ptr<Communicator>> ConnectLocal(int ranks) {
  std::vector<ncclComm_t> comms(ranks, nullptr);
  std::vector<int> devices(ranks);
  std::iota(devices.begin(), devices.end(), 0);
  Status st = NcclCheck(ncclCommInitAll(comms.data(), ranks, devices.data()), "ncclCommInitAll");
  if (!st.ok()) {
    // The ranks whose initialisation got under way keep their communicators.
    for (ncclComm_t comm : comms) {
      if (comm != nullptr) ncclCommAbort(comm);
    }
    return st;
  }
  auto c = std::make_unique<Communicator>(ranks);
  for (int r = 0; r < ranks; ++r) c->local().push_back({devices[r], r, comms[r], nullptr});
  st = AttachStreams(c.get());
  if (!st.ok()) return st;
  return c;
}

Expected<std::unique_ptr<Communicator>> ConnectAcrossProcesses(World& world, int device) {
  Expected<ncclUniqueId> id = ShareUniqueId(world);
  if (!id.ok()) return id.status();
  ncclComm_t comm = nullptr;
  Status st = CudaCheck(cudaSetDevice(device), "cudaSetDevice");
  if (st.ok()) {
    st = NcclCheck(ncclCommInitRank(&comm, world.size(), *id, world.rank()), "ncclCommInitRank");
  }
  auto c = std::make_unique<Communicator>(world.size());
  if (comm != nullptr) c->local().push_back({device, world.rank(), comm, nullptr});
  if (st.ok()) st = AttachStreams(c.get());
  if (!world.AllOk(st.ok())) {
    c->MarkBroken();
    return st.ok() ? Status::Internal("another rank could not join the NCCL communicator") : st;
  }
  return c;
}

}  // namespace trainsim::calibrate::cuda

#endif  // TRAINSIM_HAVE_NCCL
