#include "launch/bundle.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/scenario_sections.h"
#include "core/strategy.h"
#include "core/units.h"
#include "launch/bundle_parts.h"
#include "launch/names.h"
#include "planner/job/pricing.h"

namespace trainsim::launch {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The job name: --job-name, else the scenario's name when it is a valid one.
Expected<std::string> ResolveJobName(const Scenario& s, const LaunchOptions& o) {
  if (!o.job_name.empty()) {
    if (Status st = ValidateJobName(o.job_name, "--job-name"); !st.ok()) return st;
    return o.job_name;
  }
  if (!ValidateJobName(s.name, "").ok()) {
    return Status::InvalidInput("the scenario name \"" + s.name +
                                "\" is not a valid SageMaker training job name (1 to 63 letters, "
                                "digits and hyphens, starting and ending with a letter or digit): "
                                "give one with --job-name NAME");
  }
  return s.name;
}

// The names that come from the plan and go into comments and READMEs.
Status CheckPlanNames(const LaunchPlan& plan) {
  const Scenario& s = plan.scenario;
  if (Status st = ValidateLabel(s.name, plan.file + ": scenario name"); !st.ok()) return st;
  return ValidateLabel(s.instance.name, plan.file + ": instance type");
}

// What the targets need: SageMaker an S3 URI and an AWS instance type, HyperPod an AWS instance
// type, EKS a job name that is a Kubernetes object name.
Status CheckTargets(const Scenario& s, const LaunchOptions& o, const std::string& job_name) {
  if (o.targets.empty()) return Status::InvalidInput("--target: no target given");
  if (std::count(o.targets.begin(), o.targets.end(), Target::kHyperpodEks) > 0) {
    if (Status st = ValidateKubernetesName(job_name, "the hyperpod-eks target's job name");
        !st.ok()) {
      return st;
    }
  }
  for (Target t : o.targets) {
    if (t != Target::kSagemaker && t != Target::kHyperpodSlurm && t != Target::kHyperpodEks) {
      continue;
    }
    if (!s.instance.is_aws) {
      return Status::InvalidInput(std::string("the ") + ToString(t) +
                                  " target needs an AWS instance type; " + s.instance.name +
                                  " is a reference system");
    }
  }
  if (std::count(o.targets.begin(), o.targets.end(), Target::kSagemaker) == 0) {
    return Status::Ok();
  }
  if (o.s3_uri.empty()) {
    return Status::InvalidInput(
        "--s3 is required for the sagemaker target (checkpoints, output and code go there): give "
        "--s3 s3://BUCKET/PREFIX, or leave SageMaker out with --target slurm,scripts");
  }
  return Status::Ok();
}

// The values given (an empty one means "not given").
Status CheckValues(const LaunchOptions& o) {
  const struct {
    Status (*check)(std::string_view, std::string_view);
    const std::string& value;
    const char* option;
  } kValues[] = {{ValidateS3Uri, o.s3_uri, "--s3"},
                 {ValidateRoleArn, o.role_arn, "--role"},
                 {ValidateImageUri, o.image_uri, "--image"}};
  for (const auto& v : kValues) {
    if (v.value.empty()) continue;
    if (Status st = v.check(v.value, v.option); !st.ok()) return st;
  }
  if (Status st = ValidateEntryPoint(o.entry_point, "--entry-point"); !st.ok()) return st;
  if (!o.training_plan_arn.empty()) {
    if (Status st = ValidateTrainingPlanArn(o.training_plan_arn, "--training-plan-arn"); !st.ok())
      return st;
  }
  if (!o.capacity_reservation_id.empty()) {
    if (Status st =
            ValidateCapacityReservationId(o.capacity_reservation_id, "--capacity-reservation-id");
        !st.ok())
      return st;
  }
  if (o.volume_gb < 0 || o.volume_gb > 16384) {
    return Status::InvalidInput("--volume-gb: " + std::to_string(o.volume_gb) +
                                " is out of range (1 to 16384)");
  }
  return Status::Ok();
}

// --hosts: a safe path and one valid host per node.
Status CheckHosts(const Scenario& s, const LaunchOptions& o) {
  if (o.hosts_file.empty()) return Status::Ok();
  if (Status st = ValidatePath(o.hosts_file, "--hosts"); !st.ok()) return st;
  for (const std::string& h : o.hosts) {
    if (Status st = ValidateHostName(h, o.hosts_file); !st.ok()) return st;
  }
  const size_t n = o.hosts.size();
  if (static_cast<int>(n) == s.cluster.nodes) return Status::Ok();
  return Status::InvalidInput("--hosts " + o.hosts_file + ": lists " + std::to_string(n) +
                              (n == 1 ? " host" : " hosts") + " for the plan's " +
                              std::to_string(s.cluster.nodes) + " nodes");
}

// A number of the plan's search section (kept in its scenario_json), or nullopt.
std::optional<double> SearchNumber(const LaunchPlan& plan, const char* key) {
  const nlohmann::json& doc = plan.plan;
  if (!doc.contains("scenario_json") || !doc["scenario_json"].is_object()) return std::nullopt;
  const nlohmann::json& search = doc["scenario_json"].value("search", nlohmann::json::object());
  if (!search.is_object() || !search.contains(key) || !search[key].is_number()) return std::nullopt;
  return search[key].get<double>();
}

// Bytes of one checkpoint: the scenario's search.checkpoint_bytes, else the model state
// (planner/job/pricing.h).
double CheckpointBytes(const LaunchPlan& plan) {
  SearchConfig q;
  q.checkpoint_bytes = SearchNumber(plan, "checkpoint_bytes");
  return planner::CheckpointBytes(plan.scenario, q);
}

int64_t HoursWithMargin_s(double expected_hours) {
  return static_cast<int64_t>(kSecondsPerHour) *
         std::max<int64_t>(1, static_cast<int64_t>(std::ceil(expected_hours * kTimeMargin)));
}

std::vector<std::pair<std::string, std::string>> Hyperparameters(const JobFacts& f) {
  const Scenario& s = *f.s;
  std::vector<std::pair<std::string, std::string>> out = {
      {"tp", std::to_string(s.parallel.tp)},
      {"pp", std::to_string(s.parallel.pp)},
      {"dp", std::to_string(s.parallel.dp)},
      {"zero_stage", std::to_string(s.parallel.zero_stage)},
      {"micro_batch", std::to_string(s.training.micro_batch)},
      {"global_batch", std::to_string(s.training.global_batch)},
      {"gradient_accumulation_steps", std::to_string(f.microbatches)},
      {"precision", ToString(s.training.precision)},
      {"recompute", ToString(s.training.recompute)},
      {"schedule", ToString(s.parallel.schedule)},
      {"virtual_stages", std::to_string(s.parallel.virtual_stages)},
      {"sequence_parallel", s.training.sequence_parallel ? "true" : "false"},
      {"steps", std::to_string(f.steps)},
      {"checkpoint_interval_s", std::to_string(std::llround(f.plan->checkpoint_interval_s))},
  };
  // After dp: the expert parallel degree and each strategy's, where the plan has them.
  auto at = out.begin() + 3;
  if (s.parallel.ep > 1) at = out.insert(at, {"ep", std::to_string(s.parallel.ep)}) + 1;
  for (const Strategy* st : kStrategies) {
    const int degree = s.parallel.*st->degree;
    if (degree > 1) at = out.insert(at, {std::string(st->name), std::to_string(degree)}) + 1;
  }
  // After zero_stage: with hybrid sharding the group (the script builds its (replicate,
  // shard) device mesh from it), then for ZeRO-2/3 FSDP's sharding strategy.
  ++at;
  if (s.parallel.shard_group > 0) {
    at = out.insert(at, {"shard_group", std::to_string(s.parallel.shard_group)}) + 1;
  }
  if (const std::string fsdp = FsdpShardingStrategy(s.parallel); !fsdp.empty()) {
    out.insert(at, {"fsdp_sharding_strategy", fsdp});
  }
  // After recompute: selective recompute's modules where they are not the default.
  if (s.training.recompute == Recompute::kSelective &&
      s.training.recompute_modules != kRecomputeCoreAttn) {
    std::string modules;
    for (const std::string& name : RecomputeModuleNames(s.training.recompute_modules)) {
      modules += (modules.empty() ? "" : ",") + name;
    }
    const auto recompute = std::find_if(out.begin(), out.end(),
                                        [](const auto& kv) { return kv.first == "recompute"; });
    out.insert(recompute + 1, {"recompute_modules", modules});
  }
  return out;
}

JobFacts MakeFacts(const LaunchPlan& plan, const LaunchOptions& o, std::string job_name) {
  JobFacts f;
  f.plan = &plan;
  f.s = &plan.scenario;
  f.options = &o;
  f.job_name = std::move(job_name);
  f.nodes = plan.scenario.cluster.nodes;
  f.gpus_per_node = plan.scenario.instance.gpus;
  f.microbatches = plan.scenario.microbatches_per_pipeline();
  f.steps = static_cast<int64_t>(std::ceil(plan.steps));
  f.hyperparameters = Hyperparameters(f);
  f.managed_spot = plan.scenario.cluster.pricing == Pricing::kSagemakerSpot;
  if (plan.scenario.cluster.pricing == Pricing::kSagemaker) {
    f.warm_pool_keep_alive_s =
        std::llround(SearchNumber(plan, "warm_pool_keep_alive_s").value_or(0));
  }
  f.max_runtime_s = HoursWithMargin_s(plan.expected_hours);
  if (f.managed_spot) {
    if (plan.max_runtime_s) f.max_runtime_s = static_cast<int64_t>(std::ceil(*plan.max_runtime_s));
    f.max_wait_s = plan.max_wait_s ? static_cast<int64_t>(std::ceil(*plan.max_wait_s)) : 0;
    f.max_wait_s = std::max(f.max_wait_s, f.max_runtime_s);  // SageMaker: MaxWait >= MaxRuntime
  }
  if (f.max_runtime_s > kSagemakerMaxRuntime_s) {  // one job cannot run longer
    f.runtime_capped = true;
    f.max_runtime_s = kSagemakerMaxRuntime_s;
    if (f.managed_spot) f.max_wait_s = std::max(f.max_wait_s, f.max_runtime_s);
  }
  const double checkpoint_gib = CheckpointBytes(plan) / kGiB;
  f.volume_gb = o.volume_gb > 0 ? o.volume_gb
                                : std::max(100, static_cast<int>(std::ceil(2 * checkpoint_gib)));
  f.slurm_minutes = std::max<int64_t>(
      10, static_cast<int64_t>(std::ceil(plan.expected_hours * 60 * kTimeMargin)));
  return f;
}

// What the SageMaker and HyperPod launchers run differently from the plan.
std::vector<std::string> LauncherWarnings(const JobFacts& f) {
  const ParallelConfig& p = f.s->parallel;
  std::vector<std::string> out;
  const bool smp_v2 = !SmpV2Parameters(*f.s).empty();
  const Strategy* st = FirstStrategy(p);
  if ((p.ep > 1 || st) && !smp_v2 && f.Has(Target::kSagemaker)) {
    const std::string what =
        p.ep > 1 ? "parallel.ep " + std::to_string(p.ep) + " (--ep)"
                 : Cat("parallel.", st->name, " ", p.*st->degree, " (--", st->name, ")");
    out.push_back(what + ": SMP v2, which has expert and context parallelism, does not run " +
                  (p.pp > 1 ? std::string("pipeline stages") : "on " + f.s->instance.name) +
                  ", so sagemaker/launch.py's distribution does not set it: the training script "
                  "must apply it itself (megatron_args.sh has Megatron-LM's arguments)");
  }
  if (smp_v2 && p.zero_stage == 1 && (f.Has(Target::kSagemaker) || f.Has(Target::kHyperpodSlurm))) {
    out.push_back(
        "ZeRO-1 under SMP v2: SMP v2 runs PyTorch FSDP, which has no optimizer-only sharding; "
        "FSDP NO_SHARD keeps the whole optimizer state on every GPU (more memory than planned) "
        "and SHARD_GRAD_OP is ZeRO-2 (other communication): plan with ZeRO-0 or ZeRO-2 for an "
        "exact match");
  }
  const Pricing pricing = f.s->cluster.pricing;
  if (pricing == Pricing::kTrainingPlan && f.Has(Target::kSagemaker)) {
    out.push_back(
        "training-plan: sagemaker/create_training_job.json runs on the plan "
        "(ResourceConfig.TrainingPlanArn); sagemaker/launch.py does not pass it and would run "
        "on demand: submit the request");
  }
  if (pricing == Pricing::kCapacityBlock && f.Has(Target::kSagemaker)) {
    out.push_back(
        "capacity-block: a SageMaker training job cannot run in an EC2 Capacity Block; the "
        "SageMaker files run on demand (plan with training-plan pricing for reserved SageMaker "
        "capacity)");
  }
  if (pricing == Pricing::kTrainingPlan &&
      (f.Has(Target::kHyperpodSlurm) || f.Has(Target::kHyperpodEks))) {
    out.push_back(
        "training-plan: a HyperPod cluster runs on a training plan only when its instance group "
        "was created with it; the hyperpod files do not set it");
  }
  if (pricing == Pricing::kSpotElastic) {
    out.push_back(
        "spot-elastic: the plan assumes the job keeps training on the replicas left after a "
        "reclaim, with the state in memory (as Parcae, Oobleck or Bamboo do); the launchers "
        "here start a fixed fleet, and torchrun's elastic mode (--nnodes=MIN:MAX) restarts "
        "every worker from the latest checkpoint at each change, which costs a reload per "
        "change instead: plan with spot to price that");
  }
  return out;
}

}  // namespace

