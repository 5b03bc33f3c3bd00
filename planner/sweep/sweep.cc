#include "planner/sweep/sweep.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "core/durable_file.h"
#include "planner/sweep/sweep_journal.h"
#include "sim/isolate.h"

namespace trainsim::planner {

const char kAnotherProcessFailed[] = "another process of the sweep failed (its message says why)";

namespace {

namespace fs = std::filesystem;

// What a process brings to the world's MaxOverAll, worst last.
enum State { kComplete = 0, kInterrupted = 1, kOtherRankFailed = 2, kRankZeroFailed = 3 };

bool Cancelled(const SweepOptions& o) { return o.cancel != nullptr && o.cancel->load(); }

std::function<double()> ClockOf(const SweepOptions& o) {
  if (o.clock_s) return o.clock_s;
  return [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
}

Status CheckPoints(const std::vector<SweepPoint>& points) {
  std::set<std::string> ids;
  std::set<int> indices;
  for (const SweepPoint& p : points) {
    if (!ids.insert(p.id).second) return Status::InvalidInput("two points have the id " + p.id);
    if (!indices.insert(p.index).second) {
      return Status::InvalidInput("two points have the index " + std::to_string(p.index));
    }
  }
  return Status::Ok();
}

// The points in index order that the journals do not hold yet; an error when
// a journaled row of one of them came from other inputs.
Expected<std::vector<SweepPoint>> Unfinished(std::vector<SweepPoint> points,
                                             const std::string& out_dir) {
  Expected<std::map<std::string, JournalEntry>> journal = ReadJournals(out_dir);
  if (!journal.ok()) return journal.status();
  std::sort(points.begin(), points.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.index < b.index; });
  std::vector<SweepPoint> unfinished;
  for (const SweepPoint& p : points) {
    auto it = journal->find(p.id);
    if (it == journal->end()) {
      unfinished.push_back(p);
    } else if (it->second.fingerprint != p.fingerprint) {
      return Status::InvalidInput(it->second.where + ": the inputs of " + p.id +
                                  " changed since it was evaluated (fingerprint " +
                                  it->second.fingerprint + ", now " + p.fingerprint +
                                  "); to start over, use another output directory (--out) or "
                                  "remove " +
                                  out_dir);
    }
  }
  return unfinished;
}

// Every process: the unfinished points. Rank 0 also clears results that a
// previous, different sweep may have left.
Expected<std::vector<SweepPoint>> Prepare(const std::vector<SweepPoint>& points,
                                          const std::string& out_dir, bool rank_zero) {
  if (Status s = CheckPoints(points); !s.ok()) return s;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (!fs::is_directory(out_dir)) {
    return Status::InvalidInput("cannot create the output directory " + out_dir +
                                (ec ? ": " + ec.message() : std::string()));
  }
  if (rank_zero) {
    for (const char* name : {"results.csv", "results.json"})
      fs::remove(fs::path(out_dir) / name, ec);
  }
  return Unfinished(points, out_dir);
}

SweepRow EvaluateSafely(const EvaluateFn& evaluate, const SweepPoint& p) {
  SweepRow row;
  try {
    row = evaluate(p);
  } catch (const std::exception& e) {
    row = SweepRow();
    row.message = std::string("the evaluation failed: ") + e.what();
  } catch (...) {
    row = SweepRow();
    row.message = "the evaluation failed with an unknown exception";
  }
  row.point = p.index;
  row.id = p.id;
  return row;
}

// The evaluation of this process's points by `jobs` threads.
class Workers {
 public:
  Workers(const std::vector<SweepPoint>& mine, const EvaluateFn& evaluate,
          const SweepOptions& options, JournalWriter* journal, SweepObserver* observer,
          SweepProgress progress)
      : mine_(mine),
        evaluate_(evaluate),
        options_(options),
        journal_(journal),
        observer_(observer),
        clock_(ClockOf(options)),
        start_s_(clock_()),
        progress_(progress) {}

  // Runs every point, or until cancelled or a journal write fails.
  Status Run(int jobs) {
    if (observer_) observer_->Started(progress_);
    std::vector<std::thread> threads;
    const int n = std::min<int>(jobs, static_cast<int>(mine_.size()));
    for (int i = 0; i < n; ++i) threads.emplace_back([this] { Work(); });
    for (std::thread& t : threads) t.join();
    return failure_;
  }

  bool AllDone() const { return progress_.done == progress_.to_do; }

 private:
  void Work() {
    while (!Cancelled(options_) && !failed_.load()) {
      const size_t i = next_.fetch_add(1);
      if (i >= mine_.size()) return;
      SweepRow row = EvaluateSafely(evaluate_, mine_[i]);
      if (row.status == SweepStatus::kError && Cancelled(options_)) return;  // abandoned
      Finish(mine_[i], row);
    }
  }

  void Finish(const SweepPoint& p, const SweepRow& row) {
    Status s = journal_->Append(JournalLine(row, p.fingerprint));
    std::lock_guard<std::mutex> lock(mu_);
    if (!s.ok()) {
      if (!failed_.exchange(true)) failure_ = s;
      return;
    }
    SweepProgress& pr = progress_;
    ++pr.done;
    if (row.status == SweepStatus::kError) ++pr.errors;
    pr.elapsed_s = clock_() - start_s_;
    if (pr.elapsed_s > 0) {
      pr.points_per_s = pr.done / pr.elapsed_s;
      pr.eta_s = (pr.to_do - pr.done) / pr.points_per_s;
    }
    if (observer_) observer_->PointFinished(pr, row);
  }

