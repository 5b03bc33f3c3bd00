// A PyTorch profiler (Kineto) trace, read back (docs/observe.md sections 1 and 3a).
//
// The Chrome-trace JSON that torch.profiler's export_chrome_trace writes: a
// "traceEvents" array of complete events ("ph": "X") with a category ("cat"):
// GPU kernels ("kernel"), step annotations ("user_annotation" /
// "gpu_user_annotation" named "ProfilerStep#N"), CPU ops and the rest. The file
// is read as a stream (a SAX parse that keeps one event at a time), so a
// trace of gigabytes is read in bounded memory. Kernels are sorted into
// communication (NCCL's), GEMM (cuBLAS / CUTLASS names), attention (flash /
// fused attention) and other compute by name; each step's wall time, kernel
// time per kind, and the communication time not overlapped by any compute
// kernel (exposed) are summed per device.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainsim::observe {

enum class KernelKind { kGemm, kAttention, kComm, kOther };
const char* ToString(KernelKind k);  // "gemm", "attention", "comm", "other"
// The kind of a GPU kernel from its name (ncclDevKernel_* / ncclKernel_* are communication, and
// so are trainsim-train's mpi_* waits;
// names with gemm, cutlass, xmma, cublas are GEMMs; flash / fmha / attention are attention).
KernelKind ClassifyKernel(std::string_view name);

// A GEMM whose shape the trace records (args "M", "N", "K": trainsim-train's gemm_fp32).
struct GemmSample {
  double m = 0, n = 0, k = 0;
  double seconds = 0;
};

// A collective whose size the trace records (PyTorch's record_param_comms args, a Chakra
// COMM_COLL_NODE's comm_size): its kind as trainsim names collectives ("all_reduce",
// "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv", ...), its bytes per rank,
// the group's ranks (0 = not recorded) and its kernel's time.
struct CommSample {
  std::string op;
  double bytes = 0;
  int group_ranks = 0;
  double seconds = 0;
  std::vector<int> group;  // the group's global ranks ("Process Group Ranks"); empty: not recorded
};

struct TraceStep {
  int64_t step = 0;                   // N of "ProfilerStep#N"
  double start_us = 0;                // of the annotation
  double wall_s = 0;                  // the annotation's duration
  double kernel_s[4] = {0, 0, 0, 0};  // busy time per KernelKind (overlaps within a kind merged)
  double exposed_comm_s = 0;          // communication kernels' time when no compute kernel ran
  double compute_s = 0;               // when any compute kernel (GEMM, attention, other) ran
  double idle_s = 0;                  // when no kernel ran: bubbles, input waits, host work, copies
  std::vector<GemmSample> gemms;      // the step's GEMMs with a recorded shape
  std::vector<CommSample> comms;      // the step's collectives with a recorded size
};

// One kernel of a step, for drawing it: its kind and its span in seconds from the step's start.
struct StepKernel {
  KernelKind kind = KernelKind::kOther;
  double start_s = 0, end_s = 0;
};

struct KinetoTrace {
  // The kernels of the last step (clipped to it), for a timeline of one measured step; the
  // other steps keep only their sums.
  std::vector<StepKernel> last_step;
  std::string file;
  int64_t events = 0;   // complete events read
  int64_t kernels = 0;  // of them GPU kernels
  int device_pid = -1;  // the device the steps were summed on (the first with kernels)
  std::string device;   // deviceProperties[0].name ("NVIDIA H100 80GB HBM3"), "" when absent
  int rank = -1;        // distributedInfo.rank, -1 when absent
  int world_size = 0;   // distributedInfo.world_size: the job's ranks, 0 when absent
  std::vector<TraceStep> steps;  // in order of their start
};

// One kernel of a trace, in microseconds from the trace's origin; m, n, k a GEMM's shape (0 =
// not recorded); comm_op non-empty for a collective whose size was recorded (comm_bytes).
struct TimedKernel {
  double start_us = 0, end_us = 0;
  KernelKind kind = KernelKind::kOther;
  double m = 0, n = 0, k = 0;
  std::string comm_op;
  double comm_bytes = 0;
  int comm_group_ranks = 0;
  std::vector<int> comm_group;
};

// One step's span (a ProfilerStep#N annotation or what another format marks as a step).
struct StepSpan {
  int64_t step = 0;
  double start_us = 0, dur_us = 0;
};

// The steps of one device: per span, its kernels (clipped to it) summed by kind, the exposed
// communication, compute and idle time, and the GEMMs and collectives that lie wholly inside it.
// Any order of input; the steps come out in order of their start. `last_step`, when given, gets
// the last step's kernels.
std::vector<TraceStep> SumSteps(std::vector<TimedKernel> kernels, std::vector<StepSpan> spans,
                                std::vector<StepKernel>* last_step = nullptr);

// Reads a trace file. Errors: "FILE:LINE:COL: ..." for JSON that does not parse (a cut
// file), "FILE: no traceEvents array", "FILE: no ProfilerStep#N annotation" (profile with
// torch.profiler's schedule and prof.step(), or give the steps another way).
Expected<KinetoTrace> LoadKinetoTrace(const std::string& path);
// The same from the trace's text; `name` names it in errors.
Expected<KinetoTrace> ParseKinetoTrace(std::string_view text, const std::string& name);

}  // namespace trainsim::observe
