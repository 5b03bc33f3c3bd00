// Accuracy of the simulator against published measurements: prints markdown
// tables, not pass/fail (DESIGN.md section 8).
//
//  1. Megatron-LM weak scaling on DGX A100 (Narayanan et al. SC'21, Table 1):
//     hardware TFLOP/s per GPU (with recompute, the paper's Eq. 3) against the
//     published figure.
//  2. nccl-tests all_reduce bus bandwidth on p4d/p4de/p5 and single A100/H100
//     nodes: an all-reduce simulated on its own.
//  3. ResNet-50 v1.5 training img/s on 1 and 8 GPUs of DGX-1 V100 and DGX A100
//     (NVIDIA DeepLearningExamples), and the 8-GPU scaling efficiency.
//
// --fit-gemm-efficiency, --fit-conv-efficiency and --fit-nccl print the grid
// searches that fitted the A100 GEMM efficiency, each GPU's conv efficiency
// (to its 1-GPU AMP row of 3) and the collective parameters (docs/validation.md).
//
// Usage: accuracy [--fit-gemm-efficiency | --fit-conv-efficiency | --fit-nccl]
//                 [PUBLISHED_MEASUREMENTS_JSON [AWS_INSTANCES_SOURCES_JSON]]
// Defaults: ../shared/reference/*.json beside the source tree.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench/megatron_rows.h"
#include "core/catalog.h"
#include "core/model_zoo.h"
#include "core/scenario.h"
#include "sim/collectives.h"
#include "sim/isolate.h"
#include "sim/platform.h"
#include "sim/simulate.h"

namespace trainsim::bench {
namespace {

using nlohmann::json;

constexpr char kReferenceDir[] = TRAINSIM_SOURCE_DIR "/../shared/reference/";
constexpr int kMegatronRows = 10;
// Largest all-reduce group simulated; bigger groups are skipped with a note.
// The largest row here has 256 ranks and takes about 0.14 s (long rings are
// extrapolated after 16 steps, see docs/model.md section 4).
constexpr int kMaxAllReduceRanks = 1024;

// Every simulation runs in a forked child (sim/isolate.h) that flushes the stdio
// buffers it inherits: flush ours first so that no line is printed twice.
void FlushBeforeFork() { std::fflush(stdout); }

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double ErrorPercent(double predicted, double published) {
  return 100.0 * (predicted - published) / published;
}

std::optional<json> ReadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return std::nullopt;
  return doc;
}

// Mean of |error %| and the row with the largest one.
struct ErrorSummary {
  double sum_abs = 0, worst_abs = -1;
  int count = 0;
  std::string worst_label;

