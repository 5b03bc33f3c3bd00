// What a SageMaker training job recorded about itself, read back (docs/observe.md section 1).
//
// Three inputs, each exported by the user (nothing here calls AWS):
// - CloudWatch metric exports: the JSON `aws cloudwatch get-metric-data` writes
//   ({"MetricDataResults": [{"Id", "Label", "Timestamps", "Values", "StatusCode"}], "Messages"})
//   or `aws cloudwatch get-metric-statistics` writes ({"Label", "Datapoints": [{"Timestamp",
//   "Average", ..., "Unit"}]}), of the instance metrics SageMaker publishes per training job
//   (namespace /aws/sagemaker/TrainingJobs, dimension Host = "JOB/algo-N"): GPUUtilization,
//   GPUMemoryUtilization, CPUUtilization, MemoryUtilization, DiskUtilization. GPUUtilization and
//   GPUMemoryUtilization are summed over the instance's GPUs (0-800% on 8 GPUs), CPUUtilization
//   over its vCPUs.
// - Training-job log streams exported by `aws logs get-log-events` or `aws logs
//   filter-log-events` ({"events": [{"timestamp", "message", ...}], ...}): the messages are the
//   job's stdout and stderr lines, read as a run log (observe/run_log.h).
// - SageMaker Debugger's system-metric files (S3 OUTPUT/profiler-output/system/incremental/
//   .../TIMESTAMP.algo-N.json): one JSON object per line, {"Type": "gpu", "Name": "gpu0",
//   "Dimension": "GPUUtilization", "Value": 87.5, "NodeId": "algo-1", "Timestamp": 1591160699.45},
//   a value per GPU or CPU core (0-100) and sampling time in seconds since the epoch.
//
// Parsers take the text and the file name and keep no state (thread-safe). Errors name the file,
// and where a value is at fault its line, column and field path
// ("x.json:9:14: MetricDataResults[2].Values[5]: expected a number, got \"n/a\"").
// Unknown keys of AWS's output are skipped (AWS adds fields); known ones are type-checked.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_doc.h"
#include "core/status.h"
#include "observe/run_log.h"

