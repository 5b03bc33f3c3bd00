// What the trainer needs from the other ranks, and nothing more: messages to
// and from pipeline neighbours, sums over the data-parallel replicas of this
// rank's stage, and small collectives over all ranks. MpiTransport
// (trainsim-train) is the real one; SoloTransport serves a world of one rank
// (tests, and runs without mpirun). Calls are collective where the comments
// say so: every rank of the group makes them in the same order.
#pragma once

#include <cstdint>

namespace trainsim::local {

class Transport {
 public:
  virtual ~Transport() = default;

  // To world rank `to`: returns at once; `data` must stay unchanged until
  // WaitSends returns.
  virtual void Send(int to, int tag, const float* data, int64_t count) = 0;
  // From world rank `from`: returns when the message is in `data`.
  virtual void Receive(int from, int tag, float* data, int64_t count) = 0;
  virtual void WaitSends() = 0;

  // Collective over the replicas of this rank's stage: sums `data` in place
  // over them, started now and finished when WaitReplicaSums returns.
  virtual void StartReplicaSum(float* data, int64_t count) = 0;
  virtual void WaitReplicaSums() = 0;
  virtual double ReplicaSum(double value) = 0;

  // Collective over all ranks.
  virtual void Barrier() = 0;
  // values[i] = the largest values[i] over all ranks.
  virtual void MaxOverAll(double* values, int count) = 0;
};

// One rank: no neighbours, no replicas; sums and maxima are the identity.
class SoloTransport : public Transport {
 public:
  void Send(int, int, const float*, int64_t) override {}
  void Receive(int, int, float*, int64_t) override {}
  void WaitSends() override {}
  void StartReplicaSum(float*, int64_t) override {}
  void WaitReplicaSums() override {}
  double ReplicaSum(double value) override { return value; }
  void Barrier() override {}
  void MaxOverAll(double*, int) override {}
};

}  // namespace trainsim::local
