#include "launch/local/cuda/nccl_transport.h"

#include <cstdio>
#include <cstdlib>

namespace trainsim::local {
namespace {

void Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "trainsim-train: %s: %s\n", what, cudaGetErrorString(e));
  std::abort();
}

void Check(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return;
  std::fprintf(stderr, "trainsim-train: %s: %s\n", what, ncclGetErrorString(r));
  std::abort();
}

#define CHECK(call) Check((call), #call)

}  // namespace

NcclTransport::NcclTransport(const RankLayout& layout, CudaOps& ops)
    : rank_(layout.rank), dp_(layout.dp), compute_(ops.stream()) {
  CHECK(cudaSetDevice(ops.device()));
  CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  MPI_Comm_split(MPI_COMM_WORLD, layout.stage, layout.replica, &stage_);
  if (layout.pp > 1) {
    forward_ = Open(MPI_COMM_WORLD);
    backward_ = Open(MPI_COMM_WORLD);
  }
  if (dp_ > 1) replicas_ = Open(stage_);
}

NcclTransport::~NcclTransport() {
  for (Channel* c : {&forward_, &backward_, &replicas_}) {
    if (!c->comm) continue;
    cudaStreamSynchronize(c->stream);
    ncclCommDestroy(c->comm);
    cudaStreamDestroy(c->stream);
  }
  cudaEventDestroy(event_);
  if (stage_ != MPI_COMM_NULL) MPI_Comm_free(&stage_);
}

NcclTransport::Channel NcclTransport::Open(MPI_Comm group) {
  int rank = 0, size = 1;
  MPI_Comm_rank(group, &rank);
  MPI_Comm_size(group, &size);
  ncclUniqueId id;
  if (rank == 0) CHECK(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, group);
  Channel c;
  CHECK(ncclCommInitRank(&c.comm, size, id, rank));
  CHECK(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
  return c;
}

void NcclTransport::After(cudaStream_t compute, const Channel& channel) {
  CHECK(cudaEventRecord(event_, compute));
  CHECK(cudaStreamWaitEvent(channel.stream, event_, 0));
}

void NcclTransport::Before(const Channel& channel, cudaStream_t compute) {
  CHECK(cudaEventRecord(event_, channel.stream));
  CHECK(cudaStreamWaitEvent(compute, event_, 0));
}

void NcclTransport::Send(int to, int, const float* data, int64_t count) {
  Channel& c = Towards(to);
  After(compute_, c);
  CHECK(ncclSend(data, static_cast<size_t>(count), ncclFloat, to, c.comm, c.stream));
}

void NcclTransport::Receive(int from, int, float* data, int64_t count) {
  Channel& c = From(from);
  After(compute_, c);  // the buffer's previous contents have been used
  CHECK(ncclRecv(data, static_cast<size_t>(count), ncclFloat, from, c.comm, c.stream));
  Before(c, compute_);
}

void NcclTransport::WaitSends() {
  for (Channel* c : {&forward_, &backward_}) {
    if (c->comm) CHECK(cudaStreamSynchronize(c->stream));
  }
}

void NcclTransport::StartReplicaSum(float* data, int64_t count) {
  if (dp_ == 1) return;
  After(compute_, replicas_);
  CHECK(ncclAllReduce(data, data, static_cast<size_t>(count), ncclFloat, ncclSum, replicas_.comm,
                      replicas_.stream));
}

void NcclTransport::WaitReplicaSums() {
  if (dp_ > 1) Before(replicas_, compute_);
}

double NcclTransport::ReplicaSum(double value) {
  double sum = value;
  if (dp_ > 1) MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, stage_);
  return sum;
}

void NcclTransport::Barrier() { MPI_Barrier(MPI_COMM_WORLD); }

void NcclTransport::MaxOverAll(double* values, int count) {
  MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

}  // namespace trainsim::local