  void Add(const std::string& label, double error_percent) {
    sum_abs += std::fabs(error_percent);
    ++count;
    if (std::fabs(error_percent) > worst_abs) {
      worst_abs = std::fabs(error_percent);
      worst_label = label;
    }
  }
  void Print(const char* what) const {
    if (count == 0) {
      std::printf("\n%s: no rows simulated\n", what);
      return;
    }
    std::printf("\n%s: mean absolute error %.1f%% over %d rows; worst %s (%.1f%%)\n", what,
                sum_abs / count, count, worst_label.c_str(), worst_abs);
  }
};

// ---------------------------------------------------------------------------
// 1. Megatron-LM weak scaling.

struct MegatronOutcome {
  int zero = 0;
  bool fits = false;
  double hardware_tflops = 0, model_tflops = 0, step_s = 0, wall_s = 0;
  std::string error;  // non-empty when the row could not be simulated
};

// Simulates with ZeRO 0, or ZeRO 1 when ZeRO 0 does not fit in memory.
MegatronOutcome SimulateMegatron(const MegatronRow& row, const std::string& preset,
                                 const Catalog& catalog, const sim::SimulateOptions& options) {
  MegatronOutcome out;
  FlushBeforeFork();
  const auto start = std::chrono::steady_clock::now();
  for (int zero : {0, 1}) {
    out.zero = zero;
    Expected<Scenario> s =
        ParseScenario(MegatronScenarioJson(row, preset, zero), "megatron", catalog);
    if (!s.ok()) {
      out.error = s.status().message();
      return out;
    }
    Expected<sim::SimulationResult> r = sim::Simulate(*s, options);
    if (!r.ok()) {
      out.error = r.status().message();
      return out;
    }
    if (!r->memory.fits) continue;
    out.fits = true;
    out.hardware_tflops = r->hardware_tflops_per_gpu;
    out.model_tflops = r->model_tflops_per_gpu;
    out.step_s = r->step.step_time_s;
    break;
  }
  out.wall_s = Seconds(start);
  if (!out.fits) out.error = "does not fit in 80 GiB even with ZeRO-1";
  return out;
}

void PrintMegatronHeader() {
  std::printf(
      "## Megatron-LM weak scaling on DGX A100 80GB (Narayanan et al. SC'21, Table 1)\n\n"
      "Setup per row: zoo preset, dgx-a100-80gb x nodes, tp/pp/dp as published, micro batch 1,\n"
      "fp16, Adam, full recompute, ZeRO 0 (ZeRO 1 where 0 does not fit), interleaved 1F1B as\n"
      "in the paper with v = the smallest number >= 2 of chunks dividing a stage's layers\n"
      "(the paper does not give v, nor the micro batch size); 1F1B where pp = 1.\n"
      "Compared: hardware TFLOP/s per GPU (FLOPs with recompute, the paper's Eq. 3).\n\n"
      "| model | preset | GPUs | tp/pp/dp | v | global batch | ZeRO | step s | model TFLOP/s | "
      "hw TFLOP/s (pred.) | published | error %% | sim wall s |\n"
      "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}

void PrintMegatronRow(const MegatronRow& row, const std::string& preset,
                      const MegatronOutcome& out) {
  const int gpus = row.nodes * 8;
  std::printf("| %s | %s | %d | %d/%d/%d | %d | %lld | ", row.name.c_str(), preset.c_str(), gpus,
              row.tp, row.pp, row.dp, VirtualStages(row), static_cast<long long>(row.global_batch));
  if (!out.error.empty()) {
    std::printf("- | - | - | - | %.0f | not simulated: %s | %.2f |\n", row.published_tflops,
                out.error.c_str(), out.wall_s);
    return;
  }
  std::printf("%d%s | %.3f | %.1f | %.1f | %.0f | %+.1f | %.2f |\n", out.zero,
              out.zero == 1 ? " (0 does not fit)" : "", out.step_s, out.model_tflops,
              out.hardware_tflops, row.published_tflops,
              ErrorPercent(out.hardware_tflops, row.published_tflops), out.wall_s);
}

void RunMegatron(const json& measurements, const Catalog& catalog) {
  PrintMegatronHeader();
  ErrorSummary summary;
  for (int i = 0; i < kMegatronRows && i < static_cast<int>(measurements.size()); ++i) {
    const MegatronRow row = ParseMegatronRow(measurements[i]);
    const std::optional<std::string> preset = ZooPresetFor(row);
    MegatronOutcome out;
    if (preset) {
      out = SimulateMegatron(row, *preset, catalog, sim::SimulateOptions());
    } else {
      out.error = "no zoo preset with these dimensions";
    }
    PrintMegatronRow(row, preset.value_or("-"), out);
    if (out.error.empty()) {
      summary.Add(row.name, ErrorPercent(out.hardware_tflops, row.published_tflops));
    }
    std::fflush(stdout);
  }
  summary.Print("Megatron-LM");
}

// Mean absolute % error of the Megatron rows with the GEMM efficiency `eff`
// in place of the catalog's, and the worst row's error.
std::pair<double, double> MegatronErrorAt(double eff, const json& measurements,
                                          const Catalog& catalog) {
  sim::SimulateOptions options;
  options.params.gemm_efficiency = eff;
  options.params.use_catalog_gemm_efficiency = false;
  double sum = 0, worst = 0;
  int rows = 0;
  for (int i = 0; i < kMegatronRows && i < static_cast<int>(measurements.size()); ++i) {
    const MegatronRow row = ParseMegatronRow(measurements[i]);
    const std::optional<std::string> preset = ZooPresetFor(row);
    if (!preset) continue;
    const MegatronOutcome out = SimulateMegatron(row, *preset, catalog, options);
    if (!out.error.empty()) continue;
    const double err = std::abs(ErrorPercent(out.hardware_tflops, row.published_tflops));
    sum += err;
    worst = std::max(worst, err);
    ++rows;
  }
  return {rows ? sum / rows : 0, worst};
}

// One parameter, the GEMM efficiency of the A100, fitted to the Megatron rows
// by a grid search (coarse, then fine around the best) that minimises the
// worst row's absolute error (a minimax fit: the target bounds every row), the
// mean breaking ties. The result goes into instance-catalog/gpus.json with its
// provenance.
void FitGemmEfficiency(const json& measurements, const Catalog& catalog) {
  std::printf(
      "## Fit: A100 GEMM efficiency to the Megatron-LM rows (smallest worst-row error)\n\n"
      "| gemm_efficiency | mean abs error %% | worst row %% |\n|---:|---:|---:|\n");
  double best = 0, best_worst = 1e9, best_mean = 1e9;
  auto probe = [&](double eff) {
    auto [mean, worst] = MegatronErrorAt(eff, measurements, catalog);
    std::printf("| %.3f | %.2f | %.2f |\n", eff, mean, worst);
    std::fflush(stdout);
    if (worst < best_worst - 1e-9 || (worst < best_worst + 1e-9 && mean < best_mean)) {
      best = eff, best_worst = worst, best_mean = mean;
    }
  };
  for (double eff = 0.50; eff <= 0.801; eff += 0.05) probe(eff);
  const double center = best;
  for (double eff = center - 0.04; eff <= center + 0.041; eff += 0.01) {
    if (std::abs(eff - center) > 1e-9) probe(eff);
  }
  std::printf("\nbest gemm_efficiency %.2f: worst row %.2f%%, mean absolute error %.2f%%\n", best,
              best_worst, best_mean);
}

// ---------------------------------------------------------------------------
// 3. ResNet-50 v1.5 data-parallel training throughput (NVIDIA DeepLearningExamples,
//    PyTorch, pytorch-21.03 NGC): 1 and 8 GPUs of DGX-1 V100 and DGX A100.

struct ResNetRow {
  std::string gpu;        // as published, also the catalog GPU name
  std::string precision;  // scenario precision: fp16 (AMP), fp32, tf32
  std::string label;      // as published: AMP, FP32, TF32
  int gpus = 1;
  int batch_per_gpu = 0;
  double published_ips = 0;
};

std::vector<ResNetRow> ParseResNetRows(const json& measurements) {
  std::vector<ResNetRow> rows;
  for (const json& e : measurements) {
    const std::string model = e.at("model").at("name");
    if (model.rfind("ResNet-50", 0) != 0 || e.at("metric").at("name") != "train_throughput") {
      continue;
    }
    ResNetRow r;
    r.gpu = e.at("hardware").at("gpu");
    const std::string notes = e.value("notes", "");
    r.label = notes.substr(0, notes.find(';'));  // "AMP; per-GPU batch ..."
    r.precision = r.label == "AMP" ? "fp16" : r.label == "TF32" ? "tf32" : "fp32";
    r.gpus = e.at("parallel").at("dp");
    r.batch_per_gpu = e.at("parallel").at("microbatch");
    r.published_ips = e.at("metric").at("value");
    rows.push_back(r);
  }
  return rows;
}

// The conv efficiency of a GPU is fitted to its mixed-precision 1-GPU row: no
// communication and no shared host, so only the GPU's own work sets the time.
bool IsConvFitRow(const ResNetRow& r) { return r.gpus == 1 && r.label == "AMP"; }

// 8 GPUs: the catalog node of the published system (DGX-1 V100 16GB -> p3.16xlarge, the same
// GPUs in the same hybrid cube-mesh; DGX-1 32GB -> p3dn.24xlarge; DGX A100 -> dgx-a100-80gb).
// 1 GPU: a node with that one GPU (BenchSingleGpuNodes).
std::string ResNetInstance(const ResNetRow& r) {
  if (r.gpus == 1) return "single-" + r.gpu;
  if (r.gpu == "V100-SXM2-16GB") return "p3.16xlarge";
  if (r.gpu == "V100-SXM2-32GB") return "p3dn.24xlarge";
  return "dgx-a100-80gb";
}

// Bench-only catalog entries: one GPU of each kind the 1-GPU rows use, without a
// network (a 1-GPU step has no communication).
Status AddSingleGpuNodes(const std::vector<ResNetRow>& rows, Catalog* catalog) {
  json instances = json::array();
  std::vector<std::string> added;
  for (const ResNetRow& r : rows) {
    if (r.gpus != 1 || std::find(added.begin(), added.end(), r.gpu) != added.end()) continue;
    added.push_back(r.gpu);
    instances.push_back({{"name", "single-" + r.gpu},
                         {"is_aws", false},
                         {"gpu", r.gpu},
                         {"gpus", 1},
                         {"topology", {{"kind", "single"}}},
                         {"network", {{"nic_gbps", 1}, {"rdma", "none"}}}});
  }
  json doc = {{"version", 1}, {"instances", instances}};
  return catalog->AddFromString(doc.dump(1), "bench-single-gpu.json");
}

std::string ResNetScenarioJson(const ResNetRow& r) {
  json s = {{"version", 1},
            {"name", "resnet50-" + r.gpu},
            {"model", "resnet50"},
            {"training",
             {{"global_batch", r.batch_per_gpu * r.gpus},
              {"micro_batch", r.batch_per_gpu},
              {"precision", r.precision},
              {"optimizer", "sgd"}}},
            {"cluster", {{"instance", ResNetInstance(r)}, {"nodes", 1}}},
            {"parallel", {{"dp", r.gpus}, {"dp_algorithm", "ring"}}}};
  return s.dump();
}

struct ResNetOutcome {
  double ips = 0, step_s = 0, dp_exposed_s = 0;
  std::string error;  // non-empty when not simulated
};

ResNetOutcome SimulateResNet(const ResNetRow& r, const Catalog& catalog,
                             const sim::SimulateOptions& options) {
  ResNetOutcome out;
  Expected<Scenario> s = ParseScenario(ResNetScenarioJson(r), "resnet50", catalog);
  if (!s.ok()) {
    out.error = s.status().message();
    return out;
  }
  FlushBeforeFork();
  Expected<sim::SimulationResult> result = sim::Simulate(*s, options);
  if (!result.ok()) {
    out.error = result.status().message();
    return out;
  }
  out.ips = result->samples_per_s;
  out.step_s = result->step.step_time_s;
  out.dp_exposed_s = result->step.breakdown.dp_comm_exposed_s;
  return out;
}

// Simulated img/s of every row, in order (0 where not simulated).
std::vector<ResNetOutcome> SimulateResNetRows(const std::vector<ResNetRow>& rows,
                                              const Catalog& catalog,
                                              const sim::SimulateOptions& options) {
  std::vector<ResNetOutcome> outcomes;
  for (const ResNetRow& r : rows) outcomes.push_back(SimulateResNet(r, catalog, options));
  return outcomes;
}

void PrintResNetRows(const std::vector<ResNetRow>& rows, const std::vector<ResNetOutcome>& out) {
  std::printf(
      "\n## ResNet-50 v1.5 training throughput (NVIDIA DeepLearningExamples, pytorch-21.03)\n\n"
      "Setup per row: resnet50 preset, the row's batch per GPU, SGD, data parallel with a ring\n"
      "all-reduce; 8 GPUs on the catalog node of the published system (DGX-1 16GB -> p3.16xlarge,\n"
      "DGX-1 32GB -> p3dn.24xlarge, DGX A100 -> dgx-a100-80gb), 1 GPU on a node of that one GPU.\n"
      "AMP -> fp16. Role: `fit` rows set the GPU's conv_efficiency (--fit-conv-efficiency).\n\n"
      "| GPU | GPUs | precision | batch/GPU | role | step s | DP exposed ms | img/s (pred.) | "
      "published | error %% |\n"
      "|---|---:|---|---:|---|---:|---:|---:|---:|---:|\n");
  ErrorSummary eval;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ResNetRow& r = rows[i];
    std::printf("| %s | %d | %s | %d | %s | ", r.gpu.c_str(), r.gpus, r.label.c_str(),
                r.batch_per_gpu, IsConvFitRow(r) ? "fit" : "eval");
    if (!out[i].error.empty()) {
      std::printf("- | - | - | %.0f | not simulated: %s |\n", r.published_ips,
                  out[i].error.c_str());
      continue;
    }
    const double error = ErrorPercent(out[i].ips, r.published_ips);
    std::printf("%.4f | %.2f | %.0f | %.0f | %+.1f |\n", out[i].step_s, out[i].dp_exposed_s * 1e3,
                out[i].ips, r.published_ips, error);
    if (!IsConvFitRow(r)) {
      eval.Add(std::to_string(r.gpus) + "x " + r.gpu + " " + r.label, error);
    }
  }
  eval.Print("ResNet-50 evaluation rows (not fitted)");
}

// Scaling efficiency = 8-GPU img/s / (8 x 1-GPU img/s), for each GPU and precision
// that has both rows.
void PrintResNetScaling(const std::vector<ResNetRow>& rows, const std::vector<ResNetOutcome>& out) {
  std::printf(
      "\n### ResNet-50 8-GPU scaling efficiency (8-GPU img/s / (8 x 1-GPU img/s))\n\n"
      "| GPU | precision | predicted | published |\n|---|---|---:|---:|\n");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].gpus != 8) continue;
    for (std::size_t j = 0; j < rows.size(); ++j) {
      if (rows[j].gpus != 1 || rows[j].gpu != rows[i].gpu || rows[j].label != rows[i].label) {
        continue;
      }
      const double published = rows[i].published_ips / (8 * rows[j].published_ips);
      std::printf("| %s | %s | ", rows[i].gpu.c_str(), rows[i].label.c_str());
      if (out[i].error.empty() && out[j].error.empty()) {
        std::printf("%.1f%% | %.1f%% |\n", 100 * out[i].ips / (8 * out[j].ips), 100 * published);
      } else {
        std::printf("- | %.1f%% |\n", 100 * published);
      }
    }
  }
}

