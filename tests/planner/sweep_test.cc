// The sweep runner with a fake evaluation: results independent of threads and
// processes, error rows, resume from journals (cut lines, changed inputs,
// corrupt lines), cancellation, progress.
#include "planner/sweep/sweep.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/scenario_fields.h"
#include "planner/sweep/sweep_journal.h"
#include "tests/test_util.h"

namespace trainsim::planner {

using trainsim::test::Lines;
using trainsim::test::ReadFile;
namespace {

namespace fs = std::filesystem;

// Points 0..n-1, given in reverse order (the results must sort them).
std::vector<SweepPoint> Points(int n) {
  std::vector<SweepPoint> points;
  for (int i = n - 1; i >= 0; --i) {
    points.push_back({i, "p" + std::to_string(i) + ".json#0", "fp" + std::to_string(i)});
  }
  return points;
}

// A deterministic row per point; finishing times vary so that threads finish
// out of order.
SweepRow FakeRow(const SweepPoint& p) {
  std::this_thread::sleep_for(std::chrono::microseconds(300 * ((p.index * 7) % 5)));
  SweepRow row;
  row.scenario = "s" + std::to_string(p.index);
  row.status = p.index % 3 == 2 ? SweepStatus::kDoesNotFit : SweepStatus::kOk;
  row.column("instance") = "p4d.24xlarge";
  row.column("nodes") = p.index + 1;
  if (row.status == SweepStatus::kOk) row.step_time_s = 0.1 * (p.index + 1);
  row.detail = {{"index", p.index}, {"third", 1.0 / 3}};
  return row;
}

class SweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sweep_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs a sweep into dir_/name; counts evaluations in calls_.
  Expected<SweepSummary> Run(const std::string& name, const std::vector<SweepPoint>& points,
                             int jobs = 2, const EvaluateFn& evaluate = FakeRow) {
    SweepOptions options;
    options.out_dir = Out(name);
    options.jobs = jobs;
    options.cancel = &cancel_;
    return RunSweep(
        points,
        [&](const SweepPoint& p) {
          ++calls_;
          return evaluate(p);
        },
        options, nullptr);
  }
  std::string Out(const std::string& name) const { return dir_ + "/" + name; }
  std::string Csv(const std::string& name) const { return ReadFile(Out(name) + "/results.csv"); }
  std::string Json(const std::string& name) const { return ReadFile(Out(name) + "/results.json"); }
  std::string Journal(const std::string& name) const {
    return ReadFile(Out(name) + "/" + JournalFileName(0));
  }

  std::string dir_;
  std::atomic<int> calls_{0};
  std::atomic<bool> cancel_{false};
};

// The scenario columns are fields of the scenario's table (core/scenario_fields.h) under their
// key, but gpus; a row reads them back with the table field's type.
TEST(SweepRowTest, ScenarioColumnsAreFieldsOfTheScenarioTable) {
  const std::vector<std::string>& columns = SweepScenarioColumns();
  ASSERT_FALSE(columns.empty());
  for (const std::string& c : columns) {
    if (c == "gpus") continue;
    bool found = false;
    for (const ScenarioField& f : ScenarioFields()) found = found || f.key() == c;
    EXPECT_TRUE(found) << c;
  }
  SweepRow row;
  row.column("tp") = "eight";
  Expected<SweepRow> back = RowFromJson(RowToJson(row), "j");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().message(), "j: the row's \"tp\" is missing or mistyped");
  row.column("tp") = 8;
  row.column("recompute") = "full";
  back = RowFromJson(RowToJson(row), "j");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->column("tp"), 8);
  EXPECT_EQ(back->column("recompute"), "full");
}

