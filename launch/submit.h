// Submitting a written bundle (docs/launch.md, "Submission"): SageMaker
// through the AWS CLI, Slurm through sbatch. Commands are started from an argv
// vector, never through a shell, behind CommandRunner so tests use a fake.
// Nothing runs without `yes`: Submit then only returns the command.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "launch/bundle.h"

namespace trainsim::launch {

// Starts programs. Implementations need not be thread-safe.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Whether `tool` can be started: an executable file at that path when it
  // has a '/', else one found on PATH.
  virtual bool Exists(const std::string& tool) = 0;
  // Runs argv (argv[0] found on PATH) with this process's stdin, stdout and
  // stderr, and waits. The exit status, 128 + the signal number when killed;
  // an error when it cannot be started.
  virtual Expected<int> Run(const std::vector<std::string>& argv) = 0;
};

// The real runner: posix_spawnp with the argv vector and this environment.
class SpawnCommandRunner : public CommandRunner {
 public:
  bool Exists(const std::string& tool) override;
  Expected<int> Run(const std::vector<std::string>& argv) override;
};

// The command that submits the bundle written in `dir`:
//   sagemaker: aws sagemaker create-training-job --cli-input-json
//   file://DIR/sagemaker/create_training_job.json slurm:     sbatch DIR/slurm.sbatch
// kScripts cannot be submitted: an empty argv.
std::vector<std::string> SubmitArgv(Target target, const std::string& dir);

// Whether a real submission to `target` may go ahead: SageMaker needs a role
// and an image, and under training-plan `pricing` the plan's ARN (the request
// must not carry a placeholder).
Status CheckSubmittable(Target target, const LaunchOptions& options,
                        Pricing pricing = Pricing::kOnDemand);

struct SubmitOutcome {
  std::vector<std::string> argv;  // the command, run or not
  bool ran = false;
};

// Without `yes`: the command, nothing run. With it: an error naming the tool
// when the runner cannot find it, else the command is run; a non-zero exit
// status is an error.
Expected<SubmitOutcome> Submit(Target target, const std::string& dir, bool yes,
                               CommandRunner& runner);

}  // namespace trainsim::launch
