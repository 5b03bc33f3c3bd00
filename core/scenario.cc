// Scenario format v1 (docs/formats.md).
//
// The JSON tree is read section by section with ObjectReader, which checks types, ranges and
// unknown fields. What needs more than one field (divisibility, GPU count, precision support)
// is checked afterwards, each error pointing at the value at fault.
#include "core/scenario.h"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include "core/json_doc.h"
#include "core/model_zoo.h"
#include "core/scenario_fields.h"
#include "core/scenario_sections.h"
#include "core/strategy.h"

namespace trainsim {
namespace {

constexpr int kMaxInt = std::numeric_limits<int>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kMaxDim = 1 << 24;  // model dimensions: keeps 4 * hidden an int
constexpr double kBytesPerMiB = 1024.0 * 1024.0;
constexpr int kFormatVersion = 1;

// The position of the first of `keys` that `object` has, else the object's own.
SourcePos PosOfFirst(const JsonValue& object, std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    if (const JsonValue* v = object.Find(key)) return v->pos;
  }
  return object.pos;
}

SourcePos PosOf(const JsonValue& object, std::string_view key) { return PosOfFirst(object, {key}); }

// ObjectReader::Finish, then the first of `required` that `object` lacks. Checked after
// Finish so that a misspelt key is reported as unknown rather than as a missing field.
Status FinishRequiring(ObjectReader* r, const JsonValue& object,
                       std::initializer_list<std::string_view> required) {
  if (Status s = r->Finish(); !s.ok()) return s;
  for (std::string_view key : required) {
    if (!object.Find(key)) {
      return ErrorAt(r->file(), object.pos, "missing required field " + r->FieldPath(key));
    }
  }
  return Status::Ok();
}

// Reads an enum written as one of `names` (in enum order).
template <typename E>
void ReadEnum(ObjectReader* r, std::string_view key, const std::vector<std::string>& names,
              E* out) {
  int index = static_cast<int>(*out);
  r->Enum(key, names, &index);
  *out = static_cast<E>(index);
}

template <typename E>
void ReadEnum(ObjectReader* r, std::string_view key, int count, E* out) {
  ReadEnum(r, key, EnumNames<E>(count), out);
}

// ---- model -------------------------------------------------------------------------------

// The transformer dimensions a file may give, and where they go.
constexpr std::pair<std::string_view, int ModelSpec::*> kDimensions[] = {
    {"layers", &ModelSpec::layers},
    {"hidden", &ModelSpec::hidden},
    {"heads", &ModelSpec::heads},
    {"kv_heads", &ModelSpec::kv_heads},
    {"ffn_hidden", &ModelSpec::ffn_hidden},
    {"seq_len", &ModelSpec::seq_len},
    {"vocab", &ModelSpec::vocab}};

// Reads the dimensions present; absent ones keep their value in *m.
void ReadDimensions(ObjectReader* r, ModelSpec* m) {
  for (const auto& [key, field] : kDimensions) r->Int(key, &(m->*field), 1, kMaxDim);
}

// Mixture-of-experts and multi-head latent attention fields of an explicit
// model (0 = not used), each with its least value when given.
constexpr std::tuple<std::string_view, int ModelSpec::*, int> kMoeAndMlaFields[] = {
    {"experts", &ModelSpec::experts, 1},
    {"experts_per_token", &ModelSpec::experts_per_token, 1},
    {"expert_ffn_hidden", &ModelSpec::expert_ffn_hidden, 1},
    {"shared_experts", &ModelSpec::shared_experts, 0},
    {"moe_every", &ModelSpec::moe_every, 1},
    {"dense_layers", &ModelSpec::dense_layers, 0},
    {"q_lora_rank", &ModelSpec::q_lora_rank, 1},
    {"kv_lora_rank", &ModelSpec::kv_lora_rank, 1},
    {"qk_nope_head_dim", &ModelSpec::qk_nope_head_dim, 1},
    {"qk_rope_head_dim", &ModelSpec::qk_rope_head_dim, 1},
    {"v_head_dim", &ModelSpec::v_head_dim, 1}};

void ReadMoeAndMla(ObjectReader* r, ModelSpec* m) {
  for (const auto& [key, field, least] : kMoeAndMlaFields) {
    r->Int(key, &(m->*field), least, kMaxDim);
  }
  r->Double("capacity_factor", &m->capacity_factor, 0, kInf).Bool("router_bias", &m->router_bias);
}

// The MoE and MLA fields agree with each other and with the dimensions.
Status CheckMoeAndMla(const JsonValue& v, std::string_view file, const ModelSpec& m) {
  if (m.experts == 0) {
    for (const char* key : {"experts_per_token", "expert_ffn_hidden", "shared_experts", "moe_every",
                            "dense_layers", "capacity_factor", "router_bias"}) {
      if (const JsonValue* given = v.Find(key)) {
        return ErrorAt(file, given->pos,
                       Cat("model.", key, ": only for a mixture of experts (give model.experts)"));
      }
    }
  } else {
    if (m.experts_per_token == 0) {
      return ErrorAt(file, PosOf(v, "experts"),
                     "model.experts: needs model.experts_per_token (the experts each token goes "
                     "through, top-k)");
    }
    if (m.experts_per_token > m.experts) {
      return ErrorAt(file, PosOf(v, "experts_per_token"),
                     Cat("model.experts_per_token = ", m.experts_per_token,
                         " exceeds model.experts = ", m.experts));
    }
    if (m.dense_layers >= m.layers) {
      return ErrorAt(file, PosOf(v, "dense_layers"),
                     Cat("model.dense_layers = ", m.dense_layers, " leaves no MoE layer of the ",
                         m.layers, " layers"));
    }
  }
  if (m.kv_lora_rank == 0) {
    for (const char* key : {"q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
      if (const JsonValue* given = v.Find(key)) {
        return ErrorAt(
            file, given->pos,
            Cat("model.", key, ": only for multi-head latent attention (give model.kv_lora_rank)"));
      }
    }
  } else if (m.qk_nope_head_dim == 0 || m.qk_rope_head_dim == 0 || m.v_head_dim == 0) {
    return ErrorAt(file, PosOf(v, "kv_lora_rank"),
                   "model.kv_lora_rank: needs model.qk_nope_head_dim, model.qk_rope_head_dim and "
                   "model.v_head_dim");
  } else if (m.kv_heads != m.heads) {
    return ErrorAt(file, PosOf(v, "kv_heads"),
                   "model.kv_heads: multi-head latent attention has a key and value per head "
                   "(leave kv_heads out)");
  }
  return Status::Ok();
}

Status CheckTransformerDims(const JsonValue& v, std::string_view file, const ModelSpec& m) {
  if (m.hidden % m.heads != 0) {
    return ErrorAt(
        file, PosOfFirst(v, {"heads", "hidden"}),
        Cat("model.hidden = ", m.hidden, " is not divisible by model.heads = ", m.heads));
  }
  if (m.heads % m.kv_heads != 0) {
    return ErrorAt(
        file, PosOfFirst(v, {"kv_heads", "heads"}),
        Cat("model.heads = ", m.heads, " is not divisible by model.kv_heads = ", m.kv_heads));
  }
  return Status::Ok();
}

Status UnknownPreset(const JsonValue& at, std::string_view field, std::string_view file) {
  std::vector<std::string> names;
  for (const ModelSpec& m : ModelZoo()) names.push_back(m.name);
  return ErrorAt(file, at.pos,
                 Cat(field, ": unknown model \"", at.text, "\"; known: ", Join(names)));
}

Expected<ModelSpec> ReadPresetName(const JsonValue& v, std::string_view file) {
  std::optional<ModelSpec> preset = FindModel(v.text);
  if (!preset) return UnknownPreset(v, "model", file);
  if (preset->kv_heads == 0) preset->kv_heads = preset->heads;
  return *preset;
}

// Replaces the preset's dimensions with those the file gives (> 0 in `given`). Where the preset
// has kv_heads == heads or ffn_hidden == 4 * hidden, those follow an override of their base.
Status ApplyOverrides(const JsonValue& v, std::string_view file, const ModelSpec& given,
                      ModelSpec* m) {
  const bool kv_follows_heads = m->kv_heads == 0 || m->kv_heads == m->heads;
  const bool ffn_follows_hidden = m->ffn_hidden == 4 * m->hidden;
  for (const auto& [key, field] : kDimensions) {
    if (given.*field == 0) continue;
    if (m->kind != ModelKind::kTransformer) {
      return ErrorAt(file, v.Find(key)->pos,
                     Cat("model.", key, ": ", m->name,
                         " is a layer-list model; only transformer presets take dimension "
                         "overrides"));
    }
    m->*field = given.*field;
    m->published_params = 0;  // the published total no longer applies
  }
  if (kv_follows_heads && given.kv_heads == 0) m->kv_heads = m->heads;
  if (ffn_follows_hidden && given.ffn_hidden == 0) m->ffn_hidden = 4 * m->hidden;
  return Status::Ok();
}

// {"preset": "llama2-70b", "seq_len": 2048}: a preset with some dimensions replaced.
Expected<ModelSpec> ReadPresetObject(const JsonValue& v, std::string_view file) {
  ObjectReader r(v, "model", std::string(file));
  std::string name;
  ModelSpec given;  // dimensions stay 0 unless the file gives them
  r.String("preset", &name);
  ReadDimensions(&r, &given);
  double capacity_factor = -1;
  r.Double("capacity_factor", &capacity_factor, 0, kInf);
  if (Status s = r.Finish(); !s.ok()) return s;
  std::optional<ModelSpec> preset = FindModel(name);
  if (!preset) return UnknownPreset(*v.Find("preset"), "model.preset", file);
  ModelSpec m = *std::move(preset);
  if (Status s = ApplyOverrides(v, file, given, &m); !s.ok()) return s;
  if (capacity_factor >= 0) m.capacity_factor = capacity_factor;  // the parameters stay
  if (m.kind == ModelKind::kTransformer) {
    if (Status s = CheckTransformerDims(v, file, m); !s.ok()) return s;
    if (Status s = CheckMoeAndMla(v, file, m); !s.ok()) return s;
  }
  return m;
}

// {"layers": 96, "hidden": 12288, ...}: a transformer given by its dimensions.
Expected<ModelSpec> ReadExplicitModel(const JsonValue& v, std::string_view file) {
  ObjectReader r(v, "model", std::string(file));
  ModelSpec m;
  m.name = "custom";
  ReadDimensions(&r, &m);
  r.String("name", &m.name);
  ReadEnum(&r, "mlp", 2, &m.mlp);
  r.Bool("bias", &m.bias)
      .Bool("tied_embeddings", &m.tied_embeddings)
      .Bool("learned_positions", &m.learned_positions)
      .Int("token_types", &m.token_types, 0, kMaxDim);
  ReadMoeAndMla(&r, &m);
  Status status = FinishRequiring(&r, v, {"layers", "hidden", "heads", "seq_len", "vocab"});
  if (!status.ok()) return status;
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  if (m.ffn_hidden == 0) m.ffn_hidden = 4 * m.hidden;
  status = CheckTransformerDims(v, file, m);
  if (!status.ok()) return status;
  status = CheckMoeAndMla(v, file, m);
  if (!status.ok()) return status;
  return m;
}

Status ReadLayer(const JsonValue& v, size_t index, std::string_view file, LayerSpec* layer) {
  ObjectReader r(v, Cat("model.layer_list[", index, "]"), std::string(file));
  layer->name = Cat("layer", index);
  r.String("name", &layer->name)
      .Double("forward_flops", &layer->forward_flops, 0, kInf)
      .Double("params", &layer->params, 0, kInf)
      .Double("activation_bytes", &layer->activation_bytes, 0, kInf)
      .Double("input_bytes", &layer->input_bytes, 0, kInf);
  ReadEnum(&r, "epilogue", 4, &layer->epilogue);
  return FinishRequiring(&r, v, {"forward_flops"});
}

// {"layer_list": [{"name": "conv1", "forward_flops": ...}, ...]}: a generic model.
Expected<ModelSpec> ReadLayerListModel(const JsonValue& v, std::string_view file) {
  ObjectReader r(v, "model", std::string(file));
  ModelSpec m;
  m.name = "custom";
  m.kind = ModelKind::kLayerList;
  const JsonValue* list = r.Child("layer_list");
  r.String("name", &m.name).Int("sample_elems", &m.sample_elems, 1, kMaxInt);
  if (Status s = r.Finish(); !s.ok()) return s;
  if (!list->is_array() || list->items.empty()) {
    return ErrorAt(file, list->pos,
                   Cat("model.layer_list: expected a non-empty array of layers, got ",
                       list->is_array() ? "an empty array" : Describe(*list)));
  }
  m.layer_list.resize(list->items.size());
  for (size_t i = 0; i < list->items.size(); ++i) {
    if (Status s = ReadLayer(list->items[i], i, file, &m.layer_list[i]); !s.ok()) return s;
  }
  return m;
}

Expected<ModelSpec> ReadModel(const JsonValue& v, std::string_view file) {
  if (v.is_string()) return ReadPresetName(v, file);
  if (!v.is_object()) {
    return ErrorAt(file, v.pos,
                   Cat("model: expected a preset name or an object, got ", Describe(v)));
  }
  if (v.Find("layer_list")) return ReadLayerListModel(v, file);
  if (v.Find("preset")) return ReadPresetObject(v, file);
  return ReadExplicitModel(v, file);
}

// ---- the whole scenario ------------------------------------------------------------------

// "scenarios/gpt3-175b-p4d.json" -> "gpt3-175b-p4d"; anything not named *.json -> "scenario".
std::string DefaultName(std::string_view filename) {
  std::filesystem::path path(filename);
  if (path.extension() != ".json" || path.stem().empty()) return "scenario";
  return path.stem().string();
}

// Parses one document; each step reads a section or checks fields against each other.
class ScenarioParser {
 public:
  ScenarioParser(const JsonValue& root, std::string_view file, const Catalog& catalog)
      : root_(root), file_(file), catalog_(catalog) {
    no_parallel_.type = JsonValue::Type::kObject;
    no_parallel_.pos = root.pos;
  }

  Expected<PlanningScenario> Run() {
    using Step = Status (ScenarioParser::*)();
    for (Step step : {&ScenarioParser::ReadTop,           &ScenarioParser::ReadModelSection,
                      &ScenarioParser::ReadTraining,      &ScenarioParser::CheckWork,
                      &ScenarioParser::ReadCluster,       &ScenarioParser::CheckPrecision,
                      &ScenarioParser::ReadParallel,      &ScenarioParser::CheckTensorParallel,
                      &ScenarioParser::CheckPipeline,     &ScenarioParser::CheckGpuCount,
                      &ScenarioParser::CheckBatch,        &ScenarioParser::CheckInterleaving,
                      &ScenarioParser::CheckDataParallel, &ScenarioParser::CheckZeroImpl,
                      &ScenarioParser::CheckShardGroup,   &ScenarioParser::CheckExperts,
                      &ScenarioParser::CheckStrategies,   &ScenarioParser::CheckOffload,
                      &ScenarioParser::CheckTpOverlap,    &ScenarioParser::CheckParamGather,
                      &ScenarioParser::ReadPlanning}) {
      if (Status s = (this->*step)(); !s.ok()) return s;
    }
    return std::move(result_);
  }

 private:
  Status ReadTop() {
    ObjectReader r(root_, "", std::string(file_));
    out_.name = DefaultName(file_);
    const JsonValue* version = r.Child("version");
    r.String("name", &out_.name);
    model_ = r.Child("model");
    training_ = r.Child("training");
    cluster_ = r.Child("cluster");
    parallel_ = r.Child("parallel");
    if (!parallel_) parallel_ = &no_parallel_;
    search_ = r.Child("search");
    r.Child("sweep");  // read by ReadPlanning
    Status s = FinishRequiring(&r, root_, {"model", "training", "cluster"});
    if (!s.ok()) return s;
    if (version && !(version->is_number() && version->number == kFormatVersion)) {
      return ErrorAt(file_, version->pos,
                     Cat("version: this trainsim reads scenario format version ", kFormatVersion,
                         ", got ", Describe(*version)));
    }
    if (out_.name.empty()) {
      return ErrorAt(file_, root_.Find("name")->pos, "name: expected a non-empty string");
    }
    return Status::Ok();
  }

  Status ReadModelSection() {
    Expected<ModelSpec> model = ReadModel(*model_, file_);
    if (!model.ok()) return model.status();
    out_.model = std::move(model).value();
    return Status::Ok();
  }

  Status ReadTraining() {
    const TrainingConfig& t = out_.training;
    ObjectReader r(*training_, "training", std::string(file_));
    ReadSectionFields("training", &r, &out_);
    if (Status s = FinishRequiring(&r, *training_, {"global_batch"}); !s.ok()) return s;
    if (const JsonValue* scaling = training_->Find("fp8_scaling");
        scaling && t.precision != Precision::kFp8) {
      return ErrorAt(
          file_, scaling->pos,
          Cat("training.fp8_scaling: applies to training.precision \"fp8\" only (it is \"",
              ToString(t.precision), "\")"));
    }
    if (const JsonValue* every = training_->Find("recompute_every");
        every && t.recompute != Recompute::kFull) {
      return ErrorAt(file_, every->pos,
                     Cat("training.recompute_every: applies with training.recompute \"full\" "
                         "only (it is \"",
                         ToString(t.recompute), "\")"));
    }
    if (const JsonValue* modules = training_->Find("recompute_modules")) {
      if (Status s = ReadRecomputeModules(*modules); !s.ok()) return s;
    }
    if (Status s = CheckFlashAttention(); !s.ok()) return s;
    if (IsOpLevelPolicy(t.recompute) && !t.flash_attention) {
      return ErrorAt(file_, training_->Find("recompute")->pos,
                     Cat("training.recompute: \"", ToString(t.recompute),
                         "\" keeps no attention scores, so it needs training.flash_attention "
                         "true"));
    }
    if (const JsonValue* kernel = training_->Find("attention_kernel");
        kernel && !t.flash_attention) {
      return ErrorAt(file_, kernel->pos,
                     "training.attention_kernel: applies with training.flash_attention true "
                     "only (flash attention is off for this scenario)");
    }
    return Status::Ok();
  }

  // ["mla_up_proj", "mlp", "moe"]: Megatron-Core's module names; each must apply to the model.
  Status ReadRecomputeModules(const JsonValue& list) {
    TrainingConfig& t = out_.training;
    if (t.recompute != Recompute::kSelective) {
      return ErrorAt(file_, list.pos,
                     Cat("training.recompute_modules: applies with training.recompute "
                         "\"selective\" only (it is \"",
                         ToString(t.recompute), "\")"));
    }
    if (!list.is_array() || list.items.empty()) {
      return ErrorAt(file_, list.pos,
                     Cat("training.recompute_modules: expected a non-empty array of module "
                         "names, got ",
                         list.is_array() ? std::string("an empty array") : Describe(list)));
    }
    const ModelSpec& m = out_.model;
    t.recompute_modules = 0;
    for (std::size_t i = 0; i < list.items.size(); ++i) {
      const JsonValue& item = list.items[i];
      const std::string where = Cat("training.recompute_modules[", i, "]");
      int bit = 0;
      while (bit < kRecomputeModuleCount &&
             !(item.is_string() && item.text == RecomputeModuleName(bit))) {
        ++bit;
      }
      if (bit == kRecomputeModuleCount) {
        std::string names;
        for (const std::string& name : RecomputeModuleNames(~0u))
          names += Cat(names.empty() ? "" : ", ", "\"", name, "\"");
        return ErrorAt(file_, item.pos,
                       Cat(where, ": expected one of ", names, ", got ", Describe(item)));
      }
      const unsigned module = 1u << bit;
      if (t.recompute_modules & module) {
        return ErrorAt(file_, item.pos,
                       Cat(where, ": \"", RecomputeModuleName(bit), "\" is listed twice"));
      }
      const bool moe = m.experts > 0;
      const char* missing = module == kRecomputeMlaUpProj && m.kv_lora_rank == 0
                                ? "multi-latent attention (model.kv_lora_rank)"
                            : (module == kRecomputeMoe || module == kRecomputeMoeAct) && !moe
                                ? "MoE layers (model.experts)"
                            : module == kRecomputeSharedExperts && m.shared_experts == 0
                                ? "shared experts (model.shared_experts)"
                            : module == kRecomputeMlp && MoeLayerCount(m, 0, m.layers) == m.layers
                                ? "dense MLP layers"
                                : nullptr;
      if (missing) {
        return ErrorAt(file_, item.pos,
                       Cat(where, ": \"", RecomputeModuleName(bit), "\" needs a model with ",
                           missing, "; ", m.name.empty() ? "this one" : m.name, " has none"));
      }
      t.recompute_modules |= module;
    }
    return Status::Ok();
  }

  // tokens | samples | epochs (with dataset_samples): at most one way to give the total work.
  Status CheckWork() {
    const JsonMember* first = nullptr;
    for (const JsonMember& m : training_->members) {
      if (m.key != "tokens" && m.key != "samples" && m.key != "epochs") continue;
      if (first) {
        return ErrorAt(file_, m.value.pos,
                       Cat("training.", m.key,
                           ": give at most one of training.tokens, "
                           "training.samples and training.epochs (training.",
                           first->key, " is given too)"));
      }
      first = &m;
    }
    if (const JsonValue* tokens = training_->Find("tokens");
        tokens && out_.model.kind == ModelKind::kLayerList) {
      return ErrorAt(file_, tokens->pos,
                     "training.tokens: a layer-list model has no tokens; give training.samples "
                     "or training.epochs");
    }
    return CheckEpochs();
  }

  Status CheckEpochs() {
    const JsonValue* epochs = training_->Find("epochs");
    const JsonValue* dataset = training_->Find("dataset_samples");
    if (epochs && !dataset) {
      return ErrorAt(file_, epochs->pos,
                     "training.epochs: needs training.dataset_samples (samples in one epoch)");
    }
    if (dataset && !epochs) {
      return ErrorAt(file_, dataset->pos,
                     "training.dataset_samples: only used with training.epochs");
    }
    return Status::Ok();
  }

  Status ReadCluster() {
    ObjectReader r(*cluster_, "cluster", std::string(file_));
    ReadSectionFields("cluster", &r, &out_);
    if (Status s = FinishRequiring(&r, *cluster_, {"instance"}); !s.ok()) return s;
    if (Status s = ResolveInstance(); !s.ok()) return s;
    if (Status s = ResolveFabric(); !s.ok()) return s;
    const JsonValue* stragglers = cluster_->Find("stragglers");
    return stragglers ? ReadStragglers(*stragglers) : Status::Ok();
  }

  // [{"node": 3, "slowdown": 1.2}, {"gpu": 17, "slowdown": 1.5}]
  Status ReadStragglers(const JsonValue& list) {
    if (!list.is_array()) {
      return ErrorAt(file_, list.pos,
                     Cat("cluster.stragglers: expected an array, got ", list.TypeName()));
    }
    const int nodes = out_.cluster.nodes, gpus = nodes * out_.instance.gpus;
    for (std::size_t i = 0; i < list.items.size(); ++i) {
      const JsonValue& item = list.items[i];
      Straggler st;
      ObjectReader r(item, Cat("cluster.stragglers[", i, "]"), std::string(file_));
      r.Int("node", &st.node, 0, nodes - 1)
          .Int("gpu", &st.gpu, 0, gpus - 1)
          .Double("slowdown", &st.slowdown, 1, kInf);
      if (Status s = FinishRequiring(&r, item, {"slowdown"}); !s.ok()) return s;
      if ((st.node >= 0) == (st.gpu >= 0)) {
        return ErrorAt(file_, item.pos,
                       Cat("cluster.stragglers[", i, "]: give exactly one of node and gpu"));
      }
      out_.cluster.stragglers.push_back(st);
    }
    return Status::Ok();
  }

  Status ResolveInstance() {
    const InstanceType* type = catalog_.Find(out_.cluster.instance);
    if (!type) {
      return ErrorAt(file_, PosOf(*cluster_, "instance"),
                     Cat("cluster.instance: unknown instance type \"", out_.cluster.instance,
                         "\"; known: ", Join(catalog_.Names())));
    }
    out_.instance = *type;
    if (out_.instance.nic_gbps <= 0 && out_.cluster.nodes > 1) {
      return ErrorAt(file_, PosOf(*cluster_, "nodes"),
                     Cat("cluster.nodes: instance \"", type->name,
                         "\" has no network in the catalog: one node only"));
    }
    if (out_.cluster.nics) out_.instance.nics = *out_.cluster.nics;
    return Status::Ok();
  }

  // Fills the fabric fields the file leaves out from the catalog fabric it
  // names (where the catalog has a figure), then checks the pod tier.
  Status ResolveFabric() {
    ClusterConfig& c = out_.cluster;
    if (cluster_->Find("fabric")) {
      const Fabric* f = catalog_.FindFabric(c.fabric);
      if (!f) {
        return ErrorAt(file_, PosOf(*cluster_, "fabric"),
                       Cat("cluster.fabric: unknown fabric \"", c.fabric,
                           "\"; known: ", Join(catalog_.FabricNames())));
      }
      auto fill = [&](const char* key, auto figure, auto* field) {
        if (figure && !cluster_->Find(key)) *field = figure;
      };
      fill("nodes_per_leaf", f->nodes_per_leaf, &c.nodes_per_leaf);
      fill("leaves_per_pod", f->leaves_per_pod, &c.leaves_per_pod);
      fill("oversubscription", f->oversubscription, &c.oversubscription);
      fill("pod_oversubscription", f->pod_oversubscription, &c.pod_oversubscription);
    }
    if (c.pod_oversubscription > 1 && c.leaves_per_pod == 0) {
      return ErrorAt(file_, PosOf(*cluster_, "pod_oversubscription"),
                     "cluster.pod_oversubscription: needs cluster.leaves_per_pod (the leaves "
                     "under one pod's spines)");
    }
    return Status::Ok();
  }

  Status CheckPrecision() {
    const Precision p = out_.training.precision;
    const GpuSpec& gpu = out_.instance.gpu;
    if (gpu.PeakFlops(p)) return Status::Ok();
    const JsonValue* given = training_->Find("precision");
    return ErrorAt(file_, given ? given->pos : training_->pos,
                   Cat("training.precision: ", ToString(p), given ? "" : " (the default)",
                       " is not supported by ", gpu.name, " (no peak figure in the catalog)"));
  }

  // bucket_mb's default follows dp_fusion; cycle_ms applies to Horovod's fusion only.
  Status ReadParallel() {
    ParallelConfig& p = out_.parallel;
    ObjectReader r(*parallel_, "parallel", std::string(file_));
    ReadSectionFields("parallel", &r, &out_);
    if (Status s = r.Finish(); !s.ok()) return s;
    const bool horovod = p.dp_fusion == DpFusion::kHorovod;
    if (!parallel_->Find("bucket_mb")) p.bucket_bytes = (horovod ? 128 : 25) * kBytesPerMiB;
    if (!horovod && parallel_->Find("cycle_ms")) {
      return ErrorAt(file_, PosOf(*parallel_, "cycle_ms"),
                     "parallel.cycle_ms applies only to parallel.dp_fusion = \"horovod\"");
    }
    return Status::Ok();
  }

  Status CheckTensorParallel() {
    const int tp = out_.parallel.tp;
    const ModelSpec& m = out_.model;
    const SourcePos at = PosOf(*parallel_, "tp");
    if (m.kind == ModelKind::kLayerList) {
      if (tp == 1) return Status::Ok();
      return ErrorAt(file_, at,
                     Cat("parallel.tp = ", tp,
                         " needs a transformer model; tensor parallelism "
                         "does not apply to a layer-list model (use tp = 1)"));
    }
    // Experts are split over the TP group as the dense MLP is, unless each is whole on its GPU
    // (parallel.expert_tp 1, CheckExpertTp).
    const bool split_experts = m.experts > 0 && out_.parallel.expert_tp != 1;
    const std::pair<const char*, int> divided[] = {
        {"heads", m.heads},
        {"kv_heads", m.kv_heads},
        {"ffn_hidden", m.ffn_hidden},
        {"expert_ffn_hidden", split_experts ? m.expert_ffn_hidden : 0}};
    for (const auto& [field, value] : divided) {
      if (value % tp != 0) {
        return ErrorAt(file_, at,
                       Cat("parallel.tp = ", tp, " does not divide model.", field, " = ", value));
      }
    }
    return Status::Ok();
  }

  Status CheckPipeline() {
    const int pp = out_.parallel.pp;
    const ModelSpec& m = out_.model;
    const SourcePos at = PosOf(*parallel_, "pp");
    if (m.kind == ModelKind::kLayerList) {
      const size_t layers = m.layer_list.size();
      if (static_cast<size_t>(pp) <= layers) return Status::Ok();
      return ErrorAt(
          file_, at,
          Cat("parallel.pp = ", pp, " exceeds the ", layers, " layers of the layer-list model"));
    }
    // An uneven split is allowed (torchtitan and DeepSpeed take one; the first layers % pp
    // stages hold one layer more, docs/memory.md section 1); every stage needs a layer.
    if (pp <= m.layers) return Status::Ok();
    return ErrorAt(file_, at, Cat("parallel.pp = ", pp, " exceeds model.layers = ", m.layers));
  }

  // dp given: tp * pp * dp must be the cluster's GPU count. Else dp = GPUs / (tp * pp).
  Status CheckGpuCount() {
    ParallelConfig& p = out_.parallel;
    const InstanceType& type = out_.instance;
    const int64_t gpus = static_cast<int64_t>(out_.cluster.nodes) * type.gpus;
    // The strategies that split a data-parallel slot join the product (named only then).
    int64_t tp_pp = static_cast<int64_t>(p.tp) * p.pp;
    std::string split_names, split_values;
    for (const Strategy* st : kStrategies) {
      const int degree = p.*st->degree;
      if (!st->splits_slots || degree == 1) continue;
      tp_pp *= degree;
      split_names += Cat(" * parallel.", st->name);
      split_values += Cat(" * ", degree);
    }
    if (const JsonValue* dp = parallel_->Find("dp")) {
      if (tp_pp * p.dp == gpus) return Status::Ok();
      return ErrorAt(file_, dp->pos,
                     Cat("parallel.tp * parallel.pp", split_names, " * parallel.dp = ", p.tp, " * ",
                         p.pp, split_values, " * ", p.dp, " = ", tp_pp * p.dp,
                         " does not equal the cluster's ", gpus, " GPUs (", out_.cluster.nodes,
                         " x ", type.name, " with ", type.gpus, " GPUs)"));
    }
    if (gpus % tp_pp != 0) {
      return ErrorAt(file_, PosOfFirst(*parallel_, {"pp", "tp"}),
                     Cat("parallel.tp * parallel.pp", split_names, " = ", tp_pp,
                         " does not divide the cluster's ", gpus, " GPUs"));
    }
    p.dp = static_cast<int>(gpus / tp_pp);
    return Status::Ok();
  }

  Status CheckBatch() {
    const TrainingConfig& t = out_.training;
    const int64_t per_step = static_cast<int64_t>(out_.parallel.dp) * t.micro_batch;
    if (t.global_batch % per_step == 0) return Status::Ok();
    return ErrorAt(file_, PosOf(*training_, "global_batch"),
                   Cat("training.global_batch = ", t.global_batch,
                       " is not divisible by parallel.dp * training.micro_batch = ",
                       out_.parallel.dp, " * ", t.micro_batch, " = ", per_step));
  }

  // Megatron's interleaved 1F1B: each GPU holds virtual_stages chunks of about
  // layers / (pp * virtual_stages) layers (the first layers mod (pp * virtual_stages)
  // chunks of the model one more), and microbatches come in groups of pp.
  Status CheckInterleaving() {
    const ParallelConfig& p = out_.parallel;
    for (const char* key : {"split_counts_embedding", "split_counts_loss"}) {
      const JsonValue* flag = parallel_->Find(key);
      if (flag && out_.model.kind == ModelKind::kLayerList) {
        return ErrorAt(file_, flag->pos,
                       Cat("parallel.", key,
                           ": applies to a transformer model (a layer list has no embedding or "
                           "loss layer to count)"));
      }
    }
    const JsonValue* v = parallel_->Find("virtual_stages");
    if (p.schedule != Schedule::kInterleaved) {
      if (!v) return Status::Ok();
      return ErrorAt(file_, v->pos,
                     "parallel.virtual_stages applies only to parallel.schedule = \"interleaved\"");
    }
    const SourcePos at = PosOf(*parallel_, "schedule");
    if (out_.model.kind == ModelKind::kLayerList) {
      return ErrorAt(file_, at, "parallel.schedule: interleaved needs a transformer model");
    }
    if (p.pp < 2 || p.virtual_stages < 2) {
      return ErrorAt(
          file_, v ? v->pos : at,
          Cat("parallel.schedule = \"interleaved\" needs pp >= 2 and virtual_stages >= 2 "
              "(got pp = ",
              p.pp, ", virtual_stages = ", p.virtual_stages, ")"));
    }
    const int64_t chunks = static_cast<int64_t>(p.pp) * p.virtual_stages;
    const int counted = p.split_counts_embedding + p.split_counts_loss;
    if (out_.model.layers + counted < chunks) {
      return ErrorAt(
          file_, v ? v->pos : at,
          Cat("parallel.pp * parallel.virtual_stages = ", p.pp, " * ", p.virtual_stages, " = ",
              chunks, " model chunks, more than model.layers = ", out_.model.layers,
              counted ? Cat(" plus the ", counted, " the split counts for the embedding and loss")
                      : std::string(),
              " (each chunk needs a layer)"));
    }
    if (out_.microbatches_per_pipeline() % p.pp != 0) {
      return ErrorAt(
          file_, PosOf(*training_, "global_batch"),
          Cat("the interleaved schedule needs the microbatches per pipeline (",
              out_.microbatches_per_pipeline(), ") to be a multiple of parallel.pp = ", p.pp));
    }
    return Status::Ok();
  }

  // The parameter server keeps whole replicas (no ZeRO); its servers live on
  // existing nodes.
  Status CheckDataParallel() {
    ParallelConfig& p = out_.parallel;
    const JsonValue* servers = parallel_->Find("parameter_servers");
    if (p.dp_fusion == DpFusion::kHorovod &&
        (p.zero_stage != 0 || p.dp_algorithm == DpAlgorithm::kParameterServer)) {
      return ErrorAt(file_, PosOf(*parallel_, "dp_fusion"),
                     "parallel.dp_fusion = \"horovod\" all-reduces whole gradients: it needs "
                     "zero_stage 0 and a collective dp_algorithm (not parameter_server)");
    }
    if (p.dp_algorithm != DpAlgorithm::kParameterServer) {
      if (!servers) return Status::Ok();
      return ErrorAt(file_, servers->pos,
                     "parallel.parameter_servers applies only to parallel.dp_algorithm = "
                     "\"parameter_server\"");
    }
    if (p.zero_stage != 0) {
      return ErrorAt(file_, PosOf(*parallel_, "zero_stage"),
                     Cat("parallel.zero_stage = ", p.zero_stage,
                         " cannot be combined with parallel.dp_algorithm = \"parameter_server\" "
                         "(servers hold the whole model; use zero_stage 0)"));
    }
    if (p.parameter_servers > out_.cluster.nodes) {
      return ErrorAt(
          file_, servers->pos,
          Cat("parallel.parameter_servers = ", p.parameter_servers, " exceeds the cluster's ",
              out_.cluster.nodes, " nodes (servers run on the nodes' hosts)"));
    }
    if (p.parameter_servers == 0) p.parameter_servers = out_.cluster.nodes;
    return Status::Ok();
  }

  // The implementation names ZeRO-3's; ZeRO-1/2 are Megatron-Core's distributed optimizer.
  Status CheckZeroImpl() {
    const JsonValue* given = parallel_->Find("zero_impl");
    if (given && out_.parallel.zero_stage != 3) {
      return ErrorAt(file_, given->pos,
                     Cat("parallel.zero_impl names the implementation of ZeRO-3: it needs "
                         "parallel.zero_stage 3 (got ",
                         out_.parallel.zero_stage,
                         "; ZeRO-1/2 are modelled as Megatron-Core's distributed optimizer)"));
    }
    return CheckReshard();
  }

  // FSDP's choice whether to free a layer's gathered weights after its forward. Under a pipeline
  // FSDP2 runs as torch.distributed.pipelining and torchtitan run it, which keep them
  // (sim::KeepsStageUnsharded): resharding there is not modelled.
  Status CheckReshard() {
    ParallelConfig& p = out_.parallel;
    const bool pipelined_fsdp2 = PipelinedFsdp2(p);
    const JsonValue* given = parallel_->Find("reshard_after_forward");
    if (!given) {
      p.reshard_after_forward = !pipelined_fsdp2;
      return Status::Ok();
    }
    if (p.reshard_after_forward && !pipelined_fsdp2) return Status::Ok();
    if (p.zero_stage != 3) {
      return ErrorAt(file_, given->pos,
                     Cat("parallel.reshard_after_forward = false needs parallel.zero_stage 3 "
                         "(got ",
                         p.zero_stage, "): it keeps ZeRO-3's gathered weights"));
    }
    if (p.zero_impl != ZeroImpl::kFsdp1 && p.zero_impl != ZeroImpl::kFsdp2) {
      return ErrorAt(file_, given->pos,
                     Cat("parallel.reshard_after_forward = false is PyTorch FSDP's "
                         "(parallel.zero_impl fsdp1 or fsdp2; got ",
                         ToString(p.zero_impl), ")"));
    }
    if (pipelined_fsdp2) {
      return ErrorAt(file_, given->pos,
                     "parallel.reshard_after_forward = true with parallel.zero_impl fsdp2 and "
                     "parallel.pp > 1 is not modelled: FSDP2 under a pipeline is modelled as "
                     "torch.distributed.pipelining and torchtitan run it, keeping each layer "
                     "gathered for the step (leave the field out or set it false)");
    }
    return Status::Ok();
  }

  // A hybrid shard group: a divisor of dp over which ZeRO-2/3 shards (ZeRO-1 has
  // no hybrid form in FSDP, SMP v2 or DeepSpeed; ZeRO 0 shards nothing).
  Status CheckShardGroup() {
    ParallelConfig& p = out_.parallel;
    const JsonValue* given = parallel_->Find("shard_group");
    if (!given) return Status::Ok();
    if (p.zero_stage < 2) {
      return ErrorAt(
          file_, given->pos,
          Cat("parallel.shard_group needs parallel.zero_stage 2 or 3 (got ", p.zero_stage,
              "): it is the group that shards gradients and optimizer "
              "state (stage 2) or also the weights (stage 3)"));
    }
    if (p.shard_group == 1) {
      return ErrorAt(file_, given->pos,
                     "parallel.shard_group = 1 shards nothing: use parallel.zero_stage 0 (plain "
                     "data parallelism), or a group of 2 or more");
    }
    if (p.shard_group > p.dp || p.dp % p.shard_group != 0) {
      return ErrorAt(file_, given->pos,
                     Cat("parallel.shard_group = ", p.shard_group, " must divide parallel.dp = ",
                         p.dp, " (the data-parallel group is split into equal shard groups)"));
    }
    return Status::Ok();
  }

  // Expert tensor parallelism: tp (the default, stored as 0) or 1 (each expert whole, Megatron-
  // Core's recommendation for fine-grained MoE); 1 under tensor parallelism needs sequence
  // parallelism, which gives each TP rank its own tokens to dispatch.
  Status CheckExpertTp() {
    ParallelConfig& p = out_.parallel;
    const JsonValue* given = parallel_->Find("expert_tp");
    if (!given) return Status::Ok();
    if (out_.model.experts == 0) {
      return ErrorAt(file_, given->pos,
                     "parallel.expert_tp: only for a mixture-of-experts model (model.experts)");
    }
    if (p.expert_tp == p.tp && p.tp > 1) {
      p.expert_tp = 0;  // follows tp (the planner may change it)
      return Status::Ok();
    }
    if (p.expert_tp != 1) {
      return ErrorAt(file_, given->pos,
                     Cat("parallel.expert_tp = ", p.expert_tp,
                         " is not modelled: 1 (each expert "
                         "whole on its GPU) or parallel.tp = ",
                         p.tp, " (the default)"));
    }
    if (p.tp > 1 && !out_.training.sequence_parallel) {
      return ErrorAt(file_, given->pos,
                     "parallel.expert_tp = 1 under tensor parallelism needs "
                     "training.sequence_parallel = true (each TP rank dispatches its own share "
                     "of the tokens, as Megatron-Core requires)");
    }
    return Status::Ok();
  }

  // Expert parallelism: a divisor of the experts and of dp (of the stage's GPUs with
  // expert_tp 1); with ZeRO 0 or 1 (Megatron-Core's distributed optimizer), the only
  // combinations modelled.
  Status CheckExperts() {
    if (Status s = CheckExpertTp(); !s.ok()) return s;
    const ParallelConfig& p = out_.parallel;
    const ModelSpec& m = out_.model;
    const JsonValue* imbalance = training_->Find("moe_imbalance");
    if (imbalance && m.experts == 0) {
      return ErrorAt(file_, imbalance->pos,
                     "training.moe_imbalance: only for a mixture-of-experts model (model.experts)");
    }
    const JsonValue* given = parallel_->Find("ep");
    if (!given || p.ep == 1) return Status::Ok();
    if (m.experts == 0) {
      return ErrorAt(
          file_, given->pos,
          Cat("parallel.ep = ", p.ep, " needs a mixture-of-experts model (model.experts); ", m.name,
              " is dense"));
    }
    if (m.experts % p.ep != 0) {
      return ErrorAt(file_, given->pos,
                     Cat("parallel.ep = ", p.ep, " does not divide model.experts = ", m.experts));
    }
    if (out_.expert_tp() == 1 && p.tp > 1) {
      const int stage_gpus = p.tp * out_.replicas();
      if (stage_gpus % p.ep != 0) {
        return ErrorAt(file_, given->pos,
                       Cat("parallel.ep = ", p.ep, " does not divide the ", stage_gpus,
                           " GPUs of a pipeline stage (tp x dp x cp; with expert_tp 1 the "
                           "expert-parallel groups are consecutive GPUs)"));
      }
    } else if (p.dp % p.ep != 0) {
      return ErrorAt(file_, given->pos,
                     Cat("parallel.ep = ", p.ep, " does not divide parallel.dp = ", p.dp,
                         " (expert-parallel groups are made of data-parallel ranks; "
                         "parallel.expert_tp 1 lets them span the tensor-parallel ranks)"));
    }
    const bool fsdp2 = p.zero_stage == 3 && p.zero_impl == ZeroImpl::kFsdp2;
    if ((p.zero_stage >= 2 && !fsdp2) || p.shard_group > 0) {
      return ErrorAt(file_, given->pos,
                     Cat("parallel.ep = ", p.ep, " with parallel.zero_stage ", p.zero_stage,
                         p.shard_group > 0 ? " and parallel.shard_group" : "",
                         " is not modelled: expert parallelism takes zero_stage 0 or 1 "
                         "(Megatron-Core's distributed optimizer) or 3 with parallel.zero_impl "
                         "fsdp2 (torchtitan's FSDP2, the experts sharded over the GPUs that "
                         "hold them)"));
    }
    if (p.dp_algorithm == DpAlgorithm::kParameterServer) {
      return ErrorAt(file_, given->pos,
                     "parallel.ep is not modelled with parameter servers (parallel.dp_algorithm)");
    }
    return Status::Ok();
  }

  // Each strategy (core/strategy.h) given above 1 must fit the rest of the scenario.
  Status CheckStrategies() {
    for (const Strategy* st : kStrategies) {
      const JsonValue* given = parallel_->Find(st->name);
      const int degree = out_.parallel.*st->degree;
      if (!given || degree == 1) continue;
      if (const std::string why = st->unfit(out_); !why.empty()) {
        return ErrorAt(file_, given->pos, Cat("parallel.", st->name, " = ", degree, " ", why));
      }
    }
    return Status::Ok();
  }

  // Activation offload moves whole transformer layers' stored activations.
  // Parameter offload moves ZeRO-3 shards, and with them the optimizer step.
  Status CheckOffload() {
    TrainingConfig& t = out_.training;
    const JsonValue* act = training_->Find("offload_activations");
    if (act && t.offload_activations && out_.model.kind == ModelKind::kLayerList) {
      return ErrorAt(file_, act->pos,
                     "training.offload_activations needs a transformer model (layer-list models "
                     "are not split into offloadable layers)");
    }
    if (!t.offload_params) return Status::Ok();
    const JsonValue* params = training_->Find("offload_params");
    if (out_.parallel.zero_stage != 3) {
      return ErrorAt(file_, params->pos,
                     Cat("training.offload_params needs parallel.zero_stage = 3 (got ",
                         out_.parallel.zero_stage,
                         "): the parameters offloaded are ZeRO-3 / FSDP FULL_SHARD shards"));
    }
    if (const JsonValue* opt = training_->Find("offload_optimizer"); opt && !t.offload_optimizer) {
      return ErrorAt(file_, opt->pos,
                     "training.offload_optimizer = false contradicts training.offload_params = "
                     "true: with the parameters in host memory the optimizer step runs on the "
                     "CPU (leave offload_optimizer out or set it to true)");
    }
    t.offload_optimizer = true;
    return Status::Ok();
  }

  // Transformer Engine overlaps the all-gather and reduce-scatter of sequence
  // parallelism with the GEMMs beside them; there is nothing to overlap
  // without tensor parallelism, and it has no all-reduce mode.
  Status CheckTpOverlap() {
    if (!out_.parallel.tp_overlap) return Status::Ok();
    const SourcePos at = PosOf(*parallel_, "tp_overlap");
    if (out_.parallel.tp == 1) {
      return ErrorAt(file_, at, "parallel.tp_overlap needs parallel.tp > 1");
    }
    if (!out_.training.sequence_parallel) {
      return ErrorAt(file_, at,
                     "parallel.tp_overlap needs training.sequence_parallel = true (the overlapped "
                     "collectives are its all-gathers and reduce-scatters)");
    }
    return Status::Ok();
  }

  // Only ZeRO-1/2 gather the updated weights after the step; ZeRO-3 gathers every layer before
  // each of its passes anyway, and without ZeRO there is nothing to gather.
  Status CheckParamGather() {
    if (!out_.parallel.overlap_param_gather) return Status::Ok();
    const int zero = out_.parallel.zero_stage;
    if (zero != 1 && zero != 2) {
      return ErrorAt(file_, PosOf(*parallel_, "overlap_param_gather"),
                     "parallel.overlap_param_gather needs parallel.zero_stage 1 or 2 (got " +
                         std::to_string(zero) +
                         "): it overlaps the gather of the weights the sharded optimizer "
                         "updated");
    }
    return Status::Ok();
  }

  // Not given: the model's default (the zoo's per preset, true for explicit dimensions).
  Status CheckFlashAttention() {
    const ModelSpec& m = out_.model;
    const JsonValue* given = training_->Find("flash_attention");
    if (!given) {
      out_.training.flash_attention =
          m.kind == ModelKind::kTransformer && m.flash_attention_default;
      return Status::Ok();
    }
    if (out_.training.flash_attention && m.kind == ModelKind::kLayerList) {
      return ErrorAt(file_, given->pos,
                     "training.flash_attention needs a transformer model (a layer-list model "
                     "has no attention)");
    }
    return Status::Ok();
  }

  // The planner's section (core/search.cc) and the sweep grid (core/sweep_grid.cc).
  Status ReadPlanning() {
    if (search_) {
      result_.has_search = true;
      if (Status s = ReadSearchSection(*search_, file_, catalog_, &result_.search); !s.ok()) {
        return s;
      }
    }
    return ReadSweepSection(root_, file_, &result_.sweep);
  }

  const JsonValue& root_;
  std::string_view file_;
  const Catalog& catalog_;
  JsonValue no_parallel_;  // stands for an absent "parallel" section
  const JsonValue* model_ = nullptr;
  const JsonValue* training_ = nullptr;
  const JsonValue* cluster_ = nullptr;
  const JsonValue* parallel_ = nullptr;
  const JsonValue* search_ = nullptr;
  PlanningScenario result_;
  Scenario& out_ = result_.scenario;
};

// A relative profile path is relative to the scenario file's folder.
void ResolveProfilePath(const std::string& scenario_path, std::string* profile) {
  std::filesystem::path p(*profile);
  if (profile->empty() || p.is_absolute()) return;
  std::filesystem::path dir = std::filesystem::path(scenario_path).parent_path();
  *profile = (dir / p).lexically_normal().string();
}

// PlanningScenario::document: nlohmann's reading of a text the parser accepted (null in the
// unlikely case that nlohmann refuses what it took).
nlohmann::json Document(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return doc.is_discarded() ? nlohmann::json() : doc;
}

}  // namespace

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

Status ErrorAt(std::string_view file, SourcePos pos, const std::string& message) {
  return Status::InvalidInput(Located(file, pos, message));
}

Expected<PlanningScenario> ParsePlanningRoot(const JsonValue& root, std::string_view file,
                                             const Catalog& catalog) {
  return ScenarioParser(root, file, catalog).Run();
}

Expected<PlanningScenario> ParsePlanningScenario(std::string_view text, std::string_view filename,
                                                 const Catalog& catalog) {
  Expected<JsonValue> root = ParseJson(text, filename);
  if (!root.ok()) return root.status();
  Expected<PlanningScenario> s = ParsePlanningRoot(*root, filename, catalog);
  if (s.ok()) s->document = Document(text);
  return s;
}

Expected<PlanningScenario> LoadPlanningScenario(const std::string& path, const Catalog& catalog,
                                                const std::string& profile_path) {
  Expected<std::string> text = ReadJsonText(path);
  if (!text.ok()) return text.status();
  return LoadPlanningText(*text, path, catalog, profile_path);
}

Expected<PlanningScenario> LoadPlanningText(std::string_view text, const std::string& path,
                                            const Catalog& catalog,
                                            const std::string& profile_path) {
  Expected<JsonValue> root = ParseJson(text, path);
  if (!root.ok()) return root.status();
  Expected<PlanningScenario> s = LoadPlanningRoot(*root, path, catalog, profile_path);
  if (s.ok()) s->document = Document(text);
  return s;
}

// The Scenario alone: the planning sections are checked, and no document is kept.
Expected<Scenario> ParseScenario(std::string_view text, std::string_view filename,
                                 const Catalog& catalog) {
  Expected<JsonValue> root = ParseJson(text, filename);
  if (!root.ok()) return root.status();
  Expected<PlanningScenario> s = ParsePlanningRoot(*root, filename, catalog);
  if (!s.ok()) return s.status();
  return std::move(s->scenario);
}

Expected<Scenario> LoadScenarioFile(const std::string& path, const Catalog& catalog,
                                    const std::string& profile_path) {
  Expected<JsonValue> root = ParseJsonFile(path);
  if (!root.ok()) return root.status();
  Expected<PlanningScenario> s = LoadPlanningRoot(*root, path, catalog, profile_path);
  if (!s.ok()) return s.status();
  return std::move(s->scenario);
}

Expected<PlanningScenario> LoadPlanningRoot(const JsonValue& root, const std::string& path,
                                            const Catalog& catalog,
                                            const std::string& profile_path) {
  std::string profile_file = profile_path;
  if (profile_file.empty()) {
    const JsonValue* cluster = root.Find("cluster");
    const JsonValue* named = cluster ? cluster->Find("profile") : nullptr;
    if (named && named->is_string()) {
      profile_file = named->text;
      ResolveProfilePath(path, &profile_file);
    }
  }
  std::shared_ptr<const HardwareProfile> profile;
  std::optional<Catalog> with_profile;  // the catalog plus the profile's own entry, if any
  if (!profile_file.empty()) {
    Expected<HardwareProfile> loaded = LoadHardwareProfile(profile_file);
    if (!loaded.ok()) return loaded.status();
    if (!loaded->catalog_json.empty()) {
      with_profile = catalog;
      Status s = with_profile->AddFromString(loaded->catalog_json, profile_file + " (catalog)");
      if (!s.ok()) return s;
    }
    profile = std::make_shared<const HardwareProfile>(std::move(*loaded));
  }
  Expected<PlanningScenario> parsed =
      ParsePlanningRoot(root, path, with_profile ? *with_profile : catalog);
  if (!parsed.ok()) return parsed;
  Scenario& scenario = parsed->scenario;
  ResolveProfilePath(path, &scenario.cluster.profile);
  if (profile) {
    scenario.cluster.profile = profile_file;
    if (Status s = AttachProfile(profile, profile_file, &scenario); !s.ok()) return s;
  }
  return parsed;
}

Status AttachProfile(std::shared_ptr<const HardwareProfile> profile, const std::string& file,
                     Scenario* s) {
  const HardwareProfile& p = *profile;
  const std::string& gpu = s->instance.gpu.name;
  if (p.gpu.empty()) {
    return Status::InvalidInput(file + ": the profile's device (" + p.provenance.device +
                                ") is not a catalog GPU; run trainsim-calibrate with --gpu NAME "
                                "to say which one it is");
  }
  if (p.gpu != gpu) {
    return Status::InvalidInput(file + ": the profile measured " + p.gpu + " (" +
                                p.provenance.device + "), but instance " + s->instance.name +
                                " has " + gpu + ": a profile applies only to the GPU it measured");
  }
  if (p.host_to_device_GBps && p.device_to_host_GBps) {
    s->instance.pcie_GBps_per_dir = std::min(*p.host_to_device_GBps, *p.device_to_host_GBps);
  }
  const CollectiveFit* all_reduce = p.FindCollective("all_reduce", s->instance.gpus, 1);
  if (all_reduce && s->instance.gpus > 1 && s->instance.topology == IntraTopology::kNvswitch &&
      s->instance.nvlink_GBps_per_gpu_per_dir) {
    const double n = s->instance.gpus, algbw = all_reduce->ranges.back().algbw_GBps;
    const std::string measured = "measured: all_reduce bus bandwidth over " +
                                 std::to_string(s->instance.gpus) + " GPUs in " + file;
    const double line = *s->instance.nvlink_GBps_per_gpu_per_dir;
    if (s->instance.nvlink_sharp) {
      // NCCL runs it as NVLS there: S (n + 1) / n through each GPU's link (model.md section 3).
      s->instance.gpu.nvls_efficiency = std::min(1.0, algbw * (n + 1) / n / line);
      s->instance.gpu.nvls_efficiency_provenance = measured + " (NVLink SHARP)";
    } else {
      s->instance.gpu.nvlink_efficiency = std::min(1.0, algbw * 2 * (n - 1) / n / line);
      s->instance.gpu.nvlink_efficiency_provenance = measured;
    }
  }
  if (p.network) {
    if (p.network->instance != s->instance.name) {
      return Status::InvalidInput(file + ": the profile's network was refitted on " +
                                  p.network->instance + ", but the scenario's instance is " +
                                  s->instance.name +
                                  ": a network fit applies to its instance type");
    }
    s->instance.network_efficiency = p.network->efficiency;
    s->instance.network_efficiency_provenance =
        "refitted: " + p.network->source + " (" + file + ")";
    s->instance.protocol_latency_scale = p.network->latency_scale;
  }
  s->profile = std::move(profile);
  return Status::Ok();
}

double Scenario::Slowdown(int rank) const {
  double factor = 1.0;
  for (const Straggler& s : cluster.stragglers) {
    const bool covers = s.gpu == rank || (s.node >= 0 && rank / instance.gpus == s.node);
    if (covers) factor = std::max(factor, s.slowdown);
  }
  return factor;
}

const char* ToString(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp8:
      return "fp8";
  }
  return "?";
}

