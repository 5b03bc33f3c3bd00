#include "cli/observe_cmd.h"

#include <iostream>

#include "cli/args.h"
#include "cli/observe_common.h"
#include "observe/chakra.h"
#include "observe/file_kind.h"
#include "observe/run_log.h"
#include "observe/sagemaker.h"

namespace trainsim {
namespace {

using namespace observe_cli;

const char kUsage[] =
    "usage: trainsim observe FILE... [--format FORMAT] [--log-stream NAME]\n"
    "                        [--op TEST] [--warmup N] [--scenario FILE | --plan FILE]\n"
    "                        [--profile FILE] [--catalog FILE] [--json]\n"
    "                        [--instance TYPE [--refit PROFILE_OUT]]\n"
    "\n"
    "  FILE            a training log (Megatron-LM iteration lines, trainsim-train's\n"
    "                  steps.jsonl, ...), a PyTorch profiler (Kineto) trace, an nccl-tests\n"
    "                  output, a SageMaker job's CloudWatch metrics or log stream export or\n"
    "                  Debugger system-metric files; one run per file\n"
    "  --format F      the files' format (default: detected from their lines):\n"
    "                  megatron, deepspeed, trainsim-local, torchtitan, hf-trainer,\n"
    "                  nccl-tests, kineto, chakra, cloudwatch, cloudwatch-logs, debugger\n"
    "  --op TEST       nccl-tests: the test, when the output does not name it\n"
    "  --warmup N      step lines (a trace's steps) left out at the start (default 1)\n"
    "  --scenario FILE compare the logs' steady step with the simulated step of this\n"
    "                  scenario (the configuration the run used)\n"
    "  --plan FILE     ... or of this plan's recommendation (trainsim plan --out)\n"
    "  --profile FILE  simulate with this hardware profile\n"
    "  --catalog FILE  extra instance types\n"
    "  --instance TYPE the instance type the run used: nccl-tests rows and a trace's\n"
    "                  sized collectives are set beside the simulated collective\n"
    "  --refit OUT     nccl-tests over 2+ nodes: fit the network efficiency of TYPE to\n"
    "                  the rows of 128 MiB and more and write a profile with it (added\n"
    "                  to --profile's when given); traces: --profile's profile with the\n"
    "                  GEMMs they timed and, with --scenario, the memory-bound rate\n"
    "  --log-stream S  a CloudWatch Logs export of several streams: the one to read\n"
    "  --json          one JSON object on stdout (docs/observe.md)\n";

// The options that take a string, and where each goes.
std::vector<std::pair<const char*, std::string*>> StringOptions(ObserveArgs& a) {
  return {{"--format", &a.format},     {"--op", &a.op},           {"--scenario", &a.scenario},
          {"--plan", &a.plan},         {"--profile", &a.profile}, {"--catalog", &a.catalog},
          {"--instance", &a.instance}, {"--refit", &a.refit},     {"--log-stream", &a.log_stream}};
}

// *help: --help was given (nothing else is read then).
Expected<ObserveArgs> Parse(const std::vector<std::string>& words, bool* help) {
  ObserveArgs a;
  std::vector<OptionSpec> options = {{"--json"}, {"--warmup", "a value"}};
  for (const auto& [name, field] : StringOptions(a)) options.push_back({name, "a value"});
  Expected<ParsedArgs> args = ParseArgs(words, options);
  if (!args.ok()) return args.status();
  *help = args->help();
  if (*help) return a;
  a.files = args->positional();
  a.json = args->Has("--json");
  for (const auto& [name, field] : StringOptions(a)) *field = args->Value(name);
  Expected<int> warmup = args->Int("--warmup", 0, 1000000, "a whole number", a.warmup);
  if (!warmup.ok()) return warmup.status();
  a.warmup = *warmup;
  if (a.files.empty()) return Status::InvalidInput("observe needs at least one file");
  if (!a.scenario.empty() && !a.plan.empty()) {
    return Status::InvalidInput("--scenario and --plan: give one configuration to compare with");
  }
  return a;
}

}  // namespace

int ObserveCommand(const std::vector<std::string>& words) {
  bool help = false;
  Expected<ObserveArgs> a = Parse(words, &help);
  if (!a.ok()) {
    std::cerr << "trainsim: " << a.status().message() << "\n" << kUsage;
    return 1;
  }
  if (help) {
    std::cout << kUsage;
    return 0;
  }
  if (a->format == "nccl-tests" ||
      (a->format.empty() && observe::LooksLikeNcclTests(a->files[0]))) {
    return ObserveNccl(*a);
  }
  const std::string head = a->format.empty() ? observe::FileHead(a->files[0]) : std::string();
  if (a->format == "kineto" || a->format == "chakra" ||
      (a->format.empty() && (observe::LooksLikeKineto(head) || observe::LooksLikeChakra(head)))) {
    return ObserveTraces(*a);
  }
  const std::optional<observe::SageMakerFormat> sagemaker = SageMakerFormatOf(*a, a->files[0]);
  if (sagemaker == observe::SageMakerFormat::kCloudWatch ||
      sagemaker == observe::SageMakerFormat::kDebugger) {
    return ObserveSystemMetrics(*a, *sagemaker);
  }
  if (!a->format.empty() && !sagemaker) {
    if (Expected<observe::LogFormat> f = observe::ParseLogFormat(a->format, "--format"); !f.ok()) {
      std::cerr << "trainsim: " << f.status().message()
                << " (or nccl-tests, kineto, chakra, cloudwatch, cloudwatch-logs, debugger)\n";
      return 1;
    }
  }
  if (!a->log_stream.empty() && sagemaker != observe::SageMakerFormat::kCloudWatchLogs) {
    std::cerr << "trainsim: --log-stream applies to a CloudWatch Logs export "
                 "(--format cloudwatch-logs)\n";
    return 1;
  }
  if (!a->op.empty()) {
    std::cerr << "trainsim: --op applies to nccl-tests output (--format nccl-tests)\n";
    return 1;
  }
  return ObserveLogs(*a);
}

}  // namespace trainsim
