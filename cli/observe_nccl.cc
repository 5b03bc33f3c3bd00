// `trainsim observe` of nccl-tests output: the rows beside the simulated collective, and the
// network refitted from them (docs/observe.md section 3b).
#include <cstdio>
#include <iostream>

#include "cli/args.h"
#include "cli/observe_common.h"
#include "core/catalog.h"
#include "core/durable_file.h"
#include "core/hardware_profile.h"
#include "observe/nccl_compare.h"
#include "observe/nccl_tests.h"

namespace trainsim::observe_cli {
namespace {

void PrintCompared(const observe::NcclTestsRun& run, const std::vector<observe::ComparedRow>& rows,
                   const std::string& what) {
  std::cout << run.file << ": " << observe::ToString(*run.op) << "_perf, " << run.ranks
            << " ranks on " << run.nodes << (run.nodes == 1 ? " node" : " nodes") << ", " << what
            << "\n";
  std::printf("  %14s %14s %14s %8s\n", "bytes", "busbw GB/s", "simulated", "error");
  for (const observe::ComparedRow& r : rows) {
    std::printf("  %14.0f %14.2f %14.2f %8s\n", r.bytes, r.measured_busbw_GBps,
                r.simulated_busbw_GBps, r.error ? Signed(*r.error).c_str() : "-");
  }
  if (const std::optional<double> e = observe::MeanFitError(rows)) {
    std::cout << "  mean |error| over the rows of 128 MiB and more: " << Fixed(100 * *e, 1)
              << "%\n";
  }
}

ordered_json RowsJson(const std::vector<observe::ComparedRow>& rows) {
  ordered_json out = ordered_json::array();
  for (const observe::ComparedRow& r : rows) {
    out.push_back({{"bytes", r.bytes},
                   {"busbw_GBps", r.measured_busbw_GBps},
                   {"simulated_busbw_GBps", r.simulated_busbw_GBps},
                   {"error", r.error ? ordered_json(*r.error) : ordered_json(nullptr)}});
  }
  return out;
}

ordered_json MeanJson(const std::vector<observe::ComparedRow>& rows) {
  const std::optional<double> e = observe::MeanFitError(rows);
  return e ? ordered_json(*e) : ordered_json(nullptr);
}

std::string CatalogEfficiency(const InstanceType& type) {
  return type.network_efficiency ? Fixed(*type.network_efficiency, 3) : "the default";
}

// Each run's rows beside the simulated collective on `type`: printed, or added to `runs_json`
// (with `full`, the run's op, ranks and nodes too).
Status CompareRuns(const std::vector<observe::NcclTestsRun>& runs, const InstanceType& type,
                   const std::string& what, bool full, ordered_json* runs_json) {
  for (const observe::NcclTestsRun& run : runs) {
    Expected<std::vector<observe::ComparedRow>> rows =
        observe::CompareNccl(run, type, sim::ModelParams());
    if (!rows.ok()) return rows.status();
    if (!runs_json) {
      PrintCompared(run, *rows, what);
    } else if (full) {
      runs_json->push_back({{"file", run.file},
                            {"op", observe::ToString(*run.op)},
                            {"ranks", run.ranks},
                            {"nodes", run.nodes},
                            {"rows", RowsJson(*rows)},
                            {"mean_fit_error", MeanJson(*rows)}});
    } else {
      runs_json->push_back(
          {{"file", run.file}, {"rows", RowsJson(*rows)}, {"mean_fit_error", MeanJson(*rows)}});
    }
  }
  return Status::Ok();
}

void PrintRefit(const ObserveArgs& a, const InstanceType& type, const NetworkFit& fit) {
  const sim::ModelParams params;
  std::cout << "\nrefitted: " << type.name << " network efficiency " << Fixed(fit.efficiency, 3)
            << " (was " << CatalogEfficiency(type) << "), mean |error| "
            << Fixed(100 * fit.mean_error, 1) << "% over the rows of 128 MiB and more";
  if (fit.latency_scale) {
    std::cout << "; NCCL protocol latency scale across its network " << Fixed(*fit.latency_scale, 3)
              << " (was " << Fixed(params.protocol_latency_scale, 2) << "), mean |error| "
              << Fixed(100 * fit.latency_mean_error, 1) << "% over the smaller rows";
  }
  std::cout << "; profile written to " << a.refit << "\n";
}

ordered_json RefitJson(const ObserveArgs& a, const InstanceType& type, const NetworkFit& fit,
                       ordered_json after) {
  const sim::ModelParams params;
  return {
      {"profile", a.refit},
      {"network_efficiency", fit.efficiency},
      {"catalog_network_efficiency",
       type.network_efficiency ? ordered_json(*type.network_efficiency) : ordered_json(nullptr)},
      {"mean_error", fit.mean_error},
      {"protocol_latency_scale",
       fit.latency_scale ? ordered_json(*fit.latency_scale) : ordered_json(nullptr)},
      {"model_protocol_latency_scale", params.protocol_latency_scale},
      {"latency_mean_error",
       fit.latency_scale ? ordered_json(fit.latency_mean_error) : ordered_json(nullptr)},
      {"runs", std::move(after)}};
}

// The network fitted to the runs, written into --refit's profile (--profile's with the network
// replaced, or a new one).
Expected<NetworkFit> WriteRefit(const ObserveArgs& a,
                                const std::vector<observe::NcclTestsRun>& runs,
                                const InstanceType& type) {
  Expected<NetworkFit> fit = observe::RefitNetwork(runs, type, sim::ModelParams());
  if (!fit.ok()) return fit.status();
  std::optional<HardwareProfile> base;
  if (!a.profile.empty()) {
    Expected<HardwareProfile> loaded = LoadHardwareProfile(a.profile);
    if (!loaded.ok()) return loaded.status();
    base = std::move(*loaded);
  }
  Expected<HardwareProfile> profile =
      observe::ProfileWithNetwork(base ? &*base : nullptr, a.profile, runs, type, *fit);
  if (!profile.ok()) return profile.status();
  if (Status st = WriteFileDurably(a.refit, HardwareProfileToJson(*profile)); !st.ok()) return st;
  return fit;
}

// nccl-tests rows beside the simulated collective on `type`; with --refit, the network fitted
// to them, written into a profile, and the rows again with it.
int CompareAndRefit(const ObserveArgs& a, const std::vector<observe::NcclTestsRun>& runs,
                    const InstanceType& type) {
  ordered_json j = {{"instance", type.name}, {"runs", ordered_json::array()}};
  const std::string catalog_what = "simulated on " + type.name + " (network efficiency " +
                                   CatalogEfficiency(type) + ", the catalog's)";
  if (Status s = CompareRuns(runs, type, catalog_what, true, a.json ? &j["runs"] : nullptr);
      !s.ok()) {
    return Fail(s);
  }
  if (a.refit.empty()) {
    if (a.json) std::cout << j.dump(2) << "\n";
    return 0;
  }
  Expected<NetworkFit> fit = WriteRefit(a, runs, type);
  if (!fit.ok()) return Fail(fit.status());
  InstanceType refitted = type;
  refitted.network_efficiency = fit->efficiency;
  refitted.protocol_latency_scale = fit->latency_scale;
  if (!a.json) PrintRefit(a, type, *fit);
  ordered_json after = ordered_json::array();
  if (Status s = CompareRuns(runs, refitted, "with the refitted network", false,
                             a.json ? &after : nullptr);
      !s.ok()) {
    return Fail(s);
  }
  if (a.json) {
    j["refit"] = RefitJson(a, type, *fit, std::move(after));
    std::cout << j.dump(2) << "\n";
  }
  return 0;
}

ordered_json RunJson(const observe::NcclTestsRun& run) {
  ordered_json j;
  j["file"] = run.file;
  j["op"] = observe::ToString(*run.op);
  j["ranks"] = run.ranks;
  j["nodes"] = run.nodes;
  j["gpu"] = run.gpu;
  j["rows"] = ordered_json::array();
  for (const observe::NcclRow& r : run.rows) {
    j["rows"].push_back({{"bytes", r.bytes},
                         {"time_us", r.time_us},
                         {"algbw_GBps", r.algbw_GBps},
                         {"busbw_GBps", r.busbw_GBps},
                         {"inplace_time_us", r.inplace_time_us},
                         {"inplace_busbw_GBps", r.inplace_busbw_GBps}});
  }
  j["avg_busbw_GBps"] =
      run.avg_busbw_GBps ? ordered_json(*run.avg_busbw_GBps) : ordered_json(nullptr);
  return j;
}

void PrintRun(const observe::NcclTestsRun& run) {
  std::cout << run.file << ": " << observe::ToString(*run.op) << "_perf, " << run.ranks
            << " ranks on " << run.nodes << (run.nodes == 1 ? " node" : " nodes") << " (" << run.gpu
            << "), " << run.rows.size() << " sizes\n";
  std::printf("  %14s %12s %10s %10s\n", "bytes", "time us", "algbw GB/s", "busbw GB/s");
  for (const observe::NcclRow& r : run.rows) {
    std::printf("  %14.0f %12.1f %10.2f %10.2f\n", r.bytes, r.time_us, r.algbw_GBps, r.busbw_GBps);
  }
}

// The files' runs of operation `op` (nullopt: each file's own), in the order given.
Status LoadRuns(const ObserveArgs& a, std::optional<observe::NcclOp> op,
                std::vector<observe::NcclTestsRun>* runs) {
  for (const std::string& file : a.files) {
    Expected<observe::NcclTestsRun> run = observe::LoadNcclTests(file, op);
    if (!run.ok()) return run.status();
    runs->push_back(std::move(*run));
  }
  return Status::Ok();
}

}  // namespace

int ObserveNccl(const ObserveArgs& a) {
  std::optional<observe::NcclOp> op;
  if (!a.op.empty()) {
    Expected<observe::NcclOp> o = observe::ParseNcclOp(a.op, "--op");
    if (!o.ok()) return Fail(o.status());
    op = *o;
  }
  if (!a.scenario.empty() || !a.plan.empty()) {
    return Fail(Status::InvalidInput(
        "--scenario / --plan compare training logs; for nccl-tests output give --instance TYPE"));
  }
  if (!a.refit.empty() && a.instance.empty()) {
    return Fail(Status::InvalidInput("--refit needs --instance TYPE (the instance the run used)"));
  }
  Expected<std::optional<InstanceType>> type = InstanceArg(a);
  if (!type.ok()) return Fail(type.status());
  std::vector<observe::NcclTestsRun> runs;
  if (Status st = LoadRuns(a, op, &runs); !st.ok()) return Fail(st);
  if (*type) return CompareAndRefit(a, runs, **type);
  if (a.json) {
    ordered_json all = ordered_json::array();
    for (const observe::NcclTestsRun& run : runs) all.push_back(RunJson(run));
    std::cout << ordered_json{{"nccl_tests", all}}.dump(2) << "\n";
    return 0;
  }
  for (const observe::NcclTestsRun& run : runs) PrintRun(run);
  return 0;
}

}  // namespace trainsim::observe_cli
