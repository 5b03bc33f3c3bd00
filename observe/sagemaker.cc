#include "observe/sagemaker.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

namespace trainsim::observe {
namespace {

using Type = JsonValue::Type;

// The instance metrics SageMaker publishes for a training job (docs/observe.md section 1).
constexpr std::string_view kInstanceMetrics[] = {"GPUUtilization", "GPUMemoryUtilization",
                                                 "CPUUtilization", "MemoryUtilization",
                                                 "DiskUtilization"};
constexpr std::string_view kGpuUtilization = "GPUUtilization";
// get-metric-statistics' statistics, in the order their series are made.
constexpr std::string_view kStatistics[] = {"Average", "Maximum", "Minimum", "Sum", "SampleCount"};

// ---- Reading JSON values strictly, with their place in the file ----

// A parsed document and where its line 1 is in the file (a JSON line of a longer file).
struct Doc {
  const std::string& file;
  int first_line = 1;
  SourcePos Pos(const JsonValue& v) const { return {v.pos.line + first_line - 1, v.pos.column}; }
  Status Error(const JsonValue& at, const std::string& path, const std::string& msg) const {
    return Status::InvalidInput(Located(file, Pos(at), path.empty() ? msg : path + ": " + msg));
  }
};

const char* Expectation(Type t) {
  switch (t) {
    case Type::kString:
      return "a string";
    case Type::kNumber:
      return "a number";
    case Type::kArray:
      return "an array";
    case Type::kObject:
      return "an object";
    case Type::kBool:
      return "true or false";
    case Type::kNull:
      break;
  }
  return "null";
}

std::string Member(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string Item(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

Status ExpectType(const Doc& doc, const JsonValue& v, const std::string& path, Type type) {
  if (v.type == type) return Status::Ok();
  return doc.Error(v, path, std::string("expected ") + Expectation(type) + ", got " + Describe(v));
}

// `obj`'s member `key` of `type` (`obj` at `path`, an object); nullptr when it is absent and
// not `required`.
Expected<const JsonValue*> Get(const Doc& doc, const JsonValue& obj, const std::string& path,
                               std::string_view key, Type type, bool required) {
  const JsonValue* v = obj.Find(key);
  if (!v) {
    if (!required) return static_cast<const JsonValue*>(nullptr);
    return doc.Error(obj, path, "missing \"" + std::string(key) + "\"");
  }
  if (Status s = ExpectType(doc, *v, Member(path, key), type); !s.ok()) return s;
  return v;
}

Expected<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidInput(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---- Times ----

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, int* m, int* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

constexpr const char* kIsoExample =
    "an ISO 8601 time with a zone (\"2026-11-27T08:00:00Z\", as the AWS CLI writes it)";

// ---- CloudWatch metric exports ----

bool IsHostWord(std::string_view w) {  // "JOB/algo-N" or "algo-N"
  const size_t at = w.rfind("algo-");
  if (at == std::string_view::npos || (at != 0 && w[at - 1] != '/')) return false;
  const std::string_view n = w.substr(at + 5);
  return !n.empty() && std::all_of(n.begin(), n.end(), [](char c) { return std::isdigit(c); });
}

bool IsInstanceMetric(std::string_view w) {
  return std::find(std::begin(kInstanceMetrics), std::end(kInstanceMetrics), w) !=
         std::end(kInstanceMetrics);
}

// The series' metric and host from a Label (see ParseCloudWatchMetrics), else its Id.
void NameFromLabel(const std::string& label, const std::string& id, MetricSeries* s) {
  std::string rest;
  std::istringstream words(label);
  for (std::string w; words >> w;) {
    if (s->host.empty() && IsHostWord(w)) {
      s->host = w;
    } else if (s->metric.empty() && IsInstanceMetric(w)) {
      s->metric = w;
    } else {
      rest += (rest.empty() ? "" : " ") + w;
    }
  }
  if (s->metric.empty()) s->metric = rest.empty() ? id : rest;
}

// "Messages": [{"Code", "Value"}] as "CODE: VALUE" lines, each after `prefix`.
Status ReadMessages(const Doc& doc, const JsonValue& obj, const std::string& path,
                    const std::string& prefix, std::vector<std::string>* out) {
  Expected<const JsonValue*> list = Get(doc, obj, path, "Messages", Type::kArray, false);
  if (!list.ok() || !*list) return list.status();
  for (size_t i = 0; i < (*list)->items.size(); ++i) {
    const JsonValue& m = (*list)->items[i];
    const std::string at = Item(Member(path, "Messages"), i);
    if (Status s = ExpectType(doc, m, at, Type::kObject); !s.ok()) return s;
    Expected<const JsonValue*> code = Get(doc, m, at, "Code", Type::kString, false);
    Expected<const JsonValue*> value = Get(doc, m, at, "Value", Type::kString, false);
    if (!code.ok()) return code.status();
    if (!value.ok()) return value.status();
    out->push_back(prefix + (*code ? (*code)->text : "") + ": " + (*value ? (*value)->text : ""));
  }
  return Status::Ok();
}

// "StatusCode": Complete, or PartialData (*partial true); the others are refused. The AWS CLI
// joins its pages' results: an Id's results on all pages but the last say PartialData, so the
// last one read decides.
Status ReadStatusCode(const Doc& doc, const JsonValue& r, const std::string& path, bool* partial) {
  *partial = false;
  Expected<const JsonValue*> code = Get(doc, r, path, "StatusCode", Type::kString, false);
  if (!code.ok() || !*code) return code.status();
  const std::string& c = (*code)->text;
  *partial = c == "PartialData";
  if (c == "Complete" || c == "PartialData") return Status::Ok();
  if (c == "InternalError" || c == "Forbidden") {
    return doc.Error(**code, Member(path, "StatusCode"),
                     "\"" + c +
                         "\": CloudWatch returned no data for this metric (InternalError: export "
                         "again; Forbidden: the exporting role may not read it)");
  }
  return doc.Error(
      **code, Member(path, "StatusCode"),
      "expected Complete, PartialData, InternalError or Forbidden, got " + Describe(**code));
}

// The points of Timestamps[k] and Values[k].
Status ReadPoints(const Doc& doc, const JsonValue& times, const JsonValue& values,
                  const std::string& path, MetricSeries* s) {
  for (size_t k = 0; k < times.items.size(); ++k) {
    const JsonValue& t = times.items[k];
    const JsonValue& v = values.items[k];
    const std::optional<double> time_s = t.is_string() ? ParseIsoTime(t.text) : std::nullopt;
    if (!time_s) {
      return doc.Error(t, Item(Member(path, "Timestamps"), k),
                       std::string("expected ") + kIsoExample + ", got " + Describe(t));
    }
    if (Status e = ExpectType(doc, v, Item(Member(path, "Values"), k), Type::kNumber); !e.ok()) {
      return e;
    }
    s->points.push_back({*time_s, v.number});
  }
  return Status::Ok();
}

// One element of MetricDataResults, joined to the series of its Id.
Status ReadMetricDataResult(const Doc& doc, const JsonValue& r, const std::string& path,
                            SystemMetrics* m, std::map<std::string, size_t>* by_id) {
  if (Status s = ExpectType(doc, r, path, Type::kObject); !s.ok()) return s;
  Expected<const JsonValue*> id = Get(doc, r, path, "Id", Type::kString, false);
  Expected<const JsonValue*> label = Get(doc, r, path, "Label", Type::kString, false);
  Expected<const JsonValue*> times = Get(doc, r, path, "Timestamps", Type::kArray, true);
  Expected<const JsonValue*> values = Get(doc, r, path, "Values", Type::kArray, true);
  for (const Expected<const JsonValue*>* e : {&id, &label, &times, &values}) {
    if (!e->ok()) return e->status();
  }
  if (!*id && !*label) return doc.Error(r, path, "neither \"Id\" nor \"Label\"");
  const size_t nt = (*times)->items.size(), nv = (*values)->items.size();
  if (nt != nv) {
    return doc.Error(**values, path,
                     std::to_string(nt) + " Timestamps but " + std::to_string(nv) +
                         " Values (each time has its value: a cut or edited export?)");
  }
  const std::string key = *id ? (*id)->text : (*label)->text;
  auto [it, added] = by_id->emplace(key, m->series.size());
  if (added) {
    MetricSeries s;
    s.id = *id ? (*id)->text : "";
    NameFromLabel(*label ? (*label)->text : "", s.id, &s);
    m->series.push_back(std::move(s));
  }
  MetricSeries& s = m->series[it->second];
  if (Status e = ReadStatusCode(doc, r, path, &s.partial); !e.ok()) return e;
  if (Status e = ReadMessages(doc, r, path, key + ": ", &m->messages); !e.ok()) return e;
  return ReadPoints(doc, **times, **values, path, &s);
}

void SortByTime(MetricSeries* s) {
  std::stable_sort(s->points.begin(), s->points.end(),
                   [](const TimedValue& a, const TimedValue& b) { return a.time_s < b.time_s; });
}

Expected<SystemMetrics> ParseMetricData(const Doc& doc, const JsonValue& root) {
  SystemMetrics m;
  m.source = MetricSource::kGetMetricData;
  m.files = {doc.file};
  Expected<const JsonValue*> results = Get(doc, root, "", "MetricDataResults", Type::kArray, true);
  if (!results.ok()) return results.status();
  if ((*results)->items.empty()) {
    return doc.Error(**results, "MetricDataResults",
                     "no result (the queries matched no metric: the job's name in the Host "
                     "dimension? the time range?)");
  }
  if (Status s = ReadMessages(doc, root, "", "", &m.messages); !s.ok()) return s;
  Expected<const JsonValue*> next = Get(doc, root, "", "NextToken", Type::kString, false);
  if (!next.ok()) return next.status();
  m.more_pages = *next != nullptr;
  std::map<std::string, size_t> by_id;
  for (size_t i = 0; i < (*results)->items.size(); ++i) {
    Status s =
        ReadMetricDataResult(doc, (*results)->items[i], Item("MetricDataResults", i), &m, &by_id);
    if (!s.ok()) return s;
  }
  for (MetricSeries& s : m.series) SortByTime(&s);
  return m;
}

Expected<SystemMetrics> ParseMetricStatistics(const Doc& doc, const JsonValue& root) {
  Expected<const JsonValue*> label = Get(doc, root, "", "Label", Type::kString, true);
  Expected<const JsonValue*> points = Get(doc, root, "", "Datapoints", Type::kArray, true);
  if (!label.ok()) return label.status();
  if (!points.ok()) return points.status();
  const std::vector<JsonValue>& dps = (*points)->items;
  if (dps.empty()) {
    return doc.Error(**points, "Datapoints",
                     "no datapoint (no data in the time range asked for: CloudWatch keeps "
                     "1-minute points for 15 days)");
  }
  if (Status s = ExpectType(doc, dps[0], "Datapoints[0]", Type::kObject); !s.ok()) return s;
  SystemMetrics m;
  m.source = MetricSource::kGetMetricStatistics;
  m.files = {doc.file};
  for (std::string_view stat : kStatistics) {
    if (!dps[0].Find(stat)) continue;
    MetricSeries s;
    NameFromLabel((*label)->text, "", &s);
    s.statistic = std::string(stat);
    m.series.push_back(std::move(s));
  }
  if (m.series.empty()) {
    return doc.Error(dps[0], "Datapoints[0]",
                     "none of Average, Maximum, Minimum, Sum, SampleCount (percentiles, "
                     "ExtendedStatistics, are not read)");
  }
  for (size_t i = 0; i < dps.size(); ++i) {
    const std::string path = Item("Datapoints", i);
    if (Status s = ExpectType(doc, dps[i], path, Type::kObject); !s.ok()) return s;
    Expected<const JsonValue*> t = Get(doc, dps[i], path, "Timestamp", Type::kString, true);
    if (!t.ok()) return t.status();
    const std::optional<double> time_s = ParseIsoTime((*t)->text);
    if (!time_s) {
      return doc.Error(**t, Member(path, "Timestamp"),
                       std::string("expected ") + kIsoExample + ", got " + Describe(**t));
    }
    if (Expected<const JsonValue*> u = Get(doc, dps[i], path, "Unit", Type::kString, false);
        !u.ok()) {
      return u.status();
    }
    for (MetricSeries& s : m.series) {
      Expected<const JsonValue*> v = Get(doc, dps[i], path, s.statistic, Type::kNumber, true);
      if (!v.ok()) return v.status();
      s.points.push_back({*time_s, (*v)->number});
    }
  }
  for (MetricSeries& s : m.series) SortByTime(&s);  // the CLI prints them in no order
  return m;
}

// ---- Debugger system-metric files ----

// -1, 0, 1, comparing runs of digits by their value ("gpu2" before "gpu10").
int NaturalCompare(std::string_view a, std::string_view b) {
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && digit(a[i2])) ++i2;
      while (j2 < b.size() && digit(b[j2])) ++j2;
      std::string_view x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      while (x.size() > 1 && x[0] == '0') x.remove_prefix(1);
      while (y.size() > 1 && y[0] == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
      if (x != y) return x < y ? -1 : 1;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j] ? -1 : 1;
      ++i;
      ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;  // "gpu01" and "gpu1" stay apart
}

struct SeriesKey {
  std::string host, metric, device;
};
struct SeriesKeyLess {
  bool operator()(const SeriesKey& a, const SeriesKey& b) const {
    if (int c = NaturalCompare(a.host, b.host); c != 0) return c < 0;
    if (a.metric != b.metric) return a.metric < b.metric;
    return NaturalCompare(a.device, b.device) < 0;
  }
};
using SeriesMap = std::map<SeriesKey, MetricSeries, SeriesKeyLess>;

constexpr const char* kDebuggerLine =
    "a SageMaker Debugger system-metric line: {\"Type\", \"Name\", \"Dimension\", \"Value\", "
    "\"NodeId\", \"Timestamp\"}";

// "FILE:1:COL: ..." of a JSON line parsed alone, as "FILE:LINE:COL: ...".
std::string AtLine(const std::string& message, const std::string& file, int line) {
  const std::string first = file + ":1:";
  if (message.compare(0, first.size(), first) != 0) return message;
  return file + ":" + std::to_string(line) + ":" + message.substr(first.size());
}

// One line's event into `out`.
Status ReadDebuggerEvent(const Doc& doc, const JsonValue& e, SeriesMap* out) {
  if (!e.is_object()) {
    return doc.Error(e, "", std::string("expected ") + kDebuggerLine + ", got " + Describe(e));
  }
  Expected<const JsonValue*> type = Get(doc, e, "", "Type", Type::kString, true);
  Expected<const JsonValue*> name = Get(doc, e, "", "Name", Type::kString, false);
  Expected<const JsonValue*> dim = Get(doc, e, "", "Dimension", Type::kString, true);
  Expected<const JsonValue*> value = Get(doc, e, "", "Value", Type::kNumber, true);
  Expected<const JsonValue*> node = Get(doc, e, "", "NodeId", Type::kString, true);
  Expected<const JsonValue*> time = Get(doc, e, "", "Timestamp", Type::kNumber, true);
  for (const Expected<const JsonValue*>* x : {&type, &name, &dim, &value, &node, &time}) {
    if (!x->ok()) return x->status();
  }
  SeriesKey key{(*node)->text, (*dim)->text, *name ? (*name)->text : ""};
  auto [it, added] = out->try_emplace(key);
  if (added) {
    it->second.host = key.host;
    it->second.metric = key.metric;
    it->second.device = key.device;
  }
  it->second.points.push_back({(*time)->number, (*value)->number});
  return Status::Ok();
}

// The file's lines into `out`; *lines_read counts them.
Status ReadDebuggerLines(std::string_view text, const std::string& file, SeriesMap* out,
                         int* lines_read) {
  int number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    Expected<JsonValue> e = ParseJson(line, file);
    if (!e.ok()) {
      return Status::InvalidInput(AtLine(e.status().message(), file, number) + " (a cut line? " +
                                  kDebuggerLine + " per line)");
    }
    if (Status s = ReadDebuggerEvent(Doc{file, number}, *e, out); !s.ok()) return s;
    ++*lines_read;
  }
  if (*lines_read == 0) {
    return Status::InvalidInput(file + ": no line; expected " + kDebuggerLine + " per line");
  }
  return Status::Ok();
}

SystemMetrics FromSeriesMap(SeriesMap map, std::vector<std::string> files) {
  SystemMetrics m;
  m.source = MetricSource::kDebugger;
  m.files = std::move(files);
  for (auto& [key, s] : map) {
    SortByTime(&s);
    m.series.push_back(std::move(s));
  }
  return m;
}

// ---- GPU utilization per host ----

struct HostSum {
  double sum_pct = 0;  // per GPU
  int samples = 0;
  std::set<std::string> devices;  // Debugger
  const MetricSeries* cloudwatch_series = nullptr;
};

std::string Number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string FilesOf(const SystemMetrics& m) {
  std::string out;
  for (const std::string& f : m.files) out += (out.empty() ? "" : ", ") + f;
  return out;
}

// A CloudWatch GPUUtilization series (summed over the GPUs) into `h`, per GPU.
Status AddCloudWatchGpu(const SystemMetrics& m, const MetricSeries& s, int gpus, HostSum* h) {
  const std::string host = s.host.empty() ? "no host in their Label" : "host " + s.host;
  if (h->cloudwatch_series) {
    return Status::InvalidInput(FilesOf(m) + ": two GPUUtilization series for " + host + " (" +
                                h->cloudwatch_series->id + ", " + s.id +
                                "); set each query's Label to \"${HOST} GPUUtilization\"");
  }
  h->cloudwatch_series = &s;
  for (const TimedValue& p : s.points) {
    if (p.value > 100.0 * gpus + 1e-9) {
      return Status::InvalidInput(
          FilesOf(m) + ": GPUUtilization of " + host + " is " + Number(p.value) + "% at " +
          FormatUtc(p.time_s) + ", more than 100% x " + std::to_string(gpus) +
          " GPUs: SageMaker sums it over the instance's GPUs; the instance has more GPUs");
    }
    h->sum_pct += p.value / gpus;
    ++h->samples;
  }
  return Status::Ok();
}

// The per-host sums of `m`'s GPUUtilization series.
Expected<std::map<std::string, HostSum>> SumGpuByHost(const SystemMetrics& m,
                                                      std::optional<int> gpus) {
  const bool cloudwatch = m.source != MetricSource::kDebugger;
  if (cloudwatch && !gpus) {
    return Status::InvalidInput(
        FilesOf(m) +
        ": CloudWatch's GPUUtilization is summed over the instance's GPUs (0-800% on 8); the "
        "number of GPUs per host is needed to make it per GPU");
  }
  std::map<std::string, HostSum> hosts;
  bool any_average = false;
  for (const MetricSeries& s : m.series) {
    if (s.metric != kGpuUtilization) continue;
    if (m.source == MetricSource::kGetMetricStatistics && s.statistic != "Average") continue;
    any_average = true;
    HostSum& h = hosts[s.host];
    if (cloudwatch) {
      if (Status e = AddCloudWatchGpu(m, s, *gpus, &h); !e.ok()) return e;
      continue;
    }
    h.devices.insert(s.device);
    for (const TimedValue& p : s.points) h.sum_pct += p.value;
    h.samples += static_cast<int>(s.points.size());
  }
  if (!any_average) {
    return Status::InvalidInput(
        FilesOf(m) + ": no GPUUtilization series" +
        (m.source == MetricSource::kGetMetricStatistics ? " with the Average statistic" : "") +
        " (a CPU instance? another metric exported?)");
  }
  return hosts;
}

GpuUtilizationSummary SpreadOf(std::vector<HostGpuUtilization> hosts) {
  GpuUtilizationSummary g;
  g.hosts = std::move(hosts);
  const HostGpuUtilization* low = &g.hosts[0];
  double high = g.hosts[0].mean_pct;
  for (const HostGpuUtilization& h : g.hosts) {
    g.mean_pct += h.mean_pct / static_cast<double>(g.hosts.size());
    if (h.mean_pct < low->mean_pct) low = &h;
    high = std::max(high, h.mean_pct);
  }
  g.spread_pct = high - low->mean_pct;
  if (g.hosts.size() >= 2 && g.spread_pct > kStragglerSpreadPct) g.straggler = low->host;
  return g;
}

// ---- Log streams ----

struct LogEvent {
  const JsonValue* message = nullptr;
  std::string stream;
};

// One element of "events", checked.
Expected<LogEvent> ReadLogEvent(const Doc& doc, const JsonValue& e, const std::string& path) {
  if (Status s = ExpectType(doc, e, path, Type::kObject); !s.ok()) return s;
  Expected<const JsonValue*> message = Get(doc, e, path, "message", Type::kString, true);
  Expected<const JsonValue*> time = Get(doc, e, path, "timestamp", Type::kNumber, false);
  Expected<const JsonValue*> ingested = Get(doc, e, path, "ingestionTime", Type::kNumber, false);
  Expected<const JsonValue*> stream = Get(doc, e, path, "logStreamName", Type::kString, false);
  Expected<const JsonValue*> id = Get(doc, e, path, "eventId", Type::kString, false);
  for (const Expected<const JsonValue*>* x : {&message, &time, &ingested, &stream, &id}) {
    if (!x->ok()) return x->status();
  }
  return LogEvent{*message, *stream ? (*stream)->text : ""};
}

std::string StreamName(const std::string& s) {
  return s.empty() ? "(no logStreamName)" : "\"" + s + "\"";
}

// The streams of `events` in order of first appearance, with their event counts.
std::vector<std::pair<std::string, int>> StreamsOf(const std::vector<LogEvent>& events) {
  std::vector<std::pair<std::string, int>> streams;
  for (const LogEvent& e : events) {
    auto it = std::find_if(streams.begin(), streams.end(),
                           [&](const auto& s) { return s.first == e.stream; });
    if (it == streams.end()) {
      streams.emplace_back(e.stream, 1);
    } else {
      ++it->second;
    }
  }
  return streams;
}

// The stream to read: `wanted`, or the only one; else an error naming them.
Expected<std::string> ChooseStream(const std::string& file,
                                   const std::vector<std::pair<std::string, int>>& streams,
                                   const std::string& wanted) {
  std::string list;
  for (const auto& [name, n] : streams) {
    list += (list.empty() ? "" : ", ") + StreamName(name) + ": " + std::to_string(n) + " events";
  }
  if (!wanted.empty()) {
    for (const auto& s : streams) {
      if (s.first == wanted) return wanted;
    }
    return Status::InvalidInput(file + ": no event of log stream \"" + wanted +
                                "\" (the file's streams: " + list + ")");
  }
  if (streams.size() == 1) return streams[0].first;
  return Status::InvalidInput(
      file + ": events of " + std::to_string(streams.size()) + " log streams (" + list +
      "); one file is one run's log: read one stream (select it by name, or export it alone: "
      "aws logs get-log-events --log-group-name /aws/sagemaker/TrainingJobs --log-stream-name "
      "NAME)");
}

// A message's lines (one for a message without newlines; a final newline ends the last line).
std::vector<std::string_view> MessageLines(std::string_view m) {
  if (!m.empty() && m.back() == '\n') m.remove_suffix(1);
  std::vector<std::string_view> lines;
  for (size_t start = 0;;) {
    const size_t end = m.find('\n', start);
    std::string_view line = m.substr(start, end == std::string_view::npos ? end : end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) return lines;
    start = end + 1;
  }
}

std::string EventName(int event) { return "events[" + std::to_string(event) + "].message"; }

// " (line N)" in a run-log message about another line, as " (events[J].message)".
std::string RenameLineRefs(std::string text, const LogEventsText& t) {
  for (size_t at = text.find("(line "); at != std::string::npos; at = text.find("(line ", at + 1)) {
    size_t i = at + 6;
    const size_t digits = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == digits || i - digits > 9 || i >= text.size() || text[i] != ')') continue;
    const size_t n = std::stoul(text.substr(digits, i - digits));
    if (n < 1 || n > t.lines.size()) continue;
    text.replace(at, i + 1 - at, "(" + EventName(t.lines[n - 1].event) + ")");
  }
  return text;
}

// ParseRunLog's "FILE:LINE[:COL]: MESSAGE" as "FILE:L:C: events[I].message: MESSAGE", L:C the
// message's place in the JSON file; other messages unchanged.
std::string NameTheEvent(const std::string& message, const std::string& file,
                         const LogEventsText& t) {
  const std::string prefix = file + ":";
  if (message.compare(0, prefix.size(), prefix) != 0) return message;
  size_t i = prefix.size();
  const size_t digits = i;
  while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i]))) ++i;
  if (i == digits || i - digits > 9) return message;
  const size_t line = std::stoul(message.substr(digits, i - digits));
  if (i + 1 < message.size() && message[i] == ':' &&
      std::isdigit(static_cast<unsigned char>(message[i + 1]))) {
    for (++i; i < message.size() && std::isdigit(static_cast<unsigned char>(message[i]));) ++i;
  }
  if (message.compare(i, 2, ": ") != 0 || line < 1 || line > t.lines.size()) return message;
  const LogLineOrigin& o = t.lines[line - 1];
  std::string where = EventName(o.event);
  if (o.message_lines > 1) {
    where += " (its line " + std::to_string(o.line_in_message) + " of " +
             std::to_string(o.message_lines) + ")";
  }
  return Located(file, o.message, where + ": " + RenameLineRefs(message.substr(i + 2), t));
}

