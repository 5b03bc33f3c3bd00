#include "fuzz/fuzz_util.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "tests/test_util.h"

namespace trainsim::fuzz {
namespace {

using ojson = nlohmann::ordered_json;

// Reads the digits at `*i` of `s` as a positive int; false when there are none (or too many).
bool Digits(std::string_view s, size_t* i, int* out) {
  const size_t start = *i;
  int64_t v = 0;
  while (*i < s.size() && std::isdigit(static_cast<unsigned char>(s[*i])) && *i - start < 10) {
    v = v * 10 + (s[*i] - '0');
    ++*i;
  }
  if (*i == start || v < 1 || v > INT32_MAX) return false;
  *out = static_cast<int>(v);
  return true;
}

void WriteString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      *out += "\\u00";
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

void Write(const JsonValue& v, std::string* out) {
  switch (v.type) {
    case JsonValue::Type::kNull:
      *out += "null";
      return;
    case JsonValue::Type::kBool:
      *out += v.boolean ? "true" : "false";
      return;
    case JsonValue::Type::kNumber:
      *out += v.text;
      return;
    case JsonValue::Type::kString:
      WriteString(v.text, out);
      return;
    case JsonValue::Type::kArray:
      out->push_back('[');
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i) out->push_back(',');
        Write(v.items[i], out);
      }
      out->push_back(']');
      return;
    case JsonValue::Type::kObject:
      out->push_back('{');
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i) out->push_back(',');
        WriteString(v.members[i].key, out);
        out->push_back(':');
        Write(v.members[i].value, out);
      }
      out->push_back('}');
      return;
  }
}

template <typename T>
ojson Opt(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

template <typename E>
ojson Enums(const std::vector<E>& v) {
  ojson out = ojson::array();
  for (E e : v) out.push_back(static_cast<int>(e));
  return out;
}

ojson ModelDigest(const ModelSpec& m) {
  ojson layers = ojson::array();
  for (const LayerSpec& l : m.layer_list) {
    layers.push_back({l.name, l.forward_flops, l.params, l.activation_bytes, l.input_bytes,
                      static_cast<int>(l.epilogue)});
  }
  return {{"name", m.name},
          {"kind", static_cast<int>(m.kind)},
          {"dims", {m.layers, m.hidden, m.heads, m.kv_heads, m.ffn_hidden, m.seq_len, m.vocab}},
          {"mlp", static_cast<int>(m.mlp)},
          {"flags", {m.bias, m.tied_embeddings, m.learned_positions, m.flash_attention_default}},
          {"token_types", m.token_types},
          {"moe",
           {m.experts, m.experts_per_token, m.expert_ffn_hidden, m.shared_experts, m.moe_every,
            m.dense_layers, m.router_bias, m.capacity_factor}},
          {"mla",
           {m.q_lora_rank, m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim}},
          {"layer_list", layers},
          {"sample_elems", m.sample_elems},
          {"published_params", m.published_params},
          {"source", m.source}};
}

ojson TrainingDigest(const TrainingConfig& t) {
  return {
      {"batch", {t.global_batch, t.micro_batch}},
      {"enums",
       {static_cast<int>(t.precision), static_cast<int>(t.optimizer), static_cast<int>(t.recompute),
        static_cast<int>(t.attention_kernel), static_cast<int>(t.grad_reduce_dtype),
        static_cast<int>(t.memory_format), static_cast<int>(t.fp8_scaling)}},
      {"recompute_every", t.recompute_every},
      {"flags",
       {t.sequence_parallel, t.dropout, t.flash_attention, t.offload_activations,
        t.offload_optimizer, t.offload_params}},
      {"work", {t.tokens, t.samples, t.epochs, t.dataset_samples}},
      {"input", {t.input_samples_per_s_per_node, t.input_prefetch_microbatches}},
      {"moe_imbalance", t.moe_imbalance}};
}

ojson ClusterDigest(const ClusterConfig& c) {
  ojson stragglers = ojson::array();
  for (const Straggler& s : c.stragglers) stragglers.push_back({s.node, s.gpu, s.slowdown});
  return {
      {"instance", c.instance},
      {"nodes", c.nodes},
      {"pricing", static_cast<int>(c.pricing)},
      {"fabric",
       {c.oversubscription, c.nodes_per_leaf, c.leaves_per_pod, c.pod_oversubscription, c.fabric}},
      {"nics", Opt(c.nics)},
      {"profile", c.profile},
      {"stragglers", stragglers}};
}

ojson ParallelDigest(const ParallelConfig& p) {
  return {{"degrees", {p.tp, p.pp, p.dp, p.zero_stage, p.shard_group, p.ep, p.expert_tp, p.cp}},
          {"schedule", {static_cast<int>(p.schedule), p.virtual_stages}},
          {"dp",
           {static_cast<int>(p.dp_algorithm), p.bucket_bytes, static_cast<int>(p.dp_fusion),
            p.cycle_s, p.overlap_dp, p.parameter_servers}},
          {"zero3", {static_cast<int>(p.zero_impl), p.reshard_after_forward}},
          {"overlap_param_gather", p.overlap_param_gather},
          {"tp_overlap", p.tp_overlap},
          {"pp_scatter_gather", p.pp_scatter_gather}};
}

ojson InstanceDigest(const InstanceType& t) {
  return {{"name", t.name},
          {"gpu", t.gpu.name},
          {"gpus", t.gpus},
          {"topology", static_cast<int>(t.topology)},
          {"nics", {t.nics, t.nic_gbps, t.efa, t.infiniband}},
          {"network_efficiency", Opt(t.network_efficiency)},
          {"pcie_GBps_per_dir", t.pcie_GBps_per_dir}};
}

ojson SearchDigest(const SearchConfig& s) {
  return {{"instances", s.instances},
          {"nodes", {s.min_nodes, s.max_nodes}},
          {"pricing", Enums(s.pricing)},
          {"spot_allowed", s.spot_allowed},
          {"degrees",
           {s.tp, s.pp, s.max_pp, s.micro_batch, s.zero_stages, s.shard_groups, s.ep, s.strategies,
            s.virtual_stages}},
          {"recompute", Enums(s.recompute)},
          {"schedules", Enums(s.schedules)},
          {"constraints", {Opt(s.budget_usd), Opt(s.deadline_hours)}},
          {"objective", {static_cast<int>(s.objective), s.time_weight}},
          {"confirm_top", s.confirm_top},
          {"prefer_validated", s.prefer_validated},
          {"job",
           {Opt(s.dataset_bytes), Opt(s.storage_GBps), Opt(s.checkpoint_bytes),
            Opt(s.checkpoint_interval_s), Opt(s.provisioning_s), Opt(s.restart_s),
            Opt(s.spot_interruptions_per_month), s.checkpoint_on_notice}},
          {"trials", {s.trials, s.seed}}};
}

}  // namespace

