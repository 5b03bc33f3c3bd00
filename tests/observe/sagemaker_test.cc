// SageMaker's records read back (observe/sagemaker.h): CloudWatch metric exports, training-job
// log streams exported from CloudWatch Logs, SageMaker Debugger system-metric files, and every
// refusal with its file, place and field path. The fixtures are in tests/observe/data
// (README-sagemaker.md: their formats' sources; their numbers are synthetic).
#include "observe/sagemaker.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/test_util.h"

namespace trainsim::observe {
namespace {

const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/observe/data/";
const std::string kJob = "llama-pretrain-2026-11-27-07-50-12-345";

double At(const char* iso) { return *ParseIsoTime(iso); }

TEST(SageMakerTimes, IsoTimesAsTheCliWritesThem) {
  EXPECT_EQ(*ParseIsoTime("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*ParseIsoTime("2000-03-01T00:00:00Z"), 951868800);
  EXPECT_EQ(*ParseIsoTime("2026-11-27T08:00:00+00:00"), 1795766400);  // AWS CLI v2
  EXPECT_EQ(*ParseIsoTime("2026-11-27T08:00:00Z"), 1795766400);       // the API, CLI v1
  EXPECT_EQ(*ParseIsoTime("2026-11-27T09:30:00+01:30"), 1795766400);
  EXPECT_DOUBLE_EQ(*ParseIsoTime("2026-11-27T08:00:00.25Z"), 1795766400.25);
  for (const char* bad : {"2026-11-27T08:00:00", "2026-11-27 08:00:00Z", "2026-02-29T00:00:00Z",
                          "2026-11-27T24:00:00Z", "2026-11-27T08:00Z", "1795766400",
                          "2026-11-27T08:00:00.Z", "2026-11-27T08:00:00Zulu"}) {
    EXPECT_FALSE(ParseIsoTime(bad)) << bad;
  }
  EXPECT_TRUE(ParseIsoTime("2024-02-29T00:00:00Z"));
  EXPECT_EQ(FormatUtc(1795766400), "2026-11-27T08:00:00Z");
  EXPECT_EQ(FormatUtc(1795766400.25), "2026-11-27T08:00:00.250Z");
  EXPECT_EQ(FormatUtc(-1), "1969-12-31T23:59:59Z");
}

// get-metric-data as AWS CLI v2 writes it: newest point first (the API's default
// TimestampDescending), the CPU query's two pages joined under one Id.
TEST(CloudWatchMetrics, GetMetricDataPerHostWithAStraggler) {
  Expected<SystemMetrics> m = LoadCloudWatchMetrics(kData + "cloudwatch-get-metric-data.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->source, MetricSource::kGetMetricData);
  ASSERT_EQ(m->series.size(), 4u);
  const MetricSeries& gpu1 = m->series[0];
  EXPECT_EQ(gpu1.id, "gpu1");
  EXPECT_EQ(gpu1.metric, "GPUUtilization");
  EXPECT_EQ(gpu1.host, kJob + "/algo-1");
  EXPECT_FALSE(gpu1.partial);
  EXPECT_EQ(gpu1.points.front().value, 702.0);  // 08:00, the file's last
  const SeriesStats s = Statistics(gpu1);
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.mean, 700.0);  // 702 698.5 705.5 700 694
  EXPECT_DOUBLE_EQ(s.median, 700.0);
  EXPECT_DOUBLE_EQ(s.min, 694.0);
  EXPECT_DOUBLE_EQ(s.max, 705.5);
  EXPECT_EQ(FormatUtc(s.first_s), "2026-11-27T08:00:00Z");
  EXPECT_EQ(FormatUtc(s.last_s), "2026-11-27T08:04:00Z");
  const MetricSeries& cpu = m->series[3];
  EXPECT_EQ(cpu.metric, "CPUUtilization");
  EXPECT_EQ(cpu.points.size(), 5u);
  EXPECT_FALSE(cpu.partial);  // PartialData on the first page, Complete on the last
  EXPECT_DOUBLE_EQ(Statistics(cpu).median, 1490.0);
  EXPECT_TRUE(m->messages.empty());
  EXPECT_FALSE(m->more_pages);

  Expected<GpuUtilizationSummary> g = SummarizeGpuUtilization(*m, 8);  // ml.p4d.24xlarge
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->hosts.size(), 2u);
  EXPECT_DOUBLE_EQ(g->hosts[0].mean_pct, 87.5);  // 700% / 8
  EXPECT_DOUBLE_EQ(g->hosts[1].mean_pct, 70.0);  // 560% / 8
  EXPECT_EQ(g->hosts[1].gpus, 8);
  EXPECT_EQ(g->hosts[1].samples, 5);
  EXPECT_DOUBLE_EQ(g->mean_pct, 78.75);
  EXPECT_DOUBLE_EQ(g->spread_pct, 17.5);
  EXPECT_EQ(*g->straggler, kJob + "/algo-2");

  const std::string file = kData + "cloudwatch-get-metric-data.json";
  EXPECT_EQ(SummarizeGpuUtilization(*m, std::nullopt).status().message(),
            file +
                ": CloudWatch's GPUUtilization is summed over the instance's GPUs (0-800% on 8); "
                "the number of GPUs per host is needed to make it per GPU");
  EXPECT_EQ(SummarizeGpuUtilization(*m, 4).status().message(),
            file + ": GPUUtilization of host " + kJob +
                "/algo-1 is 702% at 2026-11-27T08:00:00Z, more than 100% x 4 GPUs: SageMaker "
                "sums it over the instance's GPUs; the instance has more GPUs");
}

TEST(CloudWatchMetrics, GetMetricStatisticsOneSeriesPerStatistic) {
  Expected<SystemMetrics> m =
      LoadCloudWatchMetrics(kData + "cloudwatch-get-metric-statistics.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->source, MetricSource::kGetMetricStatistics);
  ASSERT_EQ(m->series.size(), 2u);
  EXPECT_EQ(m->series[0].statistic, "Average");
  EXPECT_EQ(m->series[1].statistic, "Maximum");
  EXPECT_EQ(m->series[0].metric, "GPUUtilization");
  EXPECT_EQ(m->series[0].host, "");  // its output never names the host
  ASSERT_EQ(m->series[0].points.size(), 4u);
  EXPECT_EQ(m->series[0].points[0].time_s, At("2026-11-27T08:00:00Z"));  // sorted
  EXPECT_DOUBLE_EQ(Statistics(m->series[1]).max, 371.25);
  Expected<GpuUtilizationSummary> g = SummarizeGpuUtilization(*m, 4);  // ml.g5.12xlarge
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->hosts.size(), 1u);
  EXPECT_DOUBLE_EQ(g->hosts[0].mean_pct, 76.25);  // the Average series only: 305% / 4
  EXPECT_FALSE(g->straggler);
}

TEST(CloudWatchMetrics, LabelsNameTheMetricAndHost) {
  const std::string text = R"({"MetricDataResults": [
    {"Id": "m1", "Label": "GPUUtilization", "Timestamps": [], "Values": []},
    {"Id": "m2", "Label": "job-1/algo-3 DiskUtilization", "Timestamps": [], "Values": []},
    {"Id": "m3", "Label": "algo-2 step time", "Timestamps": [], "Values": []},
    {"Id": "m4", "Timestamps": ["2026-11-27T08:00:00Z"], "Values": [5],
     "StatusCode": "PartialData", "Messages": [{"Code": "MaxMetricsExceeded", "Value": "x"}]}],
  "NextToken": "abc", "Messages": [{"Code": "Warn", "Value": "slow"}]})";
  Expected<SystemMetrics> m = ParseCloudWatchMetrics(text, "l.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->series[0].metric, "GPUUtilization");
  EXPECT_EQ(m->series[0].host, "");
  EXPECT_EQ(m->series[1].metric, "DiskUtilization");
  EXPECT_EQ(m->series[1].host, "job-1/algo-3");
  EXPECT_EQ(m->series[2].metric, "step time");
  EXPECT_EQ(m->series[2].host, "algo-2");
  EXPECT_EQ(m->series[3].metric, "m4");
  EXPECT_TRUE(m->series[3].partial);
  EXPECT_EQ(Statistics(m->series[0]).count, 0);
  EXPECT_TRUE(m->more_pages);
  ASSERT_EQ(m->messages.size(), 2u);
  EXPECT_EQ(m->messages[0], "Warn: slow");
  EXPECT_EQ(m->messages[1], "m4: MaxMetricsExceeded: x");
}

TEST(CloudWatchMetrics, ErrorsNameTheFileThePlaceAndTheField) {
  struct Case {
    std::string text, message;
  };
  const Case kCases[] = {
      {R"({"MetricDataResults": [{"Id": "a", "Timestamps": ["2026-11-27T08:00:00Z"],
  "Values": [1, "n/a"]}]})",
       "m.json:2:13: MetricDataResults[0]: 1 Timestamps but 2 Values (each time has its value: a "
       "cut or edited export?)"},
      {R"({"MetricDataResults": [{"Id": "a", "Timestamps": ["2026-11-27T08:00:00Z"],
  "Values": ["n/a"]}]})",
       "m.json:2:14: MetricDataResults[0].Values[0]: expected a number, got \"n/a\""},
      {R"({"MetricDataResults": [{"Id": "a", "Timestamps": [1795766400], "Values": [1]}]})",
       "m.json:1:51: MetricDataResults[0].Timestamps[0]: expected an ISO 8601 time with a zone "
       "(\"2026-11-27T08:00:00Z\", as the AWS CLI writes it), got 1795766400"},
      {R"({"MetricDataResults": [{"Id": "a", "Values": []}]})",
       "m.json:1:24: MetricDataResults[0]: missing \"Timestamps\""},
      {R"({"MetricDataResults": [{"Id": "a", "Timestamps": [], "Values": [],
  "StatusCode": "Forbidden"}]})",
       "m.json:2:17: MetricDataResults[0].StatusCode: \"Forbidden\": CloudWatch returned no data "
       "for this metric (InternalError: export again; Forbidden: the exporting role may not "
       "read it)"},
      {R"({"MetricDataResults": [{"Id": 7, "Timestamps": [], "Values": []}]})",
       "m.json:1:31: MetricDataResults[0].Id: expected a string, got 7"},
      {R"({"MetricDataResults": []})",
       "m.json:1:23: MetricDataResults: no result (the queries matched no metric: the job's name "
       "in the Host dimension? the time range?)"},
      {R"({"Label": "GPUUtilization", "Datapoints": [
  {"Timestamp": "2026-11-27T08:00:00Z", "Average": 1.0, "Maximum": 2.0, "Unit": "Percent"},
  {"Timestamp": "2026-11-27T08:01:00Z", "Average": 1.0, "Unit": "Percent"}]})",
       "m.json:3:3: Datapoints[1]: missing \"Maximum\""},
      {R"({"Label": "GPUUtilization", "Datapoints": [{"Timestamp": "2026-11-27T08:00:00Z",
  "ExtendedStatistics": {"p90": 3.0}}]})",
       "m.json:1:44: Datapoints[0]: none of Average, Maximum, Minimum, Sum, SampleCount "
       "(percentiles, ExtendedStatistics, are not read)"},
      {R"({"MetricDataResults": [{"Id": "a", "Timestamps": [], "Values": [})",
       "m.json:1:65: invalid JSON: expected a value, got '}'"},
      {R"({"events": []})",
       "m.json: not a CloudWatch metric export: expected a JSON object with "
       "\"MetricDataResults\" (aws cloudwatch get-metric-data) or \"Datapoints\" (aws cloudwatch "
       "get-metric-statistics); its \"events\" make it a log export"},
  };
  for (const Case& c : kCases) {
    Expected<SystemMetrics> m = ParseCloudWatchMetrics(c.text, "m.json");
    ASSERT_FALSE(m.ok()) << c.text;
    EXPECT_EQ(m.status().message(), c.message);
  }
  EXPECT_EQ(LoadCloudWatchMetrics(kData + "missing.json").status().message(),
            kData + "missing.json: cannot read the file");

  const std::string two = R"({"MetricDataResults": [
    {"Id": "a", "Label": "GPUUtilization", "Timestamps": ["2026-11-27T08:00:00Z"], "Values": [1]},
    {"Id": "b", "Label": "GPUUtilization", "Timestamps": ["2026-11-27T08:00:00Z"], "Values": [2]}
  ]})";
  Expected<SystemMetrics> m = ParseCloudWatchMetrics(two, "two.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(SummarizeGpuUtilization(*m, 8).status().message(),
            "two.json: two GPUUtilization series for no host in their Label (a, b); set each "
            "query's Label to \"${HOST} GPUUtilization\"");
  m->series.resize(0);
  EXPECT_EQ(SummarizeGpuUtilization(*m, 8).status().message(),
            "two.json: no GPUUtilization series (a CPU instance? another metric exported?)");
  EXPECT_EQ(SummarizeGpuUtilization(*m, 0).status().message(),
            "GPUs per host: expected 1 or more, got 0");
}