std::string FsdpShardingStrategy(const ParallelConfig& p) {
  const bool hybrid = p.shard_group > 0;
  // ZeRO-3 without resharding after forward is FSDP's SHARD_GRAD_OP.
  const bool keep = p.zero_stage == 2 || (p.zero_stage == 3 && !p.reshard_after_forward);
  if (p.zero_stage == 3 && !keep) return hybrid ? "HYBRID_SHARD" : "FULL_SHARD";
  if (keep) return hybrid ? "_HYBRID_SHARD_ZERO2" : "SHARD_GRAD_OP";
  return "";
}

const char* ToString(Target t) {
  switch (t) {
    case Target::kSagemaker:
      return "sagemaker";
    case Target::kSlurm:
      return "slurm";
    case Target::kScripts:
      return "scripts";
    case Target::kHyperpodSlurm:
      return "hyperpod-slurm";
    case Target::kHyperpodEks:
      return "hyperpod-eks";
  }
  return "?";
}

Expected<std::vector<Target>> ParseTargets(std::string_view list) {
  if (list == "all") return std::vector<Target>(std::begin(kAllTargets), std::end(kAllTargets));
  std::vector<Target> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, comma - start);
    bool found = false;
    for (Target t : kAllTargets) {
      if (name != ToString(t)) continue;
      found = true;
      if (std::count(out.begin(), out.end(), t)) {
        return Status::InvalidInput("--target: " + std::string(name) + " is listed twice");
      }
      out.push_back(t);
    }
    if (!found) {
      return Status::InvalidInput("--target: unknown target \"" + std::string(name) +
                                  "\"; expected all, or a comma-separated list of sagemaker, "
                                  "slurm, scripts, hyperpod-slurm, hyperpod-eks");
    }
    start = comma + 1;
  }
  return out;
}

