// trainsim-calibrate: measures this machine and writes a hardware profile
// (docs/calibration.md).
//
//   trainsim-calibrate [--backend cuda|cpu|auto] [--quick] [--out FILE] [--force]
//                      [--gpu CATALOG_GPU] [--nccl-tests-out PREFIX]
//
// Under mpirun (one rank per GPU) only rank 0 writes the profile (and the
// nccl-tests outputs: those of a complete run only). Ctrl-C stops
// after the current measurement and writes what was measured (incomplete).
// Progress goes to stderr, the summary to stdout. Exit status: 0 when every
// measurement succeeded, 2 when some failed (the profile is still written,
// marked incomplete), 1 on an error.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "calibrate/cuda/cuda_backend.h"
#include "calibrate/nccl_tests_output.h"
#include "calibrate/plan.h"
#include "core/catalog.h"

namespace trainsim::calibrate {
namespace {

constexpr char kUsage[] =
    "usage: trainsim-calibrate [--backend cuda|cpu|auto] [--quick] [--out FILE] [--force]\n"
    "                          [--gpu CATALOG_GPU] [--nccl-tests-out PREFIX]\n"
    "  --backend  what to measure: cuda (GPUs: cuBLAS, memory, NCCL), cpu (this host's\n"
    "             cores), auto (default: cuda when a GPU is visible, else cpu)\n"
    "  --quick    a short pass: a few shapes and sizes, fewer repetitions\n"
    "  --out      the profile to write (default trainsim-profile.json)\n"
    "  --force    let an incomplete run replace a complete profile at --out\n"
    "  --gpu      the catalog GPU the profile describes, when the device name does not\n"
    "             say (e.g. H100-SXM5-80GB)\n"
    "  --nccl-tests-out  also write each measured collective group in nccl-tests' output\n"
    "             layout, as PREFIX.TEST.ranksN.nodesM.txt (trainsim observe reads them);\n"
    "             a complete run only\n";

struct Args {
  std::string backend = "auto";
  bool quick = false;
  std::string out = "trainsim-profile.json";
  bool force = false;
  std::string gpu;
  std::string nccl_tests_out;  // PREFIX; "" = none
};

bool ParseArgs(int argc, char** argv, Args* a, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) {
        *error = arg + " needs a value";
        return false;
      }
      *out = argv[++i];
      return true;
    };
    if (arg == "--quick") {
      a->quick = true;
    } else if (arg == "--force") {
      a->force = true;
    } else if (arg == "--backend" || arg == "--out" || arg == "--gpu") {
      if (!value(arg == "--backend" ? &a->backend : arg == "--out" ? &a->out : &a->gpu)) {
        return false;
      }
    } else if (arg == "--nccl-tests-out") {
      if (!value(&a->nccl_tests_out)) return false;
    } else {
      *error = "unknown argument \"" + arg + "\"";
      return false;
    }
  }
  return true;
}

// The command line for a comment line: no line break in it, and quoted where
// a shell would need it.
std::string CommandLine(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    std::replace_if(
        arg.begin(), arg.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    const bool quote = arg.empty() || arg.find_first_of(" \t'\"\\$") != std::string::npos;
    line += (i ? " " : "") + (quote ? "'" + arg + "'" : arg);
  }
  return line;
}

// A missing folder for --nccl-tests-out is an error before the run, not after
// it (on the rank that writes: under mpirun, rank 0).
bool CheckNcclTestsPrefix(const std::string& prefix, std::string* error) {
  if (prefix.empty()) return true;
  const std::filesystem::path folder = std::filesystem::path(prefix).parent_path();
  std::error_code ec;
  if (folder.empty() || std::filesystem::is_directory(folder, ec)) return true;
  *error = "--nccl-tests-out " + prefix + ": no folder " + folder.string();
  return false;
}

volatile std::sig_atomic_t g_interrupted = 0;

// First Ctrl-C: finish the current measurement, then write what was measured
// (an incomplete profile). A second one ends the process at once.
extern "C" void OnInterrupt(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);
}

class StderrProgress : public Observer {
 public:
  void Progress(const std::string& phase, int done, int total, const std::string& item) override {
    std::fprintf(stderr, "[%s %d/%d] %s\n", phase.c_str(), done + 1, total, item.c_str());
  }
  bool StopRequested() override {
    if (g_interrupted && !told_) {
      std::fprintf(stderr,
                   "trainsim-calibrate: interrupted: writing what was measured (Ctrl-C again to "
                   "quit at once)\n");
      told_ = true;
    }
    return g_interrupted != 0;
  }

 private:
  bool told_ = false;
};

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The catalog's entry for the profile's GPU, for the summary's shares of peak.
std::optional<GpuSpec> CatalogGpu(const Catalog* catalog, const std::string& name) {
  if (!catalog || name.empty()) return std::nullopt;
  for (const std::string& type : catalog->Names()) {
    const InstanceType* t = catalog->Find(type);
    if (t->gpu.name == name) return t->gpu;
  }
  return std::nullopt;
}

