// The cuda backend's three measurement phases (gemm.cc, memory.cc,
// nccl.cc) and what each is given. A phase appends points and failures to
// ctx.out and goes on after a failed measurement; it returns an error only
// when the device is unusable and the run must stop.
#pragma once

#include <string>
#include <vector>

#include "calibrate/measure.h"
#include "core/status.h"

namespace trainsim::calibrate::cuda {

class World;

struct PhaseContext {
  const MeasurePlan* plan = nullptr;
  Observer* observer = nullptr;  // nullptr: no progress reports
  World* world = nullptr;        // the other ranks, under MPI
  int device = 0;                // this process's CUDA device, for GEMM and memory
  int device_count = 0;          // CUDA devices this process sees
  Measurements* out = nullptr;   // out->device is filled in already
  bool single_process = true;    // not under a multi-rank launcher

  void Report(const std::string& phase, int done, int total, const std::string& item) const {
    if (observer != nullptr) observer->Progress(phase, done, total, item);
  }
  // The user asked to stop. Only a single process stops early: under MPI the
  // ranks must take part in the same measurements to the end.
  bool Stopped() const {
    return single_process && observer != nullptr && observer->StopRequested();
  }
};

// GEMMs of every shape in every planned dtype that out->device.dtypes lists.
Status MeasureGemms(const PhaseContext& ctx);
// Copy, host transfer, layernorm and GELU bandwidth at every planned size.
Status MeasureMemory(const PhaseContext& ctx);
// NCCL collectives; without NCCL in the build, one failure says so.
Status MeasureCollectives(const PhaseContext& ctx);

// Dtypes a device of compute capability major.minor can run GEMMs in, in
// AllDtypes() order.
std::vector<std::string> SupportedDtypes(int major, int minor);

// "cuBLAS 13.0.2" (cuBLASLt's version), or why it is unknown.
std::string BlasVersion();
// "NCCL 2.28.9", or "none (built without NCCL)".
std::string CollectivesVersion();

}  // namespace trainsim::calibrate::cuda