bool JobFacts::Has(Target t) const {
  return std::count(options->targets.begin(), options->targets.end(), t) > 0;
}

std::string JobFacts::Describe() const {
  const ParallelConfig& p = s->parallel;
  std::string schedule = p.pp > 1 ? std::string(", ") + ToString(p.schedule) : "";
  if (p.pp > 1 && p.schedule == Schedule::kInterleaved) {
    schedule += " x" + std::to_string(p.virtual_stages);
  }
  return s->name + ": " + std::to_string(nodes) + " x " + s->instance.name + " (" +
         std::to_string(s->total_gpus()) + " GPUs), tp " + std::to_string(p.tp) + ", pp " +
         std::to_string(p.pp) + ", dp " + std::to_string(p.dp) + ", ZeRO-" +
         std::to_string(p.zero_stage) +
         (p.shard_group > 0 ? ", hybrid shard " + std::to_string(p.shard_group) : "") +
         ", micro batch " + std::to_string(s->training.micro_batch) + ", " +
         std::to_string(microbatches) + (microbatches == 1 ? " microbatch, " : " microbatches, ") +
         ToString(s->training.recompute) + " recompute" + schedule + ", " +
         ToString(s->training.precision) + "; priced " + ToString(s->cluster.pricing) +
         ", expected " + Fixed(plan->expected_hours, 2) + " h";
}

