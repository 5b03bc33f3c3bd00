// The Transport over NCCL, on device buffers (CudaOps memory), for one
// process per GPU under mpirun. Bootstrapped over MPI: rank 0 of each
// communicator makes the ncclUniqueId and MPI_Bcast spreads it.
//
// Communicators: two over all ranks for pipeline messages, one per
// direction (activations to the next stage, gradients to the previous
// one), so that a send waiting for its receiver never holds up a message
// going the other way; and one per stage over its replicas for the gradient
// sums (ranks split by stage, as MpiTransport does). Each has its own
// stream, ordered against the compute stream with events: Send and Receive start after
// the work queued so far, Receive and WaitReplicaSums make later work wait
// for the data (they return before it has arrived: "returns when the
// message is in data" holds for everything queued after it on the ops).
// NCCL has no tags: messages between two ranks in one direction arrive in
// the order sent, which the trainer keeps (microbatch order). ReplicaSum of
// doubles, Barrier and MaxOverAll are MPI's. Needs MPI_Init before
// construction; destroy before MPI_Finalize. Errors abort with the call.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include "launch/local/cuda/cuda_ops.h"
#include "launch/local/trainer.h"
#include "launch/local/transport.h"

namespace trainsim::local {

class NcclTransport : public Transport {
 public:
  NcclTransport(const RankLayout& layout, CudaOps& ops);
  ~NcclTransport() override;
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  void Send(int to, int tag, const float* data, int64_t count) override;
  void Receive(int from, int tag, float* data, int64_t count) override;
  void WaitSends() override;
  void StartReplicaSum(float* data, int64_t count) override;
  void WaitReplicaSums() override;
  double ReplicaSum(double value) override;
  void Barrier() override;
  void MaxOverAll(double* values, int count) override;

 private:
  // A communicator with its stream.
  struct Channel {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
  };
  Channel Open(MPI_Comm group);
  // `channel` starts after the compute stream's queued work.
  void After(cudaStream_t compute, const Channel& channel);
  // The compute stream's later work waits for the channel's queued work.
  void Before(const Channel& channel, cudaStream_t compute);
  // Activations flow to higher ranks (later stages), gradients to lower ones.
  Channel& Towards(int peer) { return peer > rank_ ? forward_ : backward_; }
  Channel& From(int peer) { return peer < rank_ ? forward_ : backward_; }

  int rank_, dp_;
  cudaStream_t compute_;
  MPI_Comm stage_ = MPI_COMM_NULL;
  Channel forward_, backward_, replicas_;
  cudaEvent_t event_ = nullptr;
};

}  // namespace trainsim::local
