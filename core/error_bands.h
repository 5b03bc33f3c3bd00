// Error bands: how far a prediction can be trusted, from the validation
// corpus (docs/validation.md section 0.7).
//
// Every evaluate point of the corpus (bench/data/validation/evaluate) that
// the simulator can run leaves one sample: the log of measured over predicted
// throughput, with the point's family (strategy, GPU generation, precision
// class, GPU count). `bench/accuracy --write-bands` writes them to
// instance-catalog/error-bands.json; nothing here is set by hand. A
// configuration's band is the central `coverage` interval of the samples of
// its family, every source of the family weighing the same (a source's points
// share one source's weight: a band describes what a new source sees, and the
// corpus's sources differ in size by a hundredfold): the finest family with
// at least kMinBandPoints samples, backing
// off to coarser ones, and widened to the whole corpus's band where the
// configuration lies beyond what its strategy was measured at on its GPU (fit
// points included), or where its strategy has too few evaluate points on its
// GPU to make a family of its own (then `note` says so).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/scenario.h"
#include "core/status.h"

namespace trainsim {

// What a configuration's band is looked up by.
struct BandKey {
  std::string strategy;   // "dp", "zero3", "tp-pp" or "zero3+tp-pp"
  std::string gpu;        // GPU generation: "V100", "A100", "H100", "H200", ...
  std::string precision;  // "fp8", "16-bit" (fp16, bf16) or "32-bit" (fp32, tf32)
  int gpus = 0;
  // "transformer", "mixture-of-experts" (model.experts) or "layer list" (model.layer_list:
  // CNNs and the like). Not a family of its own
  // (too few samples); a strategy never measured on the configuration's kind widens the band.
  std::string model = "transformer";
  // ZeRO-3's implementation (parallel.zero_impl: "fsdp1", "fsdp2", "deepspeed", "xla"), "" for
  // the other strategies. Not a family of its own either: an implementation never measured at
  // the configuration's scale on its GPU widens the band.
  std::string impl = {};
  auto operator<=>(const BandKey&) const = default;
};

// The key of a parsed scenario (strategy: ZeRO-3 with or without tp/pp, tp/pp
// without it, else data parallel).
BandKey BandKeyOf(const Scenario& s);

// "H100" from "H100-SXM5-80GB": the part before the first '-'.
std::string GpuGeneration(std::string_view gpu_name);

// One evaluate point's error: log(measured / predicted), throughputs.
struct BandSample {
  std::string id;
  std::string source;
  BandKey key;
  double log_error = 0;
};

// A training configuration the corpus measured, fit or evaluate point: what
// the corpus covers (the scale check of BandFor), with no error.
struct CoveredKey {
  std::string source;
  BandKey key;
  auto operator<=>(const CoveredKey&) const = default;
};

struct ErrorBands {
  std::string generated_by;        // the command that wrote the file
  std::string corpus_fingerprint;  // of the evaluate files it was computed from
  std::vector<BandSample> samples;
  // Every training point that parses, fit ones included (their errors are in-sample, so not
  // samples, but they were measured); distinct, sorted.
  std::vector<CoveredKey> covered;
};

// Families with fewer samples back off to a coarser family: the 10% and 90%
// quantiles of fewer than 10 samples would be their extremes.
inline constexpr int kMinBandPoints = 10;

Expected<ErrorBands> ParseErrorBands(std::string_view text, std::string_view filename);
Expected<ErrorBands> LoadErrorBands(const std::string& path);
// The file's text: samples sorted by id, errors to 6 decimals (same bands, same bytes).
std::string ErrorBandsText(const ErrorBands& bands);
// instance-catalog/error-bands.json of the built-in catalog (Catalog::DefaultDir()).
std::string DefaultErrorBandsPath();
// That file, loaded once per process and shared (commands, the GUI's workers); null when it
// cannot be read, with the reason in *why_not. Thread-safe.
std::shared_ptr<const ErrorBands> DefaultErrorBands(std::string* why_not = nullptr);

// Measured throughput lies within [lo, hi] x the predicted one for `coverage`
// of the corpus points like the configuration; a step time within
// [1 / hi, 1 / lo] x the predicted one.
struct Band {
  double lo = 1, hi = 1;
  double coverage = 0.8;
  std::string family;  // the samples used, e.g. "zero3 / A100 / 16-bit / 9-128 GPUs"
  int points = 0;
  // Why the band is wider than its family's ("no published measurement of
  // zero3 on H100 beyond 512 GPUs"), or "".
  std::string note;
};

// Whether `b` is a band made from samples (BandFor gives points 0, lo = hi = 1,
// where there are none: nothing to show).
inline bool Judged(const std::optional<Band>& b) { return b && b->points > 0; }

// The band of `key` at `coverage` (0 < coverage < 1). Samples of
// `exclude_source` are left out (for leave-one-source-out checks). Without any
// sample: lo = hi = 1, points 0, and a note.
Band BandFor(const ErrorBands& bands, const BandKey& key, double coverage = 0.8,
             std::string_view exclude_source = {});

// The log errors a band of `key` is made from, for drawing model error at
// random (the planner's job Monte-Carlo): its family's samples, or all
// training points' where BandFor widens the band, as that many evenly spaced
// quantiles of their source-weighted distribution (a uniform draw follows it),
// smallest first. Empty without samples.
std::vector<double> BandErrors(const ErrorBands& bands, const BandKey& key);

// The q-quantile (0 <= q <= 1) of sorted values, linear between order
// statistics (Hyndman and Fan's type 7, R's default).
double Quantile(const std::vector<double>& sorted, double q);

}  // namespace trainsim
