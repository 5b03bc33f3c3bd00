// The bundle's README.md: what each file is, what to fill in, how to submit.
#include <cstdio>

#include "launch/bundle_parts.h"
#include "launch/names.h"

namespace trainsim::launch {
namespace {

std::string Hours(double h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", h);
  return buf;
}

std::string WhatIs(const JobFacts& f, const std::string& path) {
  const std::string gpus = std::to_string(f.gpus_per_node);
  if (path == "sagemaker/create_training_job.json") {
    return std::string("the SageMaker CreateTrainingJob request (AWS CLI), ") +
           (f.managed_spot ? "managed spot with MaxWait and checkpoints in S3" : "on demand") +
           "; it starts the image's own entry point on each instance";
  }
  if (path == "sagemaker/launch.py") {
    return "the same job with the SageMaker Python SDK and the `distribution` the plan needs";
  }
  if (path == "torchrun.sh") return "torchrun, " + gpus + " processes per node; run on every node";
  if (path == "mpirun.sh") return "mpirun, " + gpus + " processes per host; run on the first host";
  if (path == "hostfile")
    return "OpenMPI hostfile: placeholders node-0 .. node-" + std::to_string(f.nodes - 1) +
           "; put your hosts in";
  if (path == "slurm.sbatch") return "Slurm batch script: srun starts torchrun on every node";
  if (path == "hyperpod/check-slurm.sh") {
    return "HyperPod (Slurm): checks the cluster's nodes, GPUs and EFA against the plan; run it "
           "on the head or login node first";
  }
  if (path == "hyperpod/slurm.sbatch") {
    return "HyperPod (Slurm): `srun --auto-resume=1` starts torchrun on every node; HyperPod "
           "replaces a faulty node and restarts it";
  }
  if (path == "hyperpod/smp_config.json") {
    return "SMP v2's configuration for HyperPod: the script calls "
           "`torch.sagemaker.init(\"smp_config.json\")` with it";
  }
  if (path == "hyperpod/check-eks.sh") {
    return "HyperPod (EKS): checks the training operator and the healthy nodes' GPUs and EFA "
           "devices against the plan";
  }
  if (path == "hyperpod/pytorchjob.json") {
    return "HyperPod (EKS): a Kubeflow PyTorchJob, one worker pod per node, with HyperPod's job "
           "auto-resume";
  }
  if (path == "deepspeed_config.json") {
    return "DeepSpeed config: batch sizes, ZeRO stage, precision" +
           (f.s->parallel.ep > 1 ? "; the model code sets DeepSpeed-MoE's ep_size " +
                                       std::to_string(f.s->parallel.ep)
                                 : std::string());
  }
  if (path == "megatron_args.sh") return "Megatron-LM arguments (a bash array, MEGATRON_ARGS)";
  return "";
}

}  // namespace

std::string CappedRuntime(const JobFacts& f) {
  return "the plan expects " + Hours(f.plan->expected_hours) +
         " h, more than SageMaker's 28-day MaxRuntimeInSeconds: the request asks for 28 days; "
         "continue with further jobs that resume from the checkpoints in S3";
}

namespace {

// Buying the Capacity Block the plan booked, and launching the instances into it.
std::string CapacityBlockSteps(const JobFacts& f) {
  const LaunchOptions& o = *f.options;
  const std::string& id =
      o.capacity_reservation_id.empty() ? kCapacityBlockPlaceholder : o.capacity_reservation_id;
  std::string days;
  for (int d : f.plan->block_days) days += (days.empty() ? "" : " + ") + std::to_string(d);
  std::string out = "- Capacity Block: buy " + (days.empty() ? "a block" : days + " days") +
                    " for " + std::to_string(f.nodes) + " x " + f.s->instance.name +
                    " (`aws ec2 describe-capacity-block-offerings`, then "
                    "`purchase-capacity-block`), and at its start launch the instances into it, "
                    "e.g. `aws ec2 run-instances --instance-type " +
                    f.s->instance.name + " --count " + std::to_string(f.nodes) +
                    " --instance-market-options MarketType=capacity-block "
                    "--capacity-reservation-specification "
                    "CapacityReservationTarget={CapacityReservationId=" +
                    id +
                    "} ...` with your image, subnet and key. They are terminated from 30 minutes "
                    "before the block ends: the job must have written its checkpoint by then.\n";
  if (o.capacity_reservation_id.empty()) {
    out += std::string("- `") + kCapacityBlockPlaceholder +
           "`: the block's reservation id (`--capacity-reservation-id cr-...`).\n";
  }
  return out;
}

std::string FillIn(const JobFacts& f, bool has_hostfile) {
  const LaunchOptions& o = *f.options;
  std::string out;
  if (f.Has(Target::kSagemaker)) {
    if (f.runtime_capped) out += "- Note: " + CappedRuntime(f) + ".\n";
    if (o.role_arn.empty()) {
      out += std::string("- `") + kRolePlaceholder +
             "`: the IAM role SageMaker assumes (`trainsim launch --role ARN`).\n";
    }
    if (o.image_uri.empty()) {
      out += std::string("- `") + kImagePlaceholder +
             "` in the request: a training image (`--image URI`); launch.py uses the SDK's "
             "framework image.\n";
    }
    out += "- The request runs `" + o.entry_point + "` from `" + o.s3_uri +
           (o.s3_uri.back() == '/' ? "" : "/") +
           "source/sourcedir.tar.gz`: `tar czf sourcedir.tar.gz -C YOUR_CODE .` and copy it "
           "there. launch.py uploads the folder it runs in.\n";
    if (IsSpot(f.s->cluster.pricing) && f.s->cluster.pricing != Pricing::kSagemakerSpot) {
      out +=
          "- The plan priced EC2 spot; the SageMaker request is on demand. Plan with "
          "`sagemaker-spot` pricing for managed spot.\n";
    }
    if (f.s->cluster.pricing == Pricing::kTrainingPlan && o.training_plan_arn.empty()) {
      out += std::string("- `") + kTrainingPlanPlaceholder +
             "` in the request: the ARN of the training plan you bought "
             "(`--training-plan-arn ARN`; SageMaker CreateTrainingPlan).\n";
    }
  }
  if (f.s->cluster.pricing == Pricing::kCapacityBlock) out += CapacityBlockSteps(f);
  if (f.Has(Target::kHyperpodEks) && o.image_uri.empty()) {
    out += std::string("- `") + kImagePlaceholder +
           "` in hyperpod/pytorchjob.json: the training image the pods run (`--image URI`).\n";
  }
  if (f.Has(Target::kHyperpodSlurm) || f.Has(Target::kHyperpodEks)) {
    out +=
        "- HyperPod restarts the job after a fault: the script must resume from its latest "
        "checkpoint. The PyTorchJob allows 1 restart (the HyperPod CLI's default); raise "
        "`job-max-retry-count` for long jobs.\n";
  }
  if (has_hostfile) out += "- `hostfile`: your hosts, one per node, in place of node-0 ...\n";
  return out.empty() ? "Nothing: every value is given.\n" : out;
}

}  // namespace

BundleFile Readme(const JobFacts& f, const std::vector<BundleFile>& others) {
  std::string text = "# Launch bundle: " + f.job_name + "\n\n" + f.Describe() +
                     ".\n\nMade by `trainsim launch` from a plan of `trainsim plan` (trainsim's "
                     "docs/launch.md). The\ntraining script gets the plan's layout as arguments "
                     "under every launcher:\n\n    " +
                     ShellJoin(f.ScriptArgs()) + "\n\n## Files\n\n| file | what |\n|---|---|\n";
  bool has_hostfile = false;
  for (const BundleFile& b : others) {
    text += "| `" + b.path + "` | " + WhatIs(f, b.path) + " |\n";
    has_hostfile |= b.path == "hostfile";
  }
  if (f.s->model.kind != ModelKind::kTransformer) {
    text += "\nNo Megatron-LM arguments: the model is not a transformer.\n";
  }
  text += "\n## To fill in\n\n" + FillIn(f, has_hostfile) + "\n## Submit (from this folder)\n\n";
  if (f.Has(Target::kSagemaker)) {
    text +=
        "    aws sagemaker create-training-job --cli-input-json "
        "file://sagemaker/create_training_job.json\n    python3 sagemaker/launch.py\n";
  }
  if (f.Has(Target::kSlurm)) text += "    sbatch slurm.sbatch\n";
  if (f.Has(Target::kScripts)) {
    text += "    ./torchrun.sh    # on every node\n    ./mpirun.sh      # on the first host\n";
  }
  if (f.Has(Target::kHyperpodSlurm)) {
    text += "    hyperpod/check-slurm.sh && sbatch hyperpod/slurm.sbatch    # on the cluster\n";
  }
  if (f.Has(Target::kHyperpodEks)) {
    text += "    hyperpod/check-eks.sh && kubectl apply -f hyperpod/pytorchjob.json\n";
  }
  text +=
      "\n`trainsim launch PLAN --submit --target TARGET` prints the command; "
      "`--yes` runs it.\nThe plan expects " +
      Hours(f.plan->expected_hours) + " h for the whole job.\n";
  return {"README.md", text, false};
}

}  // namespace trainsim::launch