void RunResNet(const json& measurements, const Catalog& catalog) {
  const std::vector<ResNetRow> rows = ParseResNetRows(measurements);
  const std::vector<ResNetOutcome> out = SimulateResNetRows(rows, catalog, sim::SimulateOptions());
  PrintResNetRows(rows, out);
  PrintResNetScaling(rows, out);
}

// The conv efficiency of each GPU that has a fit row (IsConvFitRow), by a grid
// search (0.10-0.90 by 0.05, then by 0.01 around the best) of the absolute error of
// its fit rows' img/s. The result goes into instance-catalog/gpus.json.
void FitConvEfficiency(const json& measurements, const Catalog& catalog) {
  const std::vector<ResNetRow> all = ParseResNetRows(measurements);
  std::vector<std::string> gpus;
  for (const ResNetRow& r : all) {
    if (IsConvFitRow(r) && std::find(gpus.begin(), gpus.end(), r.gpu) == gpus.end()) {
      gpus.push_back(r.gpu);
    }
  }
  std::printf("## Fit: conv efficiency to the ResNet-50 1-GPU AMP rows\n");
  for (const std::string& gpu : gpus) {
    std::vector<ResNetRow> fit;
    for (const ResNetRow& r : all) {
      if (IsConvFitRow(r) && r.gpu == gpu) fit.push_back(r);
    }
    std::printf("\n### %s (%zu row)\n\n| conv_efficiency | mean abs error %% |\n|---:|---:|\n",
                gpu.c_str(), fit.size());
    double best = 0, best_err = 1e9;
    std::string error;
    auto probe = [&](double eff) {
      sim::SimulateOptions options;
      options.params.conv_efficiency = eff;
      options.params.use_catalog_conv_efficiency = false;
      const std::vector<ResNetOutcome> out = SimulateResNetRows(fit, catalog, options);
      double sum = 0;
      int n = 0;
      for (std::size_t i = 0; i < fit.size(); ++i) {
        if (!out[i].error.empty()) {
          error = out[i].error;
          continue;
        }
        sum += std::abs(ErrorPercent(out[i].ips, fit[i].published_ips));
        ++n;
      }
      if (n == 0) return;
      std::printf("| %.2f | %.2f |\n", eff, sum / n);
      std::fflush(stdout);
      if (sum / n < best_err) best = eff, best_err = sum / n;
    };
    for (double eff = 0.10; eff <= 0.901; eff += 0.05) probe(eff);
    if (best == 0) {
      std::printf("\n%s: nothing fitted; not simulated: %s\n", gpu.c_str(), error.c_str());
      continue;
    }
    const double center = best;
    for (double eff = center - 0.04; eff <= center + 0.041; eff += 0.01) {
      if (std::abs(eff - center) > 1e-9) probe(eff);
    }
    std::printf("\n%s: best conv_efficiency %.2f: mean absolute error %.2f%%\n", gpu.c_str(), best,
                best_err);
  }
}