  const std::vector<SweepPoint>& mine_;
  const EvaluateFn& evaluate_;
  const SweepOptions& options_;
  JournalWriter* journal_;
  SweepObserver* observer_;
  std::function<double()> clock_;
  const double start_s_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  SweepProgress progress_;
  Status failure_;
};

// Rank 0, after every process finished: the rows of every point from the
// journals and, when none is missing, the merged results.
Status Merge(std::vector<SweepPoint> points, const std::string& out_dir, SweepSummary* summary) {
  Expected<std::map<std::string, JournalEntry>> journal = ReadJournals(out_dir);
  if (!journal.ok()) return journal.status();
  std::sort(points.begin(), points.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.index < b.index; });
  std::vector<SweepRow> rows;
  for (const SweepPoint& p : points) {
    auto it = journal->find(p.id);
    if (it == journal->end() || it->second.fingerprint != p.fingerprint) continue;
    SweepRow row = it->second.row;
    row.point = p.index;
    summary->ok += row.status == SweepStatus::kOk;
    summary->does_not_fit += row.status == SweepStatus::kDoesNotFit;
    summary->errors += row.status == SweepStatus::kError;
    rows.push_back(std::move(row));
  }
  summary->done = static_cast<int>(rows.size());
  if (summary->interrupted) return Status::Ok();
  if (rows.size() != points.size()) {
    return Status::Internal("the journals in " + out_dir + " lack " +
                            std::to_string(points.size() - rows.size()) +
                            " finished points; run the sweep again");
  }
  const std::string csv = (fs::path(out_dir) / "results.csv").string();
  const std::string json = (fs::path(out_dir) / "results.json").string();
  if (Status s = WriteFileDurably(csv, ResultsCsv(rows)); !s.ok()) return s;
  if (Status s = WriteFileDurably(json, ResultsJson(rows)); !s.ok()) return s;
  summary->rows = std::move(rows);
  summary->results_csv = csv;
  summary->results_json = json;
  return Status::Ok();
}

// After a MaxOverAll that some process failed: this process's own error, or
// kAnotherProcessFailed.
Status Failure(const Status& mine, int worst, int rank) {
  if (!mine.ok() && (rank == 0 || worst != kRankZeroFailed)) return mine;
  return Status::Internal(kAnotherProcessFailed);
}

int FailedState(int rank) { return rank == 0 ? kRankZeroFailed : kOtherRankFailed; }

// Every size-th unfinished point from the rank-th: ranks share the work.
std::vector<SweepPoint> ShareOf(const std::vector<SweepPoint>& unfinished, const SweepWorld& w) {
  std::vector<SweepPoint> mine;
  for (size_t k = w.rank(); k < unfinished.size(); k += w.size()) mine.push_back(unfinished[k]);
  return mine;
}

// Evaluates and journals this process's points; whether all of them were
// (not when cancelled).
Expected<bool> EvaluateShare(const std::vector<SweepPoint>& mine, const EvaluateFn& evaluate,
                             const SweepOptions& options, int rank, const SweepProgress& progress,
                             SweepObserver* observer) {
  Expected<std::unique_ptr<JournalWriter>> journal =
      JournalWriter::Open((fs::path(options.out_dir) / JournalFileName(rank)).string());
  if (!journal.ok()) return journal.status();
  const int jobs = sim::SimulationThreads(
      options.jobs > 0 ? options.jobs : static_cast<int>(std::thread::hardware_concurrency()));
  Workers workers(mine, evaluate, options, journal->get(), observer, progress);
  if (Status s = workers.Run(jobs); !s.ok()) return s;
  return workers.AllDone();
}

}  // namespace

Expected<SweepSummary> RunSweep(const std::vector<SweepPoint>& points, const EvaluateFn& evaluate,
                                const SweepOptions& options, SweepObserver* observer) {
  std::unique_ptr<SweepWorld> alone;
  SweepWorld* world = options.world;
  if (world == nullptr) world = (alone = SingleProcessWorld()).get();
  const int rank = world->rank();

  // Every process reads the same journals before any process appends.
  Expected<std::vector<SweepPoint>> unfinished = Prepare(points, options.out_dir, rank == 0);
  int worst = world->MaxOverAll(unfinished.ok() ? kComplete : FailedState(rank));
  if (worst >= kOtherRankFailed) return Failure(unfinished.status(), worst, rank);

  SweepSummary summary;
  summary.total = static_cast<int>(points.size());
  summary.resumed = summary.total - static_cast<int>(unfinished->size());
  const std::vector<SweepPoint> mine = ShareOf(*unfinished, *world);
  SweepProgress progress;
  progress.total = summary.total;
  progress.resumed = summary.resumed;
  progress.to_do = static_cast<int>(mine.size());
  progress.processes = world->size();
  Expected<bool> all_done = EvaluateShare(mine, evaluate, options, rank, progress, observer);
  worst = world->MaxOverAll(!all_done.ok() ? FailedState(rank)
                            : *all_done    ? kComplete
                                           : kInterrupted);
  if (worst >= kOtherRankFailed) return Failure(all_done.status(), worst, rank);
  summary.interrupted = worst == kInterrupted;
  if (rank == 0) {
    if (Status s = Merge(points, options.out_dir, &summary); !s.ok()) return s;
  }
  return summary;
}

}  // namespace trainsim::planner