// Two hosts' files (one minute each) joined; their values are per GPU already.
TEST(DebuggerMetrics, SystemMetricFilesPerHostAndDevice) {
  Expected<SystemMetrics> m = LoadDebuggerMetrics(
      {kData + "debugger-1795766400.algo-2.json", kData + "debugger-1795766400.algo-1.json"});
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->source, MetricSource::kDebugger);
  ASSERT_EQ(m->series.size(), 12u);  // 2 hosts x (2 CPUs + 2 GPUs x 2 dimensions)
  const MetricSeries& first = m->series[0];
  EXPECT_EQ(first.host, "algo-1");
  EXPECT_EQ(first.metric, "CPUUtilization");
  EXPECT_EQ(first.device, "cpu0");
  const MetricSeries& gpu0 = m->series[4];
  EXPECT_EQ(gpu0.metric, "GPUUtilization");
  EXPECT_EQ(gpu0.device, "gpu0");
  const SeriesStats s = Statistics(gpu0);
  EXPECT_EQ(s.count, 3);
  EXPECT_DOUBLE_EQ(s.mean, 92.0);
  EXPECT_EQ(FormatUtc(s.first_s), "2026-11-27T08:00:00.011Z");
  EXPECT_EQ(FormatUtc(s.last_s), "2026-11-27T08:00:01.011Z");
  Expected<GpuUtilizationSummary> g = SummarizeGpuUtilization(*m, std::nullopt);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->hosts.size(), 2u);
  EXPECT_EQ(g->hosts[0].host, "algo-1");
  EXPECT_DOUBLE_EQ(g->hosts[0].mean_pct, 91.0);
  EXPECT_EQ(g->hosts[0].gpus, 2);
  EXPECT_DOUBLE_EQ(g->hosts[1].mean_pct, 87.5);
  EXPECT_DOUBLE_EQ(g->spread_pct, 3.5);
  EXPECT_FALSE(g->straggler);  // within kStragglerSpreadPct
  EXPECT_EQ(SummarizeGpuUtilization(*m, 8).status().message(),
            kData + "debugger-1795766400.algo-2.json, " + kData +
                "debugger-1795766400.algo-1.json: host algo-1 reports 2 GPUs, but 8 GPUs per "
                "host were given");
}