TEST_F(SweepTest, OneAndFourThreadsWriteTheSameBytesSortedByPoint) {
  Expected<SweepSummary> one = Run("one", Points(12), 1);
  Expected<SweepSummary> four = Run("four", Points(12), 4);
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_TRUE(four.ok()) << four.status().message();
  EXPECT_EQ(Csv("one"), Csv("four"));
  EXPECT_EQ(Json("one"), Json("four"));
#ifndef TRAINSIM_SANITIZE  // a sanitizer build runs one thread (sim::SimulationThreads)
  EXPECT_NE(Journal("one"), Journal("four"));  // finished in another order
#endif
  std::vector<std::string> lines = Lines(Csv("four"));
  ASSERT_EQ(lines.size(), 13u);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(lines[i + 1].substr(0, lines[i + 1].find(',')), std::to_string(i));
  }
  EXPECT_EQ(four->total, 12);
  EXPECT_EQ(four->done, 12);
  EXPECT_EQ(four->ok, 8);
  EXPECT_EQ(four->does_not_fit, 4);
  EXPECT_EQ(four->errors, 0);
  EXPECT_EQ(four->results_csv, Out("four") + "/results.csv");
  ASSERT_EQ(four->rows.size(), 12u);
  EXPECT_EQ(four->rows[5].id, "p5.json#0");
}

TEST_F(SweepTest, FailingAndThrowingEvaluationsBecomeErrorRows) {
  Expected<SweepSummary> r = Run("out", Points(4), 2, [](const SweepPoint& p) {
    if (p.index == 1) throw std::runtime_error("boom");
    if (p.index == 2) {
      SweepRow row;
      row.scenario = "s2";
      row.message = "simulation failed: no route";
      return row;
    }
    return FakeRow(p);
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->errors, 2);
  std::vector<std::string> lines = Lines(Csv("out"));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[2], "1,p1.json#0,,error,the evaluation failed: boom,,,,,,,,,,,,,,,,,,,,,,,,,");
  EXPECT_EQ(lines[3], "2,p2.json#0,s2,error,simulation failed: no route,,,,,,,,,,,,,,,,,,,,,,,,,");
}

