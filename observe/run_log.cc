#include "observe/run_log.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace trainsim::observe {
namespace {

constexpr char kElapsedKey[] = "elapsed time per iteration (ms)";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<double> Number(std::string_view s) {
  const std::string text(Trim(s));
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> Integer(std::string_view s) {
  const std::optional<double> v = Number(s);
  if (!v || *v != std::floor(*v) || std::fabs(*v) > 9e15) return std::nullopt;
  return static_cast<int64_t>(*v);
}

// Megatron-LM's step line: "iteration <i>/<n> |" somewhere in the line (after a
// timestamp, "==> ", a rank prefix). Returns the iteration, or nullopt when the
// line is not one ("(after 1 iterations)", "validation loss at iteration 100 |").
std::optional<int64_t> MegatronIteration(std::string_view line, size_t* fields_at) {
  for (size_t at = line.find("iteration"); at != std::string_view::npos;
       at = line.find("iteration", at + 1)) {
    size_t i = at + 9;
    if (i >= line.size() || line[i] != ' ') continue;
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t digits = i;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i == digits || i >= line.size() || line[i] != '/') continue;
    const size_t bar = line.find('|', i);
    if (bar == std::string_view::npos) continue;
    *fields_at = bar + 1;
    return std::strtoll(std::string(line.substr(digits, i - digits)).c_str(), nullptr, 10);
  }
  return std::nullopt;
}

std::string Where(const std::string& file, int line) {
  return file + ":" + std::to_string(line) + ": ";
}

// One " key: value |" field of the lines Megatron-LM and DeepSpeed print that way (Megatron's
// iteration line and memory report, DeepSpeed's timers); `colon` false for a field without one
// (`key` then holds it all).
struct Field {
  std::string_view key, value;
  bool colon = true;
};

// The non-empty fields of `rest`, split at '|', each at its first ':'.
std::vector<Field> BarFields(std::string_view rest) {
  std::vector<Field> fields;
  while (!rest.empty()) {
    const size_t bar = rest.find('|');
    const std::string_view field = Trim(rest.substr(0, bar));
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    if (field.empty()) continue;
    const size_t colon = field.find(':');
    if (colon == std::string_view::npos) {
      fields.push_back({field, {}, false});
    } else {
      fields.push_back({Trim(field.substr(0, colon)), Trim(field.substr(colon + 1))});
    }
  }
  return fields;
}

// The " key: value |" fields of a Megatron-LM step line.
Expected<StepSample> ParseMegatronLine(std::string_view line, int64_t iteration, size_t fields_at,
                                       const std::string& file, int number) {
  StepSample s;
  s.iteration = iteration;
  s.line = number;
  bool elapsed = false;
  for (const Field& f : BarFields(line.substr(fields_at))) {
    if (!f.colon) continue;
    const std::string_view key = f.key, value = f.value;
    auto bad = [&](const char* expected) {
      return Status::InvalidInput(Where(file, number) + "\"" + std::string(key) + "\": expected " +
                                  expected + ", got \"" + std::string(Trim(value)) + "\"");
    };
    if (key == kElapsedKey) {
      const std::optional<double> ms = Number(value);
      if (!ms || *ms <= 0) return bad("a positive number of milliseconds");
      s.step_s = *ms / 1000;
      elapsed = true;
    } else if (key == "throughput per GPU (TFLOP/s/GPU)") {
      s.tflops_per_gpu = Number(value);
      if (!s.tflops_per_gpu) return bad("a number");
    } else if (key == "global batch size") {
      s.global_batch = Integer(value);
      if (!s.global_batch || *s.global_batch < 1) return bad("a whole number >= 1");
    } else if (key == "lm loss") {
      s.loss = Number(value);
    }
  }
  if (!elapsed) {
    return Status::InvalidInput(Where(file, number) + "a Megatron-LM iteration line without \"" +
                                kElapsedKey + ": MS |\" (a cut line? the log of another format?)");
  }
  return s;
}

// The local trainer's step line, or nullopt for its other JSON lines (the summary).
Expected<std::optional<StepSample>> ParseLocalLine(std::string_view line, const std::string& file,
                                                   int number) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    return Status::InvalidInput(file + ":" + std::to_string(number) + ":" + std::to_string(e.byte) +
                                ": not a JSON line (cut short?): " + e.what());
  } catch (const nlohmann::json::out_of_range& e) {  // a number beyond a double's range
    return Status::InvalidInput(Where(file, number) + "not a JSON line: " + e.what());
  }
  if (!j.is_object() || !j.contains("step")) return std::optional<StepSample>();
  auto bad = [&](const char* key, const char* expected) {
    return Status::InvalidInput(Where(file, number) + "\"" + key + "\": expected " + expected);
  };
  if (!j["step"].is_number_integer() || j["step"].get<int64_t>() < 1) {
    return bad("step", "a whole number >= 1");
  }
  if (!j.contains("step_s") || !j["step_s"].is_number() || j["step_s"].get<double>() <= 0) {
    return bad("step_s", "a positive number of seconds");
  }
  StepSample s;
  s.iteration = j["step"].get<int64_t>();
  s.step_s = j["step_s"].get<double>();
  if (j.contains("loss") && j["loss"].is_number()) s.loss = j["loss"].get<double>();
  s.line = number;
  return std::optional<StepSample>(s);
}

