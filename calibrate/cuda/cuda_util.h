// CUDA runtime helpers shared by the cuda backend's phases: errors as
// Status, owning handles that free on every path, event timing, and the
// clean-up after a measurement failed. Nothing here throws or aborts.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "calibrate/measure.h"
#include "core/status.h"

namespace trainsim::calibrate::cuda {

// Ok for cudaSuccess, else Internal("<what>: <the runtime's message>").
Status CudaCheck(cudaError_t err, const std::string& what);

// "8 B", "4 KiB", "256 MiB", "1.5 GiB": sizes in progress items and failures.
std::string FormatBytes(double bytes);

// Records {what, error.message()} in out->failures, then clears the
// runtime's last error so a failed allocation does not resurface at the
// next kernel launch. Returns an error only when the device is unusable
// afterwards (a sticky error such as an illegal address): the run must stop.
Status RecordFailure(Measurements* out, const std::string& what, const Status& error);

// Owning handles. Destruction ignores errors: nothing can be done then.
struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};
struct PinnedFree {
  void operator()(void* p) const { cudaFreeHost(p); }
};
struct StreamDestroy {
  void operator()(cudaStream_t s) const { cudaStreamDestroy(s); }
};
struct EventDestroy {
  void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
};
using DeviceMemory = std::unique_ptr<void, DeviceFree>;  // cudaMalloc'd
using PinnedMemory = std::unique_ptr<void, PinnedFree>;  // cudaHostAlloc'd
using Stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDestroy>;
using Event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, EventDestroy>;

// On the current device. Errors name the call and the size.
Expected<DeviceMemory> AllocateDevice(size_t bytes);
Expected<PinnedMemory> AllocatePinned(size_t bytes);
Expected<Stream> CreateStream();  // non-blocking
Expected<Event> CreateEvent();

// A stream and the device it belongs to.
struct DeviceStream {
  int device = 0;
  cudaStream_t stream = nullptr;
};

// Calls `launch` (which enqueues one run of the measured work on every
// stream) `warmup` times, then `repetitions` times back to back with an
// event recorded on each stream before every timed run and after the last.
// Waits for the streams, and returns each timed run's seconds: the slowest
// stream's time between its two events. `repetitions` < 1 counts as 1.
// `poll`, when given, is called again and again while waiting, and an error
// from it ends the wait: NCCL reports a failed network or peer only that way
// (ncclCommGetAsyncError) while its kernels go on waiting for ever.
Expected<std::vector<double>> TimeRuns(const std::vector<DeviceStream>& streams, int warmup,
                                       int repetitions, const std::function<Status()>& launch,
                                       const std::function<Status()>& poll = nullptr);

}  // namespace trainsim::calibrate::cuda
