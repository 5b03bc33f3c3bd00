// The SageMaker part of a bundle: the CreateTrainingJob request and the
// equivalent SageMaker Python SDK script.
//
// Request shape: the SageMaker API reference, CreateTrainingJob
// (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateTrainingJob.html):
// TrainingJobName 1-63 characters, HyperParameters a string-to-string map,
// StoppingCondition.MaxWaitTimeInSeconds >= MaxRuntimeInSeconds with managed
// spot, CheckpointConfig {S3Uri, LocalPath (default /opt/ml/checkpoints/)}
// (API_CheckpointConfig.html). The distribution settings: SageMaker Python SDK,
// doc/api/training/smd_model_parallel_general.rst (SMP v1 parameters, "mpi"),
// and, for the types each library runs on, the catalog's sagemaker_libraries
// (instance-catalog/aws.json, with their sources).
#include <nlohmann/json.hpp>

#include "core/strategy.h"
#include "launch/bundle_parts.h"

namespace trainsim::launch {
namespace {

using ojson = nlohmann::ordered_json;

constexpr char kCheckpointLocalPath[] = "/opt/ml/checkpoints";
// Framework images of the SDK when no --image is given: PyTorch 2.0.0 carries
// both SMP v1 (1.15) and SMDDP; the TensorFlow one serves parameter servers.
// SMP v2: PyTorch 2.5.1 is smdistributed-modelparallel v2.8.0, Python 3.11
// (SageMaker developer guide, "Supported frameworks and AWS Regions" of SMP v2).
constexpr char kPyTorchVersion[] = "2.0.0";
constexpr char kTensorFlowVersion[] = "2.13";
constexpr char kPythonVersion[] = "py310";
constexpr const char* kSmpV1PyTorchVersion = kPyTorchVersion;
constexpr const char* kSmpV1PythonVersion = kPythonVersion;
constexpr char kSmpV2PyTorchVersion[] = "2.5.1";
constexpr char kSmpV2PythonVersion[] = "py311";

std::string S3Join(const std::string& base, const std::string& leaf) {
  return base + (base.back() == '/' ? "" : "/") + leaf;
}

// A JSON string is a valid Python string literal once it is ASCII.
std::string PyString(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

// `v` as a Python literal, objects one key per line.
std::string Py(const ojson& v, int indent) {
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_string()) return PyString(v.get<std::string>());
  if (v.is_null()) return "None";
  if (!v.is_object()) return v.dump();
  const std::string pad(indent + 4, ' ');
  std::string out = "{\n";
  for (const auto& [key, value] : v.items()) {
    out += pad + PyString(key) + ": " + Py(value, indent + 4) + ",\n";
  }
  return out + std::string(indent, ' ') + "}";
}

struct Distribution {
  const char* estimator;  // "PyTorch" or "TensorFlow"
  ojson config;
  std::string why;
  const char* framework_version = kPyTorchVersion;  // the SDK's image when no --image is given
  const char* py_version = kPythonVersion;
};

// SMDDP's all-reduce serves every ZeRO stage; sharded states (ZeRO >= 1) also need its
// all-gather (the catalog's sagemaker_libraries).
bool SmddpSupports(const InstanceType& t, int zero_stage) {
  return t.RunsSagemakerLibrary("smddp-allreduce") &&
         (zero_stage == 0 || t.RunsSagemakerLibrary("smddp-allgather"));
}

// SMP v1 (the archived library): pipeline and tensor parallelism under MPI. Used where the
// plan needs what SMP v2 lacks: pipeline stages, or tensor parallelism on an instance type
// SMP v2 does not run on.
Distribution SmpV1(const JobFacts& f) {
  const ParallelConfig& p = f.s->parallel;
  ojson params = {
      {"pipeline_parallel_degree", p.pp},
      {"tensor_parallel_degree", p.tp},
      {"microbatches", f.microbatches},
      {"pipeline", p.schedule == Schedule::kGpipe ? "simple" : "interleaved"},
      {"placement_strategy", "PDT"},
      {"ddp", true},
  };
  if (p.zero_stage >= 1) params["shard_optimizer_state"] = true;
  ojson config = {
      {"smdistributed", {{"modelparallel", {{"enabled", true}, {"parameters", params}}}}},
      {"mpi", {{"enabled", true}, {"processes_per_host", f.gpus_per_node}}},
  };
  std::string why = std::string(p.pp > 1 ? "pipeline parallelism, which SMP v2 lacks"
                                         : "tensor parallelism on " + f.s->instance.name +
                                               ", where SMP v2 does not run") +
                    ": SageMaker model parallelism v1 (SMP v1) with MPI, one process per GPU; "
                    "ranks placed tensor-parallel first, then data-parallel, then pipeline "
                    "(PDT), as simulated. SMP \"interleaved\" is its 1F1B; it has no virtual "
                    "stages; shard_optimizer_state is ZeRO-1.";
  return {"PyTorch", config, why, kSmpV1PyTorchVersion, kSmpV1PythonVersion};
}

// SMP v2 runs PyTorch FSDP under torchrun, with its own tensor, expert and context
// parallelism beside it.
Distribution SmpV2(const JobFacts& f, const ojson& params) {
  const ParallelConfig& p = f.s->parallel;
  std::string strategy = FsdpShardingStrategy(p);
  if (strategy.empty()) strategy = "NO_SHARD";
  std::string why = "SageMaker model parallelism v2 (SMP v2, torch.sagemaker) under torchrun: ";
  std::string sep;
  for (const auto& [key, value] : params.items()) {
    why += sep + key + " " + value.dump();
    sep = ", ";
  }
  why += "; the script calls torch.sagemaker.init() and wraps the model with FSDP " + strategy;
  if (f.s->training.precision == Precision::kFp8) {
    why += "; FP8 through Transformer Engine (SMP v2 on " + f.s->instance.name + ")";
  }
  return {"PyTorch",
          {{"torch_distributed", {{"enabled", true}}},
           {"smdistributed", {{"modelparallel", {{"enabled", true}, {"parameters", params}}}}}},
          why,
          kSmpV2PyTorchVersion,
          kSmpV2PythonVersion};
}

Distribution ChooseDistribution(const JobFacts& f) {
  const ParallelConfig& p = f.s->parallel;
  if (const ojson params = SmpV2Parameters(*f.s); !params.empty()) return SmpV2(f, params);
  if (p.shard_group > 0) {
    return {"PyTorch",
            {{"torch_distributed", {{"enabled", true}}}},
            "hybrid sharded data parallelism (parallel.shard_group " +
                std::to_string(p.shard_group) + "); SMP v2 does not run " +
                (p.pp > 1 ? "pipeline stages" : "on " + f.s->instance.name) +
                ": torchrun, the script's FSDP " + FsdpShardingStrategy(p) + " over groups of " +
                std::to_string(p.shard_group)};
  }
  if (p.pp > 1 || p.tp > 1) return SmpV1(f);
  if (p.dp_algorithm == DpAlgorithm::kParameterServer) {
    return {"TensorFlow",
            {{"parameter_server", {{"enabled", true}}}},
            "parameter servers (parallel.dp_algorithm): the SDK offers them with the TensorFlow "
            "estimator",
            kTensorFlowVersion,
            kPythonVersion};
  }
  if (p.dp_fusion == DpFusion::kHorovod) {
    return {"PyTorch",
            {{"mpi", {{"enabled", true}, {"processes_per_host", f.gpus_per_node}}}},
            "Horovod (parallel.dp_fusion): MPI, one process per GPU"};
  }
  if (SmddpSupports(f.s->instance, p.zero_stage)) {
    return {"PyTorch",
            {{"smdistributed", {{"dataparallel", {{"enabled", true}}}}}},
            "data parallel on " + f.s->instance.name +
                ": SageMaker's data parallelism library (SMDDP)"};
  }
  return {"PyTorch",
          {{"torch_distributed", {{"enabled", true}}}},
          "data parallel; SMDDP does not run on " + f.s->instance.name +
              (p.zero_stage > 0 ? " with sharded states" : "") + ": torchrun"};
}

std::string Line(const std::string& key, const std::string& value) {
  return "    " + key + "=" + value + ",\n";
}

}  // namespace

bool SmpV2Supports(const InstanceType& t) { return t.RunsSagemakerLibrary("smp-v2"); }

ojson SmpV2Parameters(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  ojson params = ojson::object();
  if (!SmpV2Supports(s.instance) || p.pp > 1) return params;
  if (p.shard_group > 0) params["hybrid_shard_degree"] = p.shard_group;
  if (p.tp > 1) params["tensor_parallel_degree"] = p.tp;
  for (const Strategy* st : kStrategies) {
    const int degree = p.*st->degree;
    if (degree > 1 && !st->smp_v2_key.empty()) params[std::string(st->smp_v2_key)] = degree;
  }
  if (p.ep > 1) params["expert_parallel_degree"] = p.ep;
  if (s.training.offload_activations && !params.empty()) params["sm_activation_offloading"] = true;
  return params;
}

BundleFile SagemakerRequest(const JobFacts& f) {
  const LaunchOptions& o = *f.options;
  ojson hyperparameters = ojson::object();
  for (const auto& [key, value] : f.hyperparameters) hyperparameters[key] = value;
  // Read by SageMaker's framework containers: the script and where its code is.
  hyperparameters["sagemaker_program"] = o.entry_point;
  hyperparameters["sagemaker_submit_directory"] = S3Join(o.s3_uri, "source/sourcedir.tar.gz");
  ojson r;
  r["TrainingJobName"] = f.job_name;
  r["AlgorithmSpecification"] = {
      {"TrainingImage", o.image_uri.empty() ? kImagePlaceholder : o.image_uri},
      {"TrainingInputMode", "File"}};
  r["RoleArn"] = o.role_arn.empty() ? kRolePlaceholder : o.role_arn;
  r["HyperParameters"] = hyperparameters;
  r["ResourceConfig"] = {{"InstanceType", "ml." + f.s->instance.name},
                         {"InstanceCount", f.nodes},
                         {"VolumeSizeInGB", f.volume_gb}};
  if (f.warm_pool_keep_alive_s > 0) {
    r["ResourceConfig"]["KeepAlivePeriodInSeconds"] = f.warm_pool_keep_alive_s;
  }
  if (f.s->cluster.pricing == Pricing::kTrainingPlan) {  // the reserved capacity it runs on
    r["ResourceConfig"]["TrainingPlanArn"] =
        o.training_plan_arn.empty() ? kTrainingPlanPlaceholder : o.training_plan_arn;
  }
  r["StoppingCondition"] = {{"MaxRuntimeInSeconds", f.max_runtime_s}};
  if (f.managed_spot) r["StoppingCondition"]["MaxWaitTimeInSeconds"] = f.max_wait_s;
  r["EnableManagedSpotTraining"] = f.managed_spot;
  if (f.managed_spot) {
    r["CheckpointConfig"] = {{"S3Uri", S3Join(o.s3_uri, "checkpoints")},
                             {"LocalPath", kCheckpointLocalPath}};
  }
  r["OutputDataConfig"] = {{"S3OutputPath", S3Join(o.s3_uri, "output")}};
  return {"sagemaker/create_training_job.json", r.dump(2) + "\n", false};
}

BundleFile SagemakerScript(const JobFacts& f) {
  const LaunchOptions& o = *f.options;
  const Distribution d = ChooseDistribution(f);
  const bool tf = std::string(d.estimator) == "TensorFlow";
  std::string py =
      "#!/usr/bin/env python3\n# sagemaker/launch.py: starts the job with the SageMaker "
      "Python SDK (pip install sagemaker).\n# " +
      f.Describe() +
      "\n# Made by `trainsim launch` (docs/launch.md). Run it from the folder that "
      "holds the training code:\n# source_dir=\".\" uploads that folder.\n"
      "# distribution: " +
      d.why + "\n";
  py += std::string("from sagemaker.") + (tf ? "tensorflow" : "pytorch") + " import " +
        d.estimator + "\n\nestimator = " + d.estimator + "(\n";
  py += Line("entry_point", PyString(o.entry_point));
  py += Line("source_dir", PyString("."));
  py += Line("role", PyString(o.role_arn.empty() ? kRolePlaceholder : o.role_arn));
  if (o.image_uri.empty()) {
    py += Line("framework_version", PyString(d.framework_version));
    py += Line("py_version", PyString(d.py_version));
  } else {
    py += Line("image_uri", PyString(o.image_uri));
  }
  py += Line("instance_type", PyString("ml." + f.s->instance.name));
  py += Line("instance_count", std::to_string(f.nodes));
  py += Line("volume_size", std::to_string(f.volume_gb));
  py += Line("max_run", std::to_string(f.max_runtime_s));
  if (f.warm_pool_keep_alive_s > 0) {
    py += Line("keep_alive_period_in_seconds", std::to_string(f.warm_pool_keep_alive_s));
  }
  py += Line("use_spot_instances", f.managed_spot ? "True" : "False");
  if (f.managed_spot) {
    py += Line("max_wait", std::to_string(f.max_wait_s));
    py += Line("checkpoint_s3_uri", PyString(S3Join(o.s3_uri, "checkpoints")));
    py += Line("checkpoint_local_path", PyString(kCheckpointLocalPath));
  }
  py += Line("output_path", PyString(S3Join(o.s3_uri, "output")));
  ojson hyperparameters = ojson::object();
  for (const auto& [key, value] : f.hyperparameters) hyperparameters[key] = value;
  py += Line("hyperparameters", Py(hyperparameters, 4));
  py += Line("distribution", Py(d.config, 4));
  py += ")\nestimator.fit(job_name=" + PyString(f.job_name) + ")\n";
  return {"sagemaker/launch.py", py, true};
}

}  // namespace trainsim::launch