// DeepSpeed's throughput timer line ("global_step=G, RunningAvgSamplesPerSec=...,
// CurrSamplesPerSec=S,
// ..."), or nullopt for another line.
Expected<std::optional<StepSample>> ParseDeepSpeedLine(std::string_view line,
                                                       const std::string& file, int number) {
  const size_t at = line.find("global_step=");
  if (at == std::string_view::npos || line.find("CurrSamplesPerSec=") == std::string_view::npos) {
    return std::optional<StepSample>();
  }
  auto field = [&](std::string_view key) {
    const size_t k = line.find(key, key == "global_step=" ? at : 0);
    if (k == std::string_view::npos) return std::string_view();
    std::string_view v = line.substr(k + key.size());
    return v.substr(0, v.find_first_of(", \t"));
  };
  StepSample s;
  s.line = number;
  const std::optional<int64_t> step = Integer(field("global_step="));
  if (!step || *step < 0) {
    return Status::InvalidInput(Where(file, number) +
                                "\"global_step\": expected a whole number, "
                                "got \"" +
                                std::string(field("global_step=")) + "\"");
  }
  const std::optional<double> sps = Number(field("CurrSamplesPerSec="));
  if (!sps || *sps <= 0) {
    return Status::InvalidInput(Where(file, number) +
                                "\"CurrSamplesPerSec\": expected a positive number, got \"" +
                                std::string(field("CurrSamplesPerSec=")) + "\"");
  }
  s.iteration = *step;
  s.step_s = 1 / *sps;
  return std::optional<StepSample>(s);
}

bool LooksLikeLocalLine(std::string_view line) {
  line = Trim(line);
  return !line.empty() && line.front() == '{';
}

// `line` without its ANSI escape sequences (ESC '[', parameters, a final byte '@'..'~'):
// torchtitan colours each field of its step line.
std::string WithoutAnsi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && (line[i] < '@' || line[i] > '~')) ++i;
      continue;  // the final byte too
    }
    out += line[i];
  }
  return out;
}

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) words.push_back(s.substr(start, i - start));
  }
  return words;
}

// A number printed with thousands separators ("7,812", "1,234.56").
std::optional<double> GroupedNumber(std::string_view s) {
  std::string digits(s);
  digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
  return Number(digits);
}

// Keeps `gib`, read at `line`, when it is the largest so far.
void KeepLargest(std::optional<double>& largest, int& largest_line, double gib, int line) {
  if (largest && *largest >= gib) return;
  largest = gib;
  largest_line = line;
}

// Megatron-LM's report_memory line ("[Rank R] (after N iterations) memory (MB) | allocated: A |
// max allocated: M | reserved: R | max reserved: X"; "max cached" before 2020-09) into
// `memory`; nothing for another line.
Status ReadMegatronMemory(std::string_view line, const std::string& file, int number,
                          LoggedMemory& memory) {
  constexpr std::string_view kTag = "memory (MB) |";
  const size_t at = line.find(kTag);
  if (at == std::string_view::npos) return Status::Ok();
  bool peak = false;
  for (const Field& f : BarFields(line.substr(at + kTag.size()))) {
    const bool allocated = f.key == "max allocated";
    if (!f.colon || (!allocated && f.key != "max reserved" && f.key != "max cached")) continue;
    const std::optional<double> mib = Number(f.value);
    if (!mib || *mib < 0) {
      return Status::InvalidInput(Where(file, number) + "\"" + std::string(f.key) +
                                  "\": expected a number of MB, got \"" + std::string(f.value) +
                                  "\"");
    }
    if (allocated) {
      KeepLargest(memory.max_allocated_gib, memory.allocated_line, *mib / 1024, number);
    } else {
      KeepLargest(memory.max_reserved_gib, memory.reserved_line, *mib / 1024, number);
    }
    peak = true;
  }
  if (peak) return Status::Ok();
  return Status::InvalidInput(Where(file, number) +
                              "a Megatron-LM memory report without \"max allocated: MB\" (a cut "
                              "line?)");
}

