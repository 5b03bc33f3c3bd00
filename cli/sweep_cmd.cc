// `trainsim sweep`: loads the scenarios, runs planner::RunSweep with the
// simulator's evaluation, prints progress (rank 0 only under MPI) and a summary.
#include "cli/sweep_cmd.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <thread>

#include "cli/args.h"
#include "core/catalog.h"
#include "core/error_bands.h"
#include "core/units.h"
#include "planner/sweep/sweep.h"
#include "planner/sweep/sweep_eval.h"

namespace trainsim::cli {
namespace {

using planner::SweepProgress;
using planner::SweepRow;

constexpr int kOk = 0, kBadInput = 1, kInternal = 2, kInterruptedExit = 130;

const char kSweepUsage[] =
    "usage: trainsim sweep SCENARIO... [--out DIR] [--jobs N] [--simulate] [--catalog FILE]\n"
    "  SCENARIO        scenario files; one with a \"sweep\" grid stands for its points\n"
    "  --out DIR       where the journal and results.csv/.json go (default sweep-out);\n"
    "                  a sweep run again with the same DIR resumes\n"
    "  --jobs N        points evaluated at once (default: every core; docs/sweep.md)\n"
    "  --simulate      simulate each file's own configuration instead of planning it\n"
    "                  (grids are simulated either way)\n"
    "  --catalog FILE  add instance types from an extra catalog file\n";

struct SweepArgs {
  std::vector<std::string> scenarios;
  std::string out = "sweep-out";
  int jobs = 0;  // 0: the hardware threads, shared by the MPI ranks on this machine
  std::string catalog;
  bool simulate = false;  // --simulate: every file's own configuration, no plans
  bool help = false;
};

Expected<SweepArgs> ParseSweepArgs(const std::vector<std::string>& words) {
  static const std::vector<OptionSpec> kOptions = {{"--simulate"},
                                                   {"--out", "a directory"},
                                                   {"--catalog", "a file name"},
                                                   {"--jobs", "a whole number of threads"}};
  Expected<ParsedArgs> args = ParseArgs(words, kOptions);
  if (!args.ok()) return args.status();
  SweepArgs a;
  a.help = args->help();
  a.scenarios = args->positional();
  a.simulate = args->Has("--simulate");
  a.out = args->Value("--out", a.out);
  a.catalog = args->Value("--catalog");
  Expected<int> jobs =
      args->Int("--jobs", 1, std::numeric_limits<int>::max(), "a whole number of threads", 0);
  if (!jobs.ok()) return jobs.status();
  a.jobs = *jobs;
  if (a.scenarios.empty() && !a.help) return Status::InvalidInput("sweep needs scenario files");
  return a;
}

// First Ctrl-C: no new point starts, the points in flight finish and the
// sweep ends with what is journaled; a second one ends the process at once
// (the journal is safe either way).
std::atomic<bool> g_interrupted{false};
bool g_tell_interrupt = false;  // rank 0 says so
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void OnInterrupt(int) {
  g_interrupted = true;
  signal(SIGINT, SIG_DFL);
  constexpr char kMsg[] =
      "\ntrainsim: interrupted: finishing the points in flight (Ctrl-C again to stop at once)\n";
  if (g_tell_interrupt) (void)!write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
}

void CatchInterrupt(bool tell) {
  g_tell_interrupt = tell;
  struct sigaction sa = {};
  sa.sa_handler = OnInterrupt;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
}

// Called on the worker threads. A Ctrl-C reaches the whole process group, and
// SimGrid's SIGINT handler in the simulator's child process calls exit(),
// which can deadlock in malloc. Children forked here inherit SIGINT blocked
// and finish their point; the main thread still takes the signal.
void BlockInterruptOnThisThread() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

std::string Duration(double s) {
  char buf[32];
  if (s < 120) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else if (s < 7200) {
    std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / kSecondsPerHour);
  }
  return buf;
}

std::string ProgressText(const SweepProgress& p) {
  char buf[160];
  if (p.processes > 1) {
    std::snprintf(buf, sizeof buf, "sweep: rank 0 has done %d of its %d points (%d ranks)", p.done,
                  p.to_do, p.processes);
  } else {
    std::snprintf(buf, sizeof buf, "sweep: %d of %d points done", p.resumed + p.done, p.total);
  }
  std::string text = buf;
  if (p.errors > 0) text += ", " + std::to_string(p.errors) + " errors";
  if (p.done > 0) {
    std::snprintf(buf, sizeof buf, ", %.3g points/s", p.points_per_s);
    text += buf;
  }
  if (p.eta_s) text += ", ETA " + Duration(*p.eta_s);
  return text;
}

// One line on stderr that each finished point rewrites (a terminal), or one
// line per point (a file).
class ProgressLine : public planner::SweepObserver {
 public:
  ProgressLine() : tty_(isatty(STDERR_FILENO) == 1) {}
  ~ProgressLine() override {
    if (tty_ && width_ > 0) std::fputc('\n', stderr);
  }
  void Started(const SweepProgress& p) override {
    std::fprintf(
        stderr, "sweep: %d points, %d already in the journal, %d to evaluate%s\n", p.total,
        p.resumed, p.total - p.resumed,
        p.processes > 1 ? (" over " + std::to_string(p.processes) + " ranks").c_str() : "");
  }
  void PointFinished(const SweepProgress& p, const SweepRow&) override {
    std::string text = ProgressText(p);
    if (!tty_) {
      std::fprintf(stderr, "%s\n", text.c_str());
      return;
    }
    const size_t width = text.size();
    if (width < width_) text.append(width_ - width, ' ');  // wipe a longer previous line
    width_ = width;
    std::fprintf(stderr, "\r%s", text.c_str());
    std::fflush(stderr);
  }

