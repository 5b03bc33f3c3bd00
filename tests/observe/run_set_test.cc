// Several runs' logs combined into one measured step (observe/run_set.h).
#include "observe/run_set.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/test_util.h"

namespace trainsim::observe {
namespace {

// A run of `file` whose steady step is `median_s` over `samples` steps at `global_batch`.
std::pair<RunLog, StepSummary> ARun(const std::string& file, double median_s, int samples,
                                    int64_t global_batch, bool per_sample = false) {
  RunLog log;
  log.file = file;
  log.format = per_sample ? LogFormat::kDeepSpeed : LogFormat::kMegatron;
  log.per_sample = per_sample;
  StepSummary s;
  s.median_step_s = median_s;
  s.samples = samples;
  s.global_batch = global_batch;
  return {log, s};
}

Expected<RunSet> Combine(const std::vector<std::pair<RunLog, StepSummary>>& runs) {
  std::vector<RunLog> logs;
  std::vector<StepSummary> summaries;
  for (const auto& [log, s] : runs) {
    logs.push_back(log);
    summaries.push_back(s);
  }
  return CombineRuns(std::move(logs), std::move(summaries));
}

TEST(CombineRuns, TheMedianCountsEachRunOncePerStep) {
  // 10 steps at 2 s, 30 at 3 s, 5 at 1 s: the 23rd of 45 steps is one of the 3 s run's.
  Expected<RunSet> r = Combine(
      {ARun("a.log", 2.0, 10, 512), ARun("b.log", 3.0, 30, 512), ARun("c.log", 1.0, 5, 512)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->samples, 45);
  EXPECT_DOUBLE_EQ(r->median, 3.0);
  EXPECT_FALSE(r->throughput());
  // Without the long run the middle step is the 2 s run's.
  Expected<RunSet> two = Combine({ARun("a.log", 2.0, 10, 512), ARun("c.log", 1.0, 5, 512)});
  ASSERT_TRUE(two.ok());
  EXPECT_DOUBLE_EQ(two->median, 2.0);
}

TEST(CombineRuns, RunsOfAnotherConfigurationAreRefused) {
  struct Case {
    std::vector<std::pair<RunLog, StepSummary>> runs;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{ARun("a.log", 2.0, 10, 512), ARun("b.log", 2.0, 10, 1024)},
       "b.log: global batch 1024, but a.log ran 512: give the runs of one configuration"},
      {{ARun("a.log", 2.0, 10, 512), ARun("ds.log", 0.1, 10, 512, /*per_sample=*/true)},
       "ds.log: a deepspeed log beside a megatron one (a.log): give the runs of one framework"},
  };
  for (const Case& c : cases) {
    Expected<RunSet> r = Combine(c.runs);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), c.message);
  }
}

TEST(MeasuredStepFor, ThroughputLogsBecomeStepsOfTheScenario) {
  Expected<Scenario> s = ParseScenario(
      R"({"model": "gpt-1.7b", "training": {"global_batch": 512},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 2}})",
      "s.json", test::BuiltinCatalog());
  ASSERT_TRUE(s.ok()) << s.status().message();
  Expected<RunSet> steps = Combine({ARun("a.log", 2.0, 10, 512)});
  ASSERT_TRUE(steps.ok());
  Expected<MeasuredStep> m = MeasuredStepFor(*steps, *s);
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->step_s, 2.0);
  // DeepSpeed's seconds per sample: a step is the global batch's worth.
  Expected<RunSet> samples = Combine({ARun("ds.log", 0.01, 10, 512, /*per_sample=*/true)});
  ASSERT_TRUE(samples.ok());
  m = MeasuredStepFor(*samples, *s);
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->units_per_step, 512);
  EXPECT_DOUBLE_EQ(m->step_s, 0.01 * 512);
  Expected<RunSet> other = Combine({ARun("a.log", 2.0, 10, 256)});
  ASSERT_TRUE(other.ok());
  m = MeasuredStepFor(*other, *s);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "a.log: the run's global batch is 256, the scenario's 512: compare a run with the "
            "configuration it ran");
}

}  // namespace
}  // namespace trainsim::observe
