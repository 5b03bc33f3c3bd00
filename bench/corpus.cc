#include "bench/corpus.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/units.h"
#include "planner/search/estimator.h"
#include "sim/collective_run.h"
#include "sim/collectives.h"
#include "sim/simulate.h"

namespace trainsim::bench {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

Status Bad(const std::string& where, const std::string& what) {
  return Status::InvalidInput(where + ": " + what);
}

std::optional<Quantity> QuantityNamed(const std::string& name) {
  if (name == "tokens_per_s_per_gpu") return Quantity::kTokensPerSPerGpu;
  if (name == "tokens_per_s") return Quantity::kTokensPerS;
  if (name == "samples_per_s") return Quantity::kSamplesPerS;
  if (name == "step_time_s") return Quantity::kStepTimeS;
  if (name == "busbw_GBps") return Quantity::kBusbwGBps;
  return std::nullopt;
}

// The comparable quantity and value: `compare` when present, else `metric`.
Status ReadMeasurement(const json& point, const std::string& where, CorpusPoint* p) {
  const json* m = point.contains("compare") ? &point.at("compare") : nullptr;
  if (m == nullptr) m = point.contains("metric") ? &point.at("metric") : nullptr;
  if (m == nullptr || !m->is_object()) return Bad(where, "needs a `metric` object");
  if (!m->contains("name") || !m->at("name").is_string() || !m->contains("value") ||
      !m->at("value").is_number()) {
    return Bad(where, "`metric`/`compare` needs a string `name` and a number `value`");
  }
  const std::string name = m->at("name");
  const std::optional<Quantity> q = QuantityNamed(name);
  if (!q) {
    return Bad(where, "metric \"" + name +
                          "\" is not comparable: give `compare` as tokens_per_s_per_gpu, "
                          "tokens_per_s, samples_per_s, step_time_s or busbw_GBps");
  }
  p->quantity = *q;
  p->measured = m->at("value");
  if (!(p->measured > 0)) return Bad(where, "the measured value must be > 0");
  return Status::Ok();
}

Status ReadCollective(const json& c, const std::string& where, CorpusPoint* p) {
  if (!c.is_object() || !c.contains("op") || !c.contains("bytes") || !c.contains("instance") ||
      !c.contains("nodes")) {
    return Bad(where, "`collective` needs op, bytes, instance and nodes");
  }
  CollectivePoint cp;
  cp.op = c.at("op");
  if (cp.op != "all_reduce" && cp.op != "all_gather" && cp.op != "reduce_scatter") {
    return Bad(where, "collective.op \"" + cp.op +
                          "\": expected all_reduce, all_gather or reduce_scatter");
  }
  cp.bytes = c.at("bytes");
  cp.instance = c.at("instance");
  cp.nodes = c.at("nodes");
  cp.gpus_per_node = c.value("gpus_per_node", 0);
  if (!(cp.bytes > 0) || cp.nodes < 1 || cp.gpus_per_node < 0) {
    return Bad(where, "collective.bytes and nodes must be > 0, gpus_per_node >= 0");
  }
  cp.algorithm = c.value("algorithm", "");
  if (!cp.algorithm.empty() && cp.algorithm != "ring") {
    return Bad(where, "collective.algorithm \"" + cp.algorithm +
                          "\": expected \"ring\" (the source set NCCL_ALGO=Ring), or leave it "
                          "out for NCCL's own choice");
  }
  p->collective = cp;
  return Status::Ok();
}

Status ReadPointFields(const json& point, const json* file_source, const std::string& file,
                       const std::string& split, int index, CorpusPoint* p) {
  std::string where = file + ": points[" + std::to_string(index) + "]";
  if (!point.is_object() || !point.contains("id") || !point.at("id").is_string()) {
    return Bad(where, "needs a string `id`");
  }
  p->id = point.at("id");
  where += " (" + p->id + ")";
  const json* source = point.contains("source") ? &point.at("source") : file_source;
  if (source == nullptr || !source->is_object() || !source->contains("id")) {
    return Bad(where, "needs a `source` with an `id` (on the point or the file)");
  }
  p->source_id = source->at("id");
  p->file = file;
  p->split = split;
  p->read_from_figure = point.value("read_from_figure", false);
  if (Status st = ReadMeasurement(point, where, p); !st.ok()) return st;
  const bool is_collective = p->quantity == Quantity::kBusbwGBps;
  if (is_collective) {
    if (!point.contains("collective")) return Bad(where, "a busbw point needs `collective`");
    return ReadCollective(point.at("collective"), where, p);
  }
  if (!point.contains("scenario") || !point.at("scenario").is_object()) {
    return Bad(where, "needs a `scenario` object");
  }
  p->scenario = point.at("scenario");
  return Status::Ok();
}

// ReadPointFields, with a value of the wrong type (a number where a string
// belongs) reported as an error of the point instead of an exception.
Status ReadPoint(const json& point, const json* file_source, const std::string& file,
                 const std::string& split, int index, CorpusPoint* p) {
  try {
    return ReadPointFields(point, file_source, file, split, index, p);
  } catch (const json::exception& e) {
    return Bad(file + ": points[" + std::to_string(index) + "]",
               std::string("a field has the wrong type: ") + e.what());
  }
}

Expected<json> ReadJsonFile(const fs::path& path, const std::string& name) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(name + ": cannot open");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    return Status::InvalidInput(name + ": " + e.what());
  }
}