TEST_F(SweepTest, UnknownIsNullAndZeroIsZero) {
  Expected<SweepSummary> r = Run("out", Points(1), 1, [](const SweepPoint&) {
    SweepRow row;
    row.scenario = "a[tp=2,pp=4]";
    row.status = SweepStatus::kOk;
    row.message = "said \"hi\"";
    row.column("tp") = 0;
    row.mfu = 0.0;
    row.cost_usd = std::nan("");
    row.time_to_train_h = 1e-5;
    return row;
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(
      Lines(Csv("out"))[1],
      "0,p0.json#0,\"a[tp=2,pp=4]\",ok,\"said \"\"hi\"\"\",,,,0,,,,,,,,,,,,,,,,,0.0,1e-05,,,");
  EXPECT_EQ(Json("out"), R"({
  "version": 1,
  "points": 1,
  "rows": [
    {
      "point": 0,
      "id": "p0.json#0",
      "scenario": "a[tp=2,pp=4]",
      "status": "ok",
      "message": "said \"hi\"",
      "instance": null,
      "nodes": null,
      "gpus": null,
      "tp": 0,
      "pp": null,
      "dp": null,
      "ep": null,
      "cp": null,
      "zero_stage": null,
      "shard_group": null,
      "micro_batch": null,
      "recompute": null,
      "schedule": null,
      "pricing": null,
      "pricing_terms": null,
      "step_time_s": null,
      "step_time_low_s": null,
      "step_time_high_s": null,
      "samples_per_s": null,
      "tokens_per_s": null,
      "mfu": 0.0,
      "time_to_train_h": 1e-05,
      "time_to_train_p90_h": null,
      "cost_usd": null,
      "cost_p90_usd": null,
      "detail": {}
    }
  ]
}
)");
}

TEST_F(SweepTest, JournaledPointsAreNotEvaluatedAgain) {
  ASSERT_TRUE(Run("out", Points(6)).ok());
  const std::string csv = Csv("out"), json = Json("out");
  calls_ = 0;
  Expected<SweepSummary> again = Run("out", Points(6));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(calls_, 0);
  EXPECT_EQ(again->resumed, 6);
  EXPECT_EQ(Csv("out"), csv);
  EXPECT_EQ(Json("out"), json);
}

TEST_F(SweepTest, ACutLastLineIsIgnoredAndTheRestIsResumed) {
  ASSERT_TRUE(Run("whole", Points(8)).ok());
  std::vector<std::string> lines = Lines(Journal("whole"));
  ASSERT_EQ(lines.size(), 8u);
  fs::create_directories(Out("cut"));
  std::ofstream(Out("cut") + "/" + JournalFileName(0), std::ios::binary)
      << lines[0] << "\n"
      << lines[1] << "\n"
      << lines[2] << "\n"
      << lines[3].substr(0, lines[3].size() / 2);
  calls_ = 0;
  Expected<SweepSummary> r = Run("cut", Points(8));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(calls_, 5);
  EXPECT_EQ(r->resumed, 3);
  EXPECT_EQ(Csv("cut"), Csv("whole"));
  EXPECT_EQ(Json("cut"), Json("whole"));
  // The cut line was dropped before appending: every line is whole.
  Expected<std::map<std::string, JournalEntry>> journal = ReadJournals(Out("cut"));
  ASSERT_TRUE(journal.ok()) << journal.status().message();
  EXPECT_EQ(journal->size(), 8u);
  EXPECT_EQ(Lines(Journal("cut")).size(), 8u);
}

// A journal written before the ep and cp columns existed resumes; they read as null.
TEST_F(SweepTest, AJournalWithoutTheLaterColumnsResumes) {
  ASSERT_TRUE(Run("new", Points(2), 1).ok());
  fs::create_directories(Out("old"));
  std::ofstream old(Out("old") + "/" + JournalFileName(0), std::ios::binary);
  for (const std::string& line : Lines(Journal("new"))) {
    nlohmann::json j = nlohmann::json::parse(line);
    ASSERT_TRUE(j["row"].contains("ep"));
    j["row"].erase("ep");
    j["row"].erase("cp");
    j["row"].erase("pricing_terms");
    old << j.dump() << "\n";
  }
  old.close();
  calls_ = 0;
  Expected<SweepSummary> r = Run("old", Points(2), 1);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(calls_, 0);
  EXPECT_EQ(r->resumed, 2);
}

TEST_F(SweepTest, ChangedInputsAreAnError) {
  ASSERT_TRUE(Run("out", Points(3), 1).ok());  // one thread: journaled in index order
  std::vector<SweepPoint> changed = Points(3);
  changed[1].fingerprint = "fp1-changed";  // point 1
  calls_ = 0;
  Expected<SweepSummary> r = Run("out", changed);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(calls_, 0);
  EXPECT_EQ(r.status().message(),
            Out("out") +
                "/journal-0.jsonl:2: the inputs of p1.json#0 changed since it was evaluated "
                "(fingerprint fp1, now "
                "fp1-changed); to start over, use another output directory (--out) or remove " +
                Out("out"));
}

TEST_F(SweepTest, CorruptJournalLinesAreErrors) {
  ASSERT_TRUE(Run("good", Points(1)).ok());
  const std::string good = Lines(Journal("good"))[0];
  std::string missing_tp = good, mistyped_nodes = good;
  missing_tp.replace(missing_tp.find("\"tp\":null,"), 10, "");
  mistyped_nodes.replace(mistyped_nodes.find("\"nodes\":1"), 9, "\"nodes\":\"1\"");
  struct Case {
    std::string line, error;
  } cases[] = {
      {"not json", "not a sweep journal line"},
      {R"({"fingerprint": "x"})", "not a sweep journal line"},
      {R"({"fingerprint": 1, "row": {}})", "not a sweep journal line"},
      {missing_tp, "the row's \"tp\" is missing or mistyped"},
      {mistyped_nodes, "the row's \"nodes\" is missing or mistyped"},
      {R"({"fingerprint": "x", "row": []})", "a row must be a JSON object"},
  };
  for (const Case& c : cases) {
    fs::remove_all(Out("bad"));
    fs::create_directories(Out("bad"));
    std::ofstream(Out("bad") + "/journal-1.jsonl") << good << "\n" << c.line << "\n";
    Expected<SweepSummary> r = Run("bad", Points(1));
    ASSERT_FALSE(r.ok()) << c.line;
    EXPECT_EQ(r.status().message(), Out("bad") + "/journal-1.jsonl:2: " + c.error);
  }
}

TEST_F(SweepTest, CancelKeepsJournaledRowsAndTheNextRunCompletes) {
  ASSERT_TRUE(Run("whole", Points(8)).ok());
  fs::create_directories(Out("cut"));
  std::ofstream(Out("cut") + "/results.csv") << "stale\n";
  Expected<SweepSummary> cut = Run("cut", Points(8), 1, [&](const SweepPoint& p) {
    if (p.index == 3) {  // fails because of the interrupt: dropped, not journaled
      cancel_ = true;
      return SweepRow();
    }
    return FakeRow(p);
  });
  ASSERT_TRUE(cut.ok()) << cut.status().message();
  EXPECT_TRUE(cut->interrupted);
  EXPECT_EQ(cut->done, 3);
  EXPECT_EQ(cut->total, 8);
  EXPECT_FALSE(fs::exists(Out("cut") + "/results.csv"));
  EXPECT_FALSE(fs::exists(Out("cut") + "/results.json"));
  EXPECT_EQ(Lines(Journal("cut")).size(), 3u);

  cancel_ = false;
  calls_ = 0;
  Expected<SweepSummary> rest = Run("cut", Points(8), 3);
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  EXPECT_FALSE(rest->interrupted);
  EXPECT_EQ(calls_, 5);
  EXPECT_EQ(Csv("cut"), Csv("whole"));
  EXPECT_EQ(Json("cut"), Json("whole"));
}

TEST_F(SweepTest, BadPointListsAreErrors) {
  std::vector<SweepPoint> same_id = {{0, "a#0", "x"}, {1, "a#0", "y"}};
  std::vector<SweepPoint> same_index = {{0, "a#0", "x"}, {0, "b#0", "y"}};
  EXPECT_EQ(Run("out", same_id).status().message(), "two points have the id a#0");
  EXPECT_EQ(Run("out", same_index).status().message(), "two points have the index 0");
  EXPECT_EQ(calls_, 0);
}

// Records what the runner reports.
class Recorder : public SweepObserver {
 public:
  void Started(const SweepProgress& p) override { started.push_back(p); }
  void PointFinished(const SweepProgress& p, const SweepRow& row) override {
    finished.push_back(p);
    ids.push_back(row.id);
  }
  std::vector<SweepProgress> started, finished;
  std::vector<std::string> ids;
};

TEST_F(SweepTest, ProgressGivesCountsRateAndEta) {
  ASSERT_TRUE(Run("out", {{0, "p0.json#0", "fp0"}}).ok());  // one point already done
  std::atomic<double> now{100};
  SweepOptions options;
  options.out_dir = Out("out");
  options.jobs = 1;
  options.clock_s = [&] { return now.load(); };
  Recorder recorder;
  Expected<SweepSummary> r = RunSweep(
      Points(5),
      [&](const SweepPoint& p) {
        now = now + 2;  // each point takes 2 s
        return FakeRow(p);
      },
      options, &recorder);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(recorder.started.size(), 1u);
  EXPECT_EQ(recorder.started[0].total, 5);
  EXPECT_EQ(recorder.started[0].resumed, 1);
  EXPECT_EQ(recorder.started[0].to_do, 4);
  EXPECT_FALSE(recorder.started[0].eta_s);
  ASSERT_EQ(recorder.finished.size(), 4u);
  EXPECT_EQ(recorder.ids,
            (std::vector<std::string>{"p1.json#0", "p2.json#0", "p3.json#0", "p4.json#0"}));
  const SweepProgress& first = recorder.finished[0];
  EXPECT_EQ(first.done, 1);
  EXPECT_DOUBLE_EQ(first.elapsed_s, 2);
  EXPECT_DOUBLE_EQ(first.points_per_s, 0.5);
  EXPECT_DOUBLE_EQ(*first.eta_s, 6);
  EXPECT_EQ(recorder.finished[3].done, 4);
  EXPECT_DOUBLE_EQ(*recorder.finished[3].eta_s, 0);
}

// The ranks of an MPI job, played by threads of this process.
class ThreadWorlds {
 public:
  explicit ThreadWorlds(int size) : size_(size) {}
  class Rank : public SweepWorld {
   public:
    Rank(ThreadWorlds* all, int rank) : all_(all), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return all_->size_; }
    int local_size() const override { return all_->size_; }
    int MaxOverAll(int value) override { return all_->MaxOverAll(value); }

   private:
    ThreadWorlds* all_;
    int rank_;
  };

 private:
  int MaxOverAll(int value) {
    std::unique_lock<std::mutex> lock(mu_);
    const int generation = generation_;
    max_ = std::max(max_, value);
    if (++arrived_ == size_) {
      result_ = max_;
      max_ = 0;
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != generation; });
    }
    return result_;
  }
  int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0, max_ = 0, result_ = 0, generation_ = 0;
};

