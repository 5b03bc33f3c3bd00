#include "calibrate/cuda/cuda_util.h"

#include <algorithm>
#include <cstdio>
#include <thread>

namespace trainsim::calibrate::cuda {

Status CudaCheck(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return Status::Ok();
  return Status::Internal(what + ": " + cudaGetErrorString(err));
}

std::string FormatBytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.4g %s", bytes, kUnits[unit]);
  return text;
}

Status RecordFailure(Measurements* out, const std::string& what, const Status& error) {
  out->failures.push_back({what, error.message()});
  (void)cudaGetLastError();  // a non-sticky error (out of memory) ends here
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {  // reported once by an asynchronous failure, or sticky
    (void)cudaGetLastError();
    err = cudaDeviceSynchronize();
  }
  return CudaCheck(err, "the CUDA device is unusable after the failure of " + what);
}

Expected<DeviceMemory> AllocateDevice(size_t bytes) {
  void* p = nullptr;
  Status s = CudaCheck(cudaMalloc(&p, bytes), "cudaMalloc(" + FormatBytes(bytes) + ")");
  if (!s.ok()) return s;
  return DeviceMemory(p);
}

Expected<PinnedMemory> AllocatePinned(size_t bytes) {
  void* p = nullptr;
  Status s = CudaCheck(cudaHostAlloc(&p, bytes, cudaHostAllocDefault),
                       "cudaHostAlloc(" + FormatBytes(bytes) + ")");
  if (!s.ok()) return s;
  return PinnedMemory(p);
}

Expected<Stream> CreateStream() {
  cudaStream_t s = nullptr;
  Status st = CudaCheck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  if (!st.ok()) return st;
  return Stream(s);
}

Expected<Event> CreateEvent() {
  cudaEvent_t e = nullptr;
  Status st = CudaCheck(cudaEventCreate(&e), "cudaEventCreate");
  if (!st.ok()) return st;
  return Event(e);
}

namespace {

// events[s][i]: the i-th of `count` events of stream s, created on its device.
using EventGrid = std::vector<std::vector<Event>>;

Expected<EventGrid> CreateEvents(const std::vector<DeviceStream>& streams, int count) {
  EventGrid grid(streams.size());
  for (size_t s = 0; s < streams.size(); ++s) {
    Status st = CudaCheck(cudaSetDevice(streams[s].device), "cudaSetDevice");
    if (!st.ok()) return st;
    for (int i = 0; i < count; ++i) {
      Expected<Event> e = CreateEvent();
      if (!e.ok()) return e.status();
      grid[s].push_back(std::move(e).value());
    }
  }
  return grid;
}

Status RecordOnAll(const std::vector<DeviceStream>& streams, const EventGrid& grid, int i) {
  for (size_t s = 0; s < streams.size(); ++s) {
    Status st = CudaCheck(cudaSetDevice(streams[s].device), "cudaSetDevice");
    if (st.ok()) {
      st = CudaCheck(cudaEventRecord(grid[s][i].get(), streams[s].stream), "cudaEventRecord");
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

// Seconds of run i: the slowest stream's time from event i to event i + 1.
Expected<std::vector<double>> SlowestIntervals(const EventGrid& grid, int runs) {
  std::vector<double> seconds(runs, 0.0);
  for (const std::vector<Event>& events : grid) {
    for (int i = 0; i < runs; ++i) {
      float ms = 0;
      Status st = CudaCheck(cudaEventElapsedTime(&ms, events[i].get(), events[i + 1].get()),
                            "cudaEventElapsedTime");
      if (!st.ok()) return st;
      seconds[i] = std::max(seconds[i], ms * 1e-3);
    }
  }
  return seconds;
}

// Waits for `event`; with `poll`, by querying it and calling `poll` in
// between, so that an error `poll` finds ends the wait.
Status WaitFor(cudaEvent_t event, const std::function<Status()>& poll) {
  if (!poll) return CudaCheck(cudaEventSynchronize(event), "waiting for the timed runs");
  for (;;) {
    const cudaError_t err = cudaEventQuery(event);
    if (err == cudaSuccess) return Status::Ok();
    if (err != cudaErrorNotReady) return CudaCheck(err, "waiting for the timed runs");
    (void)cudaGetLastError();  // "not ready" must not surface at the next launch
    Status st = poll();
    if (!st.ok()) return st;
    std::this_thread::yield();
  }
}

}  // namespace

Expected<std::vector<double>> TimeRuns(const std::vector<DeviceStream>& streams, int warmup,
                                       int repetitions, const std::function<Status()>& launch,
                                       const std::function<Status()>& poll) {
  const int runs = std::max(1, repetitions);
  Expected<EventGrid> grid = CreateEvents(streams, runs + 1);
  if (!grid.ok()) return grid.status();
  for (int i = 0; i < warmup; ++i) {
    Status st = launch();
    if (!st.ok()) return st;
  }
  for (int i = 0; i <= runs; ++i) {
    Status st = i == 0 ? Status::Ok() : launch();
    if (st.ok()) st = RecordOnAll(streams, *grid, i);
    if (!st.ok()) return st;
  }
  for (const std::vector<Event>& events : *grid) {
    Status st = WaitFor(events[runs].get(), poll);
    if (!st.ok()) return st;
  }
  return SlowestIntervals(*grid, runs);
}

}  // namespace trainsim::calibrate::cuda
