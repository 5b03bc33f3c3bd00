// Loading the instance catalog. The file format and the conversions done here
// are described in docs/catalog.md.
#include "core/catalog.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "core/json_doc.h"

#ifndef TRAINSIM_SOURCE_CATALOG_DIR
#define TRAINSIM_SOURCE_CATALOG_DIR "instance-catalog"
#endif

namespace trainsim {
namespace {

using GpuMap = std::map<std::string, GpuSpec, std::less<>>;
using TypeMap = std::map<std::string, InstanceType, std::less<>>;
using FabricMap = std::map<std::string, Fabric, std::less<>>;
using SourceMap = std::map<std::string, std::string>;

constexpr int kFormatVersion = 1;
constexpr int kMaxInt = std::numeric_limits<int>::max();
constexpr double kFlopsPerTflops = 1e12;

// In the order of IntraTopology: the index read is cast to the enum.
const std::vector<std::string> kTopologyKinds = {"single", "pcie", "nvlink-cube-mesh", "nvswitch"};
const std::vector<std::string> kRdmaKinds = {"none", "efa", "infiniband"};
constexpr int kRdmaNone = 0;        // index of "none" in kRdmaKinds
constexpr int kRdmaInfiniband = 2;  // index of "infiniband"
const std::vector<std::string> kSpotBuckets = {"<5%", "5-10%", "10-15%", "15-20%", ">20%"};
// InstanceType::sagemaker_libraries.
const std::vector<std::string> kSagemakerLibraries = {"smddp-allreduce", "smddp-allgather",
                                                      "smp-v2"};
// Keys of an entry's "sources" object: "*" (the whole entry), a field of the
// entry, or a figure the loader derives (pcie_GBps_per_dir).
const std::vector<std::string> kSourceKeys = {"*",
                                              "gpu",
                                              "gpus",
                                              "gpu_mem_gib",
                                              "is_aws",
                                              "topology",
                                              "topology.kind",
                                              "topology.nvlink_GBps_per_gpu_bidir",
                                              "topology.nvlink_GBps_per_link_per_dir",
                                              "topology.nvlink_pairs",
                                              "topology.nvlink_sharp",
                                              "topology.pcie_gen",
                                              "pcie_GBps_per_dir",
                                              "network",
                                              "network.net_gbps",
                                              "network.nic_gbps",
                                              "network.rdma",
                                              "network.rdma_nics",
                                              "vcpus",
                                              "ram_gib",
                                              "pricing",
                                              "pricing.on_demand_usd_hr",
                                              "pricing.sagemaker_usd_hr",
                                              "pricing.spot_discount",
                                              "pricing.spot_interruption_bucket",
                                              "pricing.capacity_block_usd_hr",
                                              "sagemaker_libraries"};

// Per-direction bandwidth of an x16 link (PCI-SIG): GT/s per lane x 16 lanes
// x 128b/130b encoding / 8 bits. Generations 3, 4, 5.
double PcieX16GBpsPerDir(int gen) {
  static const double kGtPerLane[] = {8.0, 16.0, 32.0};
  if (gen < 3 || gen > 5) return 0;
  return kGtPerLane[gen - 3] * 16.0 * (128.0 / 130.0) / 8.0;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool IsNull(const JsonValue* v) { return v == nullptr || v->type == JsonValue::Type::kNull; }

// An ObjectReader plus the getters it lacks: numbers that must be > 0, and
// fields where JSON null means "not confirmed" (std::nullopt). Each key is
// handed to the ObjectReader once, so its list of known keys has no repeats.
class Fields {
 public:
  Fields(const JsonValue& v, const std::string& path, std::string_view file)
      : v_(v), r_(v, path, std::string(file)) {}

  ObjectReader& r() { return r_; }

  // Records an error unless `key` is present; the getter that follows marks it known.
  ObjectReader& Require(std::string_view key) {
    if (v_.is_object() && !v_.Find(key)) {
      Fail(Status::InvalidInput(
          Located(r_.file(), v_.pos, "missing required field " + r_.FieldPath(key))));
    }
    return r_;
  }
  void Positive(std::string_view key, double* out) { Number(key, out, /*null_ok=*/false); }
  void OptPositive(std::string_view key, std::optional<double>* out) {
    double x = 0;
    if (Number(key, &x, /*null_ok=*/true)) *out = x;
  }
  void OptFraction(std::string_view key, std::optional<double>* out) {
    const JsonValue* v = r_.Child(key);
    if (IsNull(v) || !ok()) return;
    if (!v->is_number() || v->number < 0 || v->number > 1) {
      return Fail(r_.ErrorAt(*v, key, "expected a number in [0, 1] or null, got " + Describe(*v)));
    }
    *out = v->number;
  }
  // Null leaves *out untouched (0: unknown).
  void OptInt(std::string_view key, int* out, int min, int max) {
    if (IsNull(v_.Find(key))) {
      r_.Child(key);
    } else {
      r_.Int(key, out, min, max);
    }
  }
  void OptEnum(std::string_view key, const std::vector<std::string>& allowed,
               std::optional<std::string>* out) {
    if (IsNull(v_.Find(key))) {
      r_.Child(key);
      return;
    }
    int index = -1;
    r_.Enum(key, allowed, &index);
    if (index >= 0) *out = allowed[index];
  }
  // A calendar date "YYYY-MM-DD" (a day that exists), or null.
  void OptDate(std::string_view key, std::optional<std::string>* out) {
    const JsonValue* v = r_.Child(key);
    if (IsNull(v) || !ok()) return;
    const std::string& d = v->is_string() ? v->text : std::string();
    auto digits = [&](size_t at, size_t n) {
      int x = 0;
      for (size_t i = at; i < at + n; ++i) {
        if (d[i] < '0' || d[i] > '9') return -1;
        x = 10 * x + (d[i] - '0');
      }
      return x;
    };
    const bool shaped = d.size() == 10 && d[4] == '-' && d[7] == '-';
    const int year = shaped ? digits(0, 4) : -1;
    const int month = shaped ? digits(5, 2) : -1, day = shaped ? digits(8, 2) : -1;
    const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const int days = month >= 1 && month <= 12 ? kDays[month - 1] + (month == 2 && leap) : 0;
    if (!shaped || year < 0 || day < 1 || day > days) {
      return Fail(
          r_.ErrorAt(*v, key, "expected a date \"YYYY-MM-DD\" or null, got " + Describe(*v)));
    }
    *out = d;
  }
  void Fail(Status s) {
    if (first_.ok()) first_ = std::move(s);
  }
  bool ok() const { return r_.ok() && first_.ok(); }
  // The first error so far, without the unknown-key check.
  Status Check() {
    if (!r_.ok()) return r_.Finish();
    return first_;
  }
  Status Finish() {
    if (!r_.ok() || !first_.ok()) return Check();
    return r_.Finish();
  }

 private:
  // True when a number was read into *out.
  bool Number(std::string_view key, double* out, bool null_ok) {
    const JsonValue* v = r_.Child(key);
    if (v == nullptr || !ok() || (null_ok && IsNull(v))) return false;
    if (!v->is_number() || v->number <= 0) {
      std::string want = null_ok ? "a number > 0 or null" : "a number > 0";
      Fail(r_.ErrorAt(*v, key, "expected " + want + ", got " + Describe(*v)));
      return false;
    }
    *out = v->number;
    return true;
  }

  const JsonValue& v_;
  ObjectReader r_;
  Status first_;
};

Status ErrorAtValue(std::string_view file, const JsonValue& v, const std::string& path,
                    const std::string& message) {
  return Status::InvalidInput(Located(file, v.pos, path + ": " + message));
}

// What one file adds; committed to the catalog only when the whole file is valid.
struct FileContents {
  SourceMap sources;
  GpuMap gpus;
  std::vector<InstanceType> types;
  std::vector<Fabric> fabrics;
};

// Reads one catalog file against what the catalog already holds.
class FileReader {
 public:
  FileReader(const GpuMap& gpus, const TypeMap& types, const FabricMap& fabrics,
             const SourceMap& sources, std::string_view file, bool builtin)
      : known_gpus_(gpus),
        known_types_(types),
        known_fabrics_(fabrics),
        known_sources_(sources),
        file_(file),
        builtin_(builtin) {}

  Status Read(const JsonValue& root) {
    Fields f(root, "", file_);
    int version = 0;
    f.Require("version").Int("version", &version, kFormatVersion, kFormatVersion);
    const JsonValue* sources = f.r().Child("sources");
    const JsonValue* gpus = f.r().Child("gpus");
    const JsonValue* instances = f.r().Child("instances");
    const JsonValue* fabrics = f.r().Child("fabrics");
    if (Status s = f.Finish(); !s.ok()) return s;
    if (sources) {
      if (Status s = ReadSourceTexts(*sources); !s.ok()) return s;
    }
    if (gpus) {
      if (Status s = ReadArray(*gpus, "gpus", &FileReader::AddGpu); !s.ok()) return s;
    }
    if (instances) {
      if (Status s = ReadArray(*instances, "instances", &FileReader::AddType); !s.ok()) return s;
    }
    if (fabrics) {
      if (Status s = ReadArray(*fabrics, "fabrics", &FileReader::AddFabric); !s.ok()) return s;
    }
    return Status::Ok();
  }

  FileContents& contents() { return out_; }

 private:
  using AddFn = Status (FileReader::*)(const JsonValue&, const std::string&);

  Status ReadArray(const JsonValue& v, const std::string& path, AddFn add) {
    if (!v.is_array()) {
      return ErrorAtValue(file_, v, path, std::string("expected an array, got ") + v.TypeName());
    }
    for (size_t i = 0; i < v.items.size(); ++i) {
      Status s = (this->*add)(v.items[i], path + "[" + std::to_string(i) + "]");
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  Status ReadSourceTexts(const JsonValue& v) {
    if (!v.is_object()) {
      return ErrorAtValue(file_, v, "sources",
                          std::string("expected an object of id: citation, got ") + v.TypeName());
    }
    for (const JsonMember& m : v.members) {
      std::string path = "sources." + m.key;
      if (m.key.empty()) return ErrorAtValue(file_, v, "sources", "empty source id");
      if (known_sources_.count(m.key)) {
        return Status::InvalidInput(
            Located(file_, m.key_pos, path + ": source id already defined"));
      }
      if (!m.value.is_string() || m.value.text.empty()) {
        return ErrorAtValue(file_, m.value, path,
                            "expected a non-empty citation string, got " + Describe(m.value));
      }
      out_.sources[m.key] = m.value.text;
    }
    return Status::Ok();
  }

  bool SourceKnown(const std::string& id) const {
    return known_sources_.count(id) > 0 || out_.sources.count(id) > 0;
  }

  // A non-empty array of known source ids.
  Status ReadSourceIds(const JsonValue& v, const std::string& path, std::vector<std::string>* ids) {
    if (!v.is_array() || v.items.empty()) {
      return ErrorAtValue(file_, v, path,
                          "expected a non-empty array of source ids, got " + Describe(v));
    }
    for (size_t i = 0; i < v.items.size(); ++i) {
      const JsonValue& item = v.items[i];
      std::string item_path = path + "[" + std::to_string(i) + "]";
      if (!item.is_string()) {
        return ErrorAtValue(file_, item, item_path, "expected a source id, got " + Describe(item));
      }
      if (!SourceKnown(item.text)) {
        return ErrorAtValue(file_, item, item_path,
                            "unknown source id \"" + item.text +
                                "\" (define it in sources.json or in this file's \"sources\")");
      }
      ids->push_back(item.text);
    }
    return Status::Ok();
  }

  const GpuSpec* FindGpu(const std::string& name) const {
    if (auto it = out_.gpus.find(name); it != out_.gpus.end()) return &it->second;
    if (auto it = known_gpus_.find(name); it != known_gpus_.end()) return &it->second;
    return nullptr;
  }

  std::vector<std::string> GpuNames() const {
    std::set<std::string> names;
    for (const auto& [name, gpu] : known_gpus_) names.insert(name);
    for (const auto& [name, gpu] : out_.gpus) names.insert(name);
    return std::vector<std::string>(names.begin(), names.end());
  }

  // An efficiency read by OptFraction must be > 0 and say where it comes from
  // (its "<key>_provenance" string).
  Status CheckEfficiency(const JsonValue& v, const std::string& path, const std::string& key,
                         const std::optional<double>& value, const std::string& provenance) {
    if (!value) return Status::Ok();
    if (*value <= 0) {
      return ErrorAtValue(file_, *v.Find(key), path + "." + key,
                          "expected a number in (0, 1], got 0");
    }
    if (provenance.empty()) {
      return ErrorAtValue(file_, *v.Find(key), path + "." + key,
                          "needs " + key + "_provenance (where the figure comes from)");
    }
    return Status::Ok();
  }

  // A non-empty array of non-empty arrays of non-empty words.
  Status ReadDeviceNames(const JsonValue& v, const std::string& path, GpuSpec* g) {
    const std::string expected = "expected a non-empty array of words of the device name";
    if (!v.is_array()) {
      return ErrorAtValue(file_, v, path, "expected an array of word lists, got " + Describe(v));
    }
    for (size_t i = 0; i < v.items.size(); ++i) {
      const JsonValue& entry = v.items[i];
      const std::string entry_path = path + "[" + std::to_string(i) + "]";
      if (!entry.is_array() || entry.items.empty()) {
        return ErrorAtValue(file_, entry, entry_path, expected + ", got " + Describe(entry));
      }
      std::vector<std::string> words;
      for (size_t k = 0; k < entry.items.size(); ++k) {
        const JsonValue& word = entry.items[k];
        if (!word.is_string() || word.text.empty()) {
          return ErrorAtValue(file_, word, entry_path + "[" + std::to_string(k) + "]",
                              "expected a non-empty string, got " + Describe(word));
        }
        words.push_back(word.text);
      }
      g->device_names.push_back(std::move(words));
    }
    return Status::Ok();
  }

  Expected<GpuSpec> ReadGpu(const JsonValue& v, const std::string& path) {
    Fields f(v, path, file_);
    GpuSpec g;
    f.Require("name").String("name", &g.name);
    std::optional<double> tflops[5];
    const char* keys[5] = {"fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops",
                           "fp8_tflops"};
    for (int k = 0; k < 5; ++k) f.OptPositive(keys[k], &tflops[k]);
    f.OptPositive("hbm_GBps", &g.hbm_GBps);
    for (const GpuFigure& fig : GpuFigures()) {
      f.OptFraction(fig.key, &(g.*fig.value));
      f.r().String(std::string(fig.key) + "_provenance", &(g.*fig.provenance));
    }
    f.Require("mem_gib");
    f.Positive("mem_gib", &g.mem_gib);
    std::string notes;
    f.r().String("notes", &notes);  // documentation only
    if (builtin_) f.Require("sources");
    const JsonValue* sources = f.r().Child("sources");
    const JsonValue* device_names = f.r().Child("device_names");
    if (Status s = f.Finish(); !s.ok()) return s;
    if (g.name.empty()) return ErrorAtValue(file_, *v.Find("name"), path + ".name", "empty name");
    if (device_names) {
      if (Status s = ReadDeviceNames(*device_names, path + ".device_names", &g); !s.ok()) {
        return s;
      }
    }
    for (const GpuFigure& fig : GpuFigures()) {
      if (Status s = CheckEfficiency(v, path, fig.key, g.*fig.value, g.*fig.provenance); !s.ok()) {
        return s;
      }
    }
    if (sources) {
      if (Status s = ReadSourceIds(*sources, path + ".sources", &g.sources); !s.ok()) return s;
    }
    std::optional<double>* flops[5] = {&g.fp32_flops, &g.tf32_flops, &g.fp16_flops, &g.bf16_flops,
                                       &g.fp8_flops};
    for (int k = 0; k < 5; ++k) {
      if (tflops[k]) *flops[k] = *tflops[k] * kFlopsPerTflops;
    }
    return g;
  }

  Status AddGpu(const JsonValue& v, const std::string& path) {
    Expected<GpuSpec> g = ReadGpu(v, path);
    if (!g.ok()) return g.status();
    if (FindGpu(g->name)) {
      return ErrorAtValue(file_, *v.Find("name"), path + ".name",
                          "duplicate GPU \"" + g->name + "\" (already defined)");
    }
    out_.gpus[g->name] = std::move(g).value();
    return Status::Ok();
  }

  // "gpu": a name from gpus.json (or this file's "gpus"), or an inline GPU object.
  Status ReadInstanceGpu(const JsonValue& v, const std::string& path, InstanceType* t) {
    if (v.is_string()) {
      const GpuSpec* g = FindGpu(v.text);
      if (!g) {
        return ErrorAtValue(
            file_, v, path,
            "unknown GPU \"" + v.text + "\" (known: " + JoinNames(GpuNames()) + ")");
      }
      t->gpu = *g;
      return Status::Ok();
    }
    if (!v.is_object()) {
      return ErrorAtValue(file_, v, path,
                          "expected a GPU name or a GPU object, got " + Describe(v));
    }
    Expected<GpuSpec> g = ReadGpu(v, path);
    if (!g.ok()) return g.status();
    if (FindGpu(g->name)) {
      return ErrorAtValue(file_, *v.Find("name"), path + ".name",
                          "GPU \"" + g->name + "\" is already defined; refer to it by name");
    }
    t->gpu = std::move(g).value();
    return Status::Ok();
  }

  // Present and not null.
  static bool Given(const JsonValue* v) { return !IsNull(v); }

  Status ReadTopology(const JsonValue& v, const std::string& path, InstanceType* t) {
    Fields f(v, path, file_);
    int kind = -1;
    f.Require("kind").Enum("kind", kTopologyKinds, &kind);
    std::optional<double> bidir, per_link;
    f.OptPositive("nvlink_GBps_per_gpu_bidir", &bidir);
    f.OptPositive("nvlink_GBps_per_link_per_dir", &per_link);
    const JsonValue* pairs = f.r().Child("nvlink_pairs");
    f.OptInt("pcie_gen", &t->pcie_gen, 3, 5);
    f.r().Bool("nvlink_sharp", &t->nvlink_sharp);
    if (Status s = f.Finish(); !s.ok()) return s;

    t->topology = static_cast<IntraTopology>(kind);
    const bool nvlink =
        t->topology == IntraTopology::kNvswitch || t->topology == IntraTopology::kNvlinkCubeMesh;
    const bool mesh = t->topology == IntraTopology::kNvlinkCubeMesh;
    const std::string kind_name = kTopologyKinds[kind];
    if (t->topology == IntraTopology::kSingle && t->gpus != 1) {
      return ErrorAtValue(file_, *v.Find("kind"), path + ".kind",
                          "\"single\" needs gpus = 1, got " + std::to_string(t->gpus));
    }
    if (!nvlink && Given(v.Find("nvlink_GBps_per_gpu_bidir"))) {
      return NotWith(v, path, "nvlink_GBps_per_gpu_bidir", kind_name);
    }
    if (!mesh && Given(v.Find("nvlink_GBps_per_link_per_dir"))) {
      return NotWith(v, path, "nvlink_GBps_per_link_per_dir", kind_name);
    }
    if (!mesh && Given(pairs)) return NotWith(v, path, "nvlink_pairs", kind_name);
    if (t->nvlink_sharp && t->topology != IntraTopology::kNvswitch) {
      return NotWith(v, path, "nvlink_sharp", kind_name);
    }
    if (mesh && !Given(pairs)) {
      return Status::InvalidInput(
          Located(file_, v.pos,
                  "missing required field " + path + ".nvlink_pairs (kind is nvlink-cube-mesh)"));
    }
    if (Given(pairs)) {
      if (Status s = ReadPairs(*pairs, path + ".nvlink_pairs", t); !s.ok()) return s;
    }
    if (bidir) t->nvlink_GBps_per_gpu_per_dir = *bidir / 2;
    t->nvlink_GBps_per_link_per_dir = per_link;
    t->pcie_GBps_per_dir = PcieX16GBpsPerDir(t->pcie_gen);
    return Status::Ok();
  }

  Status NotWith(const JsonValue& topology, const std::string& path, const std::string& key,
                 const std::string& kind) {
    return ErrorAtValue(file_, *topology.Find(key), path + "." + key,
                        "not allowed with kind \"" + kind + "\"");
  }

  Status ReadPairs(const JsonValue& v, const std::string& path, InstanceType* t) {
    if (!v.is_array() || v.items.empty()) {
      return ErrorAtValue(file_, v, path,
                          "expected a non-empty array of {a, b, links}, got " + Describe(v));
    }
    std::map<std::pair<int, int>, size_t> seen;
    for (size_t i = 0; i < v.items.size(); ++i) {
      std::string item_path = path + "[" + std::to_string(i) + "]";
      Fields f(v.items[i], item_path, file_);
      NvlinkPair p;
      f.Require("a").Int("a", &p.a, 0, t->gpus - 1);
      f.Require("b").Int("b", &p.b, 0, t->gpus - 1);
      f.Require("links").Int("links", &p.links, 1, kMaxInt);
      if (Status s = f.Finish(); !s.ok()) return s;
      if (p.a == p.b) {
        return ErrorAtValue(file_, v.items[i], item_path,
                            "a GPU cannot link to itself (a = b = " + std::to_string(p.a) + ")");
      }
      std::pair<int, int> key = std::minmax(p.a, p.b);
      if (auto [it, added] = seen.emplace(key, i); !added) {
        return ErrorAtValue(file_, v.items[i], item_path,
                            "pair " + std::to_string(key.first) + "-" + std::to_string(key.second) +
                                " already listed at " + path + "[" + std::to_string(it->second) +
                                "]");
      }
      t->nvlink_pairs.push_back(p);
    }
    return Status::Ok();
  }

  Status ReadNetwork(const JsonValue& v, const std::string& path, InstanceType* t) {
    Fields f(v, path, file_);
    double net_gbps = 0, nic_gbps = 0;
    f.Positive("net_gbps", &net_gbps);
    f.Positive("nic_gbps", &nic_gbps);
    int rdma = -1;
    f.Require("rdma").Enum("rdma", kRdmaKinds, &rdma);
    int rdma_nics = 0;
    f.r().Int("rdma_nics", &rdma_nics, 0, kMaxInt);
    f.OptFraction("efficiency", &t->network_efficiency);
    f.r().String("efficiency_provenance", &t->network_efficiency_provenance);
    if (Status s = f.Finish(); !s.ok()) return s;
    if (Status s = CheckEfficiency(v, path, "efficiency", t->network_efficiency,
                                   t->network_efficiency_provenance);
        !s.ok()) {
      return s;
    }
    if ((net_gbps > 0) == (nic_gbps > 0)) {
      return Status::InvalidInput(
          Located(file_, v.pos, path + ": give exactly one of net_gbps and nic_gbps"));
    }
    const std::string rdma_name = kRdmaKinds[rdma];
    if (rdma != kRdmaNone && rdma_nics == 0) {
      const JsonValue* given = v.Find("rdma_nics");
      std::string message = "rdma_nics >= 1 is required when rdma is \"" + rdma_name + "\"";
      return given ? ErrorAtValue(file_, *given, path + ".rdma_nics", message)
                   : Status::InvalidInput(Located(file_, v.pos, path + ": " + message));
    }
    if (rdma == kRdmaNone && rdma_nics > 0) {
      return ErrorAtValue(file_, *v.Find("rdma_nics"), path + ".rdma_nics",
                          "must be 0 when rdma is \"none\"");
    }
    t->efa = rdma != kRdmaNone;
    t->infiniband = rdma == kRdmaInfiniband;
    t->nics = rdma_nics > 0 ? rdma_nics : 1;
    t->nic_gbps = net_gbps > 0 ? net_gbps / t->nics : nic_gbps;
    return Status::Ok();
  }

  Status ReadPricing(const JsonValue& v, const std::string& path, InstanceType* t) {
    Fields f(v, path, file_);
    f.OptPositive("on_demand_usd_hr", &t->price_on_demand_usd_hr);
    f.OptPositive("sagemaker_usd_hr", &t->price_sagemaker_usd_hr);
    f.OptFraction("spot_discount", &t->spot_discount);
    f.OptEnum("spot_interruption_bucket", kSpotBuckets, &t->spot_interruption_bucket);
    f.OptPositive("capacity_block_usd_hr", &t->price_capacity_block_usd_hr);
    f.OptDate("capacity_block_valid_until", &t->capacity_block_valid_until);
    if (Status s = f.Finish(); !s.ok()) return s;
    if (t->price_capacity_block_usd_hr.has_value() != t->capacity_block_valid_until.has_value()) {
      return Status::InvalidInput(Located(
          file_, v.pos,
          path + ": give capacity_block_usd_hr and capacity_block_valid_until together (a block "
                 "price without its date, or a date without a price)"));
    }
    return Status::Ok();
  }

  // An array of distinct names from kSagemakerLibraries.
  Status ReadLibraries(const JsonValue& v, const std::string& path, InstanceType* t) {
    if (!v.is_array()) {
      return ErrorAtValue(file_, v, path, "expected an array of library names, got " + Describe(v));
    }
    for (size_t i = 0; i < v.items.size(); ++i) {
      const JsonValue& item = v.items[i];
      const std::string item_path = path + "[" + std::to_string(i) + "]";
      const bool known =
          item.is_string() && std::find(kSagemakerLibraries.begin(), kSagemakerLibraries.end(),
                                        item.text) != kSagemakerLibraries.end();
      if (!known) {
        return ErrorAtValue(
            file_, item, item_path,
            "expected one of " + JoinNames(kSagemakerLibraries) + ", got " + Describe(item));
      }
      if (t->RunsSagemakerLibrary(item.text)) {
        return ErrorAtValue(file_, item, item_path, "\"" + item.text + "\" is listed twice");
      }
      t->sagemaker_libraries.push_back(item.text);
    }
    return Status::Ok();
  }

  Status ReadEntrySources(const JsonValue& v, const std::string& path, InstanceType* t) {
    if (!v.is_object()) {
      return ErrorAtValue(file_, v, path, std::string("expected an object, got ") + v.TypeName());
    }
    for (const JsonMember& m : v.members) {
      bool allowed = false;
      for (const std::string& k : kSourceKeys) allowed = allowed || k == m.key;
      if (!allowed) {
        return Status::InvalidInput(
            Located(file_, m.key_pos,
                    path + ": \"" + m.key +
                        "\" does not name a field (one of: " + JoinNames(kSourceKeys) + ")"));
      }
      std::vector<std::string>& ids = t->sources[m.key];
      if (Status s = ReadSourceIds(m.value, path + "." + m.key, &ids); !s.ok()) return s;
    }
    if (builtin_ && !t->sources.count("*")) {
      return ErrorAtValue(file_, v, path, "built-in entries need a \"*\" list of sources");
    }
    return Status::Ok();
  }

  // The scalar fields of an instance entry; nested objects are read after.
  Status ReadScalars(Fields& f, InstanceType* t, std::optional<double>* gpu_mem) {
    f.Require("name").String("name", &t->name);
    f.r().Bool("is_aws", &t->is_aws);
    f.Require("gpus").Int("gpus", &t->gpus, 1, kMaxInt);
    f.OptPositive("gpu_mem_gib", gpu_mem);
    f.OptInt("vcpus", &t->vcpus, 1, kMaxInt);
    std::optional<double> ram;
    f.OptPositive("ram_gib", &ram);
    t->ram_gib = ram.value_or(0);
    f.r().String("notes", &t->notes);
    return f.Check();
  }

  Status AddType(const JsonValue& v, const std::string& path) {
    Fields f(v, path, file_);
    InstanceType t;
    std::optional<double> gpu_mem;
    if (Status s = ReadScalars(f, &t, &gpu_mem); !s.ok()) return s;
    const JsonValue* gpu = f.Require("gpu").Child("gpu");
    const JsonValue* topology = f.Require("topology").Child("topology");
    // A machine that is not rented may have no network (one node only).
    if (t.is_aws) f.Require("network");
    const JsonValue* network = f.r().Child("network");
    const JsonValue* pricing = f.r().Child("pricing");
    const JsonValue* libraries = f.r().Child("sagemaker_libraries");
    if (builtin_) f.Require("sources");
    const JsonValue* sources = f.r().Child("sources");
    if (Status s = f.Finish(); !s.ok()) return s;
    if (Status s = CheckName(v, path, t.name); !s.ok()) return s;
    if (Status s = ReadInstanceGpu(*gpu, path + ".gpu", &t); !s.ok()) return s;
    t.gpu_mem_gib = gpu_mem.value_or(t.gpu.mem_gib);
    if (Status s = ReadTopology(*topology, path + ".topology", &t); !s.ok()) return s;
    if (network) {
      if (Status s = ReadNetwork(*network, path + ".network", &t); !s.ok()) return s;
    }
    if (pricing) {
      if (Status s = ReadPricing(*pricing, path + ".pricing", &t); !s.ok()) return s;
    }
    if (libraries) {
      if (Status s = ReadLibraries(*libraries, path + ".sagemaker_libraries", &t); !s.ok()) {
        return s;
      }
    }
    if (sources) {
      if (Status s = ReadEntrySources(*sources, path + ".sources", &t); !s.ok()) return s;
    }
    out_.types.push_back(std::move(t));
    return Status::Ok();
  }

  // A fabric: figures >= 1 or null (not confirmed), its sources and notes.
  Status AddFabric(const JsonValue& v, const std::string& path) {
    Fields f(v, path, file_);
    Fabric fabric;
    f.Require("name").String("name", &fabric.name);
    f.OptInt("nodes_per_leaf", &fabric.nodes_per_leaf, 1, kMaxInt);
    f.OptInt("leaves_per_pod", &fabric.leaves_per_pod, 1, kMaxInt);
    for (auto [key, out] : {std::pair{"oversubscription", &fabric.oversubscription},
                            std::pair{"pod_oversubscription", &fabric.pod_oversubscription}}) {
      const JsonValue* x = f.r().Child(key);
      if (IsNull(x) || !f.ok()) continue;
      if (!x->is_number() || x->number < 1) {
        f.Fail(f.r().ErrorAt(*x, key, "expected a number >= 1 or null, got " + Describe(*x)));
      } else {
        *out = x->number;
      }
    }
    const JsonValue* sources = f.r().Child("sources");
    f.r().String("notes", &fabric.notes);
    if (builtin_) f.Require("sources");
    if (Status s = f.Finish(); !s.ok()) return s;
    if (fabric.name.empty())
      return ErrorAtValue(file_, *v.Find("name"), path + ".name", "empty name");
    bool in_file = false;
    for (const Fabric& other : out_.fabrics) in_file = in_file || other.name == fabric.name;
    if (in_file || known_fabrics_.count(fabric.name)) {
      return ErrorAtValue(file_, *v.Find("name"), path + ".name",
                          "duplicate fabric \"" + fabric.name + "\" (already defined)");
    }
    if (sources) {
      if (Status s = ReadSourceIds(*sources, path + ".sources", &fabric.sources); !s.ok()) {
        return s;
      }
    }
    out_.fabrics.push_back(std::move(fabric));
    return Status::Ok();
  }

  Status CheckName(const JsonValue& v, const std::string& path, const std::string& name) {
    const JsonValue& at = *v.Find("name");
    if (name.empty()) return ErrorAtValue(file_, at, path + ".name", "empty name");
    bool in_file = false;
    for (const InstanceType& t : out_.types) in_file = in_file || t.name == name;
    if (in_file || known_types_.count(name)) {
      return ErrorAtValue(file_, at, path + ".name",
                          "duplicate instance type \"" + name + "\" (already defined)");
    }
    return Status::Ok();
  }

  const GpuMap& known_gpus_;
  const TypeMap& known_types_;
  const FabricMap& known_fabrics_;
  const SourceMap& known_sources_;
  std::string file_;
  bool builtin_;
  FileContents out_;
};

// Validates one parsed file completely, then adds its contents to the maps.
Status AddDocument(const Expected<JsonValue>& root, std::string_view filename, bool builtin,
                   GpuMap* gpus, TypeMap* types, FabricMap* fabrics, SourceMap* sources) {
  if (!root.ok()) return root.status();
  FileReader reader(*gpus, *types, *fabrics, *sources, filename, builtin);
  if (Status s = reader.Read(*root); !s.ok()) return s;
  FileContents& c = reader.contents();
  sources->merge(c.sources);
  gpus->merge(c.gpus);
  for (InstanceType& t : c.types) {
    std::string name = t.name;
    types->emplace(std::move(name), std::move(t));
  }
  for (Fabric& f : c.fabrics) {
    std::string name = f.name;
    fabrics->emplace(std::move(name), std::move(f));
  }
  return Status::Ok();
}

}  // namespace

Expected<Catalog> Catalog::LoadBuiltin(const std::string& dir) {
  Catalog c;
  for (const char* file :
       {"sources.json", "gpus.json", "aws.json", "reference-systems.json", "fabrics.json"}) {
    std::string path = (std::filesystem::path(dir) / file).string();
    Status s = AddDocument(ParseJsonFile(path), path, /*builtin=*/true, &c.gpus_, &c.types_,
                           &c.fabrics_, &c.source_text_);
    if (!s.ok()) return s;
  }
  return c;
}

std::string Catalog::DefaultDir() {
  const char* env = std::getenv("TRAINSIM_CATALOG_DIR");
  if (env != nullptr && env[0] != '\0') return env;
  return TRAINSIM_SOURCE_CATALOG_DIR;
}

Expected<Catalog> Catalog::LoadDefault(const std::string& extra_file) {
  Expected<Catalog> c = LoadBuiltin(DefaultDir());
  if (!c.ok()) return Status::Internal("built-in catalog: " + c.status().message());
  if (!extra_file.empty()) {
    if (Status s = c->AddFile(extra_file); !s.ok()) return s;
  }
  return c;
}

Status Catalog::AddFile(const std::string& path) {
  return AddDocument(ParseJsonFile(path), path, /*builtin=*/false, &gpus_, &types_, &fabrics_,
                     &source_text_);
}

Status Catalog::AddFromString(std::string_view text, std::string_view filename) {
  return AddDocument(ParseJson(text, filename), filename, /*builtin=*/false, &gpus_, &types_,
                     &fabrics_, &source_text_);
}

const GpuSpec* Catalog::FindGpuByDeviceName(std::string_view device_name) const {
  if (device_name.find("PCIe") != std::string_view::npos) return nullptr;
  for (const auto& [name, gpu] : gpus_) {
    for (const std::vector<std::string>& words : gpu.device_names) {
      const bool all = std::all_of(words.begin(), words.end(), [&](const std::string& w) {
        return device_name.find(w) != std::string_view::npos;
      });
      if (all) return &gpu;
    }
  }
  return nullptr;
}

const InstanceType* Catalog::Find(std::string_view name) const {
  auto it = types_.find(name);
  return it == types_.end() ? nullptr : &it->second;
}

std::vector<std::string> Catalog::Names() const {
  std::vector<std::string> names;
  names.reserve(types_.size());
  for (const auto& [name, type] : types_) names.push_back(name);
  return names;
}

const Fabric* Catalog::FindFabric(std::string_view name) const {
  auto it = fabrics_.find(name);
  return it == fabrics_.end() ? nullptr : &it->second;
}

std::vector<std::string> Catalog::FabricNames() const {
  std::vector<std::string> names;
  for (const auto& [name, fabric] : fabrics_) names.push_back(name);
  return names;
}

}  // namespace trainsim