void Check(bool ok, std::string_view what, std::string_view detail) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %.*s\n", static_cast<int>(what.size()), what.data());
  if (!detail.empty()) {
    std::fprintf(stderr, "  %.*s\n", static_cast<int>(detail.size()), detail.data());
  }
  __builtin_trap();
}

bool StartsWithLineColumn(std::string_view message, std::string_view file, int* line, int* column) {
  if (message.substr(0, file.size()) != file) return false;
  size_t i = file.size();
  if (i >= message.size() || message[i] != ':') return false;
  ++i;
  if (!Digits(message, &i, line)) return false;
  if (i >= message.size() || message[i] != ':') return false;
  ++i;
  if (!Digits(message, &i, column)) return false;
  return message.substr(i, 2) == ": ";
}

bool StartsWithLine(std::string_view message, std::string_view file, int* line) {
  if (message.substr(0, file.size()) != file) return false;
  size_t i = file.size();
  if (i >= message.size() || message[i] != ':') return false;
  ++i;
  if (!Digits(message, &i, line)) return false;
  if (message.substr(i, 2) == ": ") return true;
  int column = 0;
  if (i >= message.size() || message[i] != ':') return false;
  ++i;
  if (!Digits(message, &i, &column)) return false;
  return message.substr(i, 2) == ": ";
}

bool StartsWithFile(std::string_view message, std::string_view file) {
  return message.substr(0, file.size()) == file && message.substr(file.size(), 2) == ": ";
}

int LineCount(std::string_view text) {
  int lines = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && i + 1 < text.size()) ++lines;
  }
  return lines;
}

bool PositionExists(std::string_view text, int line, int column) {
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return false;
    start = nl + 1;
  }
  const size_t nl = text.find('\n', start);
  const size_t length = (nl == std::string_view::npos ? text.size() : nl) - start;
  return column >= 1 && static_cast<size_t>(column) <= length + 1;
}

void CheckLocated(std::string_view message, std::string_view file, std::string_view text) {
  int line = 0, column = 0;
  Check(StartsWithLineColumn(message, file, &line, &column),
        "error without FILE:LINE:COL: ", message);
  Check(PositionExists(text, line, column), "error at a position the input does not have", message);
}

void CheckLocatedOrWholeFile(std::string_view message, std::string_view file,
                             std::string_view text) {
  if (StartsWithFile(message, file)) return;
  CheckLocated(message, file, text);
}

bool IsUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int n = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // the sequence is cut short
    for (int k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

std::string WriteJson(const JsonValue& v) {
  std::string out;
  Write(v, &out);
  return out;
}

nlohmann::ordered_json ScenarioDigest(const Scenario& s) {
  return {{"version", s.version},
          {"name", s.name},
          {"model", ModelDigest(s.model)},
          {"training", TrainingDigest(s.training)},
          {"cluster", ClusterDigest(s.cluster)},
          {"parallel", ParallelDigest(s.parallel)},
          {"instance", InstanceDigest(s.instance)}};
}

nlohmann::ordered_json PlanningScenarioDigest(const PlanningScenario& s) {
  ojson sweep = ojson::array();
  for (const SweepAxis& a : s.sweep) {
    ojson values = ojson::array();
    for (const nlohmann::json& v : a.values) values.push_back(v.dump());
    sweep.push_back({a.field, values});
  }
  return {{"scenario", ScenarioDigest(s.scenario)},
          {"has_search", s.has_search},
          {"search", SearchDigest(s.search)},
          {"sweep", sweep}};
}

const Catalog& BuiltinCatalog() { return test::BuiltinCatalog(); }

std::optional<observe::LogFormat> LogFormatOfByte(uint8_t b) {
  static constexpr observe::LogFormat kFormats[] = {
      observe::LogFormat::kMegatron, observe::LogFormat::kTrainsimLocal,
      observe::LogFormat::kDeepSpeed, observe::LogFormat::kTorchtitan,
      observe::LogFormat::kHfTrainer};
  const int k = b % 6;
  if (k == 0) return std::nullopt;
  return kFormats[k - 1];
}

}  // namespace trainsim::fuzz
