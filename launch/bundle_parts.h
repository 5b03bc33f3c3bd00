// Inside launch/bundle.cc: the facts every bundle file is made from, and one
// function per file (sagemaker_bundle.cc, script_bundle.cc, config_bundle.cc).
// Not part of the public API; the values here are already checked.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/units.h"
#include "launch/bundle.h"

namespace trainsim::launch {

// Margin on the plan's expected hours for time limits that end the job
// (SageMaker MaxRuntime on demand, Slurm --time).
inline constexpr double kTimeMargin = 1.5;
inline constexpr int kRendezvousPort = 29500;
// The largest MaxRuntimeInSeconds SageMaker accepts: 28 days (AWS
// CloudFormation reference, AWS::SageMaker StoppingCondition,
// MaxRuntimeInSeconds: "The maximum value is 28 days").
inline constexpr int64_t kSagemakerMaxRuntime_s = 28 * 24 * static_cast<int64_t>(kSecondsPerHour);

struct JobFacts {
  // The plan's search.warm_pool_keep_alive_s under sagemaker pricing (whole
  // seconds), else 0: SageMaker's ResourceConfig.KeepAlivePeriodInSeconds.
  int64_t warm_pool_keep_alive_s = 0;
  const LaunchPlan* plan = nullptr;
  const Scenario* s = nullptr;
  const LaunchOptions* options = nullptr;
  std::string job_name;
  int nodes = 1, gpus_per_node = 1;
  int64_t microbatches = 1;  // per pipeline and step (gradient accumulation)
  int64_t steps = 0;
  // SageMaker hyperparameters and, as `--key value`, the training script's
  // arguments under every launcher (all values strings).
  std::vector<std::pair<std::string, std::string>> hyperparameters;
  bool managed_spot = false;                  // the plan's pricing is sagemaker-spot
  int64_t max_runtime_s = 0, max_wait_s = 0;  // SageMaker; max_wait_s only with spot
  bool runtime_capped = false;                // the plan needs more than SageMaker's 28 days
  int volume_gb = 100;
  int64_t slurm_minutes = 10;

  bool Has(Target t) const;
  std::string Describe() const;  // "name: N x TYPE (G GPUs), tp .. pp .. dp .., ZeRO-z"
  std::vector<std::string> ScriptArgs() const;  // entry point, then --key value ...
};

// PyTorch FSDP's ShardingStrategy for ZeRO-2/3 ("FULL_SHARD", "_HYBRID_SHARD_ZERO2", ...), or
// "" (ZeRO-0/1 have none).
std::string FsdpShardingStrategy(const ParallelConfig& p);
// SageMaker's model parallelism library v2 runs on `t` (the catalog's sagemaker_libraries,
// from its supported instance types in the SageMaker developer guide).
bool SmpV2Supports(const InstanceType& t);
// SMP v2's core configuration parameters for the plan (SageMaker developer guide, "SMP v2
// reference": hybrid_shard_degree, tensor_parallel_degree, context_parallel_degree,
// expert_parallel_degree, sm_activation_offloading), or an empty object where the plan does
// not run under SMP v2: pipeline stages (SMP v2 has none), an instance type it does not run
// on, or nothing for it to set (plain data parallelism, ZeRO without a shard group).
nlohmann::ordered_json SmpV2Parameters(const Scenario& s);

BundleFile SagemakerRequest(const JobFacts& f);
BundleFile SagemakerScript(const JobFacts& f);
std::vector<BundleFile> LauncherScripts(const JobFacts& f);  // torchrun.sh, mpirun.sh[, hostfile]
// slurm.sbatch; with `hyperpod`, hyperpod/slurm.sbatch for a HyperPod cluster (no GPU GRES,
// srun --auto-resume=1).
BundleFile SlurmScript(const JobFacts& f, bool hyperpod);
// hyperpod/check-slurm.sh and hyperpod/slurm.sbatch, and hyperpod/smp_config.json where the plan
// runs under SMP v2 (SmpV2Parameters).
std::vector<BundleFile> HyperpodSlurmFiles(const JobFacts& f);
// hyperpod/check-eks.sh and hyperpod/pytorchjob.json (a Kubeflow PyTorchJob).
std::vector<BundleFile> HyperpodEksFiles(const JobFacts& f);
BundleFile DeepSpeedConfig(const JobFacts& f);
// Why DeepSpeed's config cannot express the plan's scenario, or nullopt; the
// bundle then leaves deepspeed_config.json out and warns.
std::optional<std::string> DeepSpeedGap(const Scenario& s);
BundleFile MegatronArgs(const JobFacts& f);  // transformers only
// Why Megatron-LM's arguments cannot express the plan's scenario (a setting it has no flag
// for), or nullopt. The bundle then leaves megatron_args.sh out and warns.
std::optional<std::string> MegatronGap(const Scenario& s);
BundleFile Readme(const JobFacts& f, const std::vector<BundleFile>& others);
// Why the SageMaker request asks for 28 days only, and what to do about it.
std::string CappedRuntime(const JobFacts& f);

// Shell script helpers: "#!/usr/bin/env bash" + comment lines + "set -euo pipefail".
std::string ScriptHeader(const JobFacts& f, const std::string& what);
// argv as a shell command, every word ShellQuote'd, one option (with its
// value) per line, lines joined by backslash-newline. A word in `raw` (by index) is written as it
// is: a double-quoted expansion the script makes itself ("$head_node:29500").
std::string CommandLines(const std::vector<std::string>& argv, const std::vector<size_t>& raw = {});
// The NCCL/EFA environment for the instance ("FI_PROVIDER=efa" on EFA types).
std::vector<std::string> NetworkEnv(const JobFacts& f);

}  // namespace trainsim::launch