// ---------------------------------------------------------------------------
// 2. nccl-tests all_reduce bus bandwidth.

struct BusbwCase {
  std::string hardware;  // as described by the source
  std::string instance;  // catalog entry simulated
  int nodes = 1;
  double bytes = 0;
  double published_GBps = 0;
};

// Catalog instance for a GPU named by a published row.
std::string InstanceForGpu(const std::string& gpu) {
  if (gpu.find("H100") != std::string::npos) return "p5.48xlarge";
  if (gpu.find("40GB") != std::string::npos) return "p4d.24xlarge";
  return "p4de.24xlarge";  // A100 80GB
}

std::vector<BusbwCase> PublishedBusbwCases(const json& measurements) {
  std::vector<BusbwCase> cases;
  for (const json& e : measurements) {
    if (e.at("metric").at("name") != "allreduce_busbw") continue;
    const json& hw = e.at("hardware");
    BusbwCase c;
    c.hardware = std::string(hw.at("gpu")) + ", " + std::string(hw.at("interconnect"));
    c.instance = InstanceForGpu(hw.at("gpu"));
    c.nodes = hw.at("nodes");
    c.bytes = e.at("metric").at("message_bytes");
    c.published_GBps = e.at("metric").at("value");
    cases.push_back(c);
  }
  return cases;
}