Status WithMessage(const Status& s, std::string message) {
  switch (s.code()) {
    case Status::Code::kNotFound:
      return Status::NotFound(std::move(message));
    case Status::Code::kInternal:
      return Status::Internal(std::move(message));
    case Status::Code::kCancelled:
      return Status::Cancelled(std::move(message));
    default:
      return Status::InvalidInput(std::move(message));
  }
}

}  // namespace

const char* ToString(SageMakerFormat f) {
  switch (f) {
    case SageMakerFormat::kCloudWatch:
      return "cloudwatch";
    case SageMakerFormat::kCloudWatchLogs:
      return "cloudwatch-logs";
    case SageMakerFormat::kDebugger:
      return "debugger";
  }
  return "?";
}

Expected<SageMakerFormat> ParseSageMakerFormat(std::string_view name, std::string_view field) {
  for (SageMakerFormat f : {SageMakerFormat::kCloudWatch, SageMakerFormat::kCloudWatchLogs,
                            SageMakerFormat::kDebugger}) {
    if (name == ToString(f)) return f;
  }
  return Status::InvalidInput(std::string(field) + ": unknown SageMaker format \"" +
                              std::string(name) +
                              "\"; expected cloudwatch, cloudwatch-logs or debugger");
}

std::optional<SageMakerFormat> DetectSageMakerFormat(std::string_view head) {
  const size_t brace = head.find_first_not_of(" \t\r\n");
  if (brace == std::string_view::npos || head[brace] != '{') return std::nullopt;
  const std::string_view first_line = head.substr(brace, head.find('\n', brace) - brace);
  auto has = [](std::string_view text, std::string_view key) {
    return text.find(key) != std::string_view::npos;
  };
  if (has(first_line, "\"Dimension\"") && has(first_line, "\"NodeId\"")) {
    return SageMakerFormat::kDebugger;
  }
  if (has(head, "\"MetricDataResults\"") || has(head, "\"Datapoints\"")) {
    return SageMakerFormat::kCloudWatch;
  }
  if (has(head, "\"events\"")) return SageMakerFormat::kCloudWatchLogs;
  return std::nullopt;
}

