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

// nccl-tests rows beside the simulated collective on `type`; with --refit, the network fitted
// to them, written into a profile, and the rows again with it.
int CompareAndRefit(const ObserveArgs& a, const std::vector<observe::NcclTestsRun>& runs,
                    const InstanceType& type) {
  const sim::ModelParams params;
  const std::string catalog_eff =
      type.network_efficiency ? Fixed(*type.network_efficiency, 3) : "the default";
  ordered_json j = {{"instance", type.name}, {"runs", ordered_json::array()}};
  auto rows_json = [](const std::vector<observe::ComparedRow>& rows) {
    ordered_json out = ordered_json::array();
    for (const observe::ComparedRow& r : rows) {
      out.push_back({{"bytes", r.bytes},
                     {"busbw_GBps", r.measured_busbw_GBps},
                     {"simulated_busbw_GBps", r.simulated_busbw_GBps},
                     {"error", r.error ? ordered_json(*r.error) : ordered_json(nullptr)}});
    }
    return out;
  };
  auto mean_json = [](const std::vector<observe::ComparedRow>& rows) {
    const std::optional<double> e = observe::MeanFitError(rows);
    return e ? ordered_json(*e) : ordered_json(nullptr);
  };
  for (const observe::NcclTestsRun& run : runs) {
    Expected<std::vector<observe::ComparedRow>> rows = observe::CompareNccl(run, type, params);
    if (!rows.ok()) return Fail(rows.status());
    if (a.json) {
      j["runs"].push_back({{"file", run.file},
                           {"op", observe::ToString(*run.op)},
                           {"ranks", run.ranks},
                           {"nodes", run.nodes},
                           {"rows", rows_json(*rows)},
                           {"mean_fit_error", mean_json(*rows)}});
    } else {
      PrintCompared(
          run, *rows,
          "simulated on " + type.name + " (network efficiency " + catalog_eff + ", the catalog's)");
    }
  }
  if (a.refit.empty()) {
    if (a.json) std::cout << j.dump(2) << "\n";
    return 0;
  }
  Expected<NetworkFit> fit = observe::RefitNetwork(runs, type, params);
  if (!fit.ok()) return Fail(fit.status());
  HardwareProfile profile;
  if (!a.profile.empty()) {
    Expected<HardwareProfile> base = LoadHardwareProfile(a.profile);
    if (!base.ok()) return Fail(base.status());
    if (!base->gpu.empty() && base->gpu != type.gpu.name) {
      return Fail(Status::InvalidInput(a.profile + ": measured " + base->gpu + ", but " +
                                       type.name + " has " + type.gpu.name));
    }
    profile = std::move(*base);
  } else {
    profile.provenance.tool = "trainsim observe";
    profile.provenance.backend = "nccl-tests";
    profile.provenance.device = runs.front().gpu;
    profile.provenance.devices = runs.front().ranks / runs.front().nodes;
    profile.provenance.nodes = fit->nodes;
    profile.provenance.collectives = "nccl-tests";
    profile.not_measured = {"gemm", "memory", "host links", "collectives inside a node"};
  }
  profile.gpu = type.gpu.name;
  profile.network = *fit;
  if (Status st = WriteFileDurably(a.refit, HardwareProfileToJson(profile)); !st.ok())
    return Fail(st);
  InstanceType refitted = type;
  refitted.network_efficiency = fit->efficiency;
  refitted.protocol_latency_scale = fit->latency_scale;
  ordered_json after = ordered_json::array();
  if (!a.json) {
    std::cout << "\nrefitted: " << type.name << " network efficiency " << Fixed(fit->efficiency, 3)
              << " (was " << catalog_eff << "), mean |error| " << Fixed(100 * fit->mean_error, 1)
              << "% over the rows of 128 MiB and more";
    if (fit->latency_scale) {
      std::cout << "; NCCL protocol latency scale across its network "
                << Fixed(*fit->latency_scale, 3) << " (was "
                << Fixed(params.protocol_latency_scale, 2) << "), mean |error| "
                << Fixed(100 * fit->latency_mean_error, 1) << "% over the smaller rows";
    }
    std::cout << "; profile written to " << a.refit << "\n";
  }
  for (const observe::NcclTestsRun& run : runs) {
    Expected<std::vector<observe::ComparedRow>> rows = observe::CompareNccl(run, refitted, params);
    if (!rows.ok()) return Fail(rows.status());
    if (a.json) {
      after.push_back(
          {{"file", run.file}, {"rows", rows_json(*rows)}, {"mean_fit_error", mean_json(*rows)}});
    } else {
      PrintCompared(run, *rows, "with the refitted network");
    }
  }
  if (a.json) {
    j["refit"] = {
        {"profile", a.refit},
        {"network_efficiency", fit->efficiency},
        {"catalog_network_efficiency",
         type.network_efficiency ? ordered_json(*type.network_efficiency) : ordered_json(nullptr)},
        {"mean_error", fit->mean_error},
        {"protocol_latency_scale",
         fit->latency_scale ? ordered_json(*fit->latency_scale) : ordered_json(nullptr)},
        {"model_protocol_latency_scale", params.protocol_latency_scale},
        {"latency_mean_error",
         fit->latency_scale ? ordered_json(fit->latency_mean_error) : ordered_json(nullptr)},
        {"runs", after}};
    std::cout << j.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

int ObserveNccl(const ObserveArgs& a) {
  std::optional<observe::NcclOp> op;
  if (!a.op.empty()) {
    Expected<observe::NcclOp> o = observe::ParseNcclOp(a.op, "--op");
    if (!o.ok()) {
      return Fail(o.status());
    }
    op = *o;
  }
  if (!a.scenario.empty() || !a.plan.empty()) {
    std::cerr << "trainsim: --scenario / --plan compare training logs; for nccl-tests output "
                 "give --instance TYPE\n";
    return 1;
  }
  if (!a.refit.empty() && a.instance.empty()) {
    std::cerr << "trainsim: --refit needs --instance TYPE (the instance the run used)\n";
    return 1;
  }
  std::optional<InstanceType> type;
  if (!a.instance.empty()) {
    Expected<Catalog> catalog = Catalog::LoadDefault(a.catalog);
    if (!catalog.ok()) {
      return Fail(catalog.status());
    }
    const InstanceType* t = catalog->Find(a.instance);
    if (t == nullptr) {
      std::cerr << "trainsim: --instance: unknown instance type \"" << a.instance
                << "\" (trainsim catalog list)\n";
      return 1;
    }
    type = *t;
  }
  std::vector<observe::NcclTestsRun> runs;
  for (const std::string& file : a.files) {
    Expected<observe::NcclTestsRun> run = observe::LoadNcclTests(file, op);
    if (!run.ok()) {
      return Fail(run.status());
    }
    runs.push_back(std::move(*run));
  }
  if (type) return CompareAndRefit(a, runs, *type);
  ordered_json all = ordered_json::array();
  for (observe::NcclTestsRun* run = runs.data(); run != runs.data() + runs.size(); ++run) {
    if (a.json) {
      ordered_json j;
      j["file"] = run->file;
      j["op"] = observe::ToString(*run->op);
      j["ranks"] = run->ranks;
      j["nodes"] = run->nodes;
      j["gpu"] = run->gpu;
      j["rows"] = ordered_json::array();
      for (const observe::NcclRow& r : run->rows) {
        j["rows"].push_back({{"bytes", r.bytes},
                             {"time_us", r.time_us},
                             {"algbw_GBps", r.algbw_GBps},
                             {"busbw_GBps", r.busbw_GBps},
                             {"inplace_time_us", r.inplace_time_us},
                             {"inplace_busbw_GBps", r.inplace_busbw_GBps}});
      }
      j["avg_busbw_GBps"] =
          run->avg_busbw_GBps ? ordered_json(*run->avg_busbw_GBps) : ordered_json(nullptr);
      all.push_back(j);
      continue;
    }
    std::cout << run->file << ": " << observe::ToString(*run->op) << "_perf, " << run->ranks
              << " ranks on " << run->nodes << (run->nodes == 1 ? " node" : " nodes") << " ("
              << run->gpu << "), " << run->rows.size() << " sizes\n";
    std::printf("  %14s %12s %10s %10s\n", "bytes", "time us", "algbw GB/s", "busbw GB/s");
    for (const observe::NcclRow& r : run->rows) {
      std::printf("  %14.0f %12.1f %10.2f %10.2f\n", r.bytes, r.time_us, r.algbw_GBps,
                  r.busbw_GBps);
    }
  }
  if (a.json) std::cout << ordered_json{{"nccl_tests", all}}.dump(2) << "\n";
  return 0;
}

}  // namespace trainsim::observe_cli