std::vector<std::string> JobFacts::ScriptArgs() const {
  std::vector<std::string> args = {options->entry_point};
  for (const auto& [key, value] : hyperparameters) {
    args.push_back("--" + key);
    args.push_back(value);
  }
  return args;
}

std::string ScriptHeader(const JobFacts& f, const std::string& what) {
  return "#!/usr/bin/env bash\n# " + what + "\n# " + f.Describe() +
         "\n# Made by `trainsim launch` (docs/launch.md); every value is single-quoted.\n"
         "set -euo pipefail\n";
}

std::string CommandLines(const std::vector<std::string>& argv, const std::vector<size_t>& raw) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const bool option = argv[i].size() > 1 && argv[i][0] == '-';
    // A word after an option is its value, unless that option carries one ("--x=1").
    const bool after_value =
        i > 0 && (argv[i - 1][0] != '-' || argv[i - 1].find('=') != std::string::npos);
    if (i > 0) out += option || after_value ? " \\\n  " : " ";
    const bool is_raw = std::count(raw.begin(), raw.end(), i) > 0;
    out += is_raw ? argv[i] : ShellQuote(argv[i]);
  }
  return out + "\n";
}

std::vector<std::string> NetworkEnv(const JobFacts& f) {
  if (f.s->instance.is_aws && f.s->instance.efa) return {"FI_PROVIDER=efa"};
  return {};
}

