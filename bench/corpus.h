// The validation corpus (bench/data/validation/, its README): published
// measurements, each with the configuration it was measured on, split into
// `fit/<parameter>.json` files (the points each fitted model parameter is
// fitted to) and `evaluate/<source>.json` files (never read by a fit).
//
// This header loads and checks the corpus (every error names the file and the
// point), sorts points into families, and simulates a point with a set of
// parameter values (the catalog's, or a fit's trial values). The bench program
// `accuracy` prints the tables; tests check that the corpus loads.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "core/error_bands.h"
#include "core/scenario.h"
#include "core/status.h"
#include "sim/model_params.h"

namespace trainsim::bench {

// The quantity a point is compared on (the point's `compare`, else its `metric`).
enum class Quantity { kTokensPerSPerGpu, kTokensPerS, kSamplesPerS, kStepTimeS, kBusbwGBps };

struct CollectivePoint {
  std::string op;  // all_reduce | all_gather | reduce_scatter
  double bytes = 0;
  std::string instance;
  int nodes = 1;
  int gpus_per_node = 0;  // GPUs of each node in the group; 0 = all of them
  // "ring" where the source forced NCCL's ring (NCCL_ALGO=Ring); "" = the
  // fastest of the simulator's algorithms, as NCCL's tuner chooses.
  std::string algorithm;
};

struct CorpusPoint {
  std::string id;
  std::string source_id;
  std::string file;  // relative to the corpus folder, e.g. "evaluate/zero3-mics.json"
  // "evaluate", or the parameter a fit file names ("gemm_efficiency").
  std::string split;
  nlohmann::json scenario;                    // null for collective points
  std::optional<CollectivePoint> collective;  // set for collective points
  Quantity quantity = Quantity::kTokensPerSPerGpu;
  double measured = 0;
  bool read_from_figure = false;
};

// A fit file: which parameter, for which GPUs or instance, by which criterion.
struct FitSpec {
  std::string file;
  std::string parameter;             // gemm_efficiency | attention_efficiency | conv_efficiency |
                                     // tf32_conv_efficiency | nvlink_efficiency |
                                     // network_efficiency | protocol_latency_scale |
                                     // comm_compute_share
  std::vector<std::string> targets;  // GPU names, or an instance name; empty for the
                                     // simulator's own figures (the last two)
  bool minimax = false;              // false: minimise the mean |error|
};

struct Corpus {
  std::vector<CorpusPoint> points;  // fit files first, then evaluate files, each sorted by name
  std::vector<FitSpec> fits;
};

// Loads every `fit/*.json` and `evaluate/*.json` under `dir`. Fails with the
// file and the point's index or id on a malformed point, a duplicate id, or a
// metric without a comparable quantity.
Expected<Corpus> LoadCorpus(const std::string& dir);

// Trial values for fitted parameters, applied over the catalog's.
struct ParamOverrides {
  // parameter -> target -> value: the GPU efficiencies (gemm_efficiency, ...) by GPU
  // name, network_efficiency by instance name, the simulator's own figures
  // (protocol_latency_scale, comm_compute_share) under the target "".
  std::map<std::string, std::map<std::string, double>> values;
  // Parameters whose fit had no points: back to the assumption of
  // sim/model_params.h (the catalog's fitted value is dropped).
  std::map<std::string, std::vector<std::string>> unfitted;  // parameter -> targets
};

// Sets `value` for every target of `fit` in `o`.
void SetFitted(const FitSpec& fit, double value, ParamOverrides* o);

// Adds one trial value written `parameter=value` (a figure of the simulator's own, such as
// hbm_efficiency) or `parameter@target=value` (a GPU's or instance's figure, such as
// gemm_efficiency@A100-SXM4-80GB=0.7) to `o`: for diagnostics, never stored.
Status ParseOverride(const std::string& text, ParamOverrides* o);

// Scenario points: the parsed scenario (catalog + the corpus's own catalog.json).
Expected<Scenario> PointScenario(const CorpusPoint& p, const Catalog& catalog);

// Family of a point: strategy x GPU generation x quantity class, e.g.
// "zero3 / A100 / throughput", "tp-pp / H100 / throughput", "all_gather / EFA / busbw".
std::string FamilyOf(const CorpusPoint& p, const Catalog& catalog);

struct Prediction {
  double value = 0;   // in the point's quantity
  std::string error;  // non-empty: not simulated, and why
  // Training points: the simulated step and the planner's estimate of it (the
  // estimator's agreement with the simulator, issue 14 section 4); 0 when the
  // estimator fails or for collectives.
  double step_s = 0, estimate_step_s = 0;
};

// Simulates the point (in a child process) with `o` applied.
Prediction Predict(const CorpusPoint& p, const Catalog& catalog, const ParamOverrides& o);

// Signed error in percent as throughput: positive when the simulator is faster
// than the measurement (for step times the ratio is inverted).
double ThroughputErrorPercent(const CorpusPoint& p, double predicted);

const char* ToString(Quantity q);

// FNV-1a (64 bit, hex) over the names and bytes of what a prediction's error
// depends on besides the code: the corpus's evaluate/*.json and catalog.json
// and the built-in catalog's gpus.json, aws.json and reference-systems.json
// (the fitted figures), in that order. Written into the error-bands file so
// that a test can tell when it is stale.
Expected<std::string> BandInputsFingerprint(const std::string& corpus_dir,
                                            const std::string& catalog_dir);

// The error-band sample of an evaluate training point that simulated, with its
// predicted value (core/error_bands.h); nullopt for other points.
std::optional<BandSample> BandSampleOf(const CorpusPoint& p, const Catalog& catalog,
                                       double predicted);

}  // namespace trainsim::bench