// DeepSpeed's peak allocated memory: "MaxMemAllocated=19.52GB" on its throughput line, "Max_MA
// 3.4 GB" on a see_memory_usage line; into `memory`, nothing for another line.
Status ReadDeepSpeedMemory(std::string_view line, const std::string& file, int number,
                           LoggedMemory& memory) {
  std::string_view key, value;
  bool in_gb = false;
  if (const size_t at = line.find("MaxMemAllocated="); at != std::string_view::npos) {
    key = "MaxMemAllocated";
    value = line.substr(at + key.size() + 1);
    value = value.substr(0, value.find_first_of(", \t"));
    in_gb = value.ends_with("GB");
    if (in_gb) value.remove_suffix(2);
  } else if (const size_t at = line.find("Max_MA "); at != std::string_view::npos) {
    key = "Max_MA";
    const std::vector<std::string_view> w = Words(line.substr(at + key.size()));
    if (!w.empty()) value = w[0];
    in_gb = w.size() >= 2 && w[1] == "GB";
  } else {
    return Status::Ok();
  }
  const std::optional<double> gib = in_gb ? Number(value) : std::nullopt;
  if (!gib || *gib < 0) {
    return Status::InvalidInput(Where(file, number) + "\"" + std::string(key) +
                                "\": expected a number of GB, got \"" + std::string(Trim(value)) +
                                "\"");
  }
  KeepLargest(memory.max_allocated_gib, memory.allocated_line, *gib, number);
  return Status::Ok();
}

// An engine timer's name in DeepSpeed's timer lines (since 0.10.1; before, the long name) and the
// figure it gives.
struct EngineTimer {
  std::string_view name, long_name;
  std::optional<double> EngineTimes::*figure;
};
constexpr EngineTimer kTimerNames[] = {
    {"fwd", "forward", &EngineTimes::fwd_ms},
    {"bwd", "backward", &EngineTimes::bwd_ms},
    {"bwd_inner", "backward_inner", &EngineTimes::bwd_inner_ms},
    {"bwd_allreduce", "backward_allreduce", &EngineTimes::bwd_allreduce_ms},
    {"step", "step", &EngineTimes::step_ms},
};

// One SynchronizedWallClockTimer.log line: the engine's global timers it holds, and whether it
// holds the pipeline engine's "batch_input" timer.
struct TimerLine {
  EngineTimes ms;
  bool pipeline = false;
};

// `name` as an engine timer: the figure of a global timer; nullptr for a micro-step timer
// ("fwd_microstep", "forward_microstep", ...) and "batch_input"; nullopt for another timer.
std::optional<std::optional<double> EngineTimes::*> EngineTimerFigure(std::string_view name) {
  const bool micro = name.ends_with("_microstep");
  if (micro) name.remove_suffix(std::string_view("_microstep").size());
  for (const EngineTimer& t : kTimerNames) {
    if (name == t.name || name == t.long_name) return micro ? nullptr : t.figure;
  }
  if (name == "batch_input") return nullptr;
  return std::nullopt;
}

// A line of DeepSpeed's timers, "... time (ms) | NAME: MS | NAME: MS ..."; nullopt for another
// line and for the MoE forward breakdown ("time (ms) | fwd: T (fwd_moe: ..., top_k: ...)").
// An engine timer whose figure is not a number is an error, and so is a field without ':' (a cut
// line); other timers (the ZeRO optimizer's, the pipeline's) are not looked at.
Expected<std::optional<TimerLine>> ParseTimerLine(std::string_view line, const std::string& file,
                                                  int number) {
  constexpr std::string_view kTag = "time (ms) |";
  const size_t at = line.find(kTag);
  if (at == std::string_view::npos) return std::optional<TimerLine>();
  TimerLine t;
  for (const Field& f : BarFields(line.substr(at + kTag.size()))) {
    if (!f.colon) {
      return Status::InvalidInput(Where(file, number) + "a DeepSpeed timer line whose field \"" +
                                  std::string(f.key) + "\" is not \"NAME: MS\" (a cut line?)");
    }
    const auto figure = EngineTimerFigure(f.key);
    if (!figure) continue;
    if (f.value.find('(') != std::string_view::npos) return std::optional<TimerLine>();  // MoE
    const std::optional<double> ms = Number(f.value);
    if (!ms || *ms < 0) {
      return Status::InvalidInput(
          Where(file, number) + "DeepSpeed's timer \"" + std::string(f.key) +
          "\": expected a number of milliseconds, got \"" + std::string(f.value) + "\"");
    }
    if (std::optional<double> EngineTimes::*kept = *figure) t.ms.*kept = *ms;
    t.pipeline = t.pipeline || f.key == "batch_input";
  }
  return std::optional<TimerLine>(t);
}

