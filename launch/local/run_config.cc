#include "launch/local/run_config.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/json_doc.h"

namespace trainsim::local {
namespace {

constexpr int kMaxInt = std::numeric_limits<int>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();
const char kOverrides[] = "command line";

// Reads the fields present in `value` over *c (absent ones stay as they are).
Status ReadFields(ObjectReader& r, RunConfig* c) {
  r.Int("layers", &c->layers, 1, kMaxInt)
      .Int("hidden", &c->hidden, 1, kMaxInt)
      .Int("heads", &c->heads, 1, kMaxInt)
      .Int("ffn_hidden", &c->ffn_hidden, 1, kMaxInt)
      .Int("seq_len", &c->seq_len, 1, kMaxInt)
      .Int("vocab", &c->vocab, 2, kMaxInt)
      .Int("micro_batch", &c->micro_batch, 1, kMaxInt)
      .Int("global_batch", &c->global_batch, 1, int64_t{kMaxInt})
      .Int("pp", &c->pp, 1, kMaxInt)
      .Int("dp", &c->dp, 1, kMaxInt)
      .Int("tp", &c->tp, 1, kMaxInt)
      .Double("bucket_mb", &c->bucket_mb, 0, kInf)
      .Int("steps", &c->steps, 1, kMaxInt)
      .Double("lr", &c->lr, 0, kInf)
      .Int("seed", &c->seed, 0, std::numeric_limits<int64_t>::max())
      .Int("warmup_steps", &c->warmup_steps, 0, kMaxInt)
      .Int("checkpoint_every", &c->checkpoint_every, 0, kMaxInt)
      .String("checkpoint_dir", &c->checkpoint_dir)
      .String("trace_file", &c->trace_file)
      .Bool("resume", &c->resume);
  int schedule = static_cast<int>(c->schedule), backend = static_cast<int>(c->backend);
  r.Enum("schedule", {"1f1b", "gpipe"}, &schedule).Enum("backend", {"cpu", "cuda"}, &backend);
  c->schedule = static_cast<Schedule>(schedule);
  c->backend = static_cast<Backend>(backend);
  return r.Finish();
}

// The required fields, and the constraints between fields.
Status CheckConfig(const RunConfig& c, const std::string& file) {
  const std::pair<const char*, int64_t> required[] = {{"layers", c.layers},
                                                      {"hidden", c.hidden},
                                                      {"heads", c.heads},
                                                      {"ffn_hidden", c.ffn_hidden},
                                                      {"seq_len", c.seq_len},
                                                      {"vocab", c.vocab},
                                                      {"micro_batch", c.micro_batch},
                                                      {"global_batch", c.global_batch},
                                                      {"steps", c.steps}};
  for (const auto& [name, value] : required) {
    if (value == 0) return Status::InvalidInput(file + ": missing required field " + name);
  }
  auto error = [&](const std::string& message) {
    return Status::InvalidInput(file + ": " + message);
  };
  if (c.tp != 1) {
    return error("tp: the local runner has no tensor parallelism; got " + std::to_string(c.tp) +
                 " (map the plan's tp onto dp or pp ranks)");
  }
  if (c.hidden % c.heads != 0) {
    return error("heads: " + std::to_string(c.heads) +
                 " does not divide hidden = " + std::to_string(c.hidden));
  }
  if (c.pp > c.layers) {
    return error("pp: " + std::to_string(c.pp) + " stages for " + std::to_string(c.layers) +
                 " layers; every stage needs a layer");
  }
  if (c.lr <= 0) return error("lr: expected a number > 0, got 0");
  if (c.bucket_mb <= 0) return error("bucket_mb: expected a number > 0, got 0");
  if (!c.trace_file.empty() && c.backend != Backend::kCpu) {
    return error(
        "trace_file: the trace times the cpu backend's kernels as they run; the cuda "
        "backend queues them (profile it with nsys or torch.profiler instead)");
  }
  if ((c.checkpoint_every > 0 || c.resume) && c.checkpoint_dir.empty()) {
    return error(std::string("checkpoint_dir: required with ") +
                 (c.resume ? "resume" : "checkpoint_every > 0"));
  }
  return Status::Ok();
}

// "command line:1:1: steps: msg" -> "--steps: msg".
Status OverrideError(const Status& s) {
  const std::string prefix = std::string(kOverrides) + ":1:1: ";
  const std::string& m = s.message();
  if (m.rfind(prefix, 0) != 0) return s;
  const std::string rest = m.substr(prefix.size()), unknown = "unknown field ";
  if (rest.rfind(unknown, 0) == 0) {
    return Status::InvalidInput("unknown option --" + rest.substr(unknown.size()));
  }
  return Status::InvalidInput("--" + rest);
}

// Reads `text` over `c`: the fields it has replace those of c.
Expected<RunConfig> ReadConfigText(const std::string& text, const std::string& file, RunConfig c) {
  Expected<JsonValue> doc = ParseJson(text, file);
  if (!doc.ok()) return doc.status();
  ObjectReader reader(*doc, "", file);
  if (Status s = ReadFields(reader, &c); !s.ok()) return s;
  return c;
}

Expected<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot read the run config");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Expected<RunConfig> ParseRunConfig(const std::string& text, const std::string& file) {
  Expected<RunConfig> c = ReadConfigText(text, file, RunConfig());
  if (!c.ok()) return c;
  if (Status s = CheckConfig(*c, file); !s.ok()) return s;
  return c;
}

Expected<RunConfig> LoadRunConfig(const std::string& path) {
  Expected<std::string> text = ReadText(path);
  if (!text.ok()) return text.status();
  return ParseRunConfig(*text, path);
}

Expected<RunConfig> RunConfigFromArgs(
    const std::string& file, const std::vector<std::pair<std::string, std::string>>& sets) {
  RunConfig c;
  if (!file.empty()) {
    Expected<std::string> text = ReadText(file);
    if (!text.ok()) return text.status();
    Expected<RunConfig> read = ReadConfigText(*text, file, c);
    if (!read.ok()) return read;
    c = *read;
  }
  JsonValue overrides;
  overrides.type = JsonValue::Type::kObject;
  for (const auto& [key, word] : sets) {
    Expected<JsonValue> value = ParseJson(word, kOverrides);
    JsonValue text;
    text.type = JsonValue::Type::kString;
    text.text = word;
    overrides.members.push_back(JsonMember{key, SourcePos{}, value.ok() ? *value : text});
  }
  ObjectReader reader(overrides, "", kOverrides);
  if (Status s = ReadFields(reader, &c); !s.ok()) return OverrideError(s);
  if (Status s = CheckConfig(c, file.empty() ? kOverrides : file); !s.ok()) return s;
  return c;
}

Status ResolveLayout(RunConfig* c, int world) {
  const std::string w = std::to_string(world);
  if (world % c->pp != 0) {
    return Status::InvalidInput("pp = " + std::to_string(c->pp) + " does not divide the " + w +
                                " ranks");
  }
  const int dp = world / c->pp;
  if (c->dp != 0 && c->dp != dp) {
    return Status::InvalidInput("dp = " + std::to_string(c->dp) + " but " + w + " ranks / pp " +
                                std::to_string(c->pp) + " = " + std::to_string(dp) +
                                " replicas (start pp x dp ranks)");
  }
  c->dp = dp;
  if (c->global_batch % (int64_t{dp} * c->micro_batch) != 0) {
    return Status::InvalidInput("global_batch = " + std::to_string(c->global_batch) +
                                " is not a multiple of dp " + std::to_string(dp) +
                                " x micro_batch " + std::to_string(c->micro_batch));
  }
  return Status::Ok();
}

std::vector<std::pair<std::string, std::string>> TrajectoryFields(const RunConfig& c) {
  auto number = [](double x) {
    std::ostringstream os;
    os.precision(17);
    os << x;
    return os.str();
  };
  return {{"layers", std::to_string(c.layers)},
          {"hidden", std::to_string(c.hidden)},
          {"heads", std::to_string(c.heads)},
          {"ffn_hidden", std::to_string(c.ffn_hidden)},
          {"seq_len", std::to_string(c.seq_len)},
          {"vocab", std::to_string(c.vocab)},
          {"micro_batch", std::to_string(c.micro_batch)},
          {"global_batch", std::to_string(c.global_batch)},
          {"pp", std::to_string(c.pp)},
          {"dp", std::to_string(c.dp)},
          {"schedule", ToString(c.schedule)},
          {"bucket_mb", number(c.bucket_mb)},
          {"lr", number(c.lr)},
          {"seed", std::to_string(c.seed)},
          {"backend", ToString(c.backend)}};
}

std::string RunConfigToJson(const RunConfig& c) {
  nlohmann::ordered_json j = {{"layers", c.layers},
                              {"hidden", c.hidden},
                              {"heads", c.heads},
                              {"ffn_hidden", c.ffn_hidden},
                              {"seq_len", c.seq_len},
                              {"vocab", c.vocab},
                              {"micro_batch", c.micro_batch},
                              {"global_batch", c.global_batch},
                              {"pp", c.pp}};
  if (c.dp > 0) j["dp"] = c.dp;
  j["schedule"] = ToString(c.schedule);
  j["bucket_mb"] = c.bucket_mb;
  j["steps"] = c.steps;
  j["warmup_steps"] = c.warmup_steps;
  j["lr"] = c.lr;
  j["seed"] = c.seed;
  j["checkpoint_every"] = c.checkpoint_every;
  if (!c.checkpoint_dir.empty()) j["checkpoint_dir"] = c.checkpoint_dir;
  if (c.resume) j["resume"] = true;
  j["backend"] = ToString(c.backend);
  if (!c.trace_file.empty()) j["trace_file"] = c.trace_file;
  return j.dump(2) + "\n";
}

std::string ToString(Schedule s) { return s == Schedule::k1F1B ? "1f1b" : "gpipe"; }
std::string ToString(Backend b) { return b == Backend::kCpu ? "cpu" : "cuda"; }

}  // namespace trainsim::local
