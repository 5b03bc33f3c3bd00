#include "cli/plan_cmd.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "cli/args.h"
#include "core/catalog.h"
#include "core/durable_file.h"
#include "core/error_bands.h"
#include "core/scenario.h"
#include "core/search.h"
#include "core/strategy.h"
#include "core/units.h"
#include "planner/search/plan.h"
#include "planner/search/reasons.h"

namespace trainsim {
namespace {

const char kPlanUsage[] =
    "usage: trainsim plan SCENARIO [--top K] [--jobs N] [--out FILE] [--json]\n"
    "                     [--catalog FILE] [--profile FILE]\n"
    "  --top K         candidates the simulator confirms (default: search.confirm_top, 100)\n"
    "  --jobs N        simulations at once (default: all cores)\n"
    "  --out FILE      where to write the plan JSON (default: STEM.plan.json)\n"
    "  --json          print the plan JSON instead of the table\n"
    "  --catalog FILE  add instance types from an extra catalog file\n"
    "  --profile FILE  hardware profile for the instance types of its GPU\n";

struct PlanArgs {
  std::string scenario, out, catalog, profile;
  int top = 0, jobs = 0;
  bool json = false, help = false;
};

Expected<PlanArgs> ParsePlanArgs(const std::vector<std::string>& words) {
  static const std::vector<OptionSpec> kOptions = {{"--json"},
                                                   {"--top", "a count from 1 to 100000"},
                                                   {"--jobs", "a count from 1 to 100000"},
                                                   {"--out", "a file name"},
                                                   {"--catalog", "a file name"},
                                                   {"--profile", "a file name"}};
  Expected<ParsedArgs> args = ParseArgs(words, kOptions);
  if (!args.ok()) return args.status();
  PlanArgs a;
  a.help = args->help();
  if (a.help) return a;
  if (args->positional().size() > 1) return Status::InvalidInput("plan takes one scenario file");
  if (args->positional().empty()) return Status::InvalidInput("plan needs a scenario file");
  a.scenario = args->positional()[0];
  for (auto [name, count] : {std::pair{"--top", &a.top}, std::pair{"--jobs", &a.jobs}}) {
    Expected<int> v = args->Int(name, 1, 100000, "a count", 0);
    if (!v.ok()) return v.status();
    *count = *v;
  }
  a.json = args->Has("--json");
  a.catalog = args->Value("--catalog");
  a.profile = args->Value("--profile");
  a.out = args->Value("--out", std::filesystem::path(a.scenario).stem().string() + ".plan.json");
  return a;
}

// Progress on stderr: the estimator's pass, then the simulations.
class Progress : public planner::PlanObserver {
 public:
  void Estimated(int64_t candidates, double seconds) override {
    std::fprintf(stderr, "plan: estimated %lld candidates in %.2f s (%.0f per second)\n",
                 static_cast<long long>(candidates), seconds,
                 seconds > 0 ? candidates / seconds : 0.0);
  }
  void Simulated(int done, int total) override {
    std::fprintf(stderr, "\rplan: simulated %d of %d candidates", done, total);
    if (done == total) std::fprintf(stderr, "\n");
  }
};

std::string Dollars(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// The mean of a cost spread, or "n/a" without a price.
std::string Money(const std::optional<planner::Spread>& s) { return s ? Dollars(s->mean) : "n/a"; }

// Candidate #i of the plan with its best pricing option, one row.
void PrintCandidate(const planner::Plan& p, size_t i) {
  const planner::ConfirmedCandidate& c = p.confirmed[i];
  const planner::Candidate& k = c.candidate;
  std::string sched = k.pp > 1 ? ToString(k.schedule) : "-";
  if (k.pp > 1 && k.schedule == Schedule::kInterleaved)
    sched += " x" + std::to_string(k.virtual_stages);
  const planner::PricedJob& pj = c.priced[c.best_priced];
  // ZeRO stage, and "/g" with a hybrid shard group of g.
  std::string zero = std::to_string(k.zero_stage);
  if (k.shard_group > 0) zero += "/" + std::to_string(k.shard_group);
  // dp, "eN" with expert parallelism N, then each strategy's tag and degree ("c2").
  std::string dp = std::to_string(k.dp);
  if (k.ep > 1) dp += "e" + std::to_string(k.ep);
  for (int i = 0; i < kStrategyCount; ++i) {
    if (k.degrees[i] > 1) dp += std::string(kStrategies[i]->tag) + std::to_string(k.degrees[i]);
  }
  // The step time's 80% band (docs/validation.md section 0.7); "*" where it was widened.
  std::string band = "-";
  if (Judged(c.band)) {
    const double step = c.simulated.step.step_time_s;
    char text[48];
    std::snprintf(text, sizeof text, "%.3g-%.3g%s", step / c.band->hi, step / c.band->lo,
                  c.band->note.empty() ? "" : "*");
    band = text;
  }
  std::printf(
      "%3zu%s  %-16s %5d %3d %3d %6s %5s %3d %-9s %-14s %8.3f %15s %+6.1f %6.1f %6.1f  %-14s "
      "%9.1f %9.1f %9s\n",
      i + 1, static_cast<int>(i) == p.best ? "*" : " ", p.space.instances[k.instance]->name.c_str(),
      k.nodes, k.tp, k.pp, dp.c_str(), zero.c_str(), k.micro_batch, ToString(k.recompute),
      sched.c_str(), c.simulated.step.step_time_s, band.c_str(), 100 * c.estimator_error,
      100 * c.simulated.mfu, c.simulated.memory.total_bytes / kGiB, ToString(pj.pricing),
      pj.job.expected_wall_s / kSecondsPerHour, pj.job.wall_s.p90 / kSecondsPerHour,
      Money(pj.job.cost_usd).c_str());
}

// The confirmed candidates, ranked, each with its best pricing option.
void PrintCandidates(const Scenario& s, const planner::Plan& p) {
  std::printf("%s: %s, %.0f steps\n\n", s.name.c_str(), s.model.name.c_str(),
              p.confirmed.empty() ? 0.0 : p.confirmed[0].steps);
  std::printf(
      "%4s  %-16s %5s %3s %3s %6s %5s %3s %-9s %-14s %8s %15s %6s %6s %6s  %-14s %9s %9s %9s\n",
      "rank", "instance", "nodes", "tp", "pp", "dp", "zero", "mb", "recompute", "schedule",
      "step s", "80% band s", "est %", "MFU %", "GiB", "pricing", "hours", "P90 h", "cost $");
  for (size_t i = 0; i < p.confirmed.size(); ++i) {
    if (p.confirmed[i].best_priced >= 0) PrintCandidate(p, i);
  }
}

// Every pricing option of the recommendation.
void PrintPricingOptions(const planner::Plan& p) {
  const planner::ConfirmedCandidate& rec = p.confirmed[p.best];
  std::printf("\nPricing options of the recommendation (#%d):\n  %-15s %9s %9s %9s %9s  %s\n",
              p.best + 1, "pricing", "hours", "P90 h", "cost $", "P90 $", "terms");
  for (const planner::PricedJob& pj : rec.priced) {
    const std::string terms = planner::DescribeTerms(pj);
    std::printf("  %-15s %9.1f %9.1f %9s %9s%s%s\n", ToString(pj.pricing),
                pj.job.expected_wall_s / kSecondsPerHour, pj.job.wall_s.p90 / kSecondsPerHour,
                Money(pj.job.cost_usd).c_str(),
                pj.job.cost_usd ? Dollars(pj.job.cost_usd->p90).c_str() : "n/a",
                terms.empty() ? "" : "  ", terms.c_str());
  }
}

// The scaling curve of the recommended layout.
void PrintScaling(const planner::Plan& p) {
  std::printf(
      "\n\nScaling of the recommended layout (simulated; e: estimated):\n  %6s %13s %19s %10s "
      "%10s %12s\n",
      "nodes", "samples/s", "80% band", "efficiency", "hours", "cost $");
  for (const planner::ScalingPoint& sp : p.scaling) {
    char band[48] = "-";  // "*" where it was widened
    if (Judged(sp.band)) {
      std::snprintf(band, sizeof band, "%.1f-%.1f%s", sp.samples_per_s * sp.band->lo,
                    sp.samples_per_s * sp.band->hi, sp.band->note.empty() ? "" : "*");
    }
    std::printf(
        "  %6d %12.1f%s %19s %9.0f%% %10.1f %12s%s\n", sp.nodes, sp.samples_per_s,
        sp.simulated ? " " : "e", band, 100 * sp.efficiency, sp.expected_hours,
        sp.expected_cost_usd ? std::to_string(static_cast<long long>(*sp.expected_cost_usd)).c_str()
                             : "n/a",
        sp.nodes == p.scaling_stops_paying ? "  <- adding nodes stops paying after this" : "");
  }
}

void PrintTable(const Scenario& s, const planner::Plan& p) {
  PrintCandidates(s, p);
  PrintPricingOptions(p);
  // "dp deN / dcN = expert / context parallel N": expert parallelism, then each strategy's tag.
  std::string tags = "deN", meanings = "expert";
  for (const Strategy* st : kStrategies) {
    tags += " / d" + std::string(st->tag) + "N";
    meanings += " / " + std::string(st->title);
  }
  std::printf(
      "\n(* recommended; each candidate with its best pricing option; zero s/g = ZeRO-s sharded "
      "over hybrid groups of g; dp %s = %s N; 80%% band: where the step time of 80%% of "
      "published runs like it fell against the prediction, * = widened beyond what was measured "
      "(docs/validation.md section 0.7); est %% = estimator against simulator; hours and cost "
      "are expected values of the whole job, P90 with the model's error and "
      "interruptions)\n\nRecommendation%s:\n",
      tags.c_str(), meanings.c_str(),
      p.meets_constraints ? "" : " (no plan meets the constraints)");
  for (const std::string& r : p.reasons) std::printf("  - %s\n", r.c_str());
  std::printf("\nPareto front (time against cost):");
  for (auto [i, j] : p.pareto) {
    const planner::PricedJob& pj = p.confirmed[i].priced[j];
    std::printf(" #%d %s %.1f h $%s;", i + 1, ToString(pj.pricing),
                pj.job.expected_wall_s / kSecondsPerHour, Money(pj.job.cost_usd).c_str());
  }
  PrintScaling(p);
  std::printf("\nAssumptions:\n");
  for (const std::string& a : p.assumptions) std::printf("  - %s\n", a.c_str());
}

}  // namespace

int PlanCommand(const std::vector<std::string>& words) {
  Expected<PlanArgs> args = ParsePlanArgs(words);
  if (!args.ok()) {
    std::cerr << "trainsim: " << args.status().message() << "\n" << kPlanUsage;
    return 1;
  }
  const PlanArgs& a = *args;
  if (a.help) {
    std::cout << kPlanUsage;
    return 0;
  }
  Expected<Catalog> catalog = Catalog::LoadDefault(a.catalog);
  if (!catalog.ok()) return Fail(catalog.status());
  Expected<PlanningScenario> s = LoadPlanningScenario(a.scenario, *catalog, a.profile);
  if (!s.ok()) return Fail(s.status());
  if (a.top > 0) s->search.confirm_top = a.top;
  if (!CheckWritable(a.out).ok()) {  // fail before a long plan, not after it
    return Fail(Status::InvalidInput(a.out + ": cannot write the plan"));
  }
  Progress progress;
  planner::PlanOptions options;
  options.jobs = a.jobs > 0 ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  options.observer = &progress;
  std::string no_bands;
  options.bands = DefaultErrorBands(&no_bands);
  if (!options.bands) std::cerr << "trainsim: no error bands: " << no_bands << "\n";
  Expected<planner::Plan> plan = planner::MakePlan(*s, *catalog, options);
  if (!plan.ok()) return Fail(plan.status());
  const std::string text = planner::ToJson(*s, *plan, s->document).dump(2) + "\n";
  if (Status st = WriteFileDurably(a.out, text); !st.ok()) return Fail(st);
  if (a.json) {
    std::cout << text;
  } else {
    PrintTable(s->scenario, *plan);
  }
  std::cerr << "plan written to " << a.out << "\n";
  return 0;
}

}  // namespace trainsim
