// A launch bundle: the files that start a planned job (docs/launch.md).
//
// MakeBundle turns a plan (launch/plan_file.h) and the launch options into
// files, each a relative path and its bytes: a SageMaker CreateTrainingJob
// request and SDK script, torchrun and mpirun scripts with a hostfile, a Slurm
// batch script, SageMaker HyperPod job files (Slurm and EKS, each with a check
// script), a DeepSpeed config, Megatron-LM arguments and a README. It is
// pure and deterministic (the same plan and options give the same bytes), and
// it checks every name, path and URI first (launch/names.h): on an error no
// file exists to write. Every value in a shell script is ShellQuote'd.
// WriteBundle (launch/bundle_writer.h) puts the files on disk.
#pragma once

#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "launch/plan_file.h"

namespace trainsim::launch {

// Parts of a bundle. README.md and deepspeed_config.json are always written;
// megatron_args.sh for transformers whose settings Megatron-LM can express
// (else Bundle::warnings says which setting it lacks).
enum class Target {
  kSagemaker,  // sagemaker/create_training_job.json, sagemaker/launch.py
  kSlurm,      // slurm.sbatch
  kScripts,    // torchrun.sh, mpirun.sh, hostfile
  // An existing SageMaker HyperPod cluster: hyperpod/slurm.sbatch (srun --auto-resume),
  // hyperpod/check-slurm.sh [, hyperpod/smp_config.json]
  kHyperpodSlurm,
  kHyperpodEks,  // hyperpod/pytorchjob.json (Kubeflow PyTorchJob), hyperpod/check-eks.sh
};
inline constexpr Target kAllTargets[] = {Target::kSagemaker, Target::kSlurm, Target::kScripts,
                                         Target::kHyperpodSlurm, Target::kHyperpodEks};
// "sagemaker", "slurm", "scripts", "hyperpod-slurm", "hyperpod-eks"
const char* ToString(Target t);
// "all" or a comma-separated list of target names, each at most once.
Expected<std::vector<Target>> ParseTargets(std::string_view list);

// Written where a value needed to submit was not given; --submit refuses them.
inline constexpr char kRolePlaceholder[] = "REPLACE_WITH_ROLE_ARN";
inline constexpr char kImagePlaceholder[] = "REPLACE_WITH_TRAINING_IMAGE_URI";
inline constexpr char kTrainingPlanPlaceholder[] = "REPLACE_WITH_TRAINING_PLAN_ARN";
inline constexpr char kCapacityBlockPlaceholder[] = "REPLACE_WITH_CAPACITY_BLOCK_ID";

struct LaunchOptions {
  std::vector<Target> targets = {std::begin(kAllTargets), std::end(kAllTargets)};
  // SageMaker training job, Slurm job and torchrun rendezvous id. Empty: the
  // scenario's name, when that is a valid job name (else an error asks for one).
  std::string job_name;
  // s3://bucket/prefix for checkpoints (PREFIX/checkpoints, managed spot),
  // output (PREFIX/output) and the code (PREFIX/source). Needed by kSagemaker.
  std::string s3_uri;
  std::string role_arn;                  // IAM role SageMaker assumes; empty: kRolePlaceholder
  std::string image_uri;                 // training image; empty: kImagePlaceholder in the request
                                         // and the PyTorchJob, the SDK's image in launch.py
  std::string entry_point = "train.py";  // the training script, relative to the code folder
  // A hosts file for torchrun and mpirun (an absolute path, as the scripts
  // name it) and its hosts (LoadHostsFile, one per node). Empty: the bundle's
  // `hostfile` with placeholders node-0 .. node-(N-1).
  std::string hosts_file;
  std::vector<std::string> hosts;
  int volume_gb = 0;  // SageMaker volume per instance; 0: max(100, 2 x checkpoint GiB)
  // Reserved capacity the plan's pricing runs on. training-plan: the plan's ARN,
  // ResourceConfig.TrainingPlanArn of the SageMaker request (empty:
  // kTrainingPlanPlaceholder). capacity-block: the block's reservation id, in the
  // README's command that launches the instances into it (empty:
  // kCapacityBlockPlaceholder).
  std::string training_plan_arn;
  std::string capacity_reservation_id;
};

struct BundleFile {
  std::string path;  // relative, '/'-separated: "sagemaker/launch.py"
  std::string content;
  bool executable = false;  // scripts: mode 0755
};

struct Bundle {
  std::string job_name;               // as resolved
  std::vector<BundleFile> files;      // in a fixed order, README.md first
  std::vector<std::string> warnings;  // what the user must know before submitting
};

Expected<Bundle> MakeBundle(const LaunchPlan& plan, const LaunchOptions& options);

}  // namespace trainsim::launch
