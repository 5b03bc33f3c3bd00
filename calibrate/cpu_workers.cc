#include "calibrate/cpu_workers.h"

#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace trainsim::calibrate::cpu {
namespace {

static_assert(std::atomic<uint32_t>::is_always_lock_free && sizeof(std::atomic<uint32_t>) == 4,
              "the barrier's futex word must be a plain 32-bit word");

// A barrier waiter spins for kSpinTime, then yields its core for up to
// kYieldTime (a peer may share the core when the group has more workers
// than CPUs), then sleeps on the futex, kMaxSleep at most at a time (a
// missed wake-up costs at most this).
constexpr auto kSpinTime = std::chrono::microseconds(20);
constexpr auto kYieldTime = std::chrono::microseconds(100);
constexpr auto kMaxSleep = std::chrono::milliseconds(5);

// Exit statuses of a worker: its body returned an error (in its slot), it
// threw, or its parent was gone before it started.
constexpr int kExitBodyError = 101;
constexpr int kExitException = 102;
constexpr int kExitOrphaned = 103;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

uint32_t* FutexWord(std::atomic<uint32_t>* word) { return reinterpret_cast<uint32_t*>(word); }

// Sleeps while *word == expected, at most `timeout` (spurious returns are fine).
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, Clock::duration timeout) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  syscall(SYS_futex, FutexWord(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, FutexWord(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// The shared control block of a group: the barrier, then one error message
// slot per rank.
struct ErrorSlot {
  char message[480];
};

struct Control {
  explicit Control(int ranks) : barrier(ranks) {}
  SharedBarrier barrier;
  ErrorSlot* slots() { return reinterpret_cast<ErrorSlot*>(this + 1); }
};

size_t ControlBytes(int ranks) { return sizeof(Control) + sizeof(ErrorSlot) * ranks; }

void WriteSlot(ErrorSlot* slot, const std::string& message) {
  std::snprintf(slot->message, sizeof(slot->message), "%s", message.c_str());
}

// Pins the calling worker to the rank-th CPU of `allowed` when the group has
// at most one worker per allowed CPU. Left to itself, the scheduler often
// starts two fresh workers on one core (when the supervisor's core looks
// busy) and a 8 B collective then measures 7-100 us instead of 0.3 us.
void PinToOwnCpu(int rank, int ranks, const cpu_set_t& allowed) {
  if (ranks > CPU_COUNT(&allowed)) return;
  int seen = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || seen++ != rank) continue;
    cpu_set_t own;
    CPU_ZERO(&own);
    CPU_SET(cpu, &own);
    sched_setaffinity(0, sizeof(own), &own);  // best effort: unpinned still works
    return;
  }
}

// The child's whole life: never returns.
[[noreturn]] void RunChild(pid_t parent, const cpu_set_t& allowed, const Worker& worker,
                           const WorkerBody& body, ErrorSlot* slot) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the group dies with its supervisor
  if (getppid() != parent) _exit(kExitOrphaned);
  PinToOwnCpu(worker.rank(), worker.ranks(), allowed);
  try {
    const Status status = body(worker);
    if (status.ok()) _exit(0);
    WriteSlot(slot, status.message());
    _exit(kExitBodyError);
  } catch (...) {
    _exit(kExitException);
  }
}

// What a reaped child's wait status says, for an error message.
std::string DescribeExit(int rank, int wait_status, const ErrorSlot& slot) {
  const std::string who = "rank " + std::to_string(rank);
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return who + " was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  const int code = WEXITSTATUS(wait_status);
  if (code == kExitBodyError) return who + ": " + slot.message;
  if (code == kExitException) return who + " threw an exception";
  if (code == kExitOrphaned) return who + " found its parent gone";
  return who + " exited with status " + std::to_string(code) + " before finishing";
}

// The forked children of one group. The destructor kills and reaps those
// still unreaped, so no early return can leak a process or a zombie.
class Children {
 public:
  explicit Children(Control* control) : control_(control) {}
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  ~Children() { KillAndReap(); }

  void Add(pid_t pid) { pids_.push_back(pid); }
  // Polls until every child exited successfully (ok), one failed, or the
  // deadline passed.
  Status Wait(Clock::time_point deadline);

 private:
  // Reaps the children that have exited; the descriptions of failed ones.
  std::vector<std::string> ReapExited();
  void KillAndReap();

  Control* control_;
  std::vector<pid_t> pids_;  // by rank; 0 once reaped
};