std::vector<fs::path> JsonFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The simulator's own fitted figures (sim/model_params.h): one value for every scenario, no
// target; `unfitted` is the value when a fit has no points (leave one source out).
struct GlobalFigure {
  const char* parameter;
  double sim::ModelParams::*field;
  double unfitted;
};
constexpr GlobalFigure kGlobalFigures[] = {
    {"protocol_latency_scale", &sim::ModelParams::protocol_latency_scale, 1.0},  // NCCL's own
    {"comm_compute_share", &sim::ModelParams::comm_compute_share, 0.0},          // free overlap
    {"hbm_efficiency", &sim::ModelParams::hbm_efficiency, 0.80},  // the assumption it replaced
};

bool IsGlobal(const std::string& parameter) {
  return std::any_of(std::begin(kGlobalFigures), std::end(kGlobalFigures),
                     [&](const GlobalFigure& f) { return parameter == f.parameter; });
}

bool KnownParameter(const std::string& parameter) {
  if (parameter == "network_efficiency" || IsGlobal(parameter)) return true;
  // A GPU's figures are named in the fit files by their catalog keys.
  return std::any_of(GpuFigures().begin(), GpuFigures().end(),
                     [&](const GpuFigure& f) { return parameter == f.key; });
}

Status ReadFitSpec(const json& doc, const std::string& name, FitSpec* fit) {
  if (!doc.is_object()) return Bad(name, "a fit file is an object with `parameter` and `points`");
  if (doc.contains("target") && !doc.at("target").is_string()) {
    return Bad(name, "`target` is a string: GPU or instance names, comma-separated");
  }
  if (doc.contains("criterion") && !doc.at("criterion").is_string()) {
    return Bad(name, "`criterion` is \"mean\" or \"minimax\"");
  }
  if (!doc.contains("parameter") || !doc.at("parameter").is_string()) {
    return Bad(name, "a fit file needs a string `parameter`");
  }
  fit->file = name;
  fit->parameter = doc.at("parameter");
  if (!KnownParameter(fit->parameter)) {
    return Bad(name, "unknown parameter \"" + fit->parameter + "\"");
  }
  std::stringstream targets(doc.value("target", std::string()));
  for (std::string t; std::getline(targets, t, ',');) {
    if (!t.empty()) fit->targets.push_back(t);
  }
  if (fit->targets.empty() != IsGlobal(fit->parameter)) {
    return Bad(name, IsGlobal(fit->parameter)
                         ? "`" + fit->parameter + "` is one figure for every scenario: no `target`"
                         : "`target` names the GPU(s) or instance the parameter belongs to");
  }
  fit->minimax = doc.value("criterion", std::string("mean")) == "minimax";
  return Status::Ok();
}