// torchtitan's step line ("step: N  loss: L  grad_norm: G  memory: ...  tps: T  tflops: F
// mfu: M%", in colours), or nullopt for another line: "step: N  loss:" (not after "validate")
// followed by one of the keys only torchtitan prints there. `rank` gets what precedes the
// logger's "[titan]" (torchrun's "[rank0]:"), which tells the ranks of LOG_RANK=0,7 apart;
// `max_reserved_gib` its "memory: 41.32GiB(43.47%)" (nullopt without).
Expected<std::optional<StepSample>> ParseTorchtitanLine(std::string_view raw,
                                                        const std::string& file, int number,
                                                        std::string* rank,
                                                        std::optional<double>* max_reserved_gib) {
  if (raw.find("step:") == std::string_view::npos) return std::optional<StepSample>();
  const size_t tag = raw.find("[titan]");
  *rank = tag == std::string_view::npos ? "" : std::string(raw.substr(0, tag));
  const std::string line = WithoutAnsi(raw);
  const std::vector<std::string_view> w = Words(line);
  size_t at = 0;
  while (at + 3 < w.size() &&
         !(w[at] == "step:" && w[at + 2] == "loss:" && (at == 0 || w[at - 1] != "validate"))) {
    ++at;
  }
  if (at + 3 >= w.size()) return std::optional<StepSample>();
  std::optional<std::string_view> tps, tflops, memory;
  bool titan = false;
  for (size_t i = at + 4; i + 1 < w.size(); ++i) {
    const std::string_view key = w[i];
    if (key == "tps:" || key == "wps:") tps = w[i + 1];
    if (key == "tflops:") tflops = w[i + 1];
    if (key == "memory:") memory = w[i + 1];
    titan = titan || key == "tps:" || key == "wps:" || key == "tflops:" || key == "mfu:" ||
            key == "memory:" || key == "grad_norm:";
  }
  if (!titan) return std::optional<StepSample>();  // someone else's "step: N loss: L"
  auto bad = [&](const char* key, std::string_view value, const char* expected) {
    return Status::InvalidInput(Where(file, number) + "\"" + key + "\": expected " + expected +
                                ", got \"" + std::string(value) + "\"");
  };
  StepSample s;
  s.line = number;
  const std::optional<int64_t> step = Integer(w[at + 1]);
  if (!step || *step < 1) return bad("step", w[at + 1], "a whole number >= 1");
  s.iteration = *step;
  if (!tps) {
    return Status::InvalidInput(Where(file, number) +
                                "a torchtitan step line without \"tps: T\" (a cut line?)");
  }
  const std::optional<double> rate = GroupedNumber(*tps);
  if (!rate || *rate <= 0) return bad("tps", *tps, "a positive number of tokens per second");
  s.step_s = 1 / *rate;
  if (tflops) {
    s.tflops_per_gpu = GroupedNumber(*tflops);
    if (!s.tflops_per_gpu) return bad("tflops", *tflops, "a number");
  }
  if (memory) {
    const size_t gib = memory->find("GiB(");
    *max_reserved_gib = Number(memory->substr(0, gib));
    if (gib == std::string_view::npos || !*max_reserved_gib || **max_reserved_gib < 0) {
      return bad("memory", *memory, "a number of GiB, \"G.GGGiB(P.PP%)\"");
    }
  }
  s.loss = Number(w[at + 3]);
  return std::optional<StepSample>(s);
}

// One redraw of a tqdm bar without a description, as the Trainer's ProgressCallback draws it:
// "  5%|▌         | 50/1000 [00:30<09:30,  1.67it/s]" (tqdm's format_meter: "{percentage:3.0f}%|
// {bar}| {n}/{total} [{elapsed}<{remaining}, {rate}{postfix}]").
struct BarUpdate {
  int64_t n = 0, total = 0;
  std::optional<double> step_s;  // nullopt: "?it/s", no rate yet
  int line = 0;
};

// A segment of a line (the text after a carriage return) as a bar update; nullopt for other
// text and for the bars that are not the training bar's kind (a description, a nested bar,
// another unit).
Expected<std::optional<BarUpdate>> ParseBar(std::string_view seg, const std::string& file,
                                            int number) {
  using Result = std::optional<BarUpdate>;
  size_t i = 0;
  while (i < seg.size() && seg[i] == ' ') ++i;
  const size_t digits = i;
  while (i < seg.size() && std::isdigit(static_cast<unsigned char>(seg[i]))) ++i;
  if (i == digits || seg.substr(i, 2) != "%|") return Result();
  if (seg.find("\x1b[A") != std::string_view::npos) return Result();  // drawn one row down
  auto cut = [&] {
    return Status::InvalidInput(Where(file, number) +
                                "a tqdm progress bar without \"| N/M [ELAPSED<LEFT, RATE]\" "
                                "after its \"%|\" (a cut line?)");
  };
  const size_t bar_end = seg.find('|', i + 2);
  if (bar_end == std::string_view::npos || seg.substr(bar_end, 2) != "| ") return cut();
  const size_t open = seg.find(" [", bar_end + 2);
  const size_t close = open == std::string_view::npos ? open : seg.find(']', open);
  if (close == std::string_view::npos) return cut();
  const std::string_view times = seg.substr(open + 2, close - open - 2);  // "E<R, RATE, ..."
  const size_t lt = times.find('<'), comma = times.find(", ");
  if (lt == std::string_view::npos || comma == std::string_view::npos || comma < lt) return cut();
  std::string_view rate = times.substr(comma + 2);
  rate = Trim(rate.substr(0, rate.find(',')));
  const bool per_second = rate.ends_with("it/s");
  if (!per_second && !rate.ends_with("s/it")) return Result();  // another unit: another bar
  const std::string_view counts = seg.substr(bar_end + 2, open - bar_end - 2);  // "N/M"
  const size_t slash = counts.find('/');
  const std::optional<int64_t> n = Integer(counts.substr(0, slash));
  const std::optional<int64_t> total =
      slash == std::string_view::npos ? std::nullopt : Integer(counts.substr(slash + 1));
  if (!n || !total || *n < 0 || *total < 1) return cut();
  BarUpdate u;
  u.n = *n;
  u.total = *total;
  u.line = number;
  const std::string_view value = rate.substr(0, rate.size() - 4);
  if (value == "?") return Result(u);
  const std::optional<double> v = Number(value);
  if (!v || *v <= 0) {
    return Status::InvalidInput(Where(file, number) +
                                "the progress bar's rate: expected a positive number of it/s or "
                                "s/it, got \"" +
                                std::string(rate) + "\"");
  }
  u.step_s = per_second ? 1 / *v : *v;
  return Result(u);
}