const char* ToString(Schedule s) {
  switch (s) {
    case Schedule::kGpipe:
      return "gpipe";
    case Schedule::k1F1B:
      return "1f1b";
    case Schedule::kInterleaved:
      return "interleaved";
  }
  return "?";
}

const char* RecomputeModuleName(int bit) {
  static constexpr const char* kNames[kRecomputeModuleCount] = {
      "core_attn", "layernorm", "mla_up_proj", "mlp", "moe", "moe_act", "shared_experts"};
  return bit >= 0 && bit < kRecomputeModuleCount ? kNames[bit] : "?";
}

std::vector<std::string> RecomputeModuleNames(unsigned modules) {
  std::vector<std::string> names;
  for (int bit = 0; bit < kRecomputeModuleCount; ++bit) {
    if (modules & (1u << bit)) names.push_back(RecomputeModuleName(bit));
  }
  return names;
}

const char* ToString(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
    case Recompute::kSelectiveOp:
      return "selective_op";
    case Recompute::kSaveDotExceptMlp:
      return "save_dot_except_mlp";
    case Recompute::kSaveDotExceptMlpWi:
      return "save_dot_except_mlpwi";
  }
  return "?";
}

const char* ToString(DpAlgorithm a) {
  switch (a) {
    case DpAlgorithm::kRing:
      return "ring";
    case DpAlgorithm::kTree:
      return "tree";
    case DpAlgorithm::kAuto:
      return "auto";
    case DpAlgorithm::kHierarchical:
      return "hierarchical";
    case DpAlgorithm::kParameterServer:
      return "parameter_server";
  }
  return "?";
}