Status LoadFolder(const fs::path& dir, const std::string& sub, Corpus* corpus) {
  for (const fs::path& path : JsonFiles(dir / sub)) {
    const std::string name = sub + "/" + path.filename().string();
    Expected<json> doc = ReadJsonFile(path, name);
    if (!doc.ok()) return doc.status();
    std::string split = "evaluate";
    if (sub == "fit") {
      FitSpec fit;
      if (Status st = ReadFitSpec(*doc, name, &fit); !st.ok()) return st;
      split = fit.parameter;
      corpus->fits.push_back(fit);
    }
    if (!doc->is_object() || !doc->contains("points") || !doc->at("points").is_array()) {
      return Bad(name, "needs a `points` array");
    }
    const json* source = doc->contains("source") ? &doc->at("source") : nullptr;
    int index = 0;
    for (const json& point : doc->at("points")) {
      CorpusPoint p;
      if (Status st = ReadPoint(point, source, name, split, index++, &p); !st.ok()) return st;
      corpus->points.push_back(std::move(p));
    }
  }
  return Status::Ok();
}

std::string Strategy(const json& scenario) {
  const json par = scenario.value("parallel", json::object());
  const int tp = par.value("tp", 1), pp = par.value("pp", 1), zero = par.value("zero_stage", 0);
  const bool model_parallel = tp > 1 || pp > 1;
  // As BandKeyOf (core/error_bands.h), from the point's JSON (which may not parse).
  if (zero == 3) return model_parallel ? "zero3+tp-pp" : "zero3";
  return model_parallel ? "tp-pp" : "dp";
}

// Sets the catalog's fitted figures of `type` from the overrides: a value for its GPU (or,
// network_efficiency, its instance) replaces the catalog's; an unfitted parameter drops it.
void ApplyToInstance(const ParamOverrides& o, InstanceType* type) {
  auto apply = [&](const std::string& parameter, const std::string& target,
                   std::optional<double>* figure) {
    if (auto p = o.values.find(parameter); p != o.values.end()) {
      if (auto v = p->second.find(target); v != p->second.end()) *figure = v->second;
    }
    if (auto u = o.unfitted.find(parameter); u != o.unfitted.end()) {
      if (std::find(u->second.begin(), u->second.end(), target) != u->second.end()) {
        figure->reset();
      }
    }
  };
  for (const GpuFigure& f : GpuFigures()) apply(f.key, type->gpu.name, &(type->gpu.*f.value));
  apply("network_efficiency", type->name, &type->network_efficiency);
}

sim::ModelParams ParamsWith(const ParamOverrides& o) {
  sim::ModelParams params;
  for (const GlobalFigure& f : kGlobalFigures) {
    if (auto p = o.values.find(f.parameter); p != o.values.end())
      params.*f.field = p->second.at("");
    if (o.unfitted.count(f.parameter)) params.*f.field = f.unfitted;
  }
  return params;
}