// The value after 'key': or "key": in a printed dict, unquoted; nullopt when the key is not
// there.
std::optional<std::string_view> DictValue(std::string_view line, std::string_view key) {
  for (const char quote : {'\'', '"'}) {
    const std::string quoted = quote + std::string(key) + quote;
    const size_t at = line.find(quoted);
    if (at == std::string_view::npos) continue;
    std::string_view rest = Trim(line.substr(at + quoted.size()));
    if (rest.empty() || rest.front() != ':') continue;
    rest = Trim(rest.substr(1));
    if (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) {
      const char q = rest.front();
      rest.remove_prefix(1);
      return rest.substr(0, rest.find(q));
    }
    return Trim(rest.substr(0, rest.find_first_of(",}")));
  }
  return std::nullopt;
}

// The Trainer's end-of-training line: {'train_runtime': R, ..., 'train_steps_per_second': S,
// ...} (trainer_utils.py speed_metrics: S = max_steps / R).
struct TrainEnd {
  double runtime_s = 0, steps_per_s = 0;
  int line = 0;
};

Expected<std::optional<TrainEnd>> ParseTrainEnd(std::string_view line, const std::string& file,
                                                int number) {
  const std::optional<std::string_view> rate = DictValue(line, "train_steps_per_second");
  if (!rate) return std::optional<TrainEnd>();
  const std::optional<std::string_view> runtime = DictValue(line, "train_runtime");
  auto positive = [&](const char* key, std::optional<std::string_view> v, double* out) {
    const std::optional<double> x = v ? Number(*v) : std::nullopt;
    if (x && *x > 0) {
      *out = *x;
      return Status::Ok();
    }
    return Status::InvalidInput(Where(file, number) + "'" + key +
                                "': expected a positive number, got \"" + std::string(v ? *v : "") +
                                "\"");
  };
  TrainEnd end;
  end.line = number;
  if (Status st = positive("train_steps_per_second", rate, &end.steps_per_s); !st.ok()) return st;
  if (Status st = positive("train_runtime", runtime, &end.runtime_s); !st.ok()) return st;
  return std::optional<TrainEnd>(end);
}

}  // namespace

const char* ToString(LogFormat f) {
  switch (f) {
    case LogFormat::kMegatron:
      return "megatron";
    case LogFormat::kTrainsimLocal:
      return "trainsim-local";
    case LogFormat::kDeepSpeed:
      return "deepspeed";
    case LogFormat::kTorchtitan:
      return "torchtitan";
    case LogFormat::kHfTrainer:
      return "hf-trainer";
  }
  return "?";
}

Expected<LogFormat> ParseLogFormat(std::string_view name, std::string_view field) {
  for (LogFormat f : {LogFormat::kMegatron, LogFormat::kTrainsimLocal, LogFormat::kDeepSpeed,
                      LogFormat::kTorchtitan, LogFormat::kHfTrainer}) {
    if (name == ToString(f)) return f;
  }
  return Status::InvalidInput(
      std::string(field) + ": unknown log format \"" + std::string(name) +
      "\"; expected megatron, deepspeed, trainsim-local, torchtitan or hf-trainer");
}

