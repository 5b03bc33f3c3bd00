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

// The " key: value |" fields of a Megatron-LM step line.
Expected<StepSample> ParseMegatronLine(std::string_view line, int64_t iteration, size_t fields_at,
                                       const std::string& file, int number) {
  StepSample s;
  s.iteration = iteration;
  s.line = number;
  bool elapsed = false;
  std::string_view rest = line.substr(fields_at);
  while (!rest.empty()) {
    const size_t bar = rest.find('|');
    const std::string_view field = Trim(rest.substr(0, bar));
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    const size_t colon = field.rfind(':');
    if (field.empty() || colon == std::string_view::npos) continue;
    const std::string_view key = Trim(field.substr(0, colon)), value = field.substr(colon + 1);
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

}  // namespace

const char* ToString(LogFormat f) {
  switch (f) {
    case LogFormat::kMegatron:
      return "megatron";
    case LogFormat::kTrainsimLocal:
      return "trainsim-local";
    case LogFormat::kDeepSpeed:
      return "deepspeed";
  }
  return "?";
}

Expected<LogFormat> ParseLogFormat(std::string_view name, std::string_view field) {
  for (LogFormat f : {LogFormat::kMegatron, LogFormat::kTrainsimLocal, LogFormat::kDeepSpeed}) {
    if (name == ToString(f)) return f;
  }
  return Status::InvalidInput(std::string(field) + ": unknown log format \"" + std::string(name) +
                              "\"; expected megatron, deepspeed or trainsim-local");
}

namespace {

// The log read as `format` alone; NotFound when no line of that format is in it.
Expected<RunLog> ParseAs(std::string_view text, const std::string& file, LogFormat format) {
  RunLog log;
  log.file = file;
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::optional<StepSample> sample;
    size_t fields_at = 0;
    if (format == LogFormat::kMegatron) {
      if (const std::optional<int64_t> it = MegatronIteration(line, &fields_at)) {
        Expected<StepSample> s = ParseMegatronLine(line, *it, fields_at, file, number);
        if (!s.ok()) return s.status();
        sample = *s;
      }
    } else if (format == LogFormat::kDeepSpeed) {
      Expected<std::optional<StepSample>> s = ParseDeepSpeedLine(line, file, number);
      if (!s.ok()) return s.status();
      sample = *s;
    } else if (LooksLikeLocalLine(line)) {
      // Before the first step line, a line that is not JSON at all is someone else's (a
      // stray brace); after it, or for a JSON step line with a bad field, an error.
      if (log.steps.empty() && !nlohmann::json::accept(Trim(line))) continue;
      Expected<std::optional<StepSample>> s = ParseLocalLine(Trim(line), file, number);
      if (!s.ok()) return s.status();
      sample = *s;
    }
    if (!sample) continue;
    if (!log.steps.empty() && sample->iteration <= log.steps.back().iteration) {
      return Status::InvalidInput(
          Where(file, number) + "iteration " + std::to_string(sample->iteration) +
          " after iteration " + std::to_string(log.steps.back().iteration) + " (line " +
          std::to_string(log.steps.back().line) +
          "): two runs in one log (a restart?); give each run its own file");
    }
    log.steps.push_back(*sample);
  }
  if (log.steps.empty()) {
    const std::string what =
        format == LogFormat::kMegatron ? "no Megatron-LM iteration line (\"iteration N/M | ... | " +
                                             std::string(kElapsedKey) + ": MS |\")"
        : format == LogFormat::kDeepSpeed
            ? "no DeepSpeed throughput line (\"global_step=G, ..., CurrSamplesPerSec=S, ...\")"
            : "no trainsim-train step line ({\"step\": N, \"loss\": L, \"step_s\": S})";
    return Status::NotFound(file + ": " + what);
  }
  log.format = format;
  log.per_sample = format == LogFormat::kDeepSpeed;
  return log;
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
  for (LogFormat f : {LogFormat::kMegatron, LogFormat::kDeepSpeed, LogFormat::kTrainsimLocal}) {
    Expected<RunLog> log = ParseAs(text, file, f);
    if (log.ok() || log.status().code() != Status::Code::kNotFound) return log;
  }
  return Status::InvalidInput(
      file + ": no step line of a known format (Megatron-LM's \"iteration N/M | ... | " +
      std::string(kElapsedKey) +
      ": MS |\", DeepSpeed's \"global_step=G, ..., CurrSamplesPerSec=S\", or trainsim-train's "
      "{\"step\": N, \"step_s\": S})");
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

Expected<StepSummary> Summarize(const RunLog& log, int warmup) {
  StepSummary s;
  const int n = static_cast<int>(log.steps.size());
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
  return s;
}

}  // namespace trainsim::observe