// nccl-tests PERFORMANCE.md: busbw = algbw x 2(n-1)/n for all-reduce, (n-1)/n
// for all-gather and reduce-scatter; algbw = bytes / time.
Prediction PredictCollective(const CollectivePoint& c, const Catalog& catalog,
                             const ParamOverrides& o) {
  Prediction out;
  const InstanceType* found = catalog.Find(c.instance);
  if (found == nullptr) {
    out.error = "instance " + c.instance + " is not in the catalog";
    return out;
  }
  sim::CollectiveRun run;
  run.type = *found;
  ApplyToInstance(o, &run.type);
  run.nodes = c.nodes;
  run.per_node = c.gpus_per_node > 0 ? c.gpus_per_node : run.type.gpus;
  if (run.per_node > run.type.gpus) {
    out.error = "collective.gpus_per_node exceeds the GPUs of " + c.instance;
    return out;
  }
  run.kind = c.op == "all_reduce"   ? sim::CollKind::kAllReduce
             : c.op == "all_gather" ? sim::CollKind::kAllGather
                                    : sim::CollKind::kReduceScatter;
  run.bytes = c.bytes;
  run.ring_only = c.algorithm == "ring";
  std::fflush(stdout);  // the child flushes what it inherits
  Expected<double> seconds = sim::SimulateCollectiveSeconds(run, ParamsWith(o));
  if (!seconds.ok()) {
    out.error = seconds.status().message();
    return out;
  }
  out.value = c.bytes / *seconds * sim::BusFactor(run.kind, c.nodes * run.per_node) / 1e9;
  return out;
}

std::string GiB(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / kGiB);
  return buf;
}

}  // namespace

Expected<Corpus> LoadCorpus(const std::string& dir) {
  if (!fs::is_directory(dir)) return Status::NotFound(dir + ": no such corpus folder");
  Corpus corpus;
  if (Status st = LoadFolder(dir, "fit", &corpus); !st.ok()) return st;
  if (Status st = LoadFolder(dir, "evaluate", &corpus); !st.ok()) return st;
  std::set<std::string> ids;
  for (const CorpusPoint& p : corpus.points) {
    if (!ids.insert(p.id).second) {
      return Status::InvalidInput(p.file + ": point id \"" + p.id + "\" appears twice");
    }
  }
  return corpus;
}

Status ParseOverride(const std::string& text, ParamOverrides* o) {
  const auto eq = text.find('=');
  const std::string name = text.substr(0, eq);
  const auto at = name.find('@');
  const std::string parameter = name.substr(0, at);
  const std::string target = at == std::string::npos ? "" : name.substr(at + 1);
  char* end = nullptr;
  const double value = eq == std::string::npos ? 0 : std::strtod(text.c_str() + eq + 1, &end);
  if (eq == std::string::npos || end == text.c_str() + eq + 1 || *end != '\0' ||
      !std::isfinite(value) || value < 0) {
    return Status::InvalidInput("--set " + text + ": expected PARAMETER=VALUE or " +
                                "PARAMETER@TARGET=VALUE with a finite number >= 0");
  }
  if (!KnownParameter(parameter)) {
    return Status::InvalidInput("--set " + text + ": unknown parameter \"" + parameter + "\"");
  }
  if (target.empty() != IsGlobal(parameter)) {
    return Status::InvalidInput("--set " + text + ": " +
                                (IsGlobal(parameter) ? parameter + " takes no @TARGET"
                                                     : parameter + " needs @GPU or @INSTANCE"));
  }
  o->values[parameter][target] = value;
  return Status::Ok();
}

void SetFitted(const FitSpec& fit, double value, ParamOverrides* o) {
  if (fit.targets.empty()) o->values[fit.parameter][""] = value;  // a global figure
  for (const std::string& t : fit.targets) o->values[fit.parameter][t] = value;
}

Expected<Scenario> PointScenario(const CorpusPoint& p, const Catalog& catalog) {
  return ParseScenario(p.scenario.dump(1), p.file + " (" + p.id + ")", catalog);
}

std::string FamilyOf(const CorpusPoint& p, const Catalog& catalog) {
  if (p.collective) {
    const InstanceType* type = catalog.Find(p.collective->instance);
    const std::string net = p.collective->nodes == 1 ? "NVLink"
                            : type && type->is_aws   ? "EFA"
                                                     : "IB";
    return p.collective->op + " / " + net + " / busbw";
  }
  const std::string instance =
      p.scenario.value("cluster", json::object()).value("instance", std::string());
  const InstanceType* type = catalog.Find(instance);
  const std::string gpu = type ? GpuGeneration(type->gpu.name) : "unknown GPU";
  return Strategy(p.scenario) + " / " + gpu + " / throughput";
}

