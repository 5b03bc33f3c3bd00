#include "core/error_bands.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include "core/catalog.h"
#include "core/json_doc.h"
#include "core/scenario_sections.h"

namespace trainsim {
namespace {

const std::vector<std::string> kStrategies = {"dp", "zero3", "tp-pp", "zero3+tp-pp"};
const std::vector<std::string> kPrecisions = {"fp8", "16-bit", "32-bit"};
const std::vector<std::string> kModelKinds = {"transformer", "layer list", "mixture-of-experts"};
// "" (absent: not ZeRO-3), then parallel.zero_impl's names.
const std::vector<std::string> kImpls = [] {
  std::vector<std::string> names = {""};
  for (std::string& n : EnumNames<ZeroImpl>(kZeroImpls)) names.push_back(std::move(n));
  return names;
}();

// Scale buckets: one node of 8 GPUs, up to 16 nodes, more.
std::string ScaleBucket(int gpus) {
  if (gpus <= 8) return "1-8 GPUs";
  if (gpus <= 128) return "9-128 GPUs";
  return "129+ GPUs";
}

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// One entry of `samples` (id, source, key fields, log_error) or, without
// `with_error`, of `covered` (source and key fields only).
Status ReadEntry(const JsonValue& v, const std::string& path, const std::string& file,
                 bool with_error, BandSample* out) {
  ObjectReader r(v, path, file);
  int strategy = 0, precision = 0, model = 0, impl = 0;
  if (with_error) r.Require("id").String("id", &out->id);
  r.Require("source").Require("strategy").Require("gpu").Require("precision").Require("gpus");
  r.String("source", &out->source)
      .Enum("strategy", kStrategies, &strategy)
      .String("gpu", &out->key.gpu)
      .Enum("precision", kPrecisions, &precision)
      .Int("gpus", &out->key.gpus, 1, kMaxParallel)
      .Enum("model", kModelKinds, &model)  // optional: "transformer"
      .Enum("impl", kImpls, &impl);        // optional: ""
  if (with_error) r.Require("log_error").Double("log_error", &out->log_error, -10, 10);
  if (Status s = r.Finish(); !s.ok()) return s;
  out->key.strategy = kStrategies[strategy];
  out->key.precision = kPrecisions[precision];
  out->key.model = kModelKinds[model];
  out->key.impl = kImpls[impl];
  return Status::Ok();
}

// `, "impl": "..."` for a ZeRO-3 key, else nothing.
std::string ImplField(const BandKey& k) {
  return k.impl.empty() ? "" : ", \"impl\": " + Quoted(k.impl);
}

// Samples' errors with their weights: every source of the set weighs the same in all, its
// samples equally within it (docs/validation.md section 0.7). Sorted by error.
struct WeightedErrors {
  std::vector<std::pair<double, double>> values;  // (log error, weight)
  double total = 0;
};

WeightedErrors BySource(const std::vector<const BandSample*>& samples) {
  std::map<std::string_view, int> per_source;
  for (const BandSample* s : samples) ++per_source[s->source];
  WeightedErrors out;
  for (const BandSample* s : samples) {
    out.values.emplace_back(s->log_error, 1.0 / per_source[s->source]);
  }
  std::sort(out.values.begin(), out.values.end());
  for (const auto& [e, w] : out.values) out.total += w;
  return out;
}

// The q-quantile of weighted errors: Quantile's linear interpolation between order statistics,
// with the i-th placed at its weight's midpoint, (W_<i + w_i / 2 - w_0 / 2) / (W - w_0 / 2 -
// w_last / 2), so that equal weights give Quantile exactly.
double WeightedQuantile(const WeightedErrors& e, double q) {
  const auto& v = e.values;
  if (v.empty()) return 0;
  if (v.size() == 1) return v[0].first;
  const double span = e.total - v.front().second / 2 - v.back().second / 2;
  double before = 0, previous_at = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double at = (before + v[i].second / 2 - v.front().second / 2) / span;
    if (q <= at) {
      if (i == 0) return v[0].first;
      const double t = at > previous_at ? (q - previous_at) / (at - previous_at) : 1;
      return v[i - 1].first + t * (v[i].first - v[i - 1].first);
    }
    before += v[i].second, previous_at = at;
  }
  return v.back().first;
}

// The central `coverage` interval of the errors, as throughput multipliers.
void Interval(const WeightedErrors& errors, double coverage, Band* band) {
  const double tail = (1 - coverage) / 2;
  band->lo = std::exp(WeightedQuantile(errors, tail));
  band->hi = std::exp(WeightedQuantile(errors, 1 - tail));
  band->points = static_cast<int>(errors.values.size());
}

}  // namespace

