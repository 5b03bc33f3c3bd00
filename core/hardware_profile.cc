#include "core/hardware_profile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/json_doc.h"

namespace trainsim {
namespace {

using ojson = nlohmann::ordered_json;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxInt = std::numeric_limits<int>::max();
const std::vector<std::string> kDtypes = {"fp32", "tf32", "fp16", "bf16", "fp8"};
const std::vector<std::string> kOps = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                       "send_recv"};

// ---------------------------------------------------------------- reading

class ProfileReader {
 public:
  explicit ProfileReader(std::string file) : file_(std::move(file)) {}

  Status Read(const JsonValue& root, HardwareProfile* p) {
    ObjectReader r(root, "", file_);
    int version = 0;
    r.Require("version").Int("version", &version, 1, 1);
    if (const JsonValue* v = r.Child("provenance")) Check(ReadProvenance(*v, &p->provenance));
    if (const JsonValue* v = r.Child("gpu"); v && v->type != JsonValue::Type::kNull) {
      r.String("gpu", &p->gpu);
    }
    if (const JsonValue* v = r.Child("gemm_tables")) Check(ReadGemmTables(*v, p));
    if (const JsonValue* v = r.Child("gemm_table_error")) Check(ReadTableErrors(*v, p));
    p->memory_GBps = OptionalPositive(&r, "memory_GBps");
    p->host_to_device_GBps = OptionalPositive(&r, "host_to_device_GBps");
    p->device_to_host_GBps = OptionalPositive(&r, "device_to_host_GBps");
    if (const JsonValue* v = r.Child("collectives")) Check(ReadArray(*v, "collectives", p));
    if (const JsonValue* v = r.Child("network")) Check(ReadNetwork(*v, p));
    if (const JsonValue* v = r.Child("points")) Check(ReadArray(*v, "points", p));
    if (const JsonValue* v = r.Child("failures")) Check(ReadArray(*v, "failures", p));
    if (const JsonValue* v = r.Child("not_measured")) Check(ReadStrings(*v, &p->not_measured));
    if (const JsonValue* v = r.Child("catalog")) {
      if (!v->is_object()) Check(r.ErrorAt(*v, "catalog", "expected a catalog object"));
      has_catalog_ = true;
    }
    Check(r.Finish());
    return status_;
  }
  bool has_catalog() const { return has_catalog_; }

 private:
  void Check(Status s) {
    if (status_.ok() && !s.ok()) status_ = std::move(s);
  }

  std::optional<double> OptionalPositive(ObjectReader* r, std::string_view key) {
    if (!r->Child(key)) return std::nullopt;
    double v = 0;
    r->Double(key, &v, std::numeric_limits<double>::min(), kInf);
    return v;
  }

  Status ReadProvenance(const JsonValue& v, ProfileProvenance* p) {
    ObjectReader r(v, "provenance", file_);
    r.String("tool", &p->tool).String("backend", &p->backend).String("device", &p->device);
    r.Int("devices", &p->devices, 0, kMaxInt).Int("nodes", &p->nodes, 1, kMaxInt);
    r.String("driver", &p->driver).String("runtime", &p->runtime).String("blas", &p->blas);
    r.String("collectives", &p->collectives).String("host", &p->host).String("date", &p->date);
    r.Bool("quick", &p->quick).Bool("complete", &p->complete);
    r.Int("warmup", &p->warmup, 0, kMaxInt).Int("repetitions", &p->repetitions, 0, kMaxInt);
    return r.Finish();
  }

