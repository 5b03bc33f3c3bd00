#include "cli/launch_cmd.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "cli/args.h"
#include "cli/local_cmd.h"
#include "core/catalog.h"
#include "launch/bundle.h"
#include "launch/bundle_writer.h"
#include "launch/hosts.h"
#include "launch/names.h"
#include "launch/plan_file.h"
#include "launch/submit.h"

namespace trainsim {
namespace {

using launch::Target;

const char kLaunchUsage[] =
    "usage: trainsim launch PLAN [--out DIR] [--target LIST] [--job-name NAME] [--s3 URI]\n"
    "                            [--role ARN] [--image URI] [--entry-point FILE] [--hosts FILE]\n"
    "                            [--volume-gb N] [--catalog FILE] [--backend bundle|local]\n"
    "                            [--training-plan-arn ARN] [--capacity-reservation-id ID]\n"
    "                            [--submit [--yes]]\n"
    "       trainsim launch PLAN --backend local [--ranks N] [--steps N] [--profile FILE]\n"
    "                            [--checkpoint-every N] [--resume] [--out DIR]\n"
    "  --out DIR           where the bundle goes (default launch-out)\n"
    "  --target LIST       all (default), or some of sagemaker,slurm,scripts; with --submit\n"
    "                      exactly one of sagemaker, slurm\n"
    "  --job-name NAME     SageMaker and Slurm job name (default: the scenario's name)\n"
    "  --s3 URI            s3://BUCKET/PREFIX for checkpoints, output and code (sagemaker)\n"
    "  --role ARN          IAM role SageMaker assumes (needed to submit to SageMaker)\n"
    "  --image URI         training image of the SageMaker request (needed to submit)\n"
    "  --entry-point FILE  the training script (default train.py)\n"
    "  --hosts FILE        hosts for torchrun and mpirun, one per node (default: placeholders)\n"
    "  --volume-gb N       SageMaker volume per instance (default: max(100, 2 x checkpoint))\n"
    "  --training-plan-arn ARN  training-plan pricing: the SageMaker training plan to run on\n"
    "  --capacity-reservation-id ID  capacity-block pricing: the Capacity Block (cr-...)\n"
    "  --catalog FILE      add instance types from an extra catalog file\n"
    "  --backend B         bundle (default): write the bundle; local: train here for real\n"
    "  --ranks N           local: MPI processes (default: this machine's cores)\n"
    "  --steps N           local: optimizer steps (default 30)\n"
    "  --profile FILE      local: cpu profile from trainsim-calibrate, for the prediction\n"
    "  --device D          local: cpu (default; one rank per core) or cuda (one rank per GPU,\n"
    "                      CUDA + cuBLAS + NCCL; the prediction needs a cuda profile and --ranks\n"
    "                      equal to the plan instance's GPUs)\n"
    "  --checkpoint-every N  local: steps between checkpoints (default 10; 0 = none)\n"
    "  --resume            local: continue from the last checkpoint in DIR/local\n"
    "  --submit            print the command that submits --target; with --yes, run it\n"
    "  --yes               really submit (needs aws or sbatch on PATH)\n"
    "Nothing is submitted without --submit --yes (docs/launch.md).\n";

struct LaunchArgs {
  std::string plan, out = "launch-out", catalog, hosts, backend = "bundle";
  launch::LaunchOptions options;
  launch::LocalOptions local;
  bool submit = false, yes = false, help = false;
  bool local_option = false;  // a --backend local option was given
};

// The options that take a string, and where each goes.
std::vector<std::pair<const char*, std::string*>> StringOptions(LaunchArgs& a) {
  return {{"--out", &a.out},
          {"--catalog", &a.catalog},
          {"--hosts", &a.hosts},
          {"--backend", &a.backend},
          {"--job-name", &a.options.job_name},
          {"--s3", &a.options.s3_uri},
          {"--role", &a.options.role_arn},
          {"--image", &a.options.image_uri},
          {"--entry-point", &a.options.entry_point},
          {"--training-plan-arn", &a.options.training_plan_arn},
          {"--capacity-reservation-id", &a.options.capacity_reservation_id},
          {"--profile", &a.local.profile},
          {"--device", &a.local.device}};
}

const std::vector<OptionSpec>& LaunchOptions() {
  static const std::vector<OptionSpec> options = [] {
    std::vector<OptionSpec> o = {{"--submit"},
                                 {"--yes"},
                                 {"--resume"},
                                 {"--target", "a value"},
                                 {"--volume-gb", "a value"},
                                 {"--ranks", "a value"},
                                 {"--steps", "a value"},
                                 {"--checkpoint-every", "a value"}};
    LaunchArgs any;
    for (const auto& [name, field] : StringOptions(any)) o.push_back({name, "a value"});
    return o;
  }();
  return options;
}

// Reads the parsed options into `a`.
Status ReadOptions(const ParsedArgs& args, LaunchArgs& a) {
  if (args.positional().size() > 1) return Status::InvalidInput("launch takes one plan file");
  if (!args.positional().empty()) a.plan = args.positional()[0];
  a.submit = args.Has("--submit");
  a.yes = args.Has("--yes");
  a.local.resume = args.Has("--resume");
  for (const auto& [name, field] : StringOptions(a)) *field = args.Value(name, *field);
  Expected<int> gb = args.Int("--volume-gb", 1, 16384, "a size in GB", a.options.volume_gb);
  if (!gb.ok()) return gb.status();
  a.options.volume_gb = *gb;
  for (auto [name, count] : {std::pair{"--ranks", &a.local.ranks},
                             {"--steps", &a.local.steps},
                             {"--checkpoint-every", &a.local.checkpoint_every}}) {
    const int min = std::string_view(name) == "--checkpoint-every" ? 0 : 1;
    Expected<int> v = args.Int(name, min, 1000000, "a whole number", *count);
    if (!v.ok()) return v.status();
    *count = *v;
  }
  for (const char* local :
       {"--ranks", "--steps", "--checkpoint-every", "--resume", "--profile", "--device"}) {
    a.local_option = a.local_option || args.Has(local);
  }
  if (args.Has("--target")) {
    Expected<std::vector<Target>> t = launch::ParseTargets(args.Value("--target"));
    if (!t.ok()) return t.status();
    a.options.targets = *t;
  }
  return Status::Ok();
}

Status CheckCombination(const LaunchArgs& a) {
  if (a.plan.empty())
    return Status::InvalidInput("launch needs a plan file (from `trainsim plan`)");
  if (a.backend != "bundle" && a.backend != "local") {
    return Status::InvalidInput("--backend: expected bundle or local, got \"" + a.backend + "\"");
  }
  if (a.yes && !a.submit) return Status::InvalidInput("--yes applies only with --submit");
  if (a.local.device != "cpu" && a.local.device != "cuda") {
    return Status::InvalidInput("--device: expected cpu or cuda, got \"" + a.local.device + "\"");
  }
  if (a.backend == "local" && a.submit) {
    return Status::InvalidInput("--submit applies to bundles, not to --backend local");
  }
  if (a.backend != "local" && a.local_option) {
    return Status::InvalidInput(
        "--ranks, --steps, --profile, --device, --checkpoint-every and --resume apply only with "
        "--backend local");
  }
  const std::vector<Target>& t = a.options.targets;
  if (a.submit && (t.size() != 1 || t[0] == Target::kScripts)) {
    return Status::InvalidInput(
        "--submit needs one --target: sagemaker, slurm, hyperpod-slurm or hyperpod-eks");
  }
  return Status::Ok();
}

Expected<LaunchArgs> ParseLaunchArgs(const std::vector<std::string>& words) {
  Expected<ParsedArgs> args = ParseArgs(words, LaunchOptions());
  if (!args.ok()) return args.status();
  LaunchArgs a;
  a.help = args->help();
  if (a.help) return a;
  a.local.ranks = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (Status st = ReadOptions(*args, a); !st.ok()) return st;
  if (Status st = CheckCombination(a); !st.ok()) return st;
  return a;
}

// --hosts: the file's hosts, and its absolute path for the scripts.
Status ReadHosts(LaunchArgs& a) {
  if (a.hosts.empty()) return Status::Ok();
  if (Status st = launch::ValidatePath(a.hosts, "--hosts"); !st.ok()) return st;
  Expected<std::vector<std::string>> hosts = launch::LoadHostsFile(a.hosts);
  if (!hosts.ok()) return hosts.status();
  a.options.hosts = *hosts;
  a.options.hosts_file = std::filesystem::absolute(a.hosts).lexically_normal().string();
  return Status::Ok();
}

Expected<launch::LaunchPlan> LoadPlan(const LaunchArgs& a) {
  Expected<Catalog> catalog = Catalog::LoadDefault(a.catalog);
  if (!catalog.ok()) return catalog.status();
  return launch::LoadPlanFile(a.plan, *catalog);
}

// No --submit: every submittable target's command, as a shell script.
void PrintDryRun(const LaunchArgs& a) {
  for (Target t : a.options.targets) {
    if (t == Target::kScripts) {
      std::cout << "# scripts: run " << launch::ShellQuote(a.out + "/torchrun.sh")
                << " on every node, or " << launch::ShellQuote(a.out + "/mpirun.sh")
                << " on the first host\n";
      continue;
    }
    std::cout << "# " << launch::ToString(t) << "\n";
    if (t == Target::kHyperpodSlurm || t == Target::kHyperpodEks) {
      const char* check =
          t == Target::kHyperpodSlurm ? "/hyperpod/check-slurm.sh" : "/hyperpod/check-eks.sh";
      std::cout << "# first " << launch::ShellQuote(a.out + check)
                << (t == Target::kHyperpodSlurm ? " on the cluster's head or login node\n"
                                                : " where kubectl reaches the cluster\n");
    }
    std::cout << launch::ShellJoin(launch::SubmitArgv(t, a.out)) << "\n";
  }
  std::cerr << "dry run: nothing submitted (--submit --target TARGET --yes submits)\n";
}

int SubmitBundle(const LaunchArgs& a) {
  const Target target = a.options.targets[0];
  launch::SpawnCommandRunner runner;
  const std::vector<std::string> argv = launch::SubmitArgv(target, a.out);
  if (a.yes && runner.Exists(argv[0]))
    std::cerr << "submitting: " << launch::ShellJoin(argv) << "\n";
  Expected<launch::SubmitOutcome> r = launch::Submit(target, a.out, a.yes, runner);
  if (!r.ok()) return Fail(r.status());
  if (!r->ran) {
    std::cout << launch::ShellJoin(r->argv) << "\n";
    std::cerr << "dry run: nothing submitted; add --yes to run the command above\n";
  }
  return 0;
}

int WriteAndSubmit(LaunchArgs& a, const launch::LaunchPlan& plan) {
  if (Status st = launch::ValidatePath(a.out, "--out"); !st.ok()) return Fail(st);
  Expected<launch::Bundle> bundle = launch::MakeBundle(plan, a.options);
  if (!bundle.ok()) return Fail(bundle.status());
  if (a.submit && a.yes) {  // refuse before writing anything
    if (Status st = launch::CheckSubmittable(a.options.targets[0], a.options,
                                             plan.scenario.cluster.pricing);
        !st.ok()) {
      return Fail(st);
    }
  }
  if (Status st = launch::WriteBundle(a.out, *bundle); !st.ok()) return Fail(st);
  std::cerr << "launch bundle for " << bundle->job_name << " written to " << a.out << " ("
            << bundle->files.size() << " files; " << a.out << "/README.md says what to fill in)\n";
  for (const std::string& w : bundle->warnings) std::cerr << "warning: " << w << "\n";
  if (!a.submit) {
    PrintDryRun(a);
    return 0;
  }
  return SubmitBundle(a);
}

}  // namespace

int LaunchCommand(const std::vector<std::string>& words) {
  Expected<LaunchArgs> args = ParseLaunchArgs(words);
  if (!args.ok()) {
    std::cerr << "trainsim: " << args.status().message() << "\n" << kLaunchUsage;
    return 1;
  }
  LaunchArgs& a = *args;
  if (a.help) {
    std::cout << kLaunchUsage;
    return 0;
  }
  if (Status st = ReadHosts(a); !st.ok()) return Fail(st);
  Expected<launch::LaunchPlan> plan = LoadPlan(a);
  if (!plan.ok()) return Fail(plan.status());
  if (a.backend == "local") {
    a.local.out_dir = a.out;
    a.local.gpu_instance = plan->scenario.instance.name;
    return RunLocalCommand(*plan, a.local);
  }
  return WriteAndSubmit(a, *plan);
}

}  // namespace trainsim