TEST(DebuggerMetrics, DevicesInNumberOrderAndErrors) {
  const std::string line =
      R"({"Type":"gpu","Name":"gpu10","Dimension":"GPUUtilization","Value":1,"NodeId":"algo-1","Timestamp":5})"
      "\n"
      R"({"Type":"gpu","Name":"gpu2","Dimension":"GPUUtilization","Value":3,"NodeId":"algo-1","Timestamp":5})"
      "\n\n";
  Expected<SystemMetrics> m = ParseDebuggerMetrics(line, "d.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->series[0].device, "gpu2");
  EXPECT_EQ(m->series[1].device, "gpu10");

  struct Case {
    std::string text, message;
  };
  const Case kCases[] = {
      {line + R"({"Type":"gpu","Name":"gpu0","Dimension":"GPUUtiliz)",
       "d.json:4:51: invalid JSON: unterminated string (a cut line? a SageMaker Debugger "
       "system-metric line: {\"Type\", \"Name\", \"Dimension\", \"Value\", \"NodeId\", "
       "\"Timestamp\"} per line)"},
      {R"({"Type":"gpu","Name":"gpu0","Value":1,"NodeId":"algo-1","Timestamp":5})",
       "d.json:1:1: missing \"Dimension\""},
      {"\n"
       R"({"Type":"gpu","Dimension":"GPUUtilization","Value":"1","NodeId":"a","Timestamp":5})",
       "d.json:2:52: Value: expected a number, got \"1\""},
      {"[1, 2]\n",
       "d.json:1:1: expected a SageMaker Debugger system-metric line: {\"Type\", \"Name\", "
       "\"Dimension\", \"Value\", \"NodeId\", \"Timestamp\"}, got an array"},
      {"\n\n",
       "d.json: no line; expected a SageMaker Debugger system-metric line: {\"Type\", \"Name\", "
       "\"Dimension\", \"Value\", \"NodeId\", \"Timestamp\"} per line"},
  };
  for (const Case& c : kCases) {
    Expected<SystemMetrics> bad = ParseDebuggerMetrics(c.text, "d.json");
    ASSERT_FALSE(bad.ok()) << c.text;
    EXPECT_EQ(bad.status().message(), c.message);
  }
}