std::vector<std::string> Children::ReapExited() {
  std::vector<std::string> failures;
  for (size_t rank = 0; rank < pids_.size(); ++rank) {
    if (pids_[rank] == 0) continue;
    int wait_status = 0;
    const pid_t r = waitpid(pids_[rank], &wait_status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) continue;
    pids_[rank] = 0;
    if (r < 0) {
      failures.push_back("rank " + std::to_string(rank) + " vanished (" + strerror(errno) + ")");
    } else if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
      failures.push_back(
          DescribeExit(static_cast<int>(rank), wait_status, control_->slots()[rank]));
    }
  }
  return failures;
}

std::string JoinFailures(const std::vector<std::string>& failures) {
  std::string joined;
  for (const std::string& f : failures) joined += (joined.empty() ? "" : "; ") + f;
  return joined;
}

Status Children::Wait(Clock::time_point deadline) {
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    const std::vector<std::string> failures = ReapExited();
    if (!failures.empty()) return Status::Internal(JoinFailures(failures));
    const size_t running = std::count_if(pids_.begin(), pids_.end(), [](pid_t p) { return p; });
    if (running == 0) return Status::Ok();
    if (Clock::now() >= deadline) {
      return Status::Internal("deadline passed with " + std::to_string(running) + " of " +
                              std::to_string(pids_.size()) +
                              " workers still running (stuck or deadlocked); killed them");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

void Children::KillAndReap() {
  for (pid_t pid : pids_) {
    if (pid != 0) kill(pid, SIGKILL);
  }
  for (pid_t& pid : pids_) {
    if (pid == 0) continue;
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid = 0;
  }
}

}  // namespace

Expected<SharedMemory> SharedMemory::Map(size_t bytes) {
  void* p = mmap(nullptr, std::max<size_t>(bytes, 1), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return Status::Internal("cannot map " + std::to_string(bytes) +
                            " bytes of shared memory: " + strerror(errno));
  }
  SharedMemory m;
  m.data_ = static_cast<std::byte*>(p);
  m.size_ = std::max<size_t>(bytes, 1);
  return m;
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  if (this != &other) {
    Unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SharedMemory::~SharedMemory() { Unmap(); }

void SharedMemory::Unmap() {
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

// Sense reversal by generation: the last arrival resets the count, then bumps
// the generation the others wait on. The seq_cst pair generation_/sleepers_
// guarantees a sleeper is either woken or sees the new generation itself.
Status SharedBarrier::Wait(Clock::time_point deadline) {
  const uint32_t generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
    arrived_.store(0, std::memory_order_relaxed);
    generation_.store(generation + 1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) FutexWakeAll(&generation_);
    return Status::Ok();
  }
  const Clock::time_point arrival = Clock::now();
  for (unsigned i = 0;; ++i) {
    if (generation_.load(std::memory_order_acquire) != generation) return Status::Ok();
    if (i % 64 != 63) {
      CpuRelax();
      continue;
    }
    const Clock::time_point now = Clock::now();
    if (now < arrival + kSpinTime) continue;
    if (now >= deadline)
      return Status::Internal("deadline passed at a barrier (a peer died or is stuck)");
    if (now < arrival + kSpinTime + kYieldTime) {
      sched_yield();
      continue;
    }
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    FutexWait(&generation_, generation, std::min<Clock::duration>(deadline - now, kMaxSleep));
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

Status Worker::Sync() const { return barrier_->Wait(deadline_); }

Status RunWorkers(int ranks, Clock::time_point deadline, const WorkerBody& body) {
  if (ranks < 1) return Status::InvalidInput("a worker group needs at least 1 rank");
  Expected<SharedMemory> shared = SharedMemory::Map(ControlBytes(ranks));
  if (!shared.ok()) return shared.status();
  Control* control = new (shared->data()) Control(ranks);
  const pid_t parent = getpid();
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(0, sizeof(allowed), &allowed);
  Children children(control);
  for (int rank = 0; rank < ranks; ++rank) {
    const pid_t pid = fork();
    if (pid < 0) return Status::Internal(std::string("fork failed: ") + strerror(errno));
    if (pid == 0) {
      RunChild(parent, allowed, Worker(rank, ranks, &control->barrier, deadline), body,
               &control->slots()[rank]);
    }
    children.Add(pid);
  }
  return children.Wait(deadline);
}

double AvailableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    double kib = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %lf kB", &kib) == 1) return kib * 1024;
  }
  return 0;
}

Status CheckMemoryAvailable(double bytes, const std::string& what) {
  const double available = AvailableMemoryBytes();
  if (available <= 0 || bytes <= 0.9 * available) return Status::Ok();
  char text[160];
  std::snprintf(text, sizeof(text), "needs %.1f GiB for %s, %.1f GiB available", bytes / 0x1p30,
                what.c_str(), available / 0x1p30);
  return Status::Internal(text);
}

}  // namespace trainsim::calibrate::cpu
