// The scenario's "search" section (docs/formats.md#search): the space the planner may choose
// from, its constraints and objective, and the job model's settings. Lists are checked item by
// item (type, range, no repeats); enum names come from the ToString functions of scenario.h and
// search.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "core/scenario_sections.h"

namespace trainsim {
namespace {

constexpr int kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxSearchNodes = 100000;

// Numbers with each end open or closed (max = infinity: no upper end).
struct Range {
  double min;
  bool min_open;
  double max;
  bool max_open;

  bool Contains(double v) const {
    return (min_open ? v > min : v >= min) && (max_open ? v < max : v <= max);
  }
  std::string Text() const {  // "> 0", ">= 0", "in [0, 1)"
    if (max == kInf) return Cat(min_open ? "> " : ">= ", min);
    return Cat("in ", min_open ? "(" : "[", min, ", ", max, max_open ? ")" : "]");
  }
};

constexpr Range kPositive{0, true, kInf, false};
constexpr Range kNonNegative{0, false, kInf, false};
constexpr Range kFraction{0, false, 1, true};
constexpr Range kChance{0, true, 1, false};
constexpr Range kKeepAlive{0, false, 3600, false};  // SageMaker's warm pool limit

struct NumberField {
  std::string_view key;
  Range range;
  std::optional<double> SearchConfig::*value;
};

constexpr NumberField kGoalNumbers[] = {
    {"budget_usd", kPositive, &SearchConfig::budget_usd},
    {"deadline_hours", kPositive, &SearchConfig::deadline_hours}};

constexpr NumberField kJobNumbers[] = {
    {"dataset_bytes", kNonNegative, &SearchConfig::dataset_bytes},
    {"storage_GBps", kPositive, &SearchConfig::storage_GBps},
    {"checkpoint_bytes", kPositive, &SearchConfig::checkpoint_bytes},
    {"checkpoint_interval_s", kPositive, &SearchConfig::checkpoint_interval_s},
    {"provisioning_s", kNonNegative, &SearchConfig::provisioning_s},
    {"restart_s", kNonNegative, &SearchConfig::restart_s},
    {"spot_interruptions_per_month", kFraction, &SearchConfig::spot_interruptions_per_month},
    {"spot_capacity_chance", kChance, &SearchConfig::spot_capacity_chance},
    {"spot_capacity_retry_s", kPositive, &SearchConfig::spot_capacity_retry_s},
    {"reservation_gap_s", kNonNegative, &SearchConfig::reservation_gap_s},
    {"warm_pool_keep_alive_s", kKeepAlive, &SearchConfig::warm_pool_keep_alive_s},
    {"elastic_reconfigure_s", kNonNegative, &SearchConfig::elastic_reconfigure_s},
    {"image_bytes", kNonNegative, &SearchConfig::image_bytes}};

struct PriceField {
  std::string_view key;
  std::optional<double> UserPrices::*value;
};

constexpr PriceField kPriceFields[] = {
    {"capacity_block_usd_hr", &UserPrices::capacity_block_usd_hr},
    {"training_plan_usd_hr", &UserPrices::training_plan_usd_hr},
    {"savings_plan_1y_usd_hr", &UserPrices::savings_plan_1y_usd_hr},
    {"savings_plan_3y_usd_hr", &UserPrices::savings_plan_3y_usd_hr}};

struct IntListField {
  std::string_view key;
  int min;
  int max;
  std::vector<int> SearchConfig::*list;
  int strategy = -1;  // or the index in kStrategies of search.<strategy name>
  std::vector<int>& In(SearchConfig& c) const {
    return strategy < 0 ? c.*list : c.strategies[strategy];
  }
};

constexpr IntListField kIntLists[] = {
    {"tp", 1, kMaxParallel, &SearchConfig::tp},
    {"pp", 1, kMaxParallel, &SearchConfig::pp},
    {"micro_batch", 1, kMaxInt, &SearchConfig::micro_batch},
    {"zero_stages", 0, 3, &SearchConfig::zero_stages},
    {"shard_groups", 2, kMaxParallel, &SearchConfig::shard_groups},
    {"ep", 1, kMaxParallel, &SearchConfig::ep},
    {"virtual_stages", 2, kMaxParallel, &SearchConfig::virtual_stages}};

// The integer lists in docs/formats.md's order: each strategy's degrees after ep.
const std::vector<IntListField>& IntLists() {
  static const std::vector<IntListField> lists = [] {
    std::vector<IntListField> out;
    for (const IntListField& f : kIntLists) {
      out.push_back(f);
      if (f.key != "ep") continue;
      for (int i = 0; i < kStrategyCount; ++i) {
        out.push_back({kStrategies[i]->name, 1, kMaxParallel, nullptr, i});
      }
    }
    return out;
  }();
  return lists;
}

std::string IntRangeText(int min, int max) {
  return max == kMaxInt ? Cat(">= ", min) : Cat("in [", min, ", ", max, "]");
}

class SearchReader {
 public:
  SearchReader(const JsonValue& value, std::string_view file, const Catalog& catalog,
               SearchConfig* out)
      : value_(value), file_(file), catalog_(catalog), out_(*out) {}