 private:
  bool tty_;
  size_t width_ = 0;
};

Expected<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidInput(path + ": cannot read");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The scenarios as sweep points; the extra catalog and the error bands are part of every
// fingerprint (a resume with other bands would mix their columns).
Expected<planner::ScenarioSweep> LoadSweep(const SweepArgs& a, Catalog* catalog) {
  std::string extra;
  if (!a.catalog.empty()) {
    if (Status s = catalog->AddFile(a.catalog); !s.ok()) return s;
    Expected<std::string> bytes = ReadFile(a.catalog);
    if (!bytes.ok()) return bytes.status();
    extra = std::string("catalog") + '\0' + *bytes;
  }
  if (Expected<std::string> bands = ReadFile(DefaultErrorBandsPath()); bands.ok()) {
    extra += std::string("bands") + '\0' + *bands;
  }
  return planner::LoadScenarioSweep(
      a.scenarios, *catalog, extra,
      a.simulate ? planner::SweepMode::kSimulate : planner::SweepMode::kAuto);
}

int Report(const Expected<planner::SweepSummary>& result, const planner::SweepWorld& world) {
  if (!result.ok()) {
    const Status& s = result.status();
    if (world.rank() != 0 && s.message() == planner::kAnotherProcessFailed) return kInternal;
    std::fprintf(stderr, "trainsim: %s%s\n",
                 world.rank() == 0 ? "" : ("rank " + std::to_string(world.rank()) + ": ").c_str(),
                 s.message().c_str());
    return s.code() == Status::Code::kInternal ? kInternal : kBadInput;
  }
  const planner::SweepSummary& r = *result;
  if (r.interrupted) {
    if (world.rank() == 0) {
      std::fprintf(stderr,
                   "trainsim: interrupted: %d of %d points done; run the same command again to "
                   "continue\n",
                   r.done, r.total);
    }
    return kInterruptedExit;
  }
  if (world.rank() != 0) return kOk;
  std::printf(
      "sweep: %d points: %d ok, %d do not fit, %d errors (%d from the journal, %d evaluated)\n",
      r.total, r.ok, r.does_not_fit, r.errors, r.resumed, r.total - r.resumed);
  if (r.errors > 0) std::printf("the message column says what went wrong in the error rows\n");
  std::printf("results: %s, %s\n", r.results_csv.c_str(), r.results_json.c_str());
  return kOk;
}

int Sweep(const SweepArgs& a, planner::SweepWorld* world) {
  Expected<Catalog> catalog = Catalog::LoadBuiltin(Catalog::DefaultDir());
  if (!catalog.ok()) {
    return Report(Status::Internal("built-in catalog: " + catalog.status().message()), *world);
  }
  Expected<planner::ScenarioSweep> sweep = LoadSweep(a, &*catalog);
  if (!sweep.ok()) return Report(sweep.status(), *world);
  planner::SweepOptions options;
  options.out_dir = a.out;
  options.jobs = a.jobs > 0 ? a.jobs
                            : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) /
                                              world->local_size());
  options.world = world;
  options.cancel = &g_interrupted;
  std::string no_bands;
  const std::shared_ptr<const ErrorBands> bands = DefaultErrorBands(&no_bands);
  if (!bands && world->rank() == 0) {
    std::fprintf(stderr, "trainsim: no error bands: %s\n", no_bands.c_str());
  }
  auto evaluate = [&](const planner::SweepPoint& p) {
    BlockInterruptOnThisThread();
    const PlanningScenario& s = sweep->scenarios[p.index];
    return sweep->plan[p.index] ? planner::PlanScenarioRow(s, *catalog, bands)
                                : planner::SimulateScenarioRow(s.scenario, bands.get());
  };
  CatchInterrupt(world->rank() == 0);
  Expected<planner::SweepSummary> result = [&] {
    if (world->rank() != 0) return planner::RunSweep(sweep->points, evaluate, options, nullptr);
    ProgressLine progress;
    return planner::RunSweep(sweep->points, evaluate, options, &progress);
  }();
  return Report(result, *world);
}

}  // namespace

int SweepCommand(const std::vector<std::string>& args) {
  Expected<SweepArgs> a = ParseSweepArgs(args);
  if (!a.ok()) {
    std::fprintf(stderr, "trainsim: %s\n%s", a.status().message().c_str(), kSweepUsage);
    return kBadInput;
  }
  if (a->help) {
    std::printf("%s", kSweepUsage);
    return kOk;
  }
  // Under mpirun every rank gets here; MPI is initialised only then.
  Expected<std::unique_ptr<planner::SweepWorld>> world = planner::OpenSweepWorld();
  if (!world.ok()) {
    std::fprintf(stderr, "trainsim: %s\n", world.status().message().c_str());
    return kBadInput;
  }
  return Sweep(*a, world->get());
}

}  // namespace trainsim::cli