Prediction Predict(const CorpusPoint& p, const Catalog& catalog, const ParamOverrides& o) {
  if (p.collective) return PredictCollective(*p.collective, catalog, o);
  Prediction out;
  Expected<Scenario> s = PointScenario(p, catalog);
  if (!s.ok()) {
    out.error = "not expressible: " + s.status().message();
    return out;
  }
  ApplyToInstance(o, &s->instance);
  sim::SimulateOptions options;
  options.params = ParamsWith(o);
  std::fflush(stdout);
  Expected<sim::SimulationResult> r = sim::Simulate(*s, options);
  if (!r.ok()) {
    out.error = "failed: " + r.status().message();
    return out;
  }
  if (!r->simulated) {
    out.error = "does not fit: needs " + GiB(r->memory.total_bytes) + " per GPU of " +
                GiB(r->memory.capacity_bytes);
    return out;
  }
  out.step_s = r->step.step_time_s;
  if (Expected<planner::Estimator> e = planner::Estimator::Create(*s, options.params); e.ok()) {
    out.estimate_step_s = e->Step(*s, e->Figures(*s)).step_s;
  }
  const double gpus = static_cast<double>(s->cluster.nodes) * s->instance.gpus;
  switch (p.quantity) {
    case Quantity::kTokensPerSPerGpu:
      out.value = r->tokens_per_s / gpus;
      break;
    case Quantity::kTokensPerS:
      out.value = r->tokens_per_s;
      break;
    case Quantity::kSamplesPerS:
      out.value = r->samples_per_s;
      break;
    case Quantity::kStepTimeS:
      out.value = r->step.step_time_s;
      break;
    case Quantity::kBusbwGBps:
      out.error = "busbw needs a collective";
      break;
  }
  return out;
}

double ThroughputErrorPercent(const CorpusPoint& p, double predicted) {
  if (p.quantity == Quantity::kStepTimeS) return (p.measured / predicted - 1) * 100;
  return (predicted / p.measured - 1) * 100;
}

Expected<std::string> BandInputsFingerprint(const std::string& corpus_dir,
                                            const std::string& catalog_dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(corpus_dir) / "evaluate")) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  files.push_back(fs::path(corpus_dir) / "catalog.json");
  for (const char* f : {"gpus.json", "aws.json", "reference-systems.json"}) {
    files.push_back(fs::path(catalog_dir) / f);
  }
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& bytes) {
    for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  };
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) return Status::InvalidInput(f.string() + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    mix(f.filename().string());
    mix(text.str());
  }
  char hex[20];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string(hex);
}

std::optional<BandSample> BandSampleOf(const CorpusPoint& p, const Catalog& catalog,
                                       double predicted) {
  if (p.collective || p.split != "evaluate" || !(predicted > 0)) return std::nullopt;
  Expected<Scenario> s = PointScenario(p, catalog);
  if (!s.ok()) return std::nullopt;
  BandSample out;
  out.id = p.id;
  out.source = p.source_id;
  out.key = BandKeyOf(*s);
  // ThroughputErrorPercent is predicted / measured - 1 in throughput terms.
  out.log_error = -std::log1p(ThroughputErrorPercent(p, predicted) / 100);
  return out;
}

const char* ToString(Quantity q) {
  switch (q) {
    case Quantity::kTokensPerSPerGpu:
      return "tokens/s/GPU";
    case Quantity::kTokensPerS:
      return "tokens/s";
    case Quantity::kSamplesPerS:
      return "samples/s";
    case Quantity::kStepTimeS:
      return "step s";
    case Quantity::kBusbwGBps:
      return "busbw GB/s";
  }
  return "?";
}

}  // namespace trainsim::bench