// A Megatron-LM job's stdout from its log stream: the messages are the log's lines.
TEST(CloudWatchLogs, GetLogEventsIsARunLog) {
  Expected<RunLog> log =
      LoadCloudWatchRunLog(kData + "logs-get-log-events-megatron.json", std::nullopt, "");
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kMegatron);
  ASSERT_EQ(log->steps.size(), 4u);
  EXPECT_EQ(log->steps[0].iteration, 10);
  EXPECT_EQ(log->steps[0].line, 20);  // events[3].message's line in the JSON file
  Expected<StepSummary> s = Summarize(*log, 1);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->median_step_s, 2.0);  // 2.0 2.1 1.9
  Expected<LogEventsText> t =
      UnwrapLogEvents(test::ReadFile(kData + "logs-get-log-events-megatron.json"), "g.json", "");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->events, 7);
  EXPECT_EQ(t->stream, "");
  EXPECT_EQ(t->text.substr(0, t->text.find('\n', t->text.find('\n') + 1) + 1),
            "[2026-11-27 07:58:02,117] torch.distributed.run: [WARNING] Setting OMP_NUM_THREADS "
            "environment variable for each process to be 1 in default, to avoid your system being "
            "overloaded, please further tune the variable for optimal performance in your "
            "application as needed.\n> building GPT model ...\n");
}