  Status ReadGemmTables(const JsonValue& v, HardwareProfile* p) {
    if (!v.is_object()) return At(v, "gemm_tables", "expected an object of dtype tables");
    for (const JsonMember& m : v.members) {
      const std::string path = "gemm_tables." + m.key;
      if (std::find(kDtypes.begin(), kDtypes.end(), m.key) == kDtypes.end()) {
        return Status::InvalidInput(Located(file_, m.key_pos,
                                            path + ": unknown dtype; expected one of fp32, "
                                                   "tf32, fp16, bf16, fp8"));
      }
      if (!m.value.is_array() || m.value.items.empty()) {
        return At(m.value, path, "expected a non-empty array of {flops, tflops} points");
      }
      std::vector<TablePoint>& table = p->gemm_tables[m.key];
      for (size_t i = 0; i < m.value.items.size(); ++i) {
        const std::string at = path + "[" + std::to_string(i) + "]";
        ObjectReader r(m.value.items[i], at, file_);
        TablePoint t;
        double tflops = 0;
        r.Require("flops").Double("flops", &t.x, 1, kInf);
        r.Require("tflops").Double("tflops", &tflops, std::numeric_limits<double>::min(), kInf);
        if (Status s = r.Finish(); !s.ok()) return s;
        t.y = tflops * 1e12;
        if (!table.empty() && t.x <= table.back().x) {
          return At(m.value.items[i], at + ".flops",
                    "must be greater than the previous point's (tables ascend in FLOPs)");
        }
        table.push_back(t);
      }
    }
    return Status::Ok();
  }

  Status ReadTableErrors(const JsonValue& v, HardwareProfile* p) {
    ObjectReader r(v, "gemm_table_error", file_);
    for (const std::string& dtype : kDtypes) {
      if (!v.Find(dtype)) continue;
      double e = 0;
      r.Double(dtype, &e, 0, kInf);
      p->gemm_table_error[dtype] = e;
    }
    return r.Finish();
  }

  Status ReadStrings(const JsonValue& v, std::vector<std::string>* out) {
    if (!v.is_array()) return At(v, "not_measured", "expected an array of strings");
    for (const JsonValue& item : v.items) {
      if (!item.is_string()) return At(item, "not_measured", "expected a string");
      out->push_back(item.text);
    }
    return Status::Ok();
  }

