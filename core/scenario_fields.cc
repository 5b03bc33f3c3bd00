// The scenario's field table (core/scenario_fields.h). Each row names a member of a section
// struct by two member pointers; the reader and the value accessor are instantiated from them,
// so a row cannot disagree with the member's type.
#include "core/scenario_fields.h"

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "core/scenario_sections.h"

namespace trainsim {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMaxNodes = 1000000;  // keeps nodes * GPUs per node an int
constexpr double kBytesPerMiB = 1024.0 * 1024.0;

// The member a row names: section `S` of the scenario, member `M` of that section.
template <auto S, auto M>
auto& MemberOf(Scenario& s) {
  return (s.*S).*M;
}
template <auto S, auto M>
const auto& MemberOf(const Scenario& s) {
  return (s.*S).*M;
}
template <auto S, auto M>
using MemberType = std::remove_cvref_t<decltype(MemberOf<S, M>(std::declval<Scenario&>()))>;

template <typename T>
constexpr bool kIsOptionalInt = std::is_same_v<T, std::optional<int>>;

template <auto S, auto M>
void Read(ObjectReader* r, const ScenarioField& f, Scenario* s) {
  using T = MemberType<S, M>;
  T& v = MemberOf<S, M>(*s);
  const std::string_view key = f.key();
  if constexpr (std::is_same_v<T, bool>) {
    r->Bool(key, &v);
  } else if constexpr (std::is_enum_v<T>) {
    int index = static_cast<int>(v);
    r->Enum(key, f.choices, &index);
    v = static_cast<T>(index);
  } else if constexpr (kIsOptionalInt<T>) {
    int given = 0;  // the members of this kind keep "not given" for 0
    r->Int(key, &given, static_cast<int>(f.int_min), static_cast<int>(f.int_max));
    if (given > 0) v = given;
  } else if constexpr (std::is_integral_v<T>) {
    r->Int(key, &v, static_cast<T>(f.int_min), static_cast<T>(f.int_max));
  } else if constexpr (std::is_floating_point_v<T>) {
    double in_file = v / f.scale;
    r->Double(key, &in_file, f.min, f.max, f.above_min);
    v = in_file * f.scale;
  } else {
    static_assert(std::is_same_v<T, std::string>);
    r->String(key, &v);
  }
}

template <auto S, auto M>
nlohmann::json Value(const Scenario& s, const ScenarioField& f) {
  using T = MemberType<S, M>;
  const T& v = MemberOf<S, M>(s);
  if constexpr (std::is_enum_v<T>) {
    return f.choices.at(static_cast<size_t>(v));
  } else if constexpr (kIsOptionalInt<T>) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  } else if constexpr (std::is_floating_point_v<T>) {
    return v / f.scale;
  } else {
    return v;
  }
}

template <typename T>
constexpr FieldType TypeOf() {
  if constexpr (std::is_same_v<T, bool>) return FieldType::kBool;
  if constexpr (std::is_enum_v<T>) return FieldType::kChoice;
  if constexpr (kIsOptionalInt<T> || std::is_integral_v<T>) return FieldType::kInteger;
  if constexpr (std::is_floating_point_v<T>) return FieldType::kNumber;
  return FieldType::kString;
}

// A row for member M of section S; the setters below add its range, choices or scale.
template <auto S, auto M>
ScenarioField Field(std::string path, std::string label, std::string default_text) {
  ScenarioField f;
  f.path = std::move(path);
  f.type = TypeOf<MemberType<S, M>>();
  f.label = std::move(label);
  f.default_text = std::move(default_text);
  f.read = &Read<S, M>;
  f.value = &Value<S, M>;
  return f;
}