  Status Run() {
    if (Status s = ReadScalars(); !s.ok()) return s;
    using Step = Status (SearchReader::*)();
    for (Step step :
         {&SearchReader::ReadInstances, &SearchReader::ReadNodes, &SearchReader::ReadPricing,
          &SearchReader::ReadIntLists, &SearchReader::ReadEnumLists, &SearchReader::ReadNumbers,
          &SearchReader::ReadPrices, &SearchReader::ReadStorage, &SearchReader::ReadObjective}) {
      if (Status s = (this->*step)(); !s.ok()) return s;
    }
    return Status::Ok();
  }

 private:
  // Reads the plain fields and marks the others known (read by the steps), in the order of
  // docs/formats.md, which is also the order unknown-field messages list them in.
  Status ReadScalars() {
    ObjectReader r(value_, "search", std::string(file_));
    int64_t seed = static_cast<int64_t>(out_.seed);
    for (std::string_view key : {"instances", "nodes", "pricing"}) r.Child(key);
    r.Bool("spot_allowed", &out_.spot_allowed);
    for (const IntListField& f : IntLists()) r.Child(f.key);
    r.Int("max_pp", &out_.max_pp, 1, kMaxParallel);
    r.Child("recompute");
    r.Child("schedules");
    for (const NumberField& f : kGoalNumbers) r.Child(f.key);
    r.Child("objective");
    r.Int("confirm_top", &out_.confirm_top, 1, 1000);
    r.Bool("prefer_validated", &out_.prefer_validated);
    for (const NumberField& f : kJobNumbers) r.Child(f.key);
    r.Child("storage");
    r.Bool("stream_dataset", &out_.stream_dataset);
    r.Int("spot_reclaim_wave_nodes", &out_.spot_reclaim_wave_nodes, 1, kMaxSearchNodes);
    r.Child("prices");
    r.Bool("checkpoint_on_notice", &out_.checkpoint_on_notice)
        .Int("trials", &out_.trials, 1, 1000000)
        .Int("seed", &seed, 0, kMaxInt64);
    out_.seed = static_cast<uint64_t>(seed);
    return r.Finish();
  }

  // Reads the array at `key` (when present) item by item; an item listed twice is an error.
  template <typename T, typename ReadItem>
  Status ReadList(std::string_view key, ReadItem read_item, std::vector<T>* out) const {
    const JsonValue* list = value_.Find(key);
    if (!list) return Status::Ok();
    const std::string path = Cat("search.", key);
    if (!list->is_array()) {
      return ErrorAt(file_, list->pos, Cat(path, ": expected an array, got ", Describe(*list)));
    }
    for (size_t i = 0; i < list->items.size(); ++i) {
      const JsonValue& item = list->items[i];
      const std::string item_path = Cat(path, "[", i, "]");
      Expected<T> value = read_item(item, item_path);
      if (!value.ok()) return value.status();
      if (std::find(out->begin(), out->end(), *value) != out->end()) {
        return ErrorAt(file_, item.pos, Cat(item_path, ": ", Describe(item), " is listed twice"));
      }
      out->push_back(std::move(value).value());
    }
    return Status::Ok();
  }

  Status ReadInstances() {
    auto read_item = [this](const JsonValue& item,
                            const std::string& path) -> Expected<std::string> {
      if (!item.is_string()) {
        return ErrorAt(file_, item.pos,
                       Cat(path, ": expected an instance type name, got ", Describe(item)));
      }
      const InstanceType* type = catalog_.Find(item.text);
      if (!type) {
        return ErrorAt(file_, item.pos,
                       Cat(path, ": unknown instance type \"", item.text,
                           "\"; known: ", Join(catalog_.Names())));
      }
      return item.text;  // with GPUs: the catalog has no entry without
    };
    return ReadList<std::string>("instances", read_item, &out_.instances);
  }

  // {"min": 1, "max": 64}
  Status ReadNodes() {
    const JsonValue* nodes = value_.Find("nodes");
    if (!nodes) return Status::Ok();
    ObjectReader r(*nodes, "search.nodes", std::string(file_));
    r.Int("min", &out_.min_nodes, 1, kMaxSearchNodes)
        .Int("max", &out_.max_nodes, 1, kMaxSearchNodes);
    if (Status s = r.Finish(); !s.ok()) return s;
    if (out_.max_nodes >= out_.min_nodes) return Status::Ok();
    const JsonValue* max = nodes->Find("max");
    return ErrorAt(file_, (max ? *max : *nodes).pos,
                   Cat("search.nodes: max = ", out_.max_nodes, max ? "" : " (the default)",
                       " is less than min = ", out_.min_nodes));
  }

