// The `trainsim` command: parses arguments, calls the libraries, prints.
// Exit codes: 0 ok, 1 bad input (including a configuration that does not
// fit in GPU memory), 2 internal error, 130 an interrupted sweep.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/launch_cmd.h"
#include "cli/observe_cmd.h"
#include "cli/plan_cmd.h"
#include "cli/sweep_cmd.h"
#include "core/catalog.h"
#include "core/durable_file.h"
#include "core/error_bands.h"
#include "core/model_zoo.h"
#include "core/sanitizer_mpi.h"
#include "core/scenario.h"
#include "core/strategy.h"
#include "core/units.h"
#include "planner/search/estimator.h"
#include "sim/simulate.h"

namespace trainsim {
namespace {

constexpr int kOk = 0, kBadInput = 1, kInternal = 2;

const char kUsage[] =
    "usage:\n"
    "  trainsim simulate SCENARIO [--json] [--trace FILE] [--full | --estimate]\n"
    "                             [--catalog FILE] [--profile FILE]\n"
    "  trainsim plan SCENARIO [--top K] [--jobs N] [--out FILE] [--json] [--catalog FILE]\n"
    "                         [--profile FILE]\n"
    "  trainsim sweep SCENARIO... [--out DIR] [--jobs N] [--simulate] [--catalog FILE]\n"
    "  trainsim launch PLAN [--out DIR] [--target LIST] [--job-name NAME] [--s3 URI]\n"
    "                       [--role ARN] [--image URI] [--entry-point FILE] [--hosts FILE]\n"
    "                       [--volume-gb N] [--backend bundle|local] [--submit [--yes]]\n"
    "  trainsim observe FILE... [--format F] [--scenario FILE | --plan FILE] [--json]\n"
    "  trainsim catalog list [--catalog FILE]\n"
    "  trainsim catalog show TYPE [--catalog FILE]\n"
    "  trainsim models\n"
    "  trainsim help\n"
    "\n"
    "  --json          print the result as one JSON object (docs/formats.md)\n"
    "  --trace FILE    write a Chrome/Perfetto trace of the step\n"
    "  --full          simulate every GPU and message (slow; for checking the fast mode)\n"
    "  --estimate      the fast estimator's closed-form step instead of a simulation\n"
    "                  (any cluster size; docs/planner.md section 2)\n"
    "  --catalog FILE  add instance types from an extra catalog file\n"
    "  --profile FILE  use a hardware profile from trainsim-calibrate (replaces the\n"
    "                  scenario's cluster.profile)\n"
    "  --out DIR       sweep: where the journal and results.csv/.json go (default sweep-out)\n"
    "  --jobs N        sweep: points evaluated at once (default: every core; docs/sweep.md)\n"
    "  launch: `trainsim launch --help` and docs/launch.md\n"
    "  observe: `trainsim observe --help` and docs/observe.md\n";

int Usage(const std::string& why) {
  std::cerr << "trainsim: " << why << "\n" << kUsage;
  return kBadInput;
}

int Help(const std::vector<std::string>&) {
  std::cout << kUsage;
  return kOk;
}

// simulate's options (catalog takes --catalog alone, models none).
const std::vector<OptionSpec> kSimulateOptions = {{"--json"},
                                                  {"--full"},
                                                  {"--estimate"},
                                                  {"--trace", "a file name"},
                                                  {"--catalog", "a file name"},
                                                  {"--profile", "a file name"}};

struct Args {
  std::vector<std::string> positional;  // the words after the subcommand's name
  bool json = false, full = false, estimate = false, help = false;
  std::string trace, catalog, profile;
};

Expected<Args> ReadArgs(const std::vector<std::string>& words,
                        const std::vector<OptionSpec>& options) {
  Expected<ParsedArgs> parsed = ParseArgs(words, options);
  if (!parsed.ok()) return parsed.status();
  Args a;
  a.positional = parsed->positional();
  a.help = parsed->help();
  a.json = parsed->Has("--json");
  a.full = parsed->Has("--full");
  a.estimate = parsed->Has("--estimate");
  a.trace = parsed->Value("--trace");
  a.catalog = parsed->Value("--catalog");
  a.profile = parsed->Value("--profile");
  return a;
}

Expected<Catalog> LoadCatalog(const Args& a) { return Catalog::LoadDefault(a.catalog); }

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The band of the built-in error-bands file for `s`, or nullopt (with a
// warning on stderr) when the file cannot be read: the prediction still stands.
std::optional<Band> ScenarioBand(const Scenario& s) {
  std::string why_not;
  const std::shared_ptr<const ErrorBands> bands = DefaultErrorBands(&why_not);
  if (!bands) {
    std::cerr << "trainsim: no error band: " << why_not << "\n";
    return std::nullopt;
  }
  return BandFor(*bands, BandKeyOf(s));
}

// "  80% band: 22.7-27.9 s per step, 0.91-1.12 x the throughput (family, N published points)"
void PrintBand(const Band& b, const sim::SimulationResult& r) {
  std::cout << "  " << Fixed(100 * b.coverage, 0) << "% band             "
            << Fixed(r.step.step_time_s / b.hi, 3) << "-" << Fixed(r.step.step_time_s / b.lo, 3)
            << " s per step, " << Fixed(b.lo, 2) << "-" << Fixed(b.hi, 2)
            << " x the throughput\n                       (" << b.family << ": " << b.points
            << " published measurements; docs/validation.md section 0.7)\n";
  if (!b.note.empty()) std::cout << "                       wider: " << b.note << "\n";
}

void PrintHuman(const Scenario& s, const sim::SimulationResult& r,
                const std::optional<Band>& band) {
  const sim::MemoryBreakdown& m = r.memory;
  std::cout << s.name << ": " << s.model.name << " on " << s.cluster.nodes << " x "
            << s.instance.name << " (" << s.total_gpus() << " GPUs), tp " << s.parallel.tp << " pp "
            << s.parallel.pp << " dp " << s.parallel.dp << DegreesText(s.parallel)
            << (s.parallel.ep > 1 ? " ep " + std::to_string(s.parallel.ep) : "") << ", "
            << ToString(s.parallel.schedule) << ", " << s.microbatches_per_pipeline()
            << " microbatches per pipeline\n";
  if (s.profile) {
    const ProfileProvenance& p = s.profile->provenance;
    std::cout << "hardware profile " << s.cluster.profile << ": " << p.device << ", measured "
              << p.date << " (" << p.backend << (p.complete ? "" : ", incomplete") << ")\n";
  }
  std::cout << "\n";
  std::cout << "  step time            " << Fixed(r.step.step_time_s, 3) << " s\n"
            << "  throughput           " << Fixed(r.samples_per_s, 1) << " samples/s, "
            << Fixed(r.tokens_per_s, 0) << " tokens/s\n"
            << "  model TFLOP/s/GPU    "
            << Fixed(r.model_tflops_per_gpu, r.model_tflops_per_gpu < 1 ? 4 : 1) << "  (MFU "
            << Fixed(100 * r.mfu, 1) << "%)\n"
            << "  hardware TFLOP/s/GPU "
            << Fixed(r.hardware_tflops_per_gpu, r.hardware_tflops_per_gpu < 1 ? 4 : 1)
            << "  (with recompute)\n";
  if (band) PrintBand(*band, r);
  std::cout << "\n";
  std::cout << "  memory per GPU (stage " << m.worst_stage << ")  "
            << Fixed(m.total_bytes / kGiB, 1) << " of " << Fixed(m.capacity_bytes / kGiB, 0)
            << " GiB: weights " << Fixed(m.weights_bytes / kGiB, 1) << ", gradients "
            << Fixed(m.gradients_bytes / kGiB, 1) << ", optimizer "
            << Fixed(m.optimizer_bytes / kGiB, 1) << ", activations "
            << Fixed(m.activations_bytes / kGiB, 1) << ", reserve "
            << Fixed(m.reserve_bytes / kGiB, 1) << "\n\n";
  const sim::Breakdown& b = r.step.breakdown;
  const double t = r.step.step_time_s;
  auto row = [&](const char* name, double v) {
    std::printf("  %-26s %9.3f s  %5.1f%%\n", name, v, 100 * v / t);
  };
  std::cout << "  breakdown of the step (slowest stage, " << r.step.critical_stage << "):\n";
  row("compute", b.compute_s);
  row("recompute", b.recompute_s);
  row("optimizer", b.optimizer_s);
  row("tensor-parallel comm", b.tp_comm_s);  // blocking: all of it is exposed
  if (b.ep_comm_s > 0) row("expert-parallel all-to-all", b.ep_comm_s);  // blocking too
  for (int i = 0; i < kStrategyCount; ++i) {                            // "CP K/V ring (exposed)"
    const std::string name =
        UpperName(*kStrategies[i]) + " " + std::string(kStrategies[i]->exchange) + " (exposed)";
    if (b.strategy_comm_s[i] > 0) row(name.c_str(), b.strategy_comm_s[i]);
  }
  row("data-parallel comm (exp.)", b.dp_comm_exposed_s);
  row("weight gather (exposed)", b.weight_gather_exposed_s);
  row("offload copies (exposed)", b.offload_exposed_s);
  row("pipeline comm (exposed)", b.pp_comm_exposed_s);
  row("pipeline bubble", b.pipeline_bubble_s);
  row("input pipeline (exposed)", b.data_wait_s);
}

// Progress of a simulation on stderr: nothing in the first second, then at
// most one line a second, "simulate: NAME: WHAT (D of T parts done, S s so
// far, about R s left)"; the estimate of what is left assumes the parts take
// equally long (they do not: a rough figure).
class SimulateProgress {
 public:
  explicit SimulateProgress(std::string name)
      : name_(std::move(name)), start_(std::chrono::steady_clock::now()) {}
  void operator()(const sim::Progress& p) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < 1 || elapsed < last_ + 1) return;
    last_ = elapsed;
    std::fprintf(stderr, "simulate: %s: %s (%d of %d parts done, %.0f s so far", name_.c_str(),
                 p.what.c_str(), p.done, p.total, elapsed);
    if (p.done > 0) {
      std::fprintf(stderr, ", about %.0f s left", elapsed * (p.total - p.done) / p.done);
    }
    std::fprintf(stderr, ")\n");
  }