ScenarioField Ints(ScenarioField f, int64_t min, int64_t max) {
  f.int_min = min;
  f.int_max = max;
  return f;
}
ScenarioField Numbers(ScenarioField f, double min, double max = kInf) {
  f.min = min;
  f.max = max;
  return f;
}
// A number that must exceed `min` (0): epochs, bucket size, cycle time.
ScenarioField Positive(ScenarioField f, double scale = 1) {
  f.min = 0;
  f.max = kInf;
  f.above_min = true;
  f.scale = scale;
  return f;
}
ScenarioField Choices(ScenarioField f, std::vector<std::string> names) {
  f.choices = std::move(names);
  return f;
}

ScenarioField List(std::string path, std::string label, std::string default_text) {
  ScenarioField f;
  f.path = std::move(path);
  f.type = FieldType::kList;
  f.label = std::move(label);
  f.default_text = std::move(default_text);
  return f;
}

constexpr auto kT = &Scenario::training;
constexpr auto kC = &Scenario::cluster;
constexpr auto kP = &Scenario::parallel;
using T = TrainingConfig;
using C = ClusterConfig;
using P = ParallelConfig;

std::vector<ScenarioField> MakeTable() {
  return {
      // ---- training ----
      Ints(Field<kT, &T::global_batch>("training.global_batch", "Global batch", "required"), 1,
           kMaxInt64),
      Ints(Field<kT, &T::micro_batch>("training.micro_batch", "Micro batch", "1"), 1, kMaxInt),
      Choices(Field<kT, &T::precision>("training.precision", "Precision", "`\"bf16\"`"),
              EnumNames<Precision>(5)),
      Choices(Field<kT, &T::optimizer>("training.optimizer", "Optimizer", "`\"adam\"`"),
              EnumNames<Optimizer>(2)),
      Choices(Field<kT, &T::optimizer_state>("training.optimizer_state", "Optimizer state dtype",
                                             "`\"fp32\"`"),
              EnumNames<OptimizerState>(3)),
      Choices(Field<kT, &T::recompute>("training.recompute", "Recompute", "`\"none\"`"),
              EnumNames<Recompute>(kRecomputeModes)),
      Ints(Field<kT, &T::recompute_every>("training.recompute_every",
                                          "Recompute every k-th layer (full only)", "1"),
           1, kMaxInt),
      List("training.recompute_modules", "Recomputed modules (selective only)",
           "`[\"core_attn\"]`"),
      Field<kT, &T::sequence_parallel>("training.sequence_parallel", "Sequence parallel",
                                       "`false`"),
      Field<kT, &T::dropout>("training.dropout", "Dropout", "`true`"),
      Field<kT, &T::flash_attention>("training.flash_attention", "Flash attention",
                                     "the model's (below)"),
      Choices(Field<kT, &T::attention_kernel>("training.attention_kernel",
                                              "Attention kernel (flash only)", "`\"flash\"`"),
              {"flash", "cudnn"}),
      Choices(Field<kT, &T::grad_reduce_dtype>("training.grad_reduce_dtype",
                                               "Gradient reduction dtype", "`\"weights\"`"),
              {"weights", "fp32"}),
      Choices(Field<kT, &T::fp8_scaling>("training.fp8_scaling", "FP8 scaling (fp8 only)",
                                         "`\"tensorwise\"`"),
              {"tensorwise", "rowwise"}),
      Choices(Field<kT, &T::memory_format>("training.memory_format",
                                           "Activation layout (layer lists)", "`\"nhwc\"`"),
              {"nhwc", "nchw"}),
      Numbers(Field<kT, &T::tokens>("training.tokens", "Tokens", "none"), 1),
      Numbers(Field<kT, &T::samples>("training.samples", "Samples", "none"), 1),
      Positive(Field<kT, &T::epochs>("training.epochs", "Epochs", "none")),
      Numbers(Field<kT, &T::dataset_samples>("training.dataset_samples", "Dataset samples", "none"),
              1),
      Numbers(
          Field<kT, &T::input_samples_per_s_per_node>("training.input_samples_per_s_per_node",
                                                      "Input samples/s per node", "0 (unlimited)"),
          0),
      Ints(Field<kT, &T::input_prefetch_microbatches>("training.input_prefetch_microbatches",
                                                      "Input prefetch (microbatches)", "2"),
           0, kMaxInt),
      Field<kT, &T::offload_activations>("training.offload_activations",
                                         "Activations in host memory", "`false`"),
      Field<kT, &T::offload_optimizer>("training.offload_optimizer", "Optimizer on the CPU",
                                       "`false` (`true` with `offload_params`)"),
      Field<kT, &T::offload_params>("training.offload_params", "Parameters in host memory",
                                    "`false`"),
      Numbers(Field<kT, &T::moe_imbalance>("training.moe_imbalance",
                                           "Expert load imbalance (busiest / mean)", "1"),
              1),
      // ---- cluster ----
      Field<kC, &C::instance>("cluster.instance", "Instance", "required"),
      Ints(Field<kC, &C::nodes>("cluster.nodes", "Nodes", "1"), 1, kMaxNodes),
      Choices(Field<kC, &C::pricing>("cluster.pricing", "Pricing", "`\"on-demand\"`"),
              EnumNames<Pricing>(kPricingOptions)),
      Numbers(Field<kC, &C::oversubscription>("cluster.oversubscription", "Leaf oversubscription",
                                              "1.0"),
              1),
      Ints(Field<kC, &C::nodes_per_leaf>("cluster.nodes_per_leaf", "Nodes per leaf switch", "32"),
           1, kMaxInt),
      Ints(Field<kC, &C::leaves_per_pod>("cluster.leaves_per_pod", "Leaves per pod (core tier)",
                                         "none"),
           1, kMaxInt),
      Numbers(Field<kC, &C::pod_oversubscription>("cluster.pod_oversubscription",
                                                  "Pod oversubscription", "1.0"),
              1),
      Field<kC, &C::fabric>("cluster.fabric", "Fabric (catalog)", "none"),
      Ints(Field<kC, &C::nics>("cluster.nics", "Network interfaces", "catalog"), 1, kMaxInt),
      Field<kC, &C::profile>("cluster.profile", "Hardware profile (file)", "`\"\"` = catalog"),
      List("cluster.stragglers", "Stragglers", "`[]`"),
      // ---- parallel ----
      Ints(Field<kP, &P::tp>("parallel.tp", "Tensor parallel (tp)", "1"), 1, kMaxParallel),
      Ints(Field<kP, &P::pp>("parallel.pp", "Pipeline stages (pp)", "1"), 1, kMaxParallel),
      Ints(Field<kP, &P::dp>("parallel.dp", "Data parallel (dp)", "GPUs / (tp * pp)"), 1,
           kMaxParallel),
      Ints(Field<kP, &P::zero_stage>("parallel.zero_stage", "ZeRO stage", "0"), 0, 3),
      Choices(
          Field<kP, &P::zero_impl>("parallel.zero_impl", "ZeRO-3 implementation", "`\"fsdp1\"`"),
          EnumNames<ZeroImpl>(kZeroImpls)),
      Ints(Field<kP, &P::shard_group>("parallel.shard_group", "Hybrid shard group (ZeRO-2/3)",
                                      "the whole DP group"),
           1, kMaxParallel),
      Ints(Field<kP, &P::ep>("parallel.ep", "Expert parallel (MoE)", "1"), 1, kMaxParallel),
      Ints(Field<kP, &P::expert_tp>("parallel.expert_tp", "Expert tensor parallel (MoE)", "`tp`"),
           1, kMaxParallel),
      Ints(Field<kP, &P::cp>("parallel.cp", "Context parallel (long sequences)", "1"), 1,
           kMaxParallel),
      Choices(Field<kP, &P::schedule>("parallel.schedule", "Schedule", "`\"1f1b\"`"),
              EnumNames<Schedule>(3)),
      Ints(Field<kP, &P::virtual_stages>("parallel.virtual_stages", "Chunks per GPU (interleaved)",
                                         "1"),
           1, kMaxParallel),
      Field<kP, &P::split_counts_embedding>("parallel.split_counts_embedding",
                                            "Embedding counts as a layer in the split", "`false`"),
      Field<kP, &P::split_counts_loss>("parallel.split_counts_loss",
                                       "Loss counts as a layer in the split", "`false`"),
      Choices(
          Field<kP, &P::dp_algorithm>("parallel.dp_algorithm", "Gradient all-reduce", "`\"auto\"`"),
          EnumNames<DpAlgorithm>(5)),
      Ints(Field<kP, &P::parameter_servers>("parallel.parameter_servers", "Parameter servers",
                                            "nodes"),
           1, kMaxNodes),
      Choices(Field<kP, &P::dp_fusion>("parallel.dp_fusion", "Gradient grouping", "`\"ddp\"`"),
              EnumNames<DpFusion>(2)),
      Positive(Field<kP, &P::bucket_bytes>("parallel.bucket_mb", "Bucket size (MiB)",
                                           "25 (128 with `horovod`)"),
               kBytesPerMiB),
      Positive(Field<kP, &P::cycle_s>("parallel.cycle_ms", "Horovod cycle (ms)", "1"), 1e-3),
      Field<kP, &P::overlap_dp>("parallel.overlap_dp", "Overlap gradient reduction", "`true`"),
      Field<kP, &P::reshard_after_forward>("parallel.reshard_after_forward",
                                           "Reshard after forward (FSDP)",
                                           "`true` (`false` for `fsdp2` with `pp` > 1)"),
      Field<kP, &P::overlap_param_gather>("parallel.overlap_param_gather",
                                          "Overlap the weight gather", "`false`"),
      Field<kP, &P::tp_overlap>("parallel.tp_overlap", "Overlap TP communication", "`false`"),
      Field<kP, &P::pp_scatter_gather>("parallel.pp_scatter_gather", "Pipeline sends split over TP",
                                       "`true`"),
  };
}

