// The SageMaker HyperPod part of a bundle: the files that run the plan on an
// existing HyperPod cluster, Slurm or EKS flavour, each with a check script
// that compares the cluster with the plan before anything is submitted.
//
// Sources (SageMaker developer guide): Slurm jobs are submitted with sbatch on
// the cluster, and `srun --auto-resume=1` makes HyperPod replace a faulty node
// and restart the step ("Automatic node recovery and auto-resume"). On EKS, jobs
// are Kubeflow PyTorchJobs (training operator 1.7.0-1.8.1) in the `kubeflow`
// namespace, with the annotations sagemaker.amazonaws.com/enable-job-auto-resume
// and sagemaker.amazonaws.com/job-max-retry-count, restartPolicy OnFailure, and
// a node selector on sagemaker.amazonaws.com/node-health-status: Schedulable
// ("Running jobs using kubectl"; "Resilience-related Kubernetes labels"). The
// HyperPod CLI's --max-retry defaults to 1 ("Running jobs using the SageMaker
// HyperPod CLI"). SMP v2's configuration is "saved as a JSON file for SageMaker
// HyperPod" ("SMP v2 reference").
#include <nlohmann/json.hpp>

#include "launch/bundle_parts.h"
#include "launch/names.h"

namespace trainsim::launch {
namespace {

using ojson = nlohmann::ordered_json;

constexpr char kNamespace[] = "kubeflow";
constexpr char kMaxRetries[] = "1";  // the HyperPod CLI's default for --max-retry

// The GPU's family as nvidia-smi -L names it ("H100" of "H100-SXM5-80GB").
std::string GpuFamily(const JobFacts& f) {
  const std::string& name = f.s->instance.gpu.name;
  return name.substr(0, name.find('-'));
}

std::string CheckHeader(const JobFacts& f, const std::string& what) {
  return ScriptHeader(f, what) +
         "fail() { echo \"check: $*\" >&2; exit 1; }\n"
         "need_nodes=" +
         ShellQuote(std::to_string(f.nodes)) +
         "\n"
         "need_gpus=" +
         ShellQuote(std::to_string(f.gpus_per_node)) + "\n";
}

BundleFile CheckSlurm(const JobFacts& f) {
  std::string text = CheckHeader(
      f,
      "hyperpod/check-slurm.sh: run it on the HyperPod cluster's head or login node before "
      "sbatch slurm.sbatch.\n# It checks that the cluster has the plan's nodes, GPUs" +
          std::string(f.s->instance.efa ? " and EFA" : "") +
          " (srun on that many nodes: it waits for them).");
  text += "gpu=" + ShellQuote(GpuFamily(f)) +
          "\n"
          "for tool in sinfo srun; do\n"
          "  command -v \"$tool\" >/dev/null || fail \"$tool not found: run this on the "
          "cluster's head or login node\"\n"
          "done\n"
          "nodes=\"$(sinfo -h -N -t idle,mixed,allocated -o '%N' | sort -u | wc -l)\"\n"
          "[ \"$nodes\" -ge \"$need_nodes\" ] || fail \"the cluster has $nodes usable nodes; the "
          "plan needs $need_nodes\"\n"
          "gpus=\"$(srun -N \"$need_nodes\" --ntasks-per-node=1 --exclusive nvidia-smi -L | grep "
          "-c \"$gpu\" || true)\"\n"
          "[ \"$gpus\" -eq $((need_nodes * need_gpus)) ] || fail \"$need_nodes nodes have $gpus "
          "$gpu GPUs; the plan needs $((need_nodes * need_gpus))\"\n";
  if (f.s->instance.efa) {
    text +=
        "efa=\"$(srun -N \"$need_nodes\" --ntasks-per-node=1 --exclusive bash -c 'PATH=/opt/amazon/"
        "efa/bin:$PATH fi_info -p efa >/dev/null 2>&1 && echo efa-ok' | grep -c efa-ok || true)\"\n"
        "[ \"$efa\" -eq \"$need_nodes\" ] || fail \"EFA answers on $efa of $need_nodes nodes "
        "(fi_info -p efa)\"\n";
  }
  text += "echo \"check: ok: $nodes usable nodes, $gpus $gpu GPUs on $need_nodes of them\"\n";
  return {"hyperpod/check-slurm.sh", text, true};
}

// A Kubeflow PyTorchJob (kubeflow.org/v1): one Worker pod per node; with an elastic policy the
// operator gives torchrun its rendezvous in PET_* variables, which torchrun reads.
BundleFile PyTorchJob(const JobFacts& f) {
  const LaunchOptions& o = *f.options;
  const std::string instance = "ml." + f.s->instance.name;
  ojson resources = {{"nvidia.com/gpu", f.gpus_per_node}};
  if (f.s->instance.efa && f.s->instance.nics > 0) {
    resources["vpc.amazonaws.com/efa"] = f.s->instance.nics;
  }
  ojson env = ojson::array();
  for (const std::string& kv : NetworkEnv(f)) {
    const size_t eq = kv.find('=');
    env.push_back({{"name", kv.substr(0, eq)}, {"value", kv.substr(eq + 1)}});
  }
  ojson command = {"torchrun"};
  for (const std::string& a : f.ScriptArgs()) command.push_back(a);
  ojson container = {{"name", "pytorch"},
                     {"image", o.image_uri.empty() ? kImagePlaceholder : o.image_uri},
                     {"imagePullPolicy", "Always"},
                     {"command", command}};
  if (!env.empty()) container["env"] = env;
  container["resources"] = {{"requests", resources}, {"limits", resources}};
  container["volumeMounts"] = {{{"name", "shm"}, {"mountPath", "/dev/shm"}}};
  ojson pod = {{"nodeSelector",
                {{"node.kubernetes.io/instance-type", instance},
                 {"sagemaker.amazonaws.com/node-health-status", "Schedulable"}}},
               {"containers", {container}},
               {"volumes", {{{"name", "shm"}, {"emptyDir", {{"medium", "Memory"}}}}}}};
  ojson job = {{"apiVersion", "kubeflow.org/v1"},
               {"kind", "PyTorchJob"},
               {"metadata",
                {{"name", f.job_name},
                 {"namespace", kNamespace},
                 {"annotations",
                  {{"sagemaker.amazonaws.com/enable-job-auto-resume", "true"},
                   {"sagemaker.amazonaws.com/job-max-retry-count", kMaxRetries}}}}},
               {"spec",
                {{"elasticPolicy",
                  {{"rdzvBackend", "c10d"}, {"minReplicas", f.nodes}, {"maxReplicas", f.nodes}}},
                 {"nprocPerNode", std::to_string(f.gpus_per_node)},
                 {"pytorchReplicaSpecs",
                  {{"Worker",
                    {{"replicas", f.nodes},
                     {"restartPolicy", "OnFailure"},
                     {"template", {{"spec", pod}}}}}}}}}};
  return {"hyperpod/pytorchjob.json", job.dump(2) + "\n", false};
}

BundleFile CheckEks(const JobFacts& f) {
  const std::string selector = "node.kubernetes.io/instance-type=ml." + f.s->instance.name +
                               ",sagemaker.amazonaws.com/node-health-status=Schedulable";
  std::string text = CheckHeader(
      f,
      "hyperpod/check-eks.sh: run it where kubectl reaches the HyperPod cluster's EKS control "
      "plane,\n# before kubectl apply -f pytorchjob.json. It checks the training operator and "
      "that enough healthy nodes have the plan's GPUs" +
          std::string(f.s->instance.efa ? " and EFA devices" : "") + ".");
  text += "selector=" + ShellQuote(selector) + "\nnamespace=" + ShellQuote(kNamespace) +
          "\n"
          "command -v kubectl >/dev/null || fail \"kubectl not found\"\n"
          "kubectl get crd pytorchjobs.kubeflow.org >/dev/null || fail \"no PyTorchJob resource: "
          "install the Kubeflow training operator (HyperPod's Helm chart)\"\n"
          "kubectl get namespace \"$namespace\" >/dev/null || fail \"no namespace $namespace\"\n"
          "nodes=\"$(kubectl get nodes -l \"$selector\" -o name | wc -l)\"\n"
          "[ \"$nodes\" -ge \"$need_nodes\" ] || fail \"$nodes schedulable nodes match $selector; "
          "the plan needs $need_nodes\"\n"
          "gpu_nodes=\"$(kubectl get nodes -l \"$selector\" -o "
          "jsonpath='{range .items[*]}{.status.allocatable.nvidia\\.com/gpu}{\"\\n\"}{end}' | awk "
          "-v g=\"$need_gpus\" '$1 >= g' | wc -l)\"\n"
          "[ \"$gpu_nodes\" -ge \"$need_nodes\" ] || fail \"$gpu_nodes nodes offer $need_gpus GPUs "
          "(nvidia.com/gpu); the plan needs $need_nodes\"\n";
  if (f.s->instance.efa && f.s->instance.nics > 0) {
    text +=
        "need_efa=" + ShellQuote(std::to_string(f.s->instance.nics)) +
        "\n"
        "efa_nodes=\"$(kubectl get nodes -l \"$selector\" -o "
        "jsonpath='{range .items[*]}{.status.allocatable.vpc\\.amazonaws\\.com/efa}{\"\\n\"}"
        "{end}' | awk -v e=\"$need_efa\" '$1 >= e' | wc -l)\"\n"
        "[ \"$efa_nodes\" -ge \"$need_nodes\" ] || fail \"$efa_nodes nodes offer $need_efa EFA "
        "devices (vpc.amazonaws.com/efa; the EFA device plugin); the plan needs $need_nodes\"\n";
  }
  text += "echo \"check: ok: $nodes schedulable nodes match $selector\"\n";
  return {"hyperpod/check-eks.sh", text, true};
}

}  // namespace

std::vector<BundleFile> HyperpodSlurmFiles(const JobFacts& f) {
  std::vector<BundleFile> files = {CheckSlurm(f), SlurmScript(f, true)};
  if (const ojson smp = SmpV2Parameters(*f.s); !smp.empty()) {
    files.push_back({"hyperpod/smp_config.json", smp.dump(2) + "\n", false});
  }
  return files;
}

std::vector<BundleFile> HyperpodEksFiles(const JobFacts& f) { return {CheckEks(f), PyTorchJob(f)}; }

}  // namespace trainsim::launch
