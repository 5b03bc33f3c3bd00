// Starts the local trainer (trainsim-train, under mpirun) as a child process
// without a shell, streams its JSON step lines to an observer, and reports
// how it ended. The child runs in its own process group; Ctrl-C while it
// runs becomes SIGUSR1 to it (mpirun forwards that to the ranks, which stop
// after their step and exit 130): the caller keeps running, collects what
// was printed, and says so. A `stop` flag set from another thread (the GUI's
// Cancel) does the same as that Ctrl-C.
#pragma once

#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace trainsim::launch {

struct StepLine {
  int step = 0;
  double loss = 0;
  double step_s = 0;
};

class TrainerObserver {
 public:
  virtual ~TrainerObserver() = default;
  virtual void Step(const StepLine& line) = 0;
};

struct TrainerResult {
  std::vector<StepLine> steps;
  std::optional<nlohmann::json> summary;  // the trainer's final {"summary": ...} object
  int exit_code = 0;                      // 128 + signal when killed
  bool interrupted = false;  // Ctrl-C reached this process, or `stop` was set, while it ran
};

// The trainer executable beside this program (build/launch/local/trainsim-train
// next to build/trainsim), or $TRAINSIM_TRAIN when set.
std::string TrainerPath();

// `mpirun -np RANKS [--allow-run-as-root] [--oversubscribe] TRAINER --config FILE`.
std::vector<std::string> MpirunCommand(int ranks, const std::string& trainer,
                                       const std::string& config, bool as_root, int cores);

// Runs `argv` (argv[0] looked up on PATH), its stdout parsed line by line;
// its stderr goes to ours. Once `*stop` is true (checked every 100 ms; set
// from any thread), the child gets SIGUSR1 as on Ctrl-C; when it is true
// already, nothing starts (interrupted, no steps, exit code 0). Fails only
// when the child cannot be started.
Expected<TrainerResult> RunTrainer(const std::vector<std::string>& argv, TrainerObserver* observer,
                                   const std::atomic<bool>* stop = nullptr);

}  // namespace trainsim::launch