const char* ToString(MetricSource s) {
  switch (s) {
    case MetricSource::kGetMetricData:
      return "get-metric-data";
    case MetricSource::kGetMetricStatistics:
      return "get-metric-statistics";
    case MetricSource::kDebugger:
      return "debugger";
  }
  return "?";
}

std::string FormatUtc(double time_s) {
  constexpr int64_t kMsPerDay = 86400000;
  const int64_t ms = std::llround(time_s * 1000);
  int64_t days = ms / kMsPerDay;
  if (ms % kMsPerDay < 0) --days;
  const int64_t in_day = ms - days * kMsPerDay;
  int64_t y = 0;
  int m = 0, d = 0;
  CivilFromDays(days, &y, &m, &d);
  const int64_t s = in_day / 1000;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02lld:%02lld:%02lld", static_cast<long long>(y),
                m, d, static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60),
                static_cast<long long>(s % 60));
  std::string out = buf;
  if (in_day % 1000 != 0) {
    std::snprintf(buf, sizeof buf, ".%03lld", static_cast<long long>(in_day % 1000));
    out += buf;
  }
  return out + "Z";
}

std::optional<double> ParseIsoTime(std::string_view t) {
  size_t i = 0;
  auto number = [&](int width, int* out) {
    if (i + width > t.size()) return false;
    *out = 0;
    for (int k = 0; k < width; ++k, ++i) {
      if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
      *out = *out * 10 + (t[i] - '0');
    }
    return true;
  };
  auto literal = [&](char c) {
    if (i >= t.size() || t[i] != c) return false;
    ++i;
    return true;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!(number(4, &y) && literal('-') && number(2, &mo) && literal('-') && number(2, &d) &&
        literal('T') && number(2, &h) && literal(':') && number(2, &mi) && literal(':') &&
        number(2, &s))) {
    return std::nullopt;
  }
  double fraction = 0;
  if (literal('.')) {
    const size_t first = i;
    for (double scale = 0.1; i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]));
         ++i, scale /= 10) {
      fraction += (t[i] - '0') * scale;
    }
    if (i == first) return std::nullopt;
  }
  int offset_min = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) {
    const int sign = t[i++] == '-' ? -1 : 1;
    int oh = 0, om = 0;
    if (!number(2, &oh)) return std::nullopt;
    literal(':');
    if (!number(2, &om) || oh > 23 || om > 59) return std::nullopt;
    offset_min = sign * (oh * 60 + om);
  } else if (!literal('Z')) {
    return std::nullopt;
  }
  if (i != t.size() || mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo) || h > 23 || mi > 59 ||
      s > 60) {
    return std::nullopt;
  }
  return static_cast<double>(DaysFromCivil(y, mo, d)) * 86400.0 + h * 3600 + mi * 60 + s +
         fraction - offset_min * 60;
}