std::string GpuGeneration(std::string_view gpu_name) {
  return std::string(gpu_name.substr(0, gpu_name.find('-')));
}

BandKey BandKeyOf(const Scenario& s) {
  BandKey k;
  const bool model_parallel = s.parallel.tp > 1 || s.parallel.pp > 1;
  if (s.parallel.zero_stage == 3) {
    k.strategy = model_parallel ? "zero3+tp-pp" : "zero3";
  } else {
    k.strategy = model_parallel ? "tp-pp" : "dp";
  }
  k.gpu = GpuGeneration(s.instance.gpu.name);
  switch (s.training.precision) {
    case Precision::kFp8:
      k.precision = "fp8";
      break;
    case Precision::kFp32:
    case Precision::kTf32:
      k.precision = "32-bit";
      break;
    default:
      k.precision = "16-bit";
  }
  k.gpus = s.total_gpus();
  k.model = s.model.kind == ModelKind::kLayerList ? "layer list"
            : s.model.experts > 0                 ? "mixture-of-experts"
                                                  : "transformer";
  if (s.parallel.zero_stage == 3) k.impl = ToString(s.parallel.zero_impl);
  return k;
}

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double h = (static_cast<double>(sorted.size()) - 1) * q;
  const size_t i = static_cast<size_t>(std::floor(h));
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (h - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

Expected<ErrorBands> ParseErrorBands(std::string_view text, std::string_view filename) {
  Expected<JsonValue> doc = ParseJson(text, filename);
  if (!doc.ok()) return doc.status();
  const std::string file(filename);
  ErrorBands out;
  ObjectReader r(*doc, "", file);
  int version = 0;
  r.Require("version").Require("generated_by").Require("corpus_fingerprint").Require("samples");
  r.Int("version", &version, 1, 1)
      .String("generated_by", &out.generated_by)
      .String("corpus_fingerprint", &out.corpus_fingerprint);
  const JsonValue* samples = r.Child("samples");
  const JsonValue* covered = r.Child("covered");
  if (Status s = r.Finish(); !s.ok()) return s;
  if (covered) {
    if (!covered->is_array()) {
      return Status::InvalidInput(
          Located(file, covered->pos, "covered: expected an array, got " + Describe(*covered)));
    }
    for (size_t i = 0; i < covered->items.size(); ++i) {
      BandSample sample;  // the same fields but the error
      const std::string path = "covered[" + std::to_string(i) + "]";
      if (Status s = ReadEntry(covered->items[i], path, file, false, &sample); !s.ok()) return s;
      out.covered.push_back(CoveredKey{sample.source, sample.key});
    }
  }
  if (!samples->is_array()) {
    return Status::InvalidInput(
        Located(file, samples->pos, "samples: expected an array, got " + Describe(*samples)));
  }
  for (size_t i = 0; i < samples->items.size(); ++i) {
    BandSample sample;
    const std::string path = "samples[" + std::to_string(i) + "]";
    if (Status s = ReadEntry(samples->items[i], path, file, true, &sample); !s.ok()) return s;
    out.samples.push_back(std::move(sample));
  }
  return out;
}

Expected<ErrorBands> LoadErrorBands(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidInput(path + ": cannot be read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return ParseErrorBands(text.str(), path);
}

std::string ErrorBandsText(const ErrorBands& bands) {
  std::vector<const BandSample*> sorted;
  for (const BandSample& s : bands.samples) sorted.push_back(&s);
  std::sort(sorted.begin(), sorted.end(),
            [](const BandSample* a, const BandSample* b) { return a->id < b->id; });
  std::string out = "{\n  \"version\": 1,\n  \"generated_by\": " + Quoted(bands.generated_by) +
                    ",\n  \"corpus_fingerprint\": " + Quoted(bands.corpus_fingerprint) +
                    ",\n  \"samples\": [";
  for (size_t i = 0; i < sorted.size(); ++i) {
    const BandSample& s = *sorted[i];
    char error[32];
    std::snprintf(error, sizeof error, "%.6f", s.log_error);
    out += std::string(i ? "," : "") + "\n    {\"id\": " + Quoted(s.id) +
           ", \"source\": " + Quoted(s.source) + ", \"strategy\": " + Quoted(s.key.strategy) +
           ", \"gpu\": " + Quoted(s.key.gpu) + ", \"precision\": " + Quoted(s.key.precision) +
           ", \"gpus\": " + std::to_string(s.key.gpus) + ", \"model\": " + Quoted(s.key.model) +
           ImplField(s.key) + ", \"log_error\": " + error + "}";
  }
  out += "\n  ]";
  std::vector<CoveredKey> covered = bands.covered;
  std::sort(covered.begin(), covered.end());
  covered.erase(std::unique(covered.begin(), covered.end()), covered.end());
  if (!covered.empty()) {
    out += ",\n  \"covered\": [";
    for (size_t i = 0; i < covered.size(); ++i) {
      const CoveredKey& c = covered[i];
      out += std::string(i ? "," : "") + "\n    {\"source\": " + Quoted(c.source) +
             ", \"strategy\": " + Quoted(c.key.strategy) + ", \"gpu\": " + Quoted(c.key.gpu) +
             ", \"precision\": " + Quoted(c.key.precision) +
             ", \"gpus\": " + std::to_string(c.key.gpus) + ", \"model\": " + Quoted(c.key.model) +
             ImplField(c.key) + "}";
    }
    out += "\n  ]";
  }
  return out + "\n}\n";
}

std::string DefaultErrorBandsPath() {
  return (std::filesystem::path(Catalog::DefaultDir()) / "error-bands.json").string();
}

namespace {

// A key's family: its name, its samples' errors, and why it is beyond what the corpus
// measured ("" when it is not).
struct Family {
  std::string name;
  WeightedErrors errors;
  std::string note;
};

Family FamilyFor(const ErrorBands& bands, const BandKey& key, std::string_view exclude_source) {
  std::vector<const BandSample*> usable;
  for (const BandSample& s : bands.samples) {
    if (s.source != exclude_source) usable.push_back(&s);
  }
  auto errors = [&](const std::function<bool(const BandKey&)>& match) {
    std::vector<const BandSample*> in;
    for (const BandSample* s : usable) {
      if (match(s->key)) in.push_back(s);
    }
    return BySource(in);
  };
  const std::string scale = ScaleBucket(key.gpus);
  // The finest family with enough samples: strategy x GPU x precision x scale, then without
  // the scale, without the precision, without the GPU, then every sample.
  const struct {
    std::string name;
    std::function<bool(const BandKey&)> match;
  } levels[] = {
      {key.strategy + " / " + key.gpu + " / " + key.precision + " / " + scale,
       [&](const BandKey& k) {
         return k.strategy == key.strategy && k.gpu == key.gpu && k.precision == key.precision &&
                ScaleBucket(k.gpus) == scale;
       }},
      {key.strategy + " / " + key.gpu + " / " + key.precision,
       [&](const BandKey& k) {
         return k.strategy == key.strategy && k.gpu == key.gpu && k.precision == key.precision;
       }},
      {key.strategy + " / " + key.gpu,
       [&](const BandKey& k) { return k.strategy == key.strategy && k.gpu == key.gpu; }},
      {key.strategy, [&](const BandKey& k) { return k.strategy == key.strategy; }},
      {"all training points", [](const BandKey&) { return true; }},
  };
  Family f;
  bool other_gpus = false;  // the family had to leave the configuration's GPU
  for (const auto& level : levels) {
    f.errors = errors(level.match);
    if (static_cast<int>(f.errors.values.size()) < kMinBandPoints && &level != &levels[4]) {
      continue;
    }
    f.name = level.name;
    other_gpus = &level >= &levels[3];
    break;
  }
  // Beyond what the configuration's strategy was measured at on its GPU, fit points included.
  int measured_gpus = 0;
  auto measured = [&](const BandKey& k) {
    if (k.strategy == key.strategy && k.gpu == key.gpu && k.model == key.model &&
        k.impl == key.impl) {
      measured_gpus = std::max(measured_gpus, k.gpus);
    }
  };
  for (const BandSample* s : usable) measured(s->key);
  for (const CoveredKey& c : bands.covered) {
    if (c.source != exclude_source) measured(c.key);
  }
  const std::string what = key.strategy + (key.impl.empty() ? "" : " (" + key.impl + ")") +
                           (key.model == "transformer" ? "" : " of a " + key.model + " model") +
                           " on " + key.gpu;
  if (measured_gpus == 0) {
    f.note = "no published measurement of " + what;
  } else if (key.gpus > measured_gpus) {
    f.note = "no published measurement of " + what + " beyond " + std::to_string(measured_gpus) +
             " GPUs";
  } else if (other_gpus) {
    f.note = "fewer than " + std::to_string(kMinBandPoints) + " judged measurements of " +
             key.strategy + " on " + key.gpu;
  }
  return f;
}

WeightedErrors AllErrors(const ErrorBands& bands, std::string_view exclude_source) {
  std::vector<const BandSample*> in;
  for (const BandSample& s : bands.samples) {
    if (s.source != exclude_source) in.push_back(&s);
  }
  return BySource(in);
}

}  // namespace

std::shared_ptr<const ErrorBands> DefaultErrorBands(std::string* why_not) {
  static const Expected<ErrorBands> loaded = LoadErrorBands(DefaultErrorBandsPath());
  static const std::shared_ptr<const ErrorBands> shared =
      loaded.ok() ? std::make_shared<const ErrorBands>(*loaded) : nullptr;
  if (!shared && why_not) *why_not = loaded.status().message();
  return shared;
}

Band BandFor(const ErrorBands& bands, const BandKey& key, double coverage,
             std::string_view exclude_source) {
  const Family f = FamilyFor(bands, key, exclude_source);
  Band band;
  band.coverage = coverage;
  band.family = f.name;
  if (f.errors.values.empty()) {
    band.note = "no published measurement to judge the prediction by";
    return band;
  }
  Interval(f.errors, coverage, &band);
  band.note = f.note;
  if (!band.note.empty()) {
    // At least the whole corpus's spread.
    Band all;
    Interval(AllErrors(bands, exclude_source), coverage, &all);
    band.lo = std::min(band.lo, all.lo);
    band.hi = std::max(band.hi, all.hi);
    band.family += ", widened to all training points";
  }
  return band;
}

std::vector<double> BandErrors(const ErrorBands& bands, const BandKey& key) {
  const Family f = FamilyFor(bands, key, {});
  const WeightedErrors e = f.note.empty() ? f.errors : AllErrors(bands, {});
  // As many errors as samples, at evenly spaced quantiles of the weighted distribution, so that
  // a uniform draw from them follows it.
  const size_t n = e.values.size();
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(WeightedQuantile(e, n == 1 ? 0.5 : static_cast<double>(i) / (n - 1)));
  }
  return out;
}

}  // namespace trainsim