  template <typename E>
  Status ReadEnumList(std::string_view key, int count, std::vector<E>* out) const {
    const std::vector<std::string> names = EnumNames<E>(count);
    auto read_item = [this, &names](const JsonValue& item, const std::string& path) -> Expected<E> {
      for (size_t k = 0; item.is_string() && k < names.size(); ++k) {
        if (item.text == names[k]) return static_cast<E>(k);
      }
      return ErrorAt(file_, item.pos,
                     Cat(path, ": expected one of ", Join(names), ", got ", Describe(item)));
    };
    return ReadList<E>(key, read_item, out);
  }

  // A pricing list that names a spot option needs spot_allowed.
  Status ReadPricing() {
    if (Status s = ReadEnumList("pricing", kPricingOptions, &out_.pricing); !s.ok()) return s;
    if (out_.spot_allowed) return Status::Ok();
    for (size_t i = 0; i < out_.pricing.size(); ++i) {
      if (!IsSpot(out_.pricing[i])) continue;
      return ErrorAt(file_, value_.Find("pricing")->items[i].pos,
                     Cat("search.pricing[", i, "]: \"", ToString(out_.pricing[i]),
                         "\" is a spot option, but search.spot_allowed is false"));
    }
    return Status::Ok();
  }

  Status ReadIntLists() {
    for (const IntListField& f : IntLists()) {
      auto read_item = [this, &f](const JsonValue& item, const std::string& path) -> Expected<int> {
        const bool ok = item.is_number() && item.number >= f.min && item.number <= f.max &&
                        item.number == std::floor(item.number);
        if (!ok) {
          return ErrorAt(file_, item.pos,
                         Cat(path, ": expected an integer ", IntRangeText(f.min, f.max), ", got ",
                             Describe(item)));
        }
        return static_cast<int>(item.number);
      };
      if (Status s = ReadList<int>(f.key, read_item, &f.In(out_)); !s.ok()) return s;
    }
    return Status::Ok();
  }

  Status ReadEnumLists() {
    if (Status s = ReadEnumList("recompute", kRecomputeModes, &out_.recompute); !s.ok()) return s;
    return ReadEnumList("schedules", 3, &out_.schedules);
  }

  Status ReadNumber(const NumberField& f) {
    const JsonValue* v = value_.Find(f.key);
    if (!v) return Status::Ok();
    if (!v->is_number() || !f.range.Contains(v->number)) {
      return ErrorAt(
          file_, v->pos,
          Cat("search.", f.key, ": expected a number ", f.range.Text(), ", got ", Describe(*v)));
    }
    out_.*f.value = v->number;
    return Status::Ok();
  }

