// Headless sweeps: evaluate many points (scenario files, grid points, plans),
// journal each finished row so that an interrupted sweep continues where it
// stopped, and write the merged results as CSV and JSON. See docs/sweep.md.
//
// The runner does not know what a point is: the caller gives the points and
// an evaluation callback. Threads: `jobs` workers each take the next
// unfinished point, so the callback runs on several threads at once.
// Processes: in an MPI world (sweep_world.h) each rank evaluates its share of
// the unfinished points and journals them to its own file; rank 0 then writes
// the merged results. The results are the same bytes whatever the number of
// threads, processes or interruptions: rows come from the journals, sorted by
// point index, with no times, hosts or ranks in them.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "planner/sweep/sweep_row.h"
#include "planner/sweep/sweep_world.h"

namespace trainsim::planner {

struct SweepPoint {
  int index = 0;            // position in the sweep; the results are sorted by it
  std::string id;           // unique and stable across runs, e.g. "scenarios/a.json#0"
  std::string fingerprint;  // hash of the point's inputs (a journaled row is reused only if equal)
};

// Evaluates one point. Called from several threads at once. It should not
// throw: a failure is a row with status kError and the reason in `message`
// (the runner turns an exception into such a row anyway).
using EvaluateFn = std::function<SweepRow(const SweepPoint&)>;

// Where this process stands. Under MPI each rank counts its own share.
struct SweepProgress {
  int total = 0;      // points in the sweep
  int resumed = 0;    // already in the journals when the sweep started
  int to_do = 0;      // points this process evaluates in this run
  int done = 0;       // of those, finished
  int errors = 0;     // of those, with status error
  int processes = 1;  // MPI ranks sharing the work
  double elapsed_s = 0;
  double points_per_s = 0;      // done / elapsed_s; 0 before the first point
  std::optional<double> eta_s;  // for this process's remaining points; unknown before the first
};

// Told of progress; calls are serialised (never two at once) but come from
// the worker threads.
class SweepObserver {
 public:
  virtual ~SweepObserver() = default;
  // Once, after the journals were read and before any evaluation.
  virtual void Started(const SweepProgress&) {}
  // After each row this process journaled.
  virtual void PointFinished(const SweepProgress&, const SweepRow&) {}
};

struct SweepOptions {
  // Holds the journals and results.csv / results.json; created if needed.
  std::string out_dir = "sweep-out";
  // Worker threads in this process; 0 = the machine's hardware threads.
  int jobs = 0;
  // The processes sharing the sweep; null = this process alone.
  SweepWorld* world = nullptr;
  // When it becomes true no further point starts, and a point in flight that
  // fails after it did is dropped, not journaled (the interrupt may be why it
  // failed; the next run evaluates it again). Points journaled before stay.
  const std::atomic<bool>* cancel = nullptr;
  // Seconds since any fixed origin, for the rate; empty = a steady clock.
  std::function<double()> clock_s;
};

struct SweepSummary {
  int total = 0;    // points in the sweep
  int resumed = 0;  // already in the journals when the sweep started
  // The rest is known on rank 0 only.
  int done = 0;  // points in the journals now (all of them unless interrupted)
  int ok = 0, does_not_fit = 0, errors = 0;  // among those journaled rows
  bool interrupted = false;                  // cancelled before every point finished
  std::vector<SweepRow> rows;                // a complete sweep's rows, by point index
  std::string results_csv, results_json;     // the files written, when complete
};

// The message of the error RunSweep returns when another process of the
// sweep failed; that process returns (and reports) its own error.
extern const char kAnotherProcessFailed[];

// Runs the sweep: reads the journals in out_dir (a journaled row whose id
// matches a point but whose fingerprint differs is an error: the inputs
// changed), evaluates the points not yet journaled, and when every point is
// journaled writes results.csv and results.json atomically (rank 0). Errors:
// duplicate ids, unreadable or corrupt journals, changed inputs, files that
// cannot be written. An interrupted sweep is not an error (`interrupted`).
Expected<SweepSummary> RunSweep(const std::vector<SweepPoint>& points, const EvaluateFn& evaluate,
                                const SweepOptions& options, SweepObserver* observer);

}  // namespace trainsim::planner