const char* ToString(ZeroImpl z) {
  switch (z) {
    case ZeroImpl::kFsdp1:
      return "fsdp1";
    case ZeroImpl::kFsdp2:
      return "fsdp2";
    case ZeroImpl::kDeepSpeed:
      return "deepspeed";
    case ZeroImpl::kXla:
      return "xla";
  }
  return "?";
}

const char* ToString(DpFusion f) {
  switch (f) {
    case DpFusion::kDdp:
      return "ddp";
    case DpFusion::kHorovod:
      return "horovod";
  }
  return "?";
}

const char* ToString(Pricing p) {
  switch (p) {
    case Pricing::kOnDemand:
      return "on-demand";
    case Pricing::kSpot:
      return "spot";
    case Pricing::kSagemaker:
      return "sagemaker";
    case Pricing::kSagemakerSpot:
      return "sagemaker-spot";
    case Pricing::kCapacityBlock:
      return "capacity-block";
    case Pricing::kTrainingPlan:
      return "training-plan";
    case Pricing::kSavingsPlan1y:
      return "savings-plan-1y";
    case Pricing::kSavingsPlan3y:
      return "savings-plan-3y";
    case Pricing::kSpotFallback:
      return "spot-fallback";
    case Pricing::kSpotElastic:
      return "spot-elastic";
  }
  return "?";
}

const char* ToString(OptimizerState o) {
  switch (o) {
    case OptimizerState::kFp32:
      return "fp32";
    case OptimizerState::kBf16Moments:
      return "bf16_moments";
    case OptimizerState::kBf16:
      return "bf16";
  }
  return "?";
}

const char* ToString(Optimizer o) {
  switch (o) {
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kAdam:
      return "adam";
  }
  return "?";
}

}  // namespace trainsim