Expected<Bundle> MakeBundle(const LaunchPlan& plan, const LaunchOptions& options) {
  if (Status st = CheckPlanNames(plan); !st.ok()) return st;
  Expected<std::string> job_name = ResolveJobName(plan.scenario, options);
  if (!job_name.ok()) return job_name.status();
  for (Status st : {CheckTargets(plan.scenario, options, *job_name), CheckValues(options),
                    CheckHosts(plan.scenario, options)}) {
    if (!st.ok()) return st;
  }
  const JobFacts f = MakeFacts(plan, options, *job_name);
  std::vector<BundleFile> files;
  if (f.Has(Target::kSagemaker)) {
    files.push_back(SagemakerRequest(f));
    files.push_back(SagemakerScript(f));
  }
  if (f.Has(Target::kScripts)) {
    for (BundleFile& b : LauncherScripts(f)) files.push_back(std::move(b));
  }
  if (f.Has(Target::kSlurm)) files.push_back(SlurmScript(f, false));
  if (f.Has(Target::kHyperpodSlurm)) {
    for (BundleFile& b : HyperpodSlurmFiles(f)) files.push_back(std::move(b));
  }
  if (f.Has(Target::kHyperpodEks)) {
    for (BundleFile& b : HyperpodEksFiles(f)) files.push_back(std::move(b));
  }
  const std::optional<std::string> deepspeed_gap = DeepSpeedGap(plan.scenario);
  if (!deepspeed_gap) files.push_back(DeepSpeedConfig(f));
  std::optional<std::string> megatron_gap;
  if (plan.scenario.model.kind == ModelKind::kTransformer) {
    megatron_gap = MegatronGap(plan.scenario);
    if (!megatron_gap) files.push_back(MegatronArgs(f));
  }
  Bundle bundle;
  bundle.job_name = f.job_name;
  bundle.files.push_back(Readme(f, files));
  if (f.runtime_capped && f.Has(Target::kSagemaker)) bundle.warnings.push_back(CappedRuntime(f));
  if (deepspeed_gap) {
    bundle.warnings.push_back("deepspeed_config.json is not written: " + *deepspeed_gap);
  }
  if (megatron_gap) {
    bundle.warnings.push_back("megatron_args.sh is not written: " + *megatron_gap);
  }
  for (std::string& w : LauncherWarnings(f)) bundle.warnings.push_back(std::move(w));
  for (BundleFile& b : files) bundle.files.push_back(std::move(b));
  return bundle;
}

}  // namespace trainsim::launch
