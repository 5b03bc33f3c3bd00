// The cuda backend: GEMMs through cuBLASLt, memory bandwidth through its own
// kernels and the CUDA runtime, collectives through NCCL (one process
// driving every local GPU, or one rank per GPU under an MPI launcher).
#include "calibrate/cuda/cuda_backend.h"

#include <memory>
#include <string>

#include "calibrate/cuda/device_info.h"
#include "calibrate/cuda/phases.h"
#include "calibrate/cuda/world.h"
#include "calibrate/measure.h"

namespace trainsim::calibrate {
namespace {

class CudaBackend final : public Backend {
 public:
  Expected<DeviceInfo> Probe() override {
    Status st = Setup();
    if (!st.ok()) return st;
    return cuda::DescribeDevices(*world_, device_, device_count_);
  }

  // Every rank measures GEMMs and memory on its own GPU and takes part in
  // the collectives; only rank 0 keeps what it measured.
  Status Run(const MeasurePlan& plan, Observer* observer, Measurements* out) override {
    Expected<DeviceInfo> info = Probe();
    if (!info.ok()) return info.status();
    const bool primary = world_->rank() == 0;
    Measurements not_kept;
    Measurements* sink = primary ? out : &not_kept;
    sink->device = *info;
    if (!primary) out->device = OtherRankDevice();
    const cuda::PhaseContext ctx{
        &plan, primary ? observer : nullptr, world_.get(), device_, device_count_,
        sink,  world_->size() == 1};
    for (auto phase : {cuda::MeasureGemms, cuda::MeasureMemory, cuda::MeasureCollectives}) {
      if (ctx.Stopped()) break;  // collectives stop between phases only
      Status st = phase(ctx);
      if (!st.ok()) return st;
    }
    if (ctx.Stopped()) sink->failures.push_back(InterruptedFailure());
    return Status::Ok();
  }

 private:
  // Finds the devices and joins the world (MPI) once.
  Status Setup() {
    if (world_ != nullptr) return Status::Ok();
    Expected<int> count = cuda::CountDevices();
    if (!count.ok()) return count.status();
    Expected<std::unique_ptr<cuda::World>> world = cuda::JoinWorld();
    if (!world.ok()) return world.status();
    world_ = std::move(world).value();
    device_count_ = *count;
    device_ = world_->DeviceFor(device_count_);
    return Status::Ok();
  }

  // What ranks other than 0 report: only who they are.
  DeviceInfo OtherRankDevice() const {
    DeviceInfo info;
    info.backend = "cuda";
    info.name = "mpi rank " + std::to_string(world_->rank());
    return info;
  }

  std::unique_ptr<cuda::World> world_;
  int device_count_ = 0;
  int device_ = 0;  // this process's: 0, or the local rank's under MPI
};

}  // namespace

std::unique_ptr<Backend> MakeCudaBackend() { return std::make_unique<CudaBackend>(); }

}  // namespace trainsim::calibrate