TEST_F(SweepTest, RanksShareThePointsAndRankZeroWritesTheSameBytes) {
  ASSERT_TRUE(Run("single", Points(10)).ok());
  // Two points done before, by another run: the ranks share the other seven.
  ASSERT_TRUE(Run("ranks", {{0, "p0.json#0", "fp0"}, {4, "p4.json#0", "fp4"}}).ok());
  ThreadWorlds worlds(3);
  std::vector<Expected<SweepSummary>> results(3, Status::Internal("not run"));
  std::vector<std::thread> ranks;
  std::mutex mu;
  std::map<int, int> evaluated_by;  // point -> rank
  for (int rank = 0; rank < 3; ++rank) {
    ranks.emplace_back([&, rank] {
      ThreadWorlds::Rank world(&worlds, rank);
      SweepOptions options;
      options.out_dir = Out("ranks");
      options.jobs = 2;
      options.world = &world;
      results[rank] = RunSweep(
          Points(10),
          [&](const SweepPoint& p) {
            std::lock_guard<std::mutex> lock(mu);
            evaluated_by[p.index] = rank;
            return FakeRow(p);
          },
          options, nullptr);
    });
  }
  for (std::thread& t : ranks) t.join();
  for (const auto& r : results) ASSERT_TRUE(r.ok()) << r.status().message();
  // Unfinished points 1 2 3 5 6 7 8 9, dealt round-robin.
  EXPECT_EQ(evaluated_by,
            (std::map<int, int>{{1, 0}, {2, 1}, {3, 2}, {5, 0}, {6, 1}, {7, 2}, {8, 0}, {9, 1}}));
  EXPECT_EQ(Csv("ranks"), Csv("single"));
  EXPECT_EQ(Json("ranks"), Json("single"));
  EXPECT_EQ(results[0]->rows.size(), 10u);
  EXPECT_TRUE(results[1]->rows.empty());
  EXPECT_EQ(Lines(ReadFile(Out("ranks") + "/journal-2.jsonl")).size(), 2u);
}

TEST(SweepWorld, MpiLaunchersAreRecognisedByTheirEnvironment) {
  struct Case {
    const char* variable;
    bool launched;
  } cases[] = {{"OMPI_COMM_WORLD_SIZE", true},
               {"PMI_SIZE", true},
               {"PMIX_RANK", true},
               {"OMPI_MCA_foo", false},
               {"SLURM_NTASKS", false}};
  for (const Case& c : cases) {
    auto env = [&](const char* name) -> const char* {
      return std::string(name) == c.variable ? "3" : nullptr;
    };
    EXPECT_EQ(StartedByMpiLauncher(env), c.launched) << c.variable;
  }
}

}  // namespace
}  // namespace trainsim::planner