Expected<SystemMetrics> ParseCloudWatchMetrics(std::string_view text, const std::string& file) {
  Expected<JsonValue> root = ParseJson(text, file);
  if (!root.ok()) return root.status();
  const Doc doc{file};
  if (root->is_object() && root->Find("MetricDataResults")) return ParseMetricData(doc, *root);
  if (root->is_object() && root->Find("Datapoints")) return ParseMetricStatistics(doc, *root);
  return Status::InvalidInput(
      file +
      ": not a CloudWatch metric export: expected a JSON object with \"MetricDataResults\" (aws "
      "cloudwatch get-metric-data) or \"Datapoints\" (aws cloudwatch get-metric-statistics)" +
      (root->is_object() && root->Find("events") ? "; its \"events\" make it a log export" : ""));
}

Expected<SystemMetrics> LoadCloudWatchMetrics(const std::string& path) {
  Expected<std::string> text = ReadText(path);
  if (!text.ok()) return text.status();
  return ParseCloudWatchMetrics(*text, path);
}

Expected<SystemMetrics> ParseDebuggerMetrics(std::string_view text, const std::string& file) {
  SeriesMap map;
  int lines = 0;
  if (Status s = ReadDebuggerLines(text, file, &map, &lines); !s.ok()) return s;
  return FromSeriesMap(std::move(map), {file});
}

