// The Transport over MPI: point-to-point on MPI_COMM_WORLD, replica sums on
// a communicator per pipeline stage (MPI_Comm_split by stage), nonblocking
// (MPI_Isend, MPI_Iallreduce) where the interface says "started". Only in
// the trainsim-train executable: it needs MPI_Init before construction and
// must be destroyed before MPI_Finalize.
#pragma once

#include <mpi.h>

#include <vector>

#include "launch/local/trainer.h"
#include "launch/local/transport.h"

namespace trainsim::local {

class MpiTransport : public Transport {
 public:
  explicit MpiTransport(const RankLayout& layout);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  void Send(int to, int tag, const float* data, int64_t count) override;
  void Receive(int from, int tag, float* data, int64_t count) override;
  void WaitSends() override;
  void StartReplicaSum(float* data, int64_t count) override;
  void WaitReplicaSums() override;
  double ReplicaSum(double value) override;
  void Barrier() override;
  void MaxOverAll(double* values, int count) override;

 private:
  int dp_;
  MPI_Comm stage_ = MPI_COMM_NULL;
  std::vector<MPI_Request> sends_, sums_;
};

}  // namespace trainsim::local