 private:
  std::string name_;
  std::chrono::steady_clock::time_point start_;
  double last_ = 0;
};

// `simulate --estimate`: the planner's closed form of the step (no simulation,
// so no size limit), its parts, and the memory check.
int Estimate(const Args& a, const Scenario& s) {
  Expected<planner::StepEstimate> estimate = planner::EstimateScenarioStep(s);
  if (!estimate.ok()) {
    return Fail(Status::InvalidInput(a.positional[0] + ": " + estimate.status().message()));
  }
  const planner::StepEstimate& e = *estimate;
  const std::pair<const char*, double> parts[] = {
      {"compute", e.compute_s},     {"tp_comm", e.tp_comm_s},
      {"pp_bubble", e.pp_bubble_s}, {"dp_exposed", e.dp_exposed_s},
      {"optimizer", e.optimizer_s}, {"offload_exposed", e.offload_s}};
  if (a.json) {
    nlohmann::json j = {{"scenario", s.name},
                        {"gpus", s.total_gpus()},
                        {"estimated", true},
                        {"step_time_s", e.step_s},
                        {"samples_per_s", s.training.global_batch / e.step_s}};
    for (const auto& [name, seconds] : parts) j["parts_s"][name] = seconds;
    std::cout << j.dump(2) << "\n";
    return kOk;
  }
  std::cout << s.name << ": " << s.total_gpus() << " GPUs\n"
            << "  estimated step time  " << Fixed(e.step_s, 3)
            << " s (the fast estimator's closed form, not simulated; docs/planner.md section 2)\n"
            << "  samples/s            " << Fixed(s.training.global_batch / e.step_s, 1) << "\n";
  for (const auto& [name, seconds] : parts) {
    std::printf("  %-20s %.3f s\n", name, seconds);
  }
  return kOk;
}

int Simulate(const std::vector<std::string>& words) {
  Expected<Args> args = ReadArgs(words, kSimulateOptions);
  if (!args.ok()) return Usage(args.status().message());
  const Args& a = *args;
  if (a.help) return Help({});
  if (a.positional.size() != 1) return Usage("simulate needs exactly one scenario file");
  if (a.full && a.estimate) return Usage("--full and --estimate exclude each other");
  Expected<Catalog> catalog = LoadCatalog(a);
  if (!catalog.ok()) return Fail(catalog.status());
  Expected<Scenario> s = LoadScenarioFile(a.positional[0], *catalog, a.profile);
  if (!s.ok()) return Fail(s.status());
  if (a.estimate) return Estimate(a, *s);
  if (!a.trace.empty()) {  // fail before a long simulation, not after it
    if (Status st = CheckWritable(a.trace); !st.ok()) return Fail(st);
  }
  sim::SimulateOptions opts;
  opts.mode = a.full ? sim::SimMode::kFull : sim::SimMode::kReduced;
  opts.trace = !a.trace.empty();
  opts.progress = SimulateProgress(s->name);
  Expected<sim::SimulationResult> r = sim::Simulate(*s, opts);
  if (!r.ok()) return Fail(r.status());
  const std::optional<Band> band = ScenarioBand(*s);
  if (a.json) std::cout << sim::ToJson(*s, *r, band ? &*band : nullptr).dump(2) << "\n";
  if (!r->simulated) {
    std::cerr << "trainsim: " << a.positional[0]
              << ": the configuration does not fit: " << sim::DescribeShortfall(r->memory, *s)
              << "\n";
    return kBadInput;
  }
  if (!a.json) PrintHuman(*s, *r, band);
  if (!a.trace.empty()) {
    if (Status st = WriteFileDurably(a.trace, sim::TraceJson(*r).dump() + "\n"); !st.ok()) {
      return Fail(st);
    }
    std::cerr << "trace written to " << a.trace
              << " (open in https://ui.perfetto.dev or chrome://tracing)\n";
  }
  return kOk;
}

std::string Opt(const std::optional<double>& v, int digits) {
  return v ? Fixed(*v, digits) : "null";
}

const char* TopologyName(IntraTopology t) {
  switch (t) {
    case IntraTopology::kSingle:
      return "single GPU";
    case IntraTopology::kPcie:
      return "PCIe only";
    case IntraTopology::kNvlinkCubeMesh:
      return "NVLink hybrid cube-mesh";
    case IntraTopology::kNvswitch:
      return "NVSwitch";
  }
  return "?";
}

void CatalogList(const Catalog& catalog) {
  std::printf("%-16s %-18s %4s %8s %-24s %12s %10s\n", "type", "gpu", "gpus", "mem GiB", "topology",
              "network Gb/s", "$/h");
  for (const std::string& name : catalog.Names()) {
    const InstanceType* t = catalog.Find(name);
    std::printf("%-16s %-18s %4d %8.0f %-24s %12.0f %10s\n", name.c_str(), t->gpu.name.c_str(),
                t->gpus, t->gpu_mem_gib, TopologyName(t->topology), t->nics * t->nic_gbps,
                Opt(t->price_on_demand_usd_hr, 3).c_str());
  }
}

// A peak in TFLOP/s with one decimal, or "null".
std::string Tflops(const std::optional<double>& flops) {
  return Opt(flops ? std::optional(*flops / 1e12) : std::nullopt, 1);
}

// A fitted efficiency with its provenance, or what stands for it.
std::string Efficiency(const std::optional<double>& value, const std::string& provenance,
                       const std::string& otherwise) {
  return value ? Fixed(*value, 2) + " (" + provenance + ")" : otherwise;
}

void CatalogShow(const Catalog& catalog, const InstanceType& t) {
  const GpuSpec& g = t.gpu;
  std::cout << t.name << (t.is_aws ? " (AWS)" : " (reference system)") << "\n"
            << "  gpu              " << t.gpus << " x " << g.name << ", " << t.gpu_mem_gib
            << " GiB\n"
            << "  peak TFLOP/s     fp32 " << Tflops(g.fp32_flops) << ", tf32 "
            << Tflops(g.tf32_flops) << ", fp16 " << Tflops(g.fp16_flops) << ", bf16 "
            << Tflops(g.bf16_flops) << ", fp8 " << Tflops(g.fp8_flops) << "\n"
            << "  memory bandwidth " << Opt(g.hbm_GBps, 0) << " GB/s\n"
            << "  GEMM efficiency  "
            << Efficiency(g.gemm_efficiency, g.gemm_efficiency_provenance,
                          Fixed(sim::ModelParams().gemm_efficiency, 2) +
                              " (the simulator's assumption, docs/model.md)")
            << "\n"
            << "  attention eff.   "
            << Efficiency(g.attention_efficiency, g.attention_efficiency_provenance,
                          "the GEMM efficiency (no fitted figure)")
            << "\n"
            << "  conv efficiency  "
            << (g.conv_efficiency ? Fixed(*g.conv_efficiency, 2) + " in fp16/bf16 (" +
                                        g.conv_efficiency_provenance + ")"
                                  : std::string("the GEMM efficiency (no fitted figure)"))
            << (g.tf32_conv_efficiency ? ", " + Fixed(*g.tf32_conv_efficiency, 2) + " in tf32 (" +
                                             g.tf32_conv_efficiency_provenance + ")"
                                       : std::string())
            << "\n"
            << "  topology         " << TopologyName(t.topology) << "\n"
            << "  network          " << t.nics << " x " << t.nic_gbps << " Gb/s"
            << (t.efa ? " (EFA/InfiniBand)" : "") << "\n"
            << "  price            on-demand " << Opt(t.price_on_demand_usd_hr, 3)
            << " $/h, SageMaker " << Opt(t.price_sagemaker_usd_hr, 3) << " $/h, spot discount "
            << Opt(t.spot_discount, 2) << ", interruptions "
            << t.spot_interruption_bucket.value_or("null") << "\n";
  if (!t.sagemaker_libraries.empty()) {
    std::string libraries;
    for (const std::string& l : t.sagemaker_libraries)
      libraries += (libraries.empty() ? "" : ", ") + l;
    std::cout << "  SageMaker libs   " << libraries << "\n";
  }
  std::cout << "  sources\n";
  for (const auto& [field, ids] : t.sources) {
    for (const std::string& id : ids) {
      auto it = catalog.source_text().find(id);
      std::cout << "    " << (field == "*" ? "entry" : field) << ": " << id
                << (it != catalog.source_text().end() ? " - " + it->second : std::string()) << "\n";
    }
  }
  if (!t.notes.empty()) std::cout << "  notes            " << t.notes << "\n";
}

int CatalogCommand(const std::vector<std::string>& words) {
  Expected<Args> args = ReadArgs(words, {{"--catalog", "a file name"}});
  if (!args.ok()) return Usage(args.status().message());
  const Args& a = *args;
  if (a.help) return Help({});
  Expected<Catalog> catalog = LoadCatalog(a);
  if (!catalog.ok()) return Fail(catalog.status());
  if (a.positional.size() == 1 && a.positional[0] == "list") {
    CatalogList(*catalog);
    return kOk;
  }
  if (a.positional.size() == 2 && a.positional[0] == "show") {
    const InstanceType* t = catalog->Find(a.positional[1]);
    if (!t)
      return Fail(Status::InvalidInput("unknown instance type \"" + a.positional[1] +
                                       "\"; see `trainsim catalog list`"));
    CatalogShow(*catalog, *t);
    return kOk;
  }
  return Usage("catalog needs `list` or `show TYPE`");
}

int Models(const std::vector<std::string>& words) {
  Expected<Args> args = ReadArgs(words, {});
  if (!args.ok()) return Usage(args.status().message());
  if (args->help) return Help({});
  if (!args->positional.empty()) return Usage("models takes no arguments");
  std::printf("%-16s %-11s %6s %7s %6s %6s %7s %7s %9s %16s %16s\n", "name", "kind", "layers",
              "hidden", "heads", "kv", "seq", "vocab", "experts", "parameters", "active");
  for (const ModelSpec& m : ModelZoo()) {
    const bool tr = m.kind == ModelKind::kTransformer;
    // "256/8+1": routed experts / per token + shared; "-" for a dense model.
    std::string experts = "-";
    if (m.experts > 0) {
      experts = std::to_string(m.experts) + "/" + std::to_string(m.experts_per_token);
      if (m.shared_experts > 0) experts += "+" + std::to_string(m.shared_experts);
    }
    std::printf("%-16s %-11s %6d %7d %6d %6d %7d %7d %9s %16.0f %16.0f\n", m.name.c_str(),
                !tr                  ? "layer list"
                : m.kv_lora_rank > 0 ? "mla"
                                     : "transformer",
                tr ? m.layers : static_cast<int>(m.layer_list.size()), m.hidden, m.heads,
                m.kv_heads, m.seq_len, m.vocab, experts.c_str(), ParameterCount(m),
                ActiveParameterCount(m));
  }
  return kOk;
}

// The subcommands: each parses its arguments (cli/args.h), calls the library and prints.
struct Subcommand {
  std::string_view name;
  int (*run)(const std::vector<std::string>& words);  // the words after the name
};

const Subcommand kSubcommands[] = {{"simulate", Simulate},       {"plan", PlanCommand},
                                   {"sweep", cli::SweepCommand}, {"launch", LaunchCommand},
                                   {"observe", ObserveCommand},  {"catalog", CatalogCommand},
                                   {"models", Models},           {"help", Help}};

int Main(int argc, char** argv) {
  if (argc < 2) return Usage("no command given");
  const std::string command = argv[1];
  if (command == "--help" || command == "-h") return Help({});
  for (const Subcommand& c : kSubcommands) {
    if (c.name == command) return c.run(std::vector<std::string>(argv + 2, argv + argc));
  }
  return Usage("unknown command \"" + command + "\"");
}

}  // namespace
}  // namespace trainsim

#ifdef TRAINSIM_SANITIZE
// Only a sweep's ranks started by an MPI launcher start MPI (planner/sweep/sweep_world.cc), and
// Open MPI's mpirun sets this variable: the others keep the fast unwinder (core/sanitizer_mpi.h).
extern "C" const char* __asan_default_options() {
  return trainsim::StartedWithVariable("OMPI_COMM_WORLD_SIZE") ? trainsim::kSlowUnwindOptions : "";
}
extern "C" const char* __lsan_default_suppressions() { return trainsim::kOpenMpiLeakSuppressions; }
extern "C" const char* __lsan_default_options() { return trainsim::kLeakOptions; }
#endif

int main(int argc, char** argv) {
  try {
    return trainsim::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "trainsim: internal error: " << e.what() << "\n";
    return 2;
  }
}