namespace {

// Appends `s` to the log, or the error of an iteration that does not rise.
Status AppendRising(RunLog& log, const StepSample& s) {
  if (!log.steps.empty() && s.iteration <= log.steps.back().iteration) {
    return Status::InvalidInput(Where(log.file, s.line) + "iteration " +
                                std::to_string(s.iteration) + " after iteration " +
                                std::to_string(log.steps.back().iteration) + " (line " +
                                std::to_string(log.steps.back().line) +
                                "): two runs in one log (a restart?); give each run its own file");
  }
  log.steps.push_back(s);
  return Status::Ok();
}

std::string NoStepLine(LogFormat format) {
  switch (format) {
    case LogFormat::kMegatron:
      return "no Megatron-LM iteration line (\"iteration N/M | ... | " + std::string(kElapsedKey) +
             ": MS |\")";
    case LogFormat::kDeepSpeed:
      return "no DeepSpeed throughput line (\"global_step=G, ..., CurrSamplesPerSec=S, ...\")";
    case LogFormat::kTrainsimLocal:
      return "no trainsim-train step line ({\"step\": N, \"loss\": L, \"step_s\": S})";
    case LogFormat::kTorchtitan:
      return "no torchtitan step line (\"step: N  loss: L  ...  tps: T  ...\")";
    case LogFormat::kHfTrainer:
      return "no Hugging Face Trainer progress bar (\"NN%|...| N/M [ELAPSED<LEFT, R it/s]\") or "
             "end-of-training line ({'train_runtime': R, ..., 'train_steps_per_second': S, ...})";
  }
  return "no step line";
}

// The total of the training bar among the bars' totals: the one nearest the end-of-training
// line's step count (runtime x steps per second), else the largest.
int64_t TrainingTotal(const std::vector<BarUpdate>& bars, const std::optional<TrainEnd>& end) {
  int64_t best = bars.front().total;
  for (const BarUpdate& u : bars) {
    if (!end) {
      best = std::max(best, u.total);
      continue;
    }
    const double steps = end->runtime_s * end->steps_per_s;
    const double d = std::fabs(u.total - steps), best_d = std::fabs(best - steps);
    if (d < best_d || (d == best_d && u.total > best)) best = u.total;
  }
  return best;
}

// The Hugging Face Trainer's bar updates and end-of-training line in `text`: the lines split at
// line feeds, each line's bar redraws at carriage returns.
Status ScanHfTrainer(std::string_view text, const std::string& file, std::vector<BarUpdate>* bars,
                     std::optional<TrainEnd>* end) {
  int number = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t eol = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, eol - start);
    start = eol + 1;
    ++number;
    for (size_t at = 0; at <= line.size();) {
      const size_t cr = std::min(line.find('\r', at), line.size());
      Expected<std::optional<BarUpdate>> u = ParseBar(line.substr(at, cr - at), file, number);
      if (!u.ok()) return u.status();
      if (*u) bars->push_back(**u);
      at = cr + 1;
    }
    Expected<std::optional<TrainEnd>> e = ParseTrainEnd(line, file, number);
    if (!e.ok()) return e.status();
    if (*e && *end) {
      return Status::InvalidInput(
          Where(file, number) + "a second end-of-training line, after the first (line " +
          std::to_string((*end)->line) + "): two runs in one log; give each run its own file");
    }
    if (*e) *end = *e;
  }
  return Status::Ok();
}

// The Hugging Face Trainer's log (LogFormat::kHfTrainer): the training bar's updates with a
// rate, one per step (a redraw of the same step skipped); without them, the end-of-training
// line's mean.
Expected<RunLog> ParseHfTrainer(std::string_view text, const std::string& file) {
  std::vector<BarUpdate> bars;
  std::optional<TrainEnd> end;
  if (Status st = ScanHfTrainer(text, file, &bars, &end); !st.ok()) return st;
  RunLog log;
  log.file = file;
  log.format = LogFormat::kHfTrainer;
  log.figure = StepFigure::kSmoothed;
  const std::optional<int64_t> total =
      bars.empty() ? std::nullopt : std::optional<int64_t>(TrainingTotal(bars, end));
  for (const BarUpdate& u : bars) {
    if (u.total != *total || !u.step_s || u.n < 1) continue;
    if (!log.steps.empty() && u.n == log.steps.back().iteration) continue;  // a redraw
    StepSample s;
    s.iteration = u.n;
    s.step_s = *u.step_s;
    s.line = u.line;
    if (Status st = AppendRising(log, s); !st.ok()) return st;
  }
  if (end) log.run_mean_step_s = total ? end->runtime_s / *total : 1 / end->steps_per_s;
  if (log.steps.empty() && end) {
    StepSample s;
    s.iteration = std::llround(end->runtime_s * end->steps_per_s);
    s.step_s = 1 / end->steps_per_s;
    s.line = end->line;
    log.steps.push_back(s);
    log.figure = StepFigure::kRunMean;
  }
  if (log.steps.empty()) return Status::NotFound(file + ": " + NoStepLine(LogFormat::kHfTrainer));
  return log;
}

// What a pass over a log carries from line to line.
struct Scan {
  RunLog log;
  std::optional<std::string> titan_rank;  // the rank of torchtitan's first step line
  bool after_pipeline_timers = false;     // the last timer line was the pipeline engine's
  int pipeline_timer_lines = 0;           // its global timer lines, not read
  Status deferred;  // the first bad memory or timer line: an error if the format has steps
};

// `st` kept when it is the first error.
void KeepFirst(Status& first, Status st) {
  if (first.ok()) first = std::move(st);
}

// A DeepSpeed timer line: an engine global line into scan.log.timers (not the pipeline
// engine's). False for another line.
Expected<bool> ReadTimerLine(std::string_view line, const std::string& file, int number,
                             Scan& scan) {
  Expected<std::optional<TimerLine>> t = ParseTimerLine(line, file, number);
  if (!t.ok()) return t.status();
  if (!*t) return false;
  const EngineTimes& ms = (*t)->ms;
  if (ms.fwd_ms && ms.bwd_ms && ms.step_ms) {
    if (scan.after_pipeline_timers) {
      ++scan.pipeline_timer_lines;
    } else {
      scan.log.timers.push_back({ms, number});
    }
  }
  scan.after_pipeline_timers = (*t)->pipeline;
  return true;
}