// filter-log-events over the job's log group holds every host's stream: one is read at a time.
TEST(CloudWatchLogs, FilterLogEventsOneStreamAtATime) {
  const std::string file = kData + "logs-filter-log-events-2hosts.json";
  const std::string s1 = kJob + "/algo-1-1795765812", s2 = kJob + "/algo-2-1795765812";
  EXPECT_EQ(LoadCloudWatchRunLog(file, std::nullopt, "").status().message(),
            file + ": events of 2 log streams (\"" + s1 + "\": 3 events, \"" + s2 +
                "\": 3 events); one file is one run's log: read one stream (select it by name, "
                "or export it alone: aws logs get-log-events --log-group-name "
                "/aws/sagemaker/TrainingJobs --log-stream-name NAME)");
  Expected<RunLog> log = LoadCloudWatchRunLog(file, std::nullopt, s2);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->format, LogFormat::kDeepSpeed);
  EXPECT_TRUE(log->per_sample);
  ASSERT_EQ(log->steps.size(), 3u);
  EXPECT_DOUBLE_EQ(log->steps[1].step_s, 1 / 127.0);
  EXPECT_EQ(log->steps[0].line, 13);  // events[1]
  EXPECT_EQ(LoadCloudWatchRunLog(file, std::nullopt, "algo-3").status().message(),
            file + ": no event of log stream \"algo-3\" (the file's streams: \"" + s1 +
                "\": 3 events, \"" + s2 + "\": 3 events)");
}

std::string Events(const std::vector<std::string>& messages) {
  std::string out = "{\"events\": [\n";
  for (size_t i = 0; i < messages.size(); ++i) {
    out += "  {\"timestamp\": " + std::to_string(1795766400000 + i) + ", \"message\": \"" +
           messages[i] + "\"}" + (i + 1 < messages.size() ? ",\n" : "\n");
  }
  return out + "]}\n";
}

