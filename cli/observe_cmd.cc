#include "cli/observe_cmd.h"

#include <algorithm>
#include <fstream>
#include <iostream>

#include "cli/args.h"
#include "cli/observe_common.h"
#include "observe/chakra.h"
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

Expected<ObserveArgs> Parse(int argc, char** argv) {
  ObserveArgs a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) -> Status {
      if (i + 1 >= argc) return Status::InvalidInput(arg + " needs a value");
      *out = argv[++i];
      return Status::Ok();
    };
    Status st = Status::Ok();
    const std::pair<const char*, std::string*> kValues[] = {
        {"--format", &a.format},     {"--op", &a.op},           {"--scenario", &a.scenario},
        {"--plan", &a.plan},         {"--profile", &a.profile}, {"--catalog", &a.catalog},
        {"--instance", &a.instance}, {"--refit", &a.refit},     {"--log-stream", &a.log_stream}};
    const auto named = std::find_if(std::begin(kValues), std::end(kValues),
                                    [&](const auto& v) { return arg == v.first; });
    if (arg == "--json") {
      a.json = true;
    } else if (named != std::end(kValues)) {
      st = value(named->second);
    } else if (arg == "--warmup") {
      std::string v;
      st = value(&v);
      const std::optional<int> n = st.ok() ? ParseIntInRange(v, 0, 1000000) : std::nullopt;
      if (st.ok() && !n) {
        st = Status::InvalidInput("--warmup: expected a whole number from 0 to 1000000, got \"" +
                                  v + "\"");
      }
      a.warmup = n.value_or(a.warmup);
    } else if (arg.rfind("--", 0) == 0) {
      st = Status::InvalidInput("unknown option " + arg);
    } else {
      a.files.push_back(arg);
    }
    if (!st.ok()) return st;
  }
  if (a.files.empty()) return Status::InvalidInput("observe needs at least one file");
  if (!a.scenario.empty() && !a.plan.empty()) {
    return Status::InvalidInput("--scenario and --plan: give one configuration to compare with");
  }
  return a;
}

// A Kineto trace is JSON with a "traceEvents" array near its start.
bool LooksLikeKineto(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(1 << 16, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const size_t brace = head.find_first_not_of(" \t\r\n");
  return brace != std::string::npos && head[brace] == '{' &&
         head.find("\"traceEvents\"") != std::string::npos;
}

// An nccl-tests output has its column header ("... time   algbw   busbw #wrong ...").
bool LooksLikeNcclTests(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  for (int n = 0; n < 2000 && std::getline(in, line); ++n) {
    if (line.find("algbw") != std::string::npos && line.find("busbw") != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

int ObserveCommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  Expected<ObserveArgs> a = Parse(argc, argv);
  if (!a.ok()) {
    std::cerr << "trainsim: " << a.status().message() << "\n" << kUsage;
    return 1;
  }
  if (a->format == "nccl-tests" || (a->format.empty() && LooksLikeNcclTests(a->files[0]))) {
    return ObserveNccl(*a);
  }
  if (a->format == "kineto" || a->format == "chakra" ||
      (a->format.empty() &&
       (LooksLikeKineto(a->files[0]) || observe::LooksLikeChakra(Head(a->files[0]))))) {
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