// One line of the log read as `format`: its step sample, or nullopt; the memory it reports and
// DeepSpeed's timers go into scan.log.
Expected<std::optional<StepSample>> ReadLine(std::string_view line, int number, LogFormat format,
                                             Scan& scan) {
  using Result = std::optional<StepSample>;
  const std::string& file = scan.log.file;
  if (format == LogFormat::kMegatron || format == LogFormat::kDeepSpeed) {
    KeepFirst(scan.deferred, ReadMegatronMemory(line, file, number, scan.log.memory));
    KeepFirst(scan.deferred, ReadDeepSpeedMemory(line, file, number, scan.log.memory));
  }
  if (format == LogFormat::kMegatron) {
    size_t fields_at = 0;
    const std::optional<int64_t> it = MegatronIteration(line, &fields_at);
    if (!it) return Result();
    Expected<StepSample> s = ParseMegatronLine(line, *it, fields_at, file, number);
    if (!s.ok()) return s.status();
    return Result(*s);
  }
  if (format == LogFormat::kDeepSpeed) {
    Expected<bool> timer = ReadTimerLine(line, file, number, scan);
    if (!timer.ok()) KeepFirst(scan.deferred, timer.status());
    if (timer.ok() && *timer) return Result();
    return ParseDeepSpeedLine(line, file, number);
  }
  if (format == LogFormat::kTorchtitan) {
    std::string rank;
    std::optional<double> memory;
    Expected<Result> s = ParseTorchtitanLine(line, file, number, &rank, &memory);
    if (!s.ok() || !*s) return s;
    LoggedMemory& m = scan.log.memory;
    if (memory) KeepLargest(m.max_reserved_gib, m.reserved_line, *memory, number);  // any rank
    if (!scan.titan_rank) scan.titan_rank = rank;
    return rank == *scan.titan_rank ? s : Result();  // another rank's lines are the same steps
  }
  if (!LooksLikeLocalLine(line)) return Result();
  // Before the first step line, a line that is not JSON at all is someone else's (a stray
  // brace); after it, or for a JSON step line with a bad field, an error.
  if (scan.log.steps.empty() && !nlohmann::json::accept(Trim(line))) return Result();
  return ParseLocalLine(Trim(line), file, number);
}

// DeepSpeed 0.4.0-0.5.6 logged its timers without resetting them: running totals since the
// start, every figure rising at every line, the last several times the first.
bool RunningTotals(const std::vector<TimerSample>& timers) {
  if (timers.size() < 4 || *timers.back().ms.fwd_ms < 2 * *timers.front().ms.fwd_ms) return false;
  for (size_t i = 1; i < timers.size(); ++i) {
    const EngineTimes &a = timers[i - 1].ms, &b = timers[i].ms;
    if (*b.fwd_ms <= *a.fwd_ms || *b.bwd_ms <= *a.bwd_ms || *b.step_ms <= *a.step_ms) return false;
  }
  return true;
}

// A DeepSpeed log's timers once all is read: running totals and the pipeline engine's lines
// said in timers_not_read; with no throughput line, fwd + bwd + step of each line as the steps
// (StepFigure::kEngineTimers).
void FinishTimers(const Scan& scan, RunLog& log) {
  auto lines = [](size_t n) {
    return std::to_string(n) + (n == 1 ? " timer line" : " timer lines");
  };
  if (RunningTotals(log.timers)) {
    log.timers_not_read = lines(log.timers.size()) +
                          " of running totals (every figure rises at every line, as DeepSpeed "
                          "0.4.0-0.5.6 printed them), not a step's times";
    log.timers.clear();
  } else if (scan.pipeline_timer_lines > 0) {
    log.timers_not_read = lines(scan.pipeline_timer_lines) +
                          " of DeepSpeed's pipeline engine, each a sum over steps_per_print steps";
  }
  if (!log.steps.empty()) return;
  for (const TimerSample& t : log.timers) {
    const double ms = *t.ms.fwd_ms + *t.ms.bwd_ms + *t.ms.step_ms;
    if (ms <= 0) continue;
    StepSample s;
    s.iteration = static_cast<int64_t>(log.steps.size()) + 1;
    s.step_s = ms / 1000;
    s.line = t.line;
    log.steps.push_back(s);
  }
  if (!log.steps.empty()) log.figure = StepFigure::kEngineTimers;
}

// The log read as `format` alone; NotFound when no line of that format is in it.
Expected<RunLog> ParseAs(std::string_view text, const std::string& file, LogFormat format) {
  if (format == LogFormat::kHfTrainer) return ParseHfTrainer(text, file);
  Scan scan;
  scan.log.file = file;
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    Expected<std::optional<StepSample>> sample = ReadLine(line, number, format, scan);
    if (!sample.ok()) return sample.status();
    if (!*sample) continue;
    if (Status st = AppendRising(scan.log, **sample); !st.ok()) return st;
  }
  RunLog& log = scan.log;
  if (format == LogFormat::kDeepSpeed) FinishTimers(scan, log);
  if (log.steps.empty()) return Status::NotFound(file + ": " + NoStepLine(format));
  if (!scan.deferred.ok()) return scan.deferred;
  log.format = format;
  log.per_sample = format == LogFormat::kDeepSpeed && log.figure != StepFigure::kEngineTimers;
  log.per_token = format == LogFormat::kTorchtitan;
  return std::move(log);
}

}  // namespace