std::string Megatron(int iteration, const std::string& ms) {
  return " iteration " + std::to_string(iteration) +
         "/ 1000 | elapsed time per iteration (ms): " + ms + " | global batch size: 8 |";
}

TEST(CloudWatchLogs, ErrorsNameTheEvent) {
  struct Case {
    std::string json, message;
  };
  const Case kCases[] = {
      {Events({Megatron(10, "100.0"), "loading data", Megatron(20, "fast")}),
       "l.json:4:43: events[2].message: \"elapsed time per iteration (ms)\": expected a positive "
       "number of milliseconds, got \"fast\""},
      {Events({Megatron(10, "100.0"), Megatron(20, "100.0"), Megatron(5, "100.0")}),
       "l.json:4:43: events[2].message: iteration 5 after iteration 20 (events[1].message): two "
       "runs in one log (a restart?); give each run its own file"},
      {Events({"Traceback:\\n" + Megatron(10, "-1")}),
       "l.json:2:43: events[0].message (its line 2 of 2): \"elapsed time per iteration (ms)\": "
       "expected a positive number of milliseconds, got \"-1\""},
      {Events({"Epoch 1/10"}),
       "l.json: no step line of a known format (Megatron-LM's \"iteration N/M | ... | elapsed "
       "time per iteration (ms): MS |\", DeepSpeed's \"global_step=G, ..., "
       "CurrSamplesPerSec=S\", trainsim-train's {\"step\": N, \"step_s\": S}, torchtitan's "
       "\"step: N  loss: L  ...  tps: T\", or the Hugging Face Trainer's progress bar \"N/M "
       "[ELAPSED<LEFT, R it/s]\" or {'train_runtime': R, ..., 'train_steps_per_second': S})"},
      {R"({"events": [{"timestamp": 1, "message": 5}]})",
       "l.json:1:41: events[0].message: expected a string, got 5"},
      {R"({"events": [{"timestamp": "1", "message": "x"}]})",
       "l.json:1:27: events[0].timestamp: expected a number, got \"1\""},
      {R"({"events": [], "nextForwardToken": "f/1"})",
       "l.json: no log event (\"events\" is empty: get-log-events returns the stream's latest "
       "events unless --start-from-head, and up to 1 MB a call)"},
      {R"({"MetricDataResults": []})",
       "l.json: not a CloudWatch Logs export: expected a JSON object with \"events\" (aws logs "
       "get-log-events or filter-log-events)"},
  };
  for (const Case& c : kCases) {
    Expected<RunLog> log = ParseCloudWatchRunLog(c.json, "l.json", std::nullopt, "");
    ASSERT_FALSE(log.ok()) << c.json;
    EXPECT_EQ(log.status().message(), c.message);
  }
}

TEST(SageMakerFormats, DetectedFromTheFilesHead) {
  auto detect = [](const std::string& name) {
    return DetectSageMakerFormat(test::ReadFile(kData + name));
  };
  EXPECT_EQ(detect("cloudwatch-get-metric-data.json"), SageMakerFormat::kCloudWatch);
  EXPECT_EQ(detect("cloudwatch-get-metric-statistics.json"), SageMakerFormat::kCloudWatch);
  EXPECT_EQ(detect("logs-get-log-events-megatron.json"), SageMakerFormat::kCloudWatchLogs);
  EXPECT_EQ(detect("logs-filter-log-events-2hosts.json"), SageMakerFormat::kCloudWatchLogs);
  EXPECT_EQ(detect("debugger-1795766400.algo-1.json"), SageMakerFormat::kDebugger);
  EXPECT_EQ(detect("trainsim-local.jsonl"), std::nullopt);
  EXPECT_EQ(detect("megatron-synthetic.log"), std::nullopt);
  EXPECT_EQ(detect("kineto-synthetic.json"), std::nullopt);
  EXPECT_EQ(*ParseSageMakerFormat("cloudwatch-logs", "--format"), SageMakerFormat::kCloudWatchLogs);
  EXPECT_EQ(ParseSageMakerFormat("smppy", "--format").status().message(),
            "--format: unknown SageMaker format \"smppy\"; expected cloudwatch, cloudwatch-logs "
            "or debugger");
}

}  // namespace
}  // namespace trainsim::observe
