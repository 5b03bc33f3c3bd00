#include "launch/submit.h"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "launch/names.h"

extern char** environ;

namespace trainsim::launch {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string InDir(const std::string& dir, const std::string& leaf) {
  return dir + (!dir.empty() && dir.back() == '/' ? "" : "/") + leaf;
}

}  // namespace

bool SpawnCommandRunner::Exists(const std::string& tool) {
  if (tool.empty()) return false;
  if (tool.find('/') != std::string::npos) return IsExecutableFile(tool);
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    if (IsExecutableFile(InDir(dir.empty() ? "." : dir, tool))) return true;
    start = colon + 1;
  }
  return false;
}

Expected<int> SpawnCommandRunner::Run(const std::vector<std::string>& argv) {
  if (argv.empty()) return Status::Internal("Run: no command");
  std::vector<char*> args;
  std::vector<std::string> words = argv;  // posix_spawnp takes char* const[]
  for (std::string& w : words) args.push_back(w.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ);
  if (rc != 0) return Status::InvalidInput(argv[0] + ": cannot start it: " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Status::Internal(argv[0] + ": waitpid: " + std::strerror(errno));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<std::string> SubmitArgv(Target target, const std::string& dir) {
  switch (target) {
    case Target::kSagemaker:
      return {"aws", "sagemaker", "create-training-job", "--cli-input-json",
              "file://" + InDir(dir, "sagemaker/create_training_job.json")};
    case Target::kSlurm:
      return {"sbatch", InDir(dir, "slurm.sbatch")};
    case Target::kScripts:
      return {};
    case Target::kHyperpodSlurm:
      return {"sbatch", InDir(dir, "hyperpod/slurm.sbatch")};
    case Target::kHyperpodEks:
      return {"kubectl", "apply", "-f", InDir(dir, "hyperpod/pytorchjob.json")};
  }
  return {};
}

Status CheckSubmittable(Target target, const LaunchOptions& o, Pricing pricing) {
  if (target == Target::kScripts) {
    return Status::InvalidInput(
        "--submit: the scripts target is run by hand (torchrun.sh, mpirun.sh); submit "
        "--target sagemaker, slurm, hyperpod-slurm or hyperpod-eks");
  }
  if (target == Target::kHyperpodEks && o.image_uri.empty()) {
    return Status::InvalidInput(std::string("--submit --target hyperpod-eks needs --image URI: the "
                                            "PyTorchJob holds the placeholder ") +
                                kImagePlaceholder);
  }
  if (target != Target::kSagemaker) return Status::Ok();
  if (o.role_arn.empty()) {
    return Status::InvalidInput(std::string("--submit --target sagemaker needs --role ARN: the "
                                            "request holds the placeholder ") +
                                kRolePlaceholder);
  }
  if (o.image_uri.empty()) {
    return Status::InvalidInput(std::string("--submit --target sagemaker needs --image URI: the "
                                            "request holds the placeholder ") +
                                kImagePlaceholder);
  }
  if (pricing == Pricing::kTrainingPlan && o.training_plan_arn.empty()) {
    return Status::InvalidInput(std::string("--submit --target sagemaker needs "
                                            "--training-plan-arn ARN: the request holds the "
                                            "placeholder ") +
                                kTrainingPlanPlaceholder);
  }
  return Status::Ok();
}

Expected<SubmitOutcome> Submit(Target target, const std::string& dir, bool yes,
                               CommandRunner& runner) {
  SubmitOutcome out;
  out.argv = SubmitArgv(target, dir);
  if (out.argv.empty()) return Status::InvalidInput("--submit: nothing to submit for scripts");
  if (!yes) return out;
  const std::string& tool = out.argv[0];
  if (!runner.Exists(tool)) {
    const char* hint = target == Target::kSagemaker     ? "install the AWS CLI, or"
                       : target == Target::kHyperpodEks ? "install kubectl for the cluster, or"
                                                        : "submit from a Slurm login node, or";
    return Status::NotFound(tool + " not found on PATH: " + hint +
                            " run the command yourself: " + ShellJoin(out.argv));
  }
  Expected<int> status = runner.Run(out.argv);
  if (!status.ok()) return status.status();
  out.ran = true;
  if (*status != 0) {
    return Status::InvalidInput(tool + " exited with status " + std::to_string(*status) + ": " +
                                ShellJoin(out.argv));
  }
  return out;
}

}  // namespace trainsim::launch