std::vector<BusbwCase> AwsSourcesBusbwCases(const json& sources) {
  std::vector<BusbwCase> cases;
  for (const json& e : sources.at("_nccl_allreduce")) {
    if (!e.contains("msg_bytes") || !e.contains("busbw_GBps")) continue;
    if (e.at("msg_bytes").is_null() || e.at("busbw_GBps").is_null()) continue;
    const std::string name = e.at("instance");
    BusbwCase c;
    c.hardware = name + (e.contains("kind") ? " [" + std::string(e.at("kind")) + "]" : "");
    c.instance = name.rfind("p5.48xlarge", 0) == 0 ? "p5.48xlarge" : "p4d.24xlarge";
    c.nodes = e.at("nodes");
    c.bytes = e.at("msg_bytes");
    c.published_GBps = e.at("busbw_GBps");
    cases.push_back(c);
  }
  return cases;
}

// The all-reduce over every GPU of the nodes with NCCL-like algorithm choice
// (the fastest of ring, tree and hierarchical); returns seconds and algorithm.
Expected<std::pair<double, std::string>> SimulateAllReduce(const InstanceType& type, int nodes,
                                                           double bytes,
                                                           const sim::ModelParams& params) {
  FlushBeforeFork();
  Expected<std::string> out = sim::RunIsolated([&]() {
    sim::ConfigureNetworkModel();
    sim::Platform p = sim::BuildPlatform(sim::ClusterShape{type, nodes, 1.0, 32}, params);
    std::vector<int> ranks(p.gpus.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(i);
    sim::CollectiveCall call{sim::CollKind::kAllReduce, sim::CollAlgo::kRing, bytes, ranks, "ar"};
    sim::CollAlgo algo = sim::CollAlgo::kRing;
    const double seconds = sim::MeasureFastest(p, params, {call}, &algo);
    char text[64];  // full precision: std::to_string keeps only microseconds
    std::snprintf(text, sizeof text, "%.17g %s", seconds, sim::ToString(algo));
    return std::string(text);
  });
  if (!out.ok()) return out.status();
  char algo[32] = "";
  double seconds = 0;
  std::sscanf(out->c_str(), "%lf %31s", &seconds, algo);
  return std::make_pair(seconds, std::string(algo));
}

// nccl-tests PERFORMANCE.md: busbw = algbw * 2(n-1)/n, algbw = bytes / time.
double BusBandwidthGBps(double bytes, double seconds, int ranks) {
  return bytes / seconds * 2.0 * (ranks - 1) / ranks / 1e9;
}

std::string SizeLabel(double bytes) {
  char buf[32];
  if (bytes >= 1024.0 * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%g GiB", bytes / (1024.0 * 1024 * 1024));
  } else {
    std::snprintf(buf, sizeof buf, "%g MiB", bytes / (1024.0 * 1024));
  }
  return buf;
}

void PrintBusbwHeader(const char* title) {
  std::printf(
      "\n## %s\n\n"
      "| hardware (source) | simulated as | GPUs | message | algorithm | time us (pred.) | "
      "busbw GB/s (pred.) | published | error %% | sim wall s |\n"
      "|---|---|---:|---:|---|---:|---:|---:|---:|---:|\n",
      title);
}

struct BusbwOutcome {
  double seconds = 0, busbw_GBps = 0, wall_s = 0;
  std::string algorithm;
  std::string error;  // non-empty when not simulated
};

BusbwOutcome SimulateBusbw(const BusbwCase& c, const InstanceType* type,
                           const sim::ModelParams& params = sim::ModelParams()) {
  BusbwOutcome out;
  const int ranks = type ? c.nodes * type->gpus : 0;
  if (type == nullptr) {
    out.error = "not in the catalog";
    return out;
  }
  if (ranks > kMaxAllReduceRanks) {
    out.error = "skipped: group larger than the limit";
    return out;
  }
  const auto start = std::chrono::steady_clock::now();
  Expected<std::pair<double, std::string>> t = SimulateAllReduce(*type, c.nodes, c.bytes, params);
  out.wall_s = Seconds(start);
  if (!t.ok()) {
    out.error = "failed: " + t.status().message();
    return out;
  }
  out.seconds = t->first;
  out.algorithm = t->second;
  out.busbw_GBps = BusBandwidthGBps(c.bytes, out.seconds, ranks);
  return out;
}

void RunBusbwCase(const BusbwCase& c, const Catalog& catalog, ErrorSummary* summary) {
  const InstanceType* type = catalog.Find(c.instance);
  const int ranks = type ? c.nodes * type->gpus : 0;
  const BusbwOutcome out = SimulateBusbw(c, type);
  std::printf("| %s | %d x %s | %d | %s | ", c.hardware.c_str(), c.nodes, c.instance.c_str(), ranks,
              SizeLabel(c.bytes).c_str());
  if (!out.error.empty()) {
    std::printf("- | - | - | %.2f | %s | %.2f |\n", c.published_GBps, out.error.c_str(),
                out.wall_s);
    return;
  }
  const double error = ErrorPercent(out.busbw_GBps, c.published_GBps);
  std::printf("%s | %.1f | %.2f | %.2f | %+.1f | %.2f |\n", out.algorithm.c_str(),
              out.seconds * 1e6, out.busbw_GBps, c.published_GBps, error, out.wall_s);
  summary->Add(std::to_string(ranks) + " GPUs " + c.instance + " " + SizeLabel(c.bytes), error);
}

void RunBusbwTable(const char* title, const std::vector<BusbwCase>& cases, const Catalog& catalog) {
  PrintBusbwHeader(title);
  ErrorSummary summary;
  for (const BusbwCase& c : cases) {
    RunBusbwCase(c, catalog, &summary);
    std::fflush(stdout);
  }
  summary.Print(title);
}

// ---------------------------------------------------------------------------
// 3. The fit of the collective parameters to the nccl-tests rows.

constexpr double kLargeMessageBytes = 128.0 * 1024 * 1024;

// What a fit varies: the NVLink efficiency of a GPU, the network efficiency
// of instance types, or the protocol latency scale.
struct NcclFitState {
  std::map<std::string, double> nvlink;   // GPU name -> efficiency
  std::map<std::string, double> network;  // instance name -> efficiency
  double latency_scale = 1.0;             // NCCL's own constants: the starting point
};

// Rows used by the fit: every busbw row except those whose publisher marks
// them as not a measurement of a healthy system (the ParallelCluster floor,
// the NCCL-issue reporter's multi-node p4d runs he considered low).
bool UsedByFit(const BusbwCase& c) { return !(c.instance == "p4d.24xlarge" && c.nodes > 1); }

// Mean absolute % error over `cases` with the fit state applied.
double MeanErrorWith(const std::vector<BusbwCase>& cases, const Catalog& catalog,
                     const NcclFitState& state) {
  double sum = 0;
  int rows = 0;
  for (const BusbwCase& c : cases) {
    const InstanceType* found = catalog.Find(c.instance);
    if (found == nullptr) continue;
    InstanceType type = *found;
    if (auto it = state.nvlink.find(type.gpu.name); it != state.nvlink.end()) {
      type.gpu.nvlink_efficiency = it->second;
    }
    if (auto it = state.network.find(type.name); it != state.network.end()) {
      type.network_efficiency = it->second;
    }
    sim::ModelParams params;
    params.protocol_latency_scale = state.latency_scale;
    const BusbwOutcome out = SimulateBusbw(c, &type, params);
    if (!out.error.empty()) continue;
    sum += std::abs(ErrorPercent(out.busbw_GBps, c.published_GBps));
    ++rows;
  }
  return rows ? sum / rows : 0;
}

// Grid search of one value (coarse steps, then `fine` steps around the best)
// minimising `error`; prints every probe.
double GridSearch(const char* name, double lo, double hi, double coarse, double fine,
                  const std::function<double(double)>& error) {
  double best = lo, best_err = 1e9;
  auto probe = [&](double x) {
    const double e = error(x);
    std::printf("| %s | %.3f | %.2f |\n", name, x, e);
    std::fflush(stdout);
    if (e < best_err - 1e-9) best = x, best_err = e;
  };
  for (double x = lo; x <= hi + 1e-9; x += coarse) probe(x);
  if (fine > 0) {
    const double center = best;
    for (double x = center - coarse + fine; x < center + coarse - 1e-9; x += fine) {
      if (std::abs(x - center) > 1e-9 && x >= lo - 1e-9 && x <= hi + 1e-9) probe(x);
    }
  }
  std::printf("| **%s best** | **%.3f** | **%.2f** |\n", name, best, best_err);
  return best;
}

std::vector<BusbwCase> Select(const std::vector<BusbwCase>& cases,
                              const std::function<bool(const BusbwCase&)>& keep) {
  std::vector<BusbwCase> out;
  for (const BusbwCase& c : cases) {
    if (UsedByFit(c) && keep(c)) out.push_back(c);
  }
  return out;
}

bool IsA100(const BusbwCase& c) { return c.instance != "p5.48xlarge"; }

// Fits, in turn: the NVLink efficiency of the A100 and of the H100 to the
// single-node rows >= 128 MiB; the network efficiency of p4de (EFA, 4 x 100
// Gb/s) and of p5 (EFA, 32 x 100 Gb/s) to their 2-node rows >= 128 MiB (the
// p5 rows of 4 to 32 nodes are held out: they evaluate the fit);
// the protocol latency scale to every row below 128 MiB; then the network
// efficiencies again with that latency.
void FitNccl(const std::vector<BusbwCase>& all, const Catalog& catalog) {
  std::printf(
      "## Fit: collective parameters to the nccl-tests all_reduce busbw rows "
      "(mean absolute error %%)\n\n| parameter | value | mean abs error %% |\n|---|---:|---:|\n");
  NcclFitState state;
  auto large = [](const BusbwCase& c) { return c.bytes >= kLargeMessageBytes; };
  const struct {
    const char* gpu;
    bool a100;
  } gpus[] = {{"A100", true}, {"H100", false}};
  for (const auto& g : gpus) {
    const auto rows = Select(
        all, [&](const BusbwCase& c) { return large(c) && c.nodes == 1 && IsA100(c) == g.a100; });
    const std::vector<std::string> names =
        g.a100 ? std::vector<std::string>{"A100-SXM4-80GB", "A100-SXM4-40GB"}
               : std::vector<std::string>{"H100-SXM5-80GB"};
    const double best = GridSearch((std::string(g.gpu) + " nvlink_efficiency").c_str(), 0.60, 1.00,
                                   0.05, 0.01, [&](double e) {
                                     NcclFitState s = state;
                                     for (const std::string& n : names) s.nvlink[n] = e;
                                     return MeanErrorWith(rows, catalog, s);
                                   });
    for (const std::string& n : names) state.nvlink[n] = best;
  }
  auto fit_networks = [&]() {
    for (const char* instance : {"p4de.24xlarge", "p5.48xlarge"}) {
      const auto rows = Select(all, [&](const BusbwCase& c) {
        return large(c) && c.nodes == 2 && c.instance == instance;
      });
      const double best = GridSearch((std::string(instance) + " network efficiency").c_str(), 0.60,
                                     1.00, 0.05, 0.01, [&](double e) {
                                       NcclFitState s = state;
                                       s.network[instance] = e;
                                       return MeanErrorWith(rows, catalog, s);
                                     });
      state.network[instance] = best;
    }
  };
  fit_networks();
  const auto small = Select(all, [&](const BusbwCase& c) { return !large(c); });
  state.latency_scale =
      GridSearch("protocol_latency_scale", 0.0, 8.0, 1.0, 0.25, [&](double scale) {
        NcclFitState s = state;
        s.latency_scale = scale;
        return MeanErrorWith(small, catalog, s);
      });
  fit_networks();
  std::printf("\nfitted:");
  for (const auto& [name, e] : state.nvlink)
    std::printf(" %s nvlink_efficiency %.2f;", name.c_str(), e);
  for (const auto& [name, e] : state.network)
    std::printf(" %s network efficiency %.2f;", name.c_str(), e);
  std::printf(" protocol_latency_scale %.2f\n", state.latency_scale);
}

void PrintBusbwNotes() {
  std::printf(
      "\n## nccl-tests all_reduce bus bandwidth\n\n"
      "Setup per row: one all-reduce of the message size over all GPUs of the nodes, simulated\n"
      "alone, with the algorithm NCCL-like auto choice takes (the fastest of ring -- one\n"
      "channel per local GPU when the group spans nodes --, pipelined hierarchical where the\n"
      "group spans nodes with several GPUs on each and, up to 16 MiB, double binary tree),\n"
      "NVLink and NICs at the catalog's fitted efficiencies, NCCL's protocol latency once;\n"
      "busbw = bytes / time * 2(n-1)/n (nccl-tests PERFORMANCE.md). Mapping: A100 80GB ->\n"
      "p4de.24xlarge, A100 40GB -> p4d.24xlarge, H100 -> p5.48xlarge (single-node Azure rows\n"
      "use the same NVSwitch node; NVLink SHARP (NVLS) is not modelled).\n");
}

int Main(int argc, char** argv) {
  const std::string mode = argc > 1 && std::string(argv[1]).rfind("--fit-", 0) == 0 ? argv[1] : "";
  if (!mode.empty()) --argc, ++argv;
  if (!mode.empty() && mode != "--fit-gemm-efficiency" && mode != "--fit-conv-efficiency" &&
      mode != "--fit-nccl") {
    std::fprintf(stderr,
                 "accuracy: unknown option %s (--fit-gemm-efficiency, --fit-conv-efficiency, "
                 "--fit-nccl)\n",
                 mode.c_str());
    return 1;
  }
  const bool fit = mode == "--fit-gemm-efficiency";
  const bool fit_conv = mode == "--fit-conv-efficiency";
  const std::string measurements_path =
      argc > 1 ? argv[1] : std::string(kReferenceDir) + "published-measurements.json";
  const std::string sources_path =
      argc > 2 ? argv[2] : std::string(kReferenceDir) + "aws-instances-sources.json";
  const std::optional<json> measurements = ReadJson(measurements_path);
  const std::optional<json> sources = ReadJson(sources_path);
  if (!measurements || !sources) {
    std::fprintf(stderr, "accuracy: cannot read %s\n",
                 (measurements ? sources_path : measurements_path).c_str());
    return 1;
  }
  Expected<Catalog> catalog = Catalog::LoadBuiltin(Catalog::DefaultDir());
  if (!catalog.ok()) {
    std::fprintf(stderr, "accuracy: %s\n", catalog.status().message().c_str());
    return 1;
  }
  if (Status st = AddSingleGpuNodes(ParseResNetRows(*measurements), &*catalog); !st.ok()) {
    std::fprintf(stderr, "accuracy: %s\n", st.message().c_str());
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  if (fit_conv) {
    FitConvEfficiency(*measurements, *catalog);
    std::printf("\ntotal wall time %.1f s\n", Seconds(start));
    return 0;
  }
  if (fit) {
    FitGemmEfficiency(*measurements, *catalog);
    std::printf("\ntotal wall time %.1f s\n", Seconds(start));
    return 0;
  }
  if (mode == "--fit-nccl") {
    std::vector<BusbwCase> cases = PublishedBusbwCases(*measurements);
    for (const BusbwCase& c : AwsSourcesBusbwCases(*sources)) cases.push_back(c);
    FitNccl(cases, *catalog);
    std::printf("\ntotal wall time %.1f s\n", Seconds(start));
    return 0;
  }
  RunMegatron(*measurements, *catalog);
  RunResNet(*measurements, *catalog);
  PrintBusbwNotes();
  RunBusbwTable("published-measurements.json: allreduce_busbw", PublishedBusbwCases(*measurements),
                *catalog);
  RunBusbwTable("aws-instances-sources.json: _nccl_allreduce", AwsSourcesBusbwCases(*sources),
                *catalog);
  std::printf("\ntotal bench wall time %.1f s\n", Seconds(start));
  return 0;
}

}  // namespace
}  // namespace trainsim::bench

int main(int argc, char** argv) { return trainsim::bench::Main(argc, argv); }