Expected<SystemMetrics> LoadDebuggerMetrics(const std::vector<std::string>& paths) {
  SeriesMap map;
  for (const std::string& path : paths) {
    Expected<std::string> text = ReadText(path);
    if (!text.ok()) return text.status();
    int lines = 0;
    if (Status s = ReadDebuggerLines(*text, path, &map, &lines); !s.ok()) return s;
  }
  return FromSeriesMap(std::move(map), paths);
}

SeriesStats Statistics(const MetricSeries& series) {
  SeriesStats st;
  if (series.points.empty()) return st;
  std::vector<double> values;
  values.reserve(series.points.size());
  for (const TimedValue& p : series.points) values.push_back(p.value);
  st.count = static_cast<int>(values.size());
  st.min = *std::min_element(values.begin(), values.end());
  st.max = *std::max_element(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  st.mean = sum / st.count;
  st.median = Median(std::move(values));
  st.first_s = series.points.front().time_s;
  st.last_s = series.points.back().time_s;
  return st;
}

Expected<GpuUtilizationSummary> SummarizeGpuUtilization(const SystemMetrics& metrics,
                                                        std::optional<int> gpus_per_host) {
  if (gpus_per_host && *gpus_per_host < 1) {
    return Status::InvalidInput("GPUs per host: expected 1 or more, got " +
                                std::to_string(*gpus_per_host));
  }
  Expected<std::map<std::string, HostSum>> sums = SumGpuByHost(metrics, gpus_per_host);
  if (!sums.ok()) return sums.status();
  std::vector<HostGpuUtilization> hosts;
  for (const auto& [name, h] : *sums) {
    if (h.samples == 0) continue;
    const int gpus = metrics.source == MetricSource::kDebugger ? static_cast<int>(h.devices.size())
                                                               : *gpus_per_host;
    if (gpus_per_host && gpus != *gpus_per_host) {
      return Status::InvalidInput(FilesOf(metrics) + ": host " + name + " reports " +
                                  std::to_string(gpus) + " GPUs, but " +
                                  std::to_string(*gpus_per_host) + " GPUs per host were given");
    }
    hosts.push_back({name, h.sum_pct / h.samples, gpus, h.samples});
  }
  if (hosts.empty()) {
    return Status::InvalidInput(FilesOf(metrics) + ": the GPUUtilization series have no point");
  }
  std::sort(hosts.begin(), hosts.end(),
            [](const auto& a, const auto& b) { return NaturalCompare(a.host, b.host) < 0; });
  return SpreadOf(std::move(hosts));
}

Expected<LogEventsText> UnwrapLogEvents(std::string_view json, const std::string& file,
                                        const std::string& stream) {
  Expected<JsonValue> root = ParseJson(json, file);
  if (!root.ok()) return root.status();
  if (!root->is_object() || !root->Find("events")) {
    return Status::InvalidInput(file +
                                ": not a CloudWatch Logs export: expected a JSON object with "
                                "\"events\" (aws logs get-log-events or filter-log-events)");
  }
  const Doc doc{file};
  Expected<const JsonValue*> events = Get(doc, *root, "", "events", Type::kArray, true);
  if (!events.ok()) return events.status();
  for (std::string_view token : {"nextForwardToken", "nextBackwardToken", "nextToken"}) {
    if (Expected<const JsonValue*> t = Get(doc, *root, "", token, Type::kString, false); !t.ok()) {
      return t.status();
    }
  }
  std::vector<LogEvent> all;
  for (size_t i = 0; i < (*events)->items.size(); ++i) {
    Expected<LogEvent> e = ReadLogEvent(doc, (*events)->items[i], Item("events", i));
    if (!e.ok()) return e.status();
    all.push_back(*e);
  }
  if (all.empty()) {
    return Status::InvalidInput(
        file +
        ": no log event (\"events\" is empty: get-log-events returns the stream's latest "
        "events unless --start-from-head, and up to 1 MB a call)");
  }
  Expected<std::string> chosen = ChooseStream(file, StreamsOf(all), stream);
  if (!chosen.ok()) return chosen.status();
  LogEventsText t;
  t.stream = *chosen;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].stream != t.stream) continue;
    ++t.events;
    const std::vector<std::string_view> lines = MessageLines(all[i].message->text);
    for (size_t k = 0; k < lines.size(); ++k) {
      t.text.append(lines[k]).push_back('\n');
      t.lines.push_back({static_cast<int>(i), all[i].message->pos, static_cast<int>(k) + 1,
                         static_cast<int>(lines.size())});
    }
  }
  return t;
}

Expected<RunLog> ParseCloudWatchRunLog(std::string_view json, const std::string& file,
                                       std::optional<LogFormat> format, const std::string& stream) {
  Expected<LogEventsText> t = UnwrapLogEvents(json, file, stream);
  if (!t.ok()) return t.status();
  Expected<RunLog> log = ParseRunLog(t->text, file, format);
  if (!log.ok()) return WithMessage(log.status(), NameTheEvent(log.status().message(), file, *t));
  for (StepSample& s : log->steps) {
    if (s.line >= 1 && static_cast<size_t>(s.line) <= t->lines.size()) {
      s.line = t->lines[s.line - 1].message.line;
    }
  }
  return log;
}

Expected<RunLog> LoadCloudWatchRunLog(const std::string& path, std::optional<LogFormat> format,
                                      const std::string& stream) {
  Expected<std::string> text = ReadText(path);
  if (!text.ok()) return text.status();
  return ParseCloudWatchRunLog(*text, path, format, stream);
}

}  // namespace trainsim::observe