  Status ReadNumbers() {
    for (const NumberField& f : kGoalNumbers) {
      if (Status s = ReadNumber(f); !s.ok()) return s;
    }
    for (const NumberField& f : kJobNumbers) {
      if (Status s = ReadNumber(f); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // {"p5.48xlarge": {"capacity_block_usd_hr": 31.5, ...}, ...}: known types, prices > 0.
  Status ReadPrices() {
    const JsonValue* prices = value_.Find("prices");
    if (!prices) return Status::Ok();
    if (!prices->is_object()) {
      return ErrorAt(
          file_, prices->pos,
          Cat("search.prices: expected an object keyed by instance type, got ", Describe(*prices)));
    }
    for (const JsonMember& m : prices->members) {
      const std::string path = Cat("search.prices.", m.key);
      if (!catalog_.Find(m.key)) {
        return ErrorAt(
            file_, m.key_pos,
            Cat(path, ": unknown instance type \"", m.key, "\"; known: ", Join(catalog_.Names())));
      }
      ObjectReader r(m.value, path, std::string(file_));
      UserPrices& out = out_.prices[m.key];
      for (const PriceField& f : kPriceFields) {
        const JsonValue* v = r.Child(f.key);
        if (!v) continue;
        if (!v->is_number() || !kPositive.Contains(v->number)) {
          return ErrorAt(file_, v->pos,
                         Cat(path, ".", f.key,
                             ": expected a price > 0 (USD per instance-hour), got ", Describe(*v)));
        }
        out.*f.value = v->number;
      }
      if (Status s = r.Finish(); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // {"kind": "fsx-lustre", "deployment": "persistent-2", "MBps_per_TiB": 250,
  //  "capacity_TiB": 9.6} or {"kind": "s3", "prefixes": 4, "part_MiB": 16}.
  Status ReadStorage() {
    const JsonValue* v = value_.Find("storage");
    if (!v) return Status::Ok();
    ObjectReader r(*v, "search.storage", std::string(file_));
    int kind = 0;
    r.Require("kind").Enum("kind", {"fsx-lustre", "s3"}, &kind);
    if (!r.ok()) return r.Finish();
    StorageConfig c;
    c.kind = static_cast<StorageKind>(kind);
    auto positive = [&](std::string_view key, double* out) -> Status {
      const JsonValue* x = r.Child(key);
      if (!x) return Status::Ok();
      if (x->is_number() && kPositive.Contains(x->number)) {
        *out = x->number;
        return Status::Ok();
      }
      return r.ErrorAt(*x, key, Cat("expected a number > 0, got ", Describe(*x)));
    };
    if (c.kind == StorageKind::kFsxLustre) {
      int deployment = 0;
      r.Require("deployment")
          .Enum("deployment", {"scratch-1", "scratch-2", "persistent-1", "persistent-2"},
                &deployment)
          .Require("MBps_per_TiB")
          .Require("capacity_TiB");
      c.deployment = static_cast<FsxDeployment>(deployment);
      if (!r.ok()) return r.Finish();
      for (auto [key, out] : {std::pair{"MBps_per_TiB", &c.MBps_per_TiB},
                              std::pair{"capacity_TiB", &c.capacity_TiB}}) {
        if (Status s = positive(key, out); !s.ok()) return s;
      }
      if (Status s = CheckFsxTier(c); !s.ok()) return s;
    } else {
      r.Int("prefixes", &c.prefixes, 1, 1000000);
      if (Status s = positive("part_MiB", &c.part_MiB); !s.ok()) return s;
    }
    if (Status s = r.Finish(); !s.ok()) return s;
    if (out_.storage_GBps) {
      return ErrorAt(file_, v->pos,
                     "search.storage: give the named storage or search.storage_GBps, not both");
    }
    out_.storage = c;
    return Status::Ok();
  }

  // Persistent SSD deployments offer fixed throughput tiers (FSx for Lustre User Guide,
  // "Managing throughput capacity": PERSISTENT_1 50, 100, 200; PERSISTENT_2 125, 250, 500,
  // 1000 MB/s/TiB); scratch deployments take the user's figure.
  Status CheckFsxTier(const StorageConfig& c) const {
    std::vector<double> tiers;
    if (c.deployment == FsxDeployment::kPersistent1) tiers = {50, 100, 200};
    if (c.deployment == FsxDeployment::kPersistent2) tiers = {125, 250, 500, 1000};
    if (tiers.empty() || std::find(tiers.begin(), tiers.end(), c.MBps_per_TiB) != tiers.end()) {
      return Status::Ok();
    }
    std::string list;
    for (double t : tiers) list += (list.empty() ? "" : ", ") + FormatNumber(t);
    const JsonValue* at = value_.Find("storage")->Find("MBps_per_TiB");
    return ErrorAt(
        file_, at->pos,
        Cat("search.storage.MBps_per_TiB: ",
            c.deployment == FsxDeployment::kPersistent1 ? "persistent-1" : "persistent-2",
            " offers ", list, " MB/s per TiB, got ", Describe(*at)));
  }

  // "min-cost", "min-time", or the weight of time in [0, 1] (kWeighted).
  Status ReadObjective() {
    const JsonValue* v = value_.Find("objective");
    if (!v) return Status::Ok();
    for (Objective named : {Objective::kMinCost, Objective::kMinTime}) {
      if (v->is_string() && v->text == ToString(named)) {
        out_.objective = named;
        return Status::Ok();
      }
    }
    if (v->is_number() && v->number >= 0 && v->number <= 1) {
      out_.objective = Objective::kWeighted;
      out_.time_weight = v->number;
      return Status::Ok();
    }
    return ErrorAt(
        file_, v->pos,
        Cat("search.objective: expected \"", ToString(Objective::kMinCost), "\", \"",
            ToString(Objective::kMinTime),
            "\" or a number in [0, 1] (the weight of time against cost), got ", Describe(*v)));
  }

  const JsonValue& value_;
  std::string_view file_;
  const Catalog& catalog_;
  SearchConfig& out_;
};

}  // namespace

Status ReadSearchSection(const JsonValue& search, std::string_view file, const Catalog& catalog,
                         SearchConfig* out) {
  return SearchReader(search, file, catalog, out).Run();
}

const char* ToString(Objective o) {
  switch (o) {
    case Objective::kMinCost:
      return "min-cost";
    case Objective::kMinTime:
      return "min-time";
    case Objective::kWeighted:
      return "weighted";
  }
  return "?";
}

}  // namespace trainsim
