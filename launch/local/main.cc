// trainsim-train: one rank of a local training run, started by mpirun (or
// alone as a world of one). docs/local-run.md has the config, the output and
// the exit codes: 0 done, 1 failed, 2 bad config or usage or a checkpoint
// refused, 130 stopped by a signal after a step.
#include <mpi.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/sanitizer_mpi.h"
#include "core/scenario.h"
#include "launch/local/cuda/cuda_backend.h"
#include "launch/local/mpi_transport.h"
#include "launch/local/report.h"
#include "launch/local/run_config.h"
#include "launch/local/trace.h"
#include "launch/local/trainer.h"
#if TRAINSIM_LOCAL_NCCL
#include "launch/local/cuda/nccl_transport.h"
#endif

namespace trainsim::local {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

void OnStopSignal(int signal) { g_stop_signal = signal; }

// SIGINT, SIGTERM and SIGUSR1 ask for a stop after the current step. mpirun
// forwards SIGUSR1 to every rank at once; on SIGINT or SIGTERM it kills the
// ranks itself after odls_base_sigkill_timeout (docs/local-run.md section 7).
void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signal : {SIGINT, SIGTERM, SIGUSR1}) sigaction(signal, &action, nullptr);
}

constexpr char kUsage[] =
    "usage: trainsim-train --config FILE [--FIELD VALUE ...]\n"
    "       trainsim-train --FIELD VALUE ...\n"
    "One rank of a local training run: start it with mpirun -np (pp x dp). FIELDs are those of\n"
    "the run config (docs/local-run.md): layers, hidden, heads, ffn_hidden, seq_len, vocab,\n"
    "micro_batch, global_batch, pp, steps, lr, seed, checkpoint_every, checkpoint_dir, resume,\n"
    "warmup_steps, schedule, bucket_mb, dp, tp, backend. A flag overrides the file's field;\n"
    "a flag without a value is true (--resume).\n";

struct Args {
  std::string config;
  std::vector<std::pair<std::string, std::string>> sets;
  bool help = false;
};

Expected<Args> ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--help" || word == "-h") {
      args.help = true;
    } else if (word.rfind("--", 0) == 0 && word.size() > 2) {
      // A flag with no value (at the end, or before another flag) is true: --resume.
      const bool bare = i + 1 == argc || std::string(argv[i + 1]).rfind("--", 0) == 0;
      std::string value = bare ? "true" : argv[++i];
      if (word == "--config") {
        args.config = value;
      } else {
        args.sets.emplace_back(word.substr(2), value);
      }
    } else {
      return Status::InvalidInput("unexpected argument " + word + " (see --help)");
    }
  }
  if (!args.help && args.config.empty() && args.sets.empty()) {
    return Status::InvalidInput("no run config: give --config FILE (see --help)");
  }
  return args;
}

double TotalParameters(const RunConfig& c) {
  const double h = c.hidden;
  return 2 * h * c.vocab + c.layers * (4 * h * h + 2 * h * c.ffn_hidden);
}

class PrintingObserver : public TrainObserver {
 public:
  // `trace`: where each step's span goes as a ProfilerStep#N annotation, or null.
  PrintingObserver(const RunConfig& c, const RankLayout& layout, TraceRecorder* trace)
      : c_(c), layout_(layout), trace_(trace) {}
  void OnStart(int first_step, int64_t) override {
    if (trace_) step_start_us_ = trace_->NowUs();
    if (layout_.rank != 0) return;
    const int m = static_cast<int>(MicrobatchesPerPipeline(c_.global_batch, c_.dp, c_.micro_batch));
    std::fprintf(stderr,
                 "trainsim-train: %d ranks (pp %d x dp %d), %d microbatches of %d x %d tokens per "
                 "replica and step (%s), %.3gM parameters; steps %d..%d\n",
                 layout_.world, c_.pp, c_.dp, m, c_.micro_batch, c_.seq_len,
                 ToString(c_.schedule).c_str(), TotalParameters(c_) / 1e6, first_step, c_.steps);
    if (first_step > 1) {
      std::fprintf(stderr, "trainsim-train: resumed from the checkpoint of step %d in %s\n",
                   first_step - 1, c_.checkpoint_dir.c_str());
    } else if (c_.resume) {
      std::fprintf(stderr, "trainsim-train: no checkpoint in %s yet; starting from step 1\n",
                   c_.checkpoint_dir.c_str());
    }
  }
  void OnStep(const StepResult& step) override {
    if (trace_) {
      const double now = trace_->NowUs();
      trace_->Step(step.step, step_start_us_, now);
      step_start_us_ = now;
    }
    if (!layout_.reports()) return;
    std::printf("%s\n", StepLine(step).c_str());
    std::fflush(stdout);
  }
  void OnCheckpoint(int step) override {
    if (layout_.rank != 0) return;
    std::fprintf(stderr, "trainsim-train: checkpoint of step %d written to %s\n", step,
                 c_.checkpoint_dir.c_str());
  }

 private:
  const RunConfig& c_;
  const RankLayout& layout_;
  TraceRecorder* trace_;
  double step_start_us_ = 0;
};

// Where a rank's tensors live and how they move: the host's memory and
// MPI, or one GPU's memory (CudaOps) and NCCL.
struct RankBackend {
  std::unique_ptr<Ops> ops;
  std::unique_ptr<Transport> transport;
};

// This process's rank among those on its node (Open MPI says it; else 0).
int LocalRank() {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  return local ? std::atoi(local) : 0;
}