Expected<RunLog> ParseRunLog(std::string_view text, const std::string& file,
                             std::optional<LogFormat> format) {
  if (format) {
    Expected<RunLog> log = ParseAs(text, file, *format);
    if (!log.ok() && log.status().code() == Status::Code::kNotFound) {
      return Status::InvalidInput(log.status().message());
    }
    return log;
  }
  // DeepSpeed's engine timers without its throughput lines are the last resort: they leave out
  // what the training loop does outside the engine.
  std::optional<RunLog> engine_timers;
  for (LogFormat f : {LogFormat::kMegatron, LogFormat::kDeepSpeed, LogFormat::kTrainsimLocal,
                      LogFormat::kTorchtitan, LogFormat::kHfTrainer}) {
    Expected<RunLog> log = ParseAs(text, file, f);
    if (log.ok() && log->figure == StepFigure::kEngineTimers) {
      engine_timers = std::move(*log);
      continue;
    }
    if (log.ok() || log.status().code() != Status::Code::kNotFound) return log;
  }
  if (engine_timers) return std::move(*engine_timers);
  return Status::InvalidInput(
      file + ": no step line of a known format (Megatron-LM's \"iteration N/M | ... | " +
      std::string(kElapsedKey) +
      ": MS |\", DeepSpeed's \"global_step=G, ..., CurrSamplesPerSec=S\", trainsim-train's "
      "{\"step\": N, \"step_s\": S}, torchtitan's \"step: N  loss: L  ...  tps: T\", or the "
      "Hugging Face Trainer's progress bar \"N/M [ELAPSED<LEFT, R it/s]\" or {'train_runtime': "
      "R, ..., 'train_steps_per_second': S})");
}

Expected<RunLog> LoadRunLog(const std::string& path, std::optional<LogFormat> format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidInput(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseRunLog(text.str(), path, format);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

namespace {

// The medians of the log's timer lines after the last of its first `warmup_samples` step lines.
std::optional<StepBreakdown> Breakdown(const RunLog& log, int warmup_samples) {
  const int after = warmup_samples > 0 ? log.steps[warmup_samples - 1].line : 0;
  StepBreakdown b;
  std::vector<const EngineTimes*> used;
  for (const TimerSample& t : log.timers) {
    if (t.line > after) {
      used.push_back(&t.ms);
    } else {
      ++b.warmup_samples;
    }
  }
  if (used.empty()) return std::nullopt;
  b.samples = static_cast<int>(used.size());
  for (const EngineTimer& timer : kTimerNames) {
    std::vector<double> ms;
    for (const EngineTimes* t : used) {
      if (const std::optional<double>& v = t->*timer.figure) ms.push_back(*v);
    }
    if (!ms.empty()) b.median_ms.*timer.figure = Median(ms);
  }
  return b;
}

}  // namespace

Expected<StepSummary> Summarize(const RunLog& log, int warmup) {
  StepSummary s;
  const int n = static_cast<int>(log.steps.size());
  if (log.figure == StepFigure::kRunMean) warmup = 0;  // inside the mean: nothing to leave out
  s.warmup_samples = std::min(std::max(0, warmup), n);
  std::optional<int64_t> batch;
  for (int i = n - 1; i >= s.warmup_samples && !batch; --i) batch = log.steps[i].global_batch;
  std::vector<double> times, tflops;
  for (int i = s.warmup_samples; i < n; ++i) {
    const StepSample& x = log.steps[i];
    if (batch && x.global_batch && *x.global_batch != *batch) {
      ++s.other_batch;
      continue;
    }
    if (times.empty()) s.first_iteration = x.iteration;
    s.last_iteration = x.iteration;
    times.push_back(x.step_s);
    if (x.tflops_per_gpu) tflops.push_back(*x.tflops_per_gpu);
  }
  if (times.empty()) {
    return Status::InvalidInput(log.file + ": " + std::to_string(n) + " step line" +
                                (n == 1 ? "" : "s") + ", none after the warm-up of " +
                                std::to_string(s.warmup_samples) +
                                ": log more steps, or lower --warmup");
  }
  s.samples = static_cast<int>(times.size());
  s.global_batch = batch;
  s.median_step_s = Median(times);
  double sum = 0;
  for (double t : times) sum += t;
  s.mean_step_s = sum / times.size();
  s.min_step_s = *std::min_element(times.begin(), times.end());
  s.max_step_s = *std::max_element(times.begin(), times.end());
  if (!tflops.empty()) s.median_tflops_per_gpu = Median(tflops);
  s.breakdown = Breakdown(log, s.warmup_samples);
  return s;
}

}  // namespace trainsim::observe