// The plan's step between collective sizes (nccl-tests' "step: N(factor)").
long SizeFactor(const MeasurePlan& plan) {
  const std::vector<double>& b = plan.collective_bytes;
  return b.size() >= 2 && b[0] > 0 ? std::lround(b[1] / b[0]) : 2;
}

// The collectives in nccl-tests' layout, of a complete run only: an
// incomplete one writes none, so that the files at PREFIX are one complete
// run's (docs/calibration.md).
Status WriteNcclTestsOutputs(const HardwareProfile& profile, const MeasurePlan& plan,
                             const std::string& prefix, const std::string& command_line) {
  if (!profile.provenance.complete) {
    std::printf("nccl-tests outputs not written: the run is incomplete\n");
    return Status::Ok();
  }
  const NcclTestsTexts texts = FormatNcclTests(profile, {.command_line = command_line,
                                                         .pid = static_cast<int>(getpid()),
                                                         .size_factor = SizeFactor(plan)});
  for (const std::string& why : texts.left_out) {
    std::printf("nccl-tests output left out: %s\n", why.c_str());
  }
  std::vector<std::string> paths;
  if (Status s = WriteNcclTests(texts.texts, prefix, &paths); !s.ok()) return s;
  std::printf("nccl-tests outputs written: %zu (%s.*.txt)\n", paths.size(), prefix.c_str());
  return Status::Ok();
}

int Main(int argc, char** argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argc, argv, &args, &error)) {
    std::fprintf(stderr, "trainsim-calibrate: %s\n%s", error.c_str(), kUsage);
    return 1;
  }
  if (IsPrimaryRank() && !CheckNcclTestsPrefix(args.nccl_tests_out, &error)) {
    std::fprintf(stderr, "trainsim-calibrate: %s\n", error.c_str());
    return 1;
  }
  Expected<ChosenBackend> chosen = ChooseBackend(args.backend);
  if (!chosen.ok()) {
    std::fprintf(stderr, "trainsim-calibrate: %s\n", chosen.status().message().c_str());
    return 1;
  }
  if (!chosen->note.empty()) std::fprintf(stderr, "trainsim-calibrate: %s\n", chosen->note.c_str());
  const MeasurePlan plan = DefaultPlan(chosen->device, args.quick);
  std::fprintf(stderr,
               "trainsim-calibrate: measuring %s x %d with the %s backend (%zu GEMM shapes x %zu "
               "dtypes, %zu collective sizes)%s\n",
               chosen->device.name.c_str(), chosen->device.devices, chosen->device.backend.c_str(),
               plan.gemm_shapes.size(), plan.dtypes.size(), plan.collective_bytes.size(),
               args.quick ? ", quick" : "");
  // The built-in catalog names the device's GPU and gives the summary its peaks; without it
  // (no catalog files beside the tool) the profile names no GPU unless --gpu does.
  Expected<Catalog> catalog = Catalog::LoadBuiltin(Catalog::DefaultDir());
  ProfileOptions options;
  options.date = UtcNow();
  options.gpu = args.gpu;
  options.catalog = catalog.ok() ? &*catalog : nullptr;
  Measurements m;
  StderrProgress progress;
  std::signal(SIGINT, OnInterrupt);
  if (Status s = chosen->backend->Run(plan, &progress, &m); !s.ok()) {
    std::fprintf(stderr, "trainsim-calibrate: %s\n", s.message().c_str());
    return 1;
  }
  // Under mpirun every rank measures; rank 0 alone reports and writes.
  if (!IsPrimaryRank()) return 0;
  const HardwareProfile profile = BuildProfile(m, plan, options);
  std::optional<GpuSpec> gpu = CatalogGpu(options.catalog, profile.gpu);
  std::printf("%s", SummaryTable(profile, gpu ? &*gpu : nullptr).c_str());
  std::string written;
  if (Status s = WriteProfile(profile, args.out, args.force, &written); !s.ok()) {
    std::fprintf(stderr, "trainsim-calibrate: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("\nprofile written to %s%s\n", written.c_str(),
              written != args.out ? " (incomplete: the complete profile at --out is kept; "
                                    "--force replaces it)"
                                  : "");
  if (!args.nccl_tests_out.empty()) {
    Status s = WriteNcclTestsOutputs(profile, plan, args.nccl_tests_out, CommandLine(argc, argv));
    if (!s.ok()) {
      std::fprintf(stderr, "trainsim-calibrate: %s\n", s.message().c_str());
      return 1;
    }
  }
  return profile.provenance.complete ? 0 : 2;
}

}  // namespace
}  // namespace trainsim::calibrate

int main(int argc, char** argv) { return trainsim::calibrate::Main(argc, argv); }
