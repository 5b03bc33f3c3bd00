// The planner's speed and quality: prints markdown tables (DESIGN.md section 8).
//
//  1. Speed: GPT-3 175B over every AWS GPU type of the catalog and 1..256
//     nodes: candidates estimated per second, and the whole plan's wall time
//     including the SimGrid confirmation of the best 20.
//  2. Quality: for each Megatron-LM weak-scaling row (Narayanan et al. SC'21,
//     Table 1), the planner restricted to DGX A100 and the row's GPU count,
//     objective min-time: is its best configuration at least as fast as the
//     published one? Compared with the published configuration both as
//     measured (the paper's TFLOP/s) and as simulated here.
//
// Usage: planner_bench [speed | megatron] [--jobs N]   (default: both, all cores)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "bench/megatron_rows.h"
#include "core/catalog.h"
#include "core/scenario.h"
#include "core/search.h"
#include "planner/search/plan.h"
#include "sim/simulate.h"

namespace trainsim::bench {
namespace {

constexpr char kSourceDir[] = TRAINSIM_SOURCE_DIR;
constexpr int kMegatronRows = 10;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

class Timing : public planner::PlanObserver {
 public:
  void Estimated(int64_t candidates, double seconds) override {
    estimated = candidates;
    estimate_s = seconds;
  }
  void Simulated(int, int) override {}
  int64_t estimated = 0;
  double estimate_s = 0;
};

int64_t PrunedCount(const planner::Plan& p) {
  int64_t n = 0;
  for (const auto& [reason, e] : p.pruned) n += e.count;
  return n;
}

void Speed(const Catalog& catalog, int jobs) {
  Expected<PlanningScenario> s =
      LoadPlanningScenario(std::string(kSourceDir) + "/scenarios/gpt3-175b-p4d.json", catalog);
  if (!s.ok()) {
    std::printf("cannot load the scenario: %s\n", s.status().message().c_str());
    return;
  }
  s->search = SearchConfig();  // every AWS GPU type, every default dimension
  s->search.min_nodes = 1;
  s->search.max_nodes = 256;
  s->search.confirm_top = 20;
  Timing timing;
  planner::PlanOptions options;
  options.jobs = jobs;
  options.observer = &timing;
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  Expected<planner::Plan> plan = planner::MakePlan(*s, catalog, options);
  const double wall = Seconds(start);
  if (!plan.ok()) {
    std::printf("plan failed: %s\n", plan.status().message().c_str());
    return;
  }
  std::printf(
      "## Planner speed: GPT-3 175B, %zu AWS GPU types x 1..256 nodes, %d simulations at once\n\n"
      "| candidates in the space | pruned | estimated | estimator pass (s) | estimated / s | "
      "confirmed in SimGrid | whole plan (s) |\n|---|---|---|---|---|---|---|\n"
      "| %lld | %lld | %lld | %.3f | %.0f | %zu | %.1f |\n\n",
      plan->space.instances.size(), jobs,
      static_cast<long long>(PrunedCount(*plan) + timing.estimated),
      static_cast<long long>(PrunedCount(*plan)), static_cast<long long>(timing.estimated),
      timing.estimate_s, timing.estimated / timing.estimate_s, plan->confirmed.size(), wall);
  std::printf("Recommended: %s\n\n", plan->reasons.empty() ? "-" : plan->reasons[0].c_str());
}

void Megatron(const Catalog& catalog, int jobs) {
  std::ifstream in(std::string(kSourceDir) + "/../shared/reference/published-measurements.json");
  const json measurements = json::parse(in, nullptr, false);
  if (!measurements.is_array()) {
    std::printf("cannot read published-measurements.json\n");
    return;
  }
  std::printf(
      "## Planner against the published Megatron-LM configurations (DGX A100 80GB, same GPU "
      "count, objective min-time)\n\n"
      "| row | GPUs | published: tp/pp/dp | published samples/s (measured) | published config, "
      "simulated | planner's best | planner, simulated samples/s | vs measured | vs simulated | "
      "plan (s) | planner's best with full recompute (as published) | its samples/s | vs measured "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < kMegatronRows && i < static_cast<int>(measurements.size()); ++i) {
    const MegatronRow row = ParseMegatronRow(measurements[i]);
    const std::optional<std::string> preset = ZooPresetFor(row);
    if (!preset) continue;
    Expected<PlanningScenario> s =
        ParsePlanningScenario(MegatronScenarioJson(row, *preset, 0), "megatron", catalog);
    if (!s.ok()) {
      std::printf("| %s | %s |\n", row.name.c_str(), s.status().message().c_str());
      continue;
    }
    s->scenario.training.tokens = 300e9;  // the job's size does not change the step
    std::fflush(stdout);
    Expected<sim::SimulationResult> published = sim::Simulate(s->scenario, sim::SimulateOptions());
    s->search.instances = {"dgx-a100-80gb"};
    s->search.min_nodes = s->search.max_nodes = row.nodes;
    s->search.objective = Objective::kMinTime;
    s->search.confirm_top = 10;
    s->search.trials = 100;
    planner::PlanOptions options;
    options.jobs = jobs;
    const auto start = std::chrono::steady_clock::now();
    Expected<planner::Plan> plan = planner::MakePlan(*s, catalog, options);
    const double wall = Seconds(start);
    if (!plan.ok() || !published.ok() || !published->simulated) {
      std::printf("| %s | %s |\n", row.name.c_str(),
                  !plan.ok() ? plan.status().message().c_str() : "published config not simulated");
      continue;
    }
    const planner::ConfirmedCandidate& best = plan->confirmed[plan->best];
    const double sim_pub = published->samples_per_s;
    // The paper's TFLOP/s count recompute: scale the simulated rate by it.
    const double measured_pub =
        row.published_tflops / published->hardware_tflops_per_gpu * published->samples_per_s;
    const double mine = best.simulated.samples_per_s;
    std::printf("| %s | %d | %d/%d/%d | %.2f | %.2f | %s | %.2f | %+.1f%% | %+.1f%% | %.1f ",
                row.name.c_str(), row.nodes * 8, row.tp, row.pp, row.dp, measured_pub, sim_pub,
                planner::Describe(plan->space, best.candidate).c_str(), mine,
                100 * (mine / measured_pub - 1), 100 * (mine / sim_pub - 1), wall);
    // Like for like: the paper recomputed every layer's activations.
    s->search.recompute = {Recompute::kFull};
    Expected<planner::Plan> full = planner::MakePlan(*s, catalog, options);
    if (!full.ok()) {
      std::printf("| %s | | |\n", full.status().message().c_str());
      continue;
    }
    const planner::ConfirmedCandidate& f = full->confirmed[full->best];
    std::printf("| %s | %.2f | %+.1f%% |\n", planner::Describe(full->space, f.candidate).c_str(),
                f.simulated.samples_per_s, 100 * (f.simulated.samples_per_s / measured_pub - 1));
  }
  std::printf("\n");
}

}  // namespace
}  // namespace trainsim::bench

int main(int argc, char** argv) {
  using namespace trainsim;
  std::string what = "all";
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--jobs") && i + 1 < argc) {
      jobs = std::atoi(argv[++i]);
    } else {
      what = argv[i];
    }
  }
  Expected<Catalog> catalog = Catalog::LoadBuiltin(Catalog::DefaultDir());
  if (!catalog.ok()) {
    std::fprintf(stderr, "%s\n", catalog.status().message().c_str());
    return 1;
  }
  if (what == "all" || what == "speed") bench::Speed(*catalog, jobs);
  if (what == "all" || what == "megatron") bench::Megatron(*catalog, jobs);
  return 0;
}