// "1048576", or "" where `max` means no bound.
std::string UpperBound(const ScenarioField& f) {
  if (f.type == FieldType::kInteger) {
    return f.int_max >= kMaxInt ? "" : std::to_string(f.int_max);
  }
  return std::isinf(f.max) ? "" : FormatNumber(f.max);
}

}  // namespace

std::string_view ScenarioField::section() const {
  return std::string_view(path).substr(0, path.find('.'));
}

std::string_view ScenarioField::key() const {
  return std::string_view(path).substr(path.find('.') + 1);
}

const std::vector<ScenarioField>& ScenarioFields() {
  static const std::vector<ScenarioField> table = MakeTable();
  return table;
}

const ScenarioField* FindScenarioField(std::string_view path) {
  for (const ScenarioField& f : ScenarioFields()) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

void ReadSectionFields(std::string_view section, ObjectReader* r, Scenario* s) {
  for (const ScenarioField& f : ScenarioFields()) {
    if (f.section() != section) continue;
    if (f.read) {
      f.read(r, f, s);
    } else {
      r->Child(f.key());
    }
  }
}

std::string DocType(const ScenarioField& f) {
  switch (f.type) {
    case FieldType::kInteger:
    case FieldType::kNumber: {
      const bool integer = f.type == FieldType::kInteger;
      const std::string name = integer ? "integer" : "number";
      const std::string min = integer ? std::to_string(f.int_min) : FormatNumber(f.min);
      const std::string max = UpperBound(f);
      const bool open = f.above_min;
      if (max.empty()) return Cat(name, open ? " > " : " >= ", min);
      return Cat(name, " in ", open ? "(" : "[", min, ", ", max, "]");
    }
    case FieldType::kBool:
      return "boolean";
    case FieldType::kChoice: {
      std::string out;
      for (const std::string& c : f.choices)
        out += Cat(out.empty() ? "" : " \\| ", "`\"", c, "\"`");
      return out;
    }
    case FieldType::kString:
      return "string";
    case FieldType::kList:
      return "array";
  }
  return "";
}

}  // namespace trainsim