  Status ReadArray(const JsonValue& v, const std::string& key, HardwareProfile* p) {
    if (!v.is_array()) return At(v, key, "expected an array");
    for (size_t i = 0; i < v.items.size(); ++i) {
      const std::string at = key + "[" + std::to_string(i) + "]";
      Status s = key == "collectives" ? ReadCollective(v.items[i], at, p)
                 : key == "points"    ? ReadPoint(v.items[i], at, p)
                                      : ReadFailure(v.items[i], at, p);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  Status ReadCollective(const JsonValue& v, const std::string& at, HardwareProfile* p) {
    ObjectReader r(v, at, file_);
    CollectiveFit c;
    int op = 0;
    r.Require("op").Enum("op", kOps, &op);
    r.Require("ranks").Int("ranks", &c.ranks, 1, kMaxInt).Int("nodes", &c.nodes, 1, kMaxInt);
    c.op = kOps[op];
    const JsonValue* ranges = r.Require("ranges").Child("ranges");
    if (Status s = r.Finish(); !s.ok()) return s;
    if (!ranges->is_array() || ranges->items.empty()) {
      return At(*ranges, at + ".ranges", "expected a non-empty array");
    }
    for (size_t i = 0; i < ranges->items.size(); ++i) {
      const std::string rat = at + ".ranges[" + std::to_string(i) + "]";
      ObjectReader rr(ranges->items[i], rat, file_);
      CollectiveRange g;
      rr.Require("min_bytes").Double("min_bytes", &g.min_bytes, 0, kInf);
      rr.Require("max_bytes").Double("max_bytes", &g.max_bytes, 0, kInf);
      rr.Require("latency_s").Double("latency_s", &g.latency_s, 0, kInf);
      rr.Require("algbw_GBps")
          .Double("algbw_GBps", &g.algbw_GBps, std::numeric_limits<double>::min(), kInf);
      rr.Double("max_error", &g.max_error, 0, kInf);
      if (Status s = rr.Finish(); !s.ok()) return s;
      if (g.max_bytes < g.min_bytes) return At(ranges->items[i], rat, "max_bytes < min_bytes");
      if (!c.ranges.empty() && g.min_bytes < c.ranges.back().max_bytes) {
        return At(ranges->items[i], rat + ".min_bytes",
                  "overlaps the previous range (ranges ascend in bytes)");
      }
      c.ranges.push_back(g);
    }
    p->collectives.push_back(std::move(c));
    return Status::Ok();
  }

  Status ReadPoint(const JsonValue& v, const std::string& at, HardwareProfile* p) {
    ObjectReader r(v, at, file_);
    ProfilePoint pt;
    int kind = 0;
    r.Require("kind").Enum("kind", {"gemm", "memory", "collective"}, &kind);
    if (!r.ok()) return r.Finish();
    pt.kind = kind == 0 ? "gemm" : kind == 1 ? "memory" : "collective";
    r.Require("repetitions").Int("repetitions", &pt.repetitions, 1, kMaxInt);
    r.Require("median_s").Double("median_s", &pt.median_s, 0, kInf);
    r.Double("spread", &pt.spread, 0, kInf);
    double rate = 0;
    if (pt.kind == "gemm") {
      int dtype = 0;
      r.Require("dtype").Enum("dtype", kDtypes, &dtype);
      pt.what = kDtypes[dtype];
      r.Require("m").Double("m", &pt.m, 1, kInf).Require("n").Double("n", &pt.n, 1, kInf);
      r.Require("k").Double("k", &pt.k, 1, kInf).String("origin", &pt.origin);
      r.Require("flops").Double("flops", &pt.flops, 0, kInf);
      r.Require("tflops").Double("tflops", &rate, 0, kInf).Bool("verified", &pt.verified);
      pt.rate = rate * 1e12;
    } else if (pt.kind == "memory") {
      r.Require("what").String("what", &pt.what);
      r.Require("bytes").Double("bytes", &pt.bytes, 0, kInf);
      r.Require("GBps").Double("GBps", &rate, 0, kInf);
      pt.rate = rate * 1e9;
    } else {
      int op = 0;
      r.Require("op").Enum("op", kOps, &op);
      pt.what = kOps[op];
      r.Require("ranks").Int("ranks", &pt.ranks, 1, kMaxInt).Int("nodes", &pt.nodes, 1, kMaxInt);
      r.Require("bytes").Double("bytes", &pt.bytes, 0, kInf);
      double algbw = 0;
      r.Require("algbw_GBps").Double("algbw_GBps", &algbw, 0, kInf);
      r.Require("busbw_GBps").Double("busbw_GBps", &rate, 0, kInf);
      pt.algbw_Bps = algbw * 1e9;
      pt.rate = rate * 1e9;
    }
    if (Status s = r.Finish(); !s.ok()) return s;
    p->points.push_back(std::move(pt));
    return Status::Ok();
  }

  Status ReadNetwork(const JsonValue& v, HardwareProfile* p) {
    ObjectReader r(v, "network", file_);
    NetworkFit n;
    r.Require("instance").String("instance", &n.instance);
    r.Require("efficiency").Double("efficiency", &n.efficiency, 1e-3, 1);
    r.Require("nodes").Int("nodes", &n.nodes, 2, kMaxInt);
    r.Double("mean_error", &n.mean_error, 0, kInf).String("source", &n.source);
    double scale = 0;
    r.Double("protocol_latency_scale", &scale, 1e-3, 1e3);
    if (scale > 0) n.latency_scale = scale;
    r.Double("latency_mean_error", &n.latency_mean_error, 0, kInf);
    if (Status s = r.Finish(); !s.ok()) return s;
    if (n.instance.empty()) return At(v, "network.instance", "expected an instance type");
    p->network = std::move(n);
    return Status::Ok();
  }

  Status ReadFailure(const JsonValue& v, const std::string& at, HardwareProfile* p) {
    ObjectReader r(v, at, file_);
    std::string what, error;
    r.Require("what").String("what", &what).Require("error").String("error", &error);
    if (Status s = r.Finish(); !s.ok()) return s;
    p->failures.emplace_back(what, error);
    return Status::Ok();
  }

  Status At(const JsonValue& v, const std::string& path, const std::string& message) const {
    return Status::InvalidInput(Located(file_, v.pos, path + ": " + message));
  }

  std::string file_;
  Status status_;
  bool has_catalog_ = false;
};

// ---------------------------------------------------------------- writing

ojson ProvenanceJson(const ProfileProvenance& p) {
  return {{"tool", p.tool},
          {"backend", p.backend},
          {"device", p.device},
          {"devices", p.devices},
          {"nodes", p.nodes},
          {"driver", p.driver},
          {"runtime", p.runtime},
          {"blas", p.blas},
          {"collectives", p.collectives},
          {"host", p.host},
          {"date", p.date},
          {"quick", p.quick},
          {"warmup", p.warmup},
          {"repetitions", p.repetitions},
          {"complete", p.complete}};
}

ojson PointJson(const ProfilePoint& p) {
  ojson j = {{"kind", p.kind}};
  if (p.kind == "gemm") {
    j["dtype"] = p.what;
    j["m"] = p.m, j["n"] = p.n, j["k"] = p.k;
    j["origin"] = p.origin;
    j["flops"] = p.flops;
  } else if (p.kind == "memory") {
    j["what"] = p.what;
    j["bytes"] = p.bytes;
  } else {
    j["op"] = p.what;
    j["ranks"] = p.ranks, j["nodes"] = p.nodes;
    j["bytes"] = p.bytes;
  }
  j["repetitions"] = p.repetitions;
  j["median_s"] = p.median_s;
  j["spread"] = p.spread;
  if (p.kind == "gemm") {
    j["tflops"] = p.rate / 1e12;
    j["verified"] = p.verified;
  } else if (p.kind == "memory") {
    j["GBps"] = p.rate / 1e9;
  } else {
    j["algbw_GBps"] = p.algbw_Bps / 1e9;
    j["busbw_GBps"] = p.rate / 1e9;
  }
  return j;
}

ojson CollectiveJson(const CollectiveFit& c) {
  ojson ranges = ojson::array();
  for (const CollectiveRange& g : c.ranges) {
    ranges.push_back({{"min_bytes", g.min_bytes},
                      {"max_bytes", g.max_bytes},
                      {"latency_s", g.latency_s},
                      {"algbw_GBps", g.algbw_GBps},
                      {"max_error", g.max_error}});
  }
  return {{"op", c.op}, {"ranks", c.ranks}, {"nodes", c.nodes}, {"ranges", ranges}};
}

}  // namespace

double CollectiveFit::Seconds(double bytes) const {
  const CollectiveRange* g = &ranges.front();
  for (const CollectiveRange& r : ranges) {
    if (bytes >= r.min_bytes) g = &r;
  }
  return g->latency_s + bytes / (g->algbw_GBps * 1e9);
}

double InterpolateTable(const std::vector<TablePoint>& t, double x) {
  if (x <= t.front().x) return t.front().y;
  if (x >= t.back().x) return t.back().y;
  auto hi = std::upper_bound(t.begin(), t.end(), x,
                             [](double v, const TablePoint& p) { return v < p.x; });
  auto lo = hi - 1;
  const double w = std::log(x / lo->x) / std::log(hi->x / lo->x);
  return lo->y + w * (hi->y - lo->y);
}

std::optional<double> HardwareProfile::GemmFlopsPerSecond(std::string_view dtype,
                                                          double flops) const {
  auto it = gemm_tables.find(std::string(dtype));
  if (it == gemm_tables.end() || it->second.empty()) return std::nullopt;
  return InterpolateTable(it->second, flops);
}

std::optional<double> HardwareProfile::GemmShapeFlopsPerSecond(std::string_view dtype, double m,
                                                               double n, double k) const {
  double sum = 0;
  int count = 0;
  for (const ProfilePoint& p : points) {
    if (p.kind == "gemm" && p.verified && p.what == dtype && p.m == m && p.n == n && p.k == k &&
        p.rate > 0) {
      sum += p.rate;
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

const CollectiveFit* HardwareProfile::FindCollective(std::string_view op, int ranks,
                                                     int nodes) const {
  for (const CollectiveFit& c : collectives) {
    if (c.op == op && c.ranks == ranks && c.nodes == nodes) return &c;
  }
  return nullptr;
}

Expected<HardwareProfile> ParseHardwareProfile(std::string_view text, std::string_view filename) {
  Expected<JsonValue> root = ParseJson(text, filename);
  if (!root.ok()) return root.status();
  HardwareProfile p;
  ProfileReader reader{std::string(filename)};
  if (Status s = reader.Read(*root, &p); !s.ok()) return s;
  if (reader.has_catalog()) {
    // Kept as text: the catalog reads it (Catalog::AddFromString) with its own checks.
    p.catalog_json = ojson::parse(text).at("catalog").dump(1);
  }
  return p;
}

Expected<HardwareProfile> LoadHardwareProfile(const std::string& path) {
  Expected<JsonValue> root = ParseJsonFile(path);  // for its file errors
  if (!root.ok()) return root.status();
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return ParseHardwareProfile(buf.str(), path);
}

std::string HardwareProfileToJson(const HardwareProfile& p) {
  ojson j;
  j["version"] = 1;
  j["provenance"] = ProvenanceJson(p.provenance);
  j["gpu"] = p.gpu.empty() ? ojson(nullptr) : ojson(p.gpu);
  ojson tables = ojson::object();
  for (const std::string& dtype : kDtypes) {
    auto it = p.gemm_tables.find(dtype);
    if (it == p.gemm_tables.end()) continue;
    ojson rows = ojson::array();
    for (const TablePoint& t : it->second) rows.push_back({{"flops", t.x}, {"tflops", t.y / 1e12}});
    tables[dtype] = rows;
  }
  j["gemm_tables"] = tables;
  ojson errors = ojson::object();
  for (const std::string& dtype : kDtypes) {
    auto it = p.gemm_table_error.find(dtype);
    if (it != p.gemm_table_error.end()) errors[dtype] = it->second;
  }
  j["gemm_table_error"] = errors;
  if (p.memory_GBps) j["memory_GBps"] = *p.memory_GBps;
  if (p.host_to_device_GBps) j["host_to_device_GBps"] = *p.host_to_device_GBps;
  if (p.device_to_host_GBps) j["device_to_host_GBps"] = *p.device_to_host_GBps;
  j["collectives"] = ojson::array();
  for (const CollectiveFit& c : p.collectives) j["collectives"].push_back(CollectiveJson(c));
  j["not_measured"] = p.not_measured;
  j["failures"] = ojson::array();
  for (const auto& [what, error] : p.failures) {
    j["failures"].push_back({{"what", what}, {"error", error}});
  }
  if (p.network) {
    j["network"] = {{"instance", p.network->instance},
                    {"efficiency", p.network->efficiency},
                    {"nodes", p.network->nodes},
                    {"mean_error", p.network->mean_error},
                    {"source", p.network->source}};
    if (p.network->latency_scale) {
      j["network"]["protocol_latency_scale"] = *p.network->latency_scale;
      j["network"]["latency_mean_error"] = p.network->latency_mean_error;
    }
  }
  if (!p.catalog_json.empty()) j["catalog"] = ojson::parse(p.catalog_json);
  j["points"] = ojson::array();
  for (const ProfilePoint& pt : p.points) j["points"].push_back(PointJson(pt));
  return j.dump(2) + "\n";
}

}  // namespace trainsim