namespace trainsim::observe {

enum class SageMakerFormat { kCloudWatch, kCloudWatchLogs, kDebugger };
const char* ToString(SageMakerFormat f);  // "cloudwatch", "cloudwatch-logs", "debugger"
// One of the names above; anything else is an error naming `field`.
Expected<SageMakerFormat> ParseSageMakerFormat(std::string_view name, std::string_view field);
// The format of a file from its first bytes (64 KiB are plenty): a JSON object with
// "MetricDataResults" or "Datapoints" (cloudwatch), with "events" (cloudwatch-logs), or a first
// line that is an object with "Dimension" and "NodeId" (debugger). nullopt: none of these.
std::optional<SageMakerFormat> DetectSageMakerFormat(std::string_view head);

// ---- Metrics (CloudWatch exports and Debugger files) ----

struct TimedValue {
  double time_s = 0;  // seconds since 1970-01-01T00:00:00Z
  double value = 0;
};

// One time series as the file holds it, its points in time order.
struct MetricSeries {
  std::string metric;     // "GPUUtilization": CloudWatch's metric name, Debugger's Dimension
  std::string host;       // "JOB/algo-1" (CloudWatch, from the Label), "algo-1" (Debugger's
                          // NodeId); "" where the export does not say
  std::string device;     // Debugger's Name ("gpu0", "cpu12"); "" otherwise
  std::string statistic;  // get-metric-statistics' "Average", "Maximum", ...; "" when not said
  std::string id;         // get-metric-data's Id; "" otherwise
  bool partial = false;   // get-metric-data's (last) StatusCode PartialData: points are missing
  std::vector<TimedValue> points;
};

enum class MetricSource { kGetMetricData, kGetMetricStatistics, kDebugger };
const char* ToString(MetricSource s);  // "get-metric-data", "get-metric-statistics", "debugger"

struct SystemMetrics {
  MetricSource source = MetricSource::kGetMetricData;
  std::vector<std::string> files;
  // get-metric-data: in the order of the Ids' first results (the AWS CLI's pagination repeats an
  // Id on every page; they are joined). Debugger: by host, metric, device (gpu2 before gpu10).
  std::vector<MetricSeries> series;
  std::vector<std::string> messages;  // get-metric-data's Messages: "CODE: VALUE", "ID: CODE: ..."
  bool more_pages = false;  // get-metric-data's NextToken: later pages are not in the file
};

// A CloudWatch export. The metric is the Label's word that names a SageMaker instance metric,
// else the Label (without the host), else the Id; the host is the Label's word of the form
// "JOB/algo-N" (a Label "${JOB}/algo-2 GPUUtilization" names both; CloudWatch's default Label
// is the metric's name alone, and get-metric-statistics' output never names the host).
// Refused: Timestamps and Values of different lengths, a time that is not ISO 8601 with a zone
// ("2026-11-27T08:00:00Z", "...+00:00", as the CLI writes them), a StatusCode InternalError or
// Forbidden, no result at all, a JSON document of neither API.
Expected<SystemMetrics> ParseCloudWatchMetrics(std::string_view text, const std::string& file);
Expected<SystemMetrics> LoadCloudWatchMetrics(const std::string& path);

// Debugger system-metric files; several files (one a minute per host) are joined.
// Refused: a line that is not a JSON object, a missing or mistyped key (Name may be absent).
Expected<SystemMetrics> ParseDebuggerMetrics(std::string_view text, const std::string& file);
Expected<SystemMetrics> LoadDebuggerMetrics(const std::vector<std::string>& paths);

struct SeriesStats {
  int count = 0;  // 0: the series has no point, and the figures below are 0
  double mean = 0, median = 0, min = 0, max = 0;
  double first_s = 0, last_s = 0;  // the first and last point's time, seconds since the epoch
};
SeriesStats Statistics(const MetricSeries& series);

// Mean GPU utilization per host, per GPU (0-100%), and whether the hosts differ widely.
struct HostGpuUtilization {
  std::string host;  // "" when the export does not name it
  double mean_pct = 0;
  int gpus = 0;     // the GPUs per host given (CloudWatch), the GPU devices seen (Debugger)
  int samples = 0;  // points read
};
struct GpuUtilizationSummary {
  std::vector<HostGpuUtilization> hosts;  // by host name
  double mean_pct = 0;                    // the hosts' means averaged, each host alike
  double spread_pct = 0;                  // highest host mean - lowest (percentage points)
  // The host with the lowest mean, where 2+ hosts spread by more than kStragglerSpreadPct: its
  // GPUs idle more (its input pipeline or CPU work?) while the others' collectives wait for it
  // (NCCL's waits count as GPU utilization).
  std::optional<std::string> straggler;
};
// Assumption: a spread of more than 10 percentage points between hosts of one synchronous job is
// worth a look; a few points are noise of one-minute samples.
inline constexpr double kStragglerSpreadPct = 10;

// From the GPUUtilization series. CloudWatch sums over the instance's GPUs, so `gpus_per_host`
// is needed to make it per GPU (an error without it, and for a value above 100% x gpus_per_host:
// the instance has more GPUs than given). Debugger's values are per GPU already; a given
// `gpus_per_host` must then match the GPUs of each host. Also refused: no GPUUtilization series,
// two CloudWatch series for one host (set each query's Label to "${HOST} GPUUtilization").
Expected<GpuUtilizationSummary> SummarizeGpuUtilization(const SystemMetrics& metrics,
                                                        std::optional<int> gpus_per_host);

// "2026-11-27T08:00:00Z" ("...00.250Z" when the time has milliseconds).
std::string FormatUtc(double time_s);
// An ISO 8601 date-time with seconds and a zone ("2026-11-27T08:00:00Z", "...00.5+01:00"), as
// seconds since the epoch; nullopt for anything else.
std::optional<double> ParseIsoTime(std::string_view text);

// ---- Log streams (CloudWatch Logs exports) ----

// Where one line of the unwrapped text came from.
struct LogLineOrigin {
  int event = 0;            // its index in "events"
  SourcePos message;        // of the event's "message" string in the file
  int line_in_message = 1;  // 1-based; a message with newlines makes several lines
  int message_lines = 1;
};

struct LogEventsText {
  std::string text;                  // the messages in file order, one line each ('\n' ended)
  std::vector<LogLineOrigin> lines;  // per line of `text`
  std::string stream;                // filter-log-events' logStreamName; "" when not said
  int events = 0;                    // events read (of `stream`)
};

// The messages of a get-log-events or filter-log-events export. `stream`: the log stream to keep
// ("" = all, which must then be one: events of several streams are refused with their names,
// since one file is one run's log; SageMaker names a training job's streams
// "JOB/algo-N-EPOCH"). Also refused: no "events" array, an event without a string "message".
Expected<LogEventsText> UnwrapLogEvents(std::string_view json, const std::string& file,
                                        const std::string& stream);

// The export's messages read by ParseRunLog. Its "FILE:LINE: ..." errors name the event instead
// ("FILE:L:C: events[12].message: ..." at the message's place in the file); a StepSample's line
// is the line of its event's message in the file.
Expected<RunLog> ParseCloudWatchRunLog(std::string_view json, const std::string& file,
                                       std::optional<LogFormat> format, const std::string& stream);
Expected<RunLog> LoadCloudWatchRunLog(const std::string& path, std::optional<LogFormat> format,
                                      const std::string& stream);

}  // namespace trainsim::observe
