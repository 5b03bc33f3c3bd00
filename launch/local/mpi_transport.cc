#include "launch/local/mpi_transport.h"

#include <algorithm>

namespace trainsim::local {
namespace {
// MPI counts are ints: longer buffers go in pieces of this many floats.
constexpr int64_t kPiece = int64_t{1} << 30;
}  // namespace

MpiTransport::MpiTransport(const RankLayout& layout) : dp_(layout.dp) {
  MPI_Comm_split(MPI_COMM_WORLD, layout.stage, layout.replica, &stage_);
}

MpiTransport::~MpiTransport() {
  WaitSends();
  WaitReplicaSums();
  if (stage_ != MPI_COMM_NULL) MPI_Comm_free(&stage_);
}

void MpiTransport::Send(int to, int tag, const float* data, int64_t count) {
  for (int64_t at = 0; at < count; at += kPiece) {
    MPI_Request r;
    MPI_Isend(data + at, static_cast<int>(std::min(kPiece, count - at)), MPI_FLOAT, to, tag,
              MPI_COMM_WORLD, &r);
    sends_.push_back(r);
  }
}

void MpiTransport::Receive(int from, int tag, float* data, int64_t count) {
  for (int64_t at = 0; at < count; at += kPiece) {
    MPI_Recv(data + at, static_cast<int>(std::min(kPiece, count - at)), MPI_FLOAT, from, tag,
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

void MpiTransport::WaitSends() {
  MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE);
  sends_.clear();
}

// Open MPI moves nonblocking collectives only inside MPI calls: testing the
// ones in flight whenever another starts lets them progress during the
// backward pass.
void MpiTransport::StartReplicaSum(float* data, int64_t count) {
  if (dp_ == 1) return;
  for (int64_t at = 0; at < count; at += kPiece) {
    MPI_Request r;
    MPI_Iallreduce(MPI_IN_PLACE, data + at, static_cast<int>(std::min(kPiece, count - at)),
                   MPI_FLOAT, MPI_SUM, stage_, &r);
    sums_.push_back(r);
  }
  int done = 0;
  MPI_Testall(static_cast<int>(sums_.size()), sums_.data(), &done, MPI_STATUSES_IGNORE);
}

void MpiTransport::WaitReplicaSums() {
  MPI_Waitall(static_cast<int>(sums_.size()), sums_.data(), MPI_STATUSES_IGNORE);
  sums_.clear();
}

double MpiTransport::ReplicaSum(double value) {
  double sum = value;
  if (dp_ > 1) MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, stage_);
  return sum;
}

void MpiTransport::Barrier() { MPI_Barrier(MPI_COMM_WORLD); }

void MpiTransport::MaxOverAll(double* values, int count) {
  MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

}  // namespace trainsim::local