// Collective: every rank gets the same answer (the fewest GPUs any rank sees).
Expected<RankBackend> CudaBackend(const RankLayout& layout) {
  if (!BuiltWithCuda()) {
    return Status::InvalidInput(
        "backend cuda: this trainsim-train was built without CUDA (nvcc and cuBLAS were not "
        "found when it was configured; see docs/local-run.md section 8)");
  }
  int devices = VisibleCudaDevices();
  MPI_Allreduce(MPI_IN_PLACE, &devices, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (devices == 0) return Status::InvalidInput("backend cuda: no CUDA device is visible");
  if (layout.world > 1 && !TRAINSIM_LOCAL_NCCL) {
    return Status::InvalidInput(
        "backend cuda: " + std::to_string(layout.world) +
        " ranks need NCCL, and this trainsim-train was built without it (configure with "
        "-DNCCL_ROOT=DIR); one GPU (pp = dp = 1) trains without it");
  }
  RankBackend b;
  b.ops = MakeCudaOps(LocalRank() % devices);
#if TRAINSIM_LOCAL_NCCL
  if (layout.world > 1) {
    b.transport = std::make_unique<NcclTransport>(layout, static_cast<CudaOps&>(*b.ops));
  }
#endif
  // One rank moves no tensors: MPI's transport only agrees on the stop and the times.
  if (!b.transport) b.transport = std::make_unique<MpiTransport>(layout);
  return b;
}

Expected<RankBackend> MakeBackend(const RunConfig& c, const RankLayout& layout) {
  if (c.backend == Backend::kCuda) return CudaBackend(layout);
  return RankBackend{std::make_unique<CpuOps>(), std::make_unique<MpiTransport>(layout)};
}

int ExitCode(const Status& s) { return s.code() == Status::Code::kInvalidInput ? 2 : 1; }

// After MPI_Init; returns the exit code.
int RunRank(int argc, char** argv, int rank, int world) {
  Expected<Args> args = ParseArgs(argc, argv);
  if (!args.ok() || args->help) {
    if (rank == 0) {
      if (!args.ok()) std::fprintf(stderr, "trainsim-train: %s\n", args.status().message().c_str());
      std::fputs(kUsage, args.ok() ? stdout : stderr);
    }
    return args.ok() ? 0 : 2;
  }
  Expected<RunConfig> config = RunConfigFromArgs(args->config, args->sets);
  Status layout_ok = config.ok() ? ResolveLayout(&*config, world) : config.status();
  if (!layout_ok.ok()) {
    if (rank == 0) std::fprintf(stderr, "trainsim-train: %s\n", layout_ok.message().c_str());
    return 2;
  }
  const RankLayout layout = RankLayout::Of(rank, world, config->pp);
  Expected<RankBackend> backend = MakeBackend(*config, layout);
  if (!backend.ok()) {
    if (rank == 0) std::fprintf(stderr, "trainsim-train: %s\n", backend.status().message().c_str());
    return 2;
  }
  // Rank 0's trace (config trace_file): its kernels, waits and steps.
  std::unique_ptr<TraceRecorder> trace;
  if (!config->trace_file.empty() && rank == 0) {
    trace = std::make_unique<TraceRecorder>();
    backend->ops = TracingOps(std::move(backend->ops), trace.get());
    backend->transport = TracingTransport(std::move(backend->transport), trace.get());
  }
  PrintingObserver observer(*config, layout, trace.get());
  Expected<TrainResult> result = Train(*config, layout, *backend->transport, *backend->ops,
                                       observer, [] { return g_stop_signal != 0; });
  if (trace) {
    if (Status st = trace->Write(config->trace_file, rank); !st.ok()) {
      std::fprintf(stderr, "trainsim-train: %s\n", st.message().c_str());
    }
  }
  if (!result.ok()) {
    const Status& s = result.status();
    const bool everyone_has_it = s.code() == Status::Code::kInvalidInput;
    if (!s.message().empty() && (rank == 0 || !everyone_has_it)) {
      std::fprintf(stderr, "trainsim-train: %s%s\n",
                   everyone_has_it ? "" : ("rank " + std::to_string(rank) + ": ").c_str(),
                   s.message().c_str());
    }
    return ExitCode(s);
  }
  if (layout.reports()) {
    std::printf("%s\n", SummaryLine(Summarize(result->steps, config->warmup_steps)).c_str());
    std::fflush(stdout);
  }
  if (result->interrupted) {
    if (rank == 0) {
      const int step = result->steps.empty() ? 0 : result->steps.back().step;
      const std::string checkpoint =
          result->checkpoint_step > 0
              ? "the last checkpoint is at step " + std::to_string(result->checkpoint_step) +
                    "; run again with resume to continue"
          : config->checkpoint_every > 0 ? std::string("no checkpoint was written yet")
                                         : std::string("no checkpoints (checkpoint_every is 0)");
      std::fprintf(stderr, "trainsim-train: interrupted at step %d; %s\n", step,
                   checkpoint.c_str());
    }
    return 130;
  }
  return 0;
}

}  // namespace
}  // namespace trainsim::local

#ifdef TRAINSIM_SANITIZE
// Every run starts MPI (core/sanitizer_mpi.h).
extern "C" const char* __asan_default_options() { return trainsim::kSlowUnwindOptions; }
extern "C" const char* __lsan_default_suppressions() { return trainsim::kOpenMpiLeakSuppressions; }
extern "C" const char* __lsan_default_options() { return trainsim::kLeakOptions; }
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  trainsim::local::InstallStopHandlers();
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const int code = trainsim::local::RunRank(argc, argv, rank, world);
  MPI_Finalize();
  return code;
}
