// Process machinery of the cpu backend: memory shared between processes, a
// barrier between processes that gives up at a deadline, and a group of
// forked worker processes ("devices") supervised by the caller.
//
// Contract of RunWorkers: each worker body runs in a forked child that leaves
// through _exit() (it never returns into the caller's code and never runs
// atexit handlers or buffered-stdio flushes). The parent only supervises: it
// never waits on a barrier itself, so a worker that dies or gets stuck becomes
// an error, never a hang. When RunWorkers returns, every child it forked has
// been reaped (killed first if needed). A group with no more workers than
// the CPUs the caller may use has rank r pinned to the r-th of those CPUs
// (one core per "device"); a larger group is left to the scheduler. Call it
// from a single-threaded process, or one whose other threads hold no locks:
// the children allocate. Linux only (futex, prctl, sched_setaffinity).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"

namespace trainsim::calibrate::cpu {

using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC: the same in every process

// Zero-filled memory shared with the processes forked after it was mapped
// (mmap MAP_SHARED | MAP_ANONYMOUS); the destructor unmaps it. Move-only.
class SharedMemory {
 public:
  // An error when the kernel refuses the mapping.
  static Expected<SharedMemory> Map(size_t bytes);

  SharedMemory() = default;
  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory();

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void Unmap();
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// A reusable barrier for `parties` processes, constructed in SharedMemory
// before the fork. Waiters spin for 20 us, yield for 100 us, then sleep on a
// futex; Wait returns an error at the deadline instead of blocking forever.
class SharedBarrier {
 public:
  explicit SharedBarrier(int parties) : parties_(static_cast<uint32_t>(parties)) {}
  Status Wait(Clock::time_point deadline);

 private:
  std::atomic<uint32_t> arrived_{0};
  std::atomic<uint32_t> generation_{0};  // the futex word; bumped by the last arrival
  std::atomic<uint32_t> sleepers_{0};    // waiters inside FUTEX_WAIT
  const uint32_t parties_;
};

// What a worker body sees: its rank, the group size and the group's barrier.
class Worker {
 public:
  Worker(int rank, int ranks, SharedBarrier* barrier, Clock::time_point deadline)
      : rank_(rank), ranks_(ranks), barrier_(barrier), deadline_(deadline) {}
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  // Waits until every worker of the group has called Sync as often; an error
  // at the group's deadline (a peer died or is stuck).
  Status Sync() const;

 private:
  int rank_, ranks_;
  SharedBarrier* barrier_;
  Clock::time_point deadline_;
};

// Runs in a child; a non-ok Status fails the whole group with its message.
using WorkerBody = std::function<Status(const Worker&)>;

// Forks `ranks` workers running `body` and waits for all of them. Returns ok
// when every body returned ok; otherwise the first errors seen: a body's
// Status ("rank 1: ..."), a worker that exited or was killed ("rank 1 exited
// with status 3"), or the deadline. The other workers are then killed.
Status RunWorkers(int ranks, Clock::time_point deadline, const WorkerBody& body);

// Bytes of RAM the kernel reports as available for new allocations
// (MemAvailable in /proc/meminfo); 0 when unknown.
double AvailableMemoryBytes();

// An error ("needs 4.0 GiB for <what>, 2.1 GiB available") when `bytes` of
// new memory exceed 90% of AvailableMemoryBytes(); ok when that is unknown.
// Checked before allocating, so that a measurement fails instead of waking
// the OOM killer.
Status CheckMemoryAvailable(double bytes, const std::string& what);

}  // namespace trainsim::calibrate::cpu
