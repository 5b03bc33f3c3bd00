#include "planner/search/space.h"

#include <algorithm>
#include <cstdio>

#include "core/scenario_sections.h"
#include "planner/job/pricing.h"
#include "sim/fold.h"
#include "sim/simulate.h"

namespace trainsim::planner {
namespace {

template <typename T>
std::vector<T> Or(const std::vector<T>& given, std::vector<T> fallback) {
  return given.empty() ? fallback : given;
}

std::vector<int> Divisors(int n, int max) {
  std::vector<int> out;
  for (int d = 1; d <= std::min(n, max); ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// The search.prices field that prices `p`, for options only a user price (or, for Capacity
// Blocks, a catalog figure) can price; nullptr for the others.
const char* UserPriceField(Pricing p) {
  switch (p) {
    case Pricing::kCapacityBlock:
      return "capacity_block_usd_hr";
    case Pricing::kTrainingPlan:
      return "training_plan_usd_hr";
    case Pricing::kSavingsPlan1y:
      return "savings_plan_1y_usd_hr";
    case Pricing::kSavingsPlan3y:
      return "savings_plan_3y_usd_hr";
    default:
      return nullptr;
  }
}

// The options to price: the ones asked for (an option that needs a price no instance has
// is an error naming search.prices), or by default every option, without the unpriced
// ones that need a user price and without spot ones when spot is not allowed.
Status ResolvePricing(const SearchConfig& q, SearchSpace* space) {
  auto priced_somewhere = [&](Pricing p) {
    for (const InstanceType* t : space->instances) {
      if (PriceUsdHr(*t, p, q)) return true;
    }
    return false;
  };
  std::vector<Pricing> all;
  for (int i = 0; i < kPricingOptions; ++i) all.push_back(static_cast<Pricing>(i));
  for (size_t i = 0; i < (q.pricing.empty() ? all : q.pricing).size(); ++i) {
    const Pricing p = (q.pricing.empty() ? all : q.pricing)[i];
    if (IsSpot(p) && !q.spot_allowed) continue;
    if (p == Pricing::kSpotFallback && !q.deadline_hours) {  // nothing to fall back for
      if (q.pricing.empty()) {
        space->unpriced.push_back(p);
        continue;
      }
      return Status::InvalidInput("search.pricing[" + std::to_string(i) +
                                  "]: \"spot-fallback\" needs search.deadline_hours (it falls "
                                  "back to on-demand when the deadline's slack runs out)");
    }
    const char* field = UserPriceField(p);
    if (field && !priced_somewhere(p)) {
      if (q.pricing.empty()) {
        space->unpriced.push_back(p);
        continue;
      }
      std::string names;
      for (const InstanceType* t : space->instances) names += (names.empty() ? "" : ", ") + t->name;
      return Status::InvalidInput(
          "search.pricing[" + std::to_string(i) + "]: \"" + ToString(p) +
          "\" has no price for any instance searched (" + names + "): give search.prices.\"" +
          (space->instances.empty() ? std::string("<instance>") : space->instances.front()->name) +
          "\"." + field +
          (p == Pricing::kSavingsPlan1y || p == Pricing::kSavingsPlan3y
               ? " (Savings Plans cover on-demand use: the type needs an on-demand price too)"
               : ""));
    }
    space->pricing.push_back(p);
  }
  for (const InstanceType* t : space->instances) {
    bool priced = false;
    for (Pricing p : space->pricing) priced = priced || PriceUsdHr(*t, p, q).has_value();
    space->priced.push_back(priced);
  }
  return Status::Ok();
}

// Records `count` pruned candidates under `reason`; the first message stays. (Called for most
// of the space's candidates: no string or closure is made unless the reason is new.)
template <typename Message>
void Prune(PruneTally* tally, std::string_view reason, int64_t count, const Message& message) {
  if (count <= 0) return;
  auto it = tally->find(reason);
  if (it == tally->end()) it = tally->emplace(std::string(reason), PruneEntry{}).first;
  PruneEntry& e = it->second;
  if (e.count == 0) e.example = message();
  e.count += count;
}

// Schedules (with their virtual-stage counts) as one list.
struct SchedulePick {
  Schedule schedule;
  int virtual_stages;
};

std::vector<SchedulePick> SchedulePicks(const SearchSpace& space) {
  std::vector<SchedulePick> out;
  for (Schedule s : space.schedules) {
    if (s != Schedule::kInterleaved) {
      out.push_back({s, 1});
      continue;
    }
    for (int v : space.virtual_stages) out.push_back({s, v});
  }
  return out;
}

class Walker {
 public:
  Walker(const Scenario& base, const SearchSpace& space, const SpaceVisitor& visit,
         PruneTally* tally)
      : s_(base), space_(space), visit_(visit), tally_(tally), picks_(SchedulePicks(space)) {
    s_.profile = nullptr;  // re-attached per instance when it describes its GPU
    base_profile_ = base.profile;
  }

  void Run() {
    for (int i = 0; i < static_cast<int>(space_.instances.size()); ++i) Instance(i);
  }

 private:
  int64_t NodeCount() const { return space_.max_nodes - space_.min_nodes + 1; }
  int64_t PerLayout() const {
    return static_cast<int64_t>(space_.zero_stages.size() * space_.recompute.size() *
                                picks_.size());
  }
  int64_t PerMicroBatch() const {
    return NodeCount() * static_cast<int64_t>(space_.pp.size()) * PerLayout();
  }
  int64_t PerTp() const {
    return static_cast<int64_t>(space_.micro_batch.size()) * PerMicroBatch();
  }

  void Instance(int i) {
    const InstanceType& t = *space_.instances[i];
    c_.instance = i;
    s_.instance = t;
    s_.cluster.instance = t.name;
    s_.profile = base_profile_ && base_profile_->gpu == t.gpu.name ? base_profile_ : nullptr;
    const int64_t all = static_cast<int64_t>(space_.tp.size()) * PerTp();
    if (!t.gpu.PeakFlops(s_.training.precision) && !s_.profile) {
      Prune(tally_, "precision", all, [&] {
        return t.name + ": " + t.gpu.name + " has no " + ToString(s_.training.precision) +
               " peak in the catalog";
      });
      return;
    }
    // Planning for time alone needs no price (reference systems).
    if (!space_.priced[i] && !space_.time_only) {
      Prune(tally_, "price", all, [&] {
        return t.name +
               ": the catalog has no price for any allowed pricing option (plan it with "
               "objective min-time)";
      });
      return;
    }
    for (int tp : space_.tp) Tp(tp);
  }

  void Tp(int tp) {
    const ModelSpec& m = s_.model;
    const std::string& name = s_.instance.name;
    if (tp > s_.instance.gpus) {
      return Prune(tally_, "tp-node", PerTp(), [&] {
        return "tp " + std::to_string(tp) + " exceeds the " + std::to_string(s_.instance.gpus) +
               " GPUs of a " + name + " node (tensor parallelism stays inside a node)";
      });
    }
    if (m.kind == ModelKind::kLayerList && tp > 1) {
      return Prune(tally_, "tp-layer-list", PerTp(), [&] {
        return "tp " + std::to_string(tp) +
               ": tensor parallelism does not apply to a layer-list model";
      });
    }
    if (m.kind == ModelKind::kTransformer) {
      const int kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
      if (m.heads % tp || kv % tp || m.ffn_hidden % tp) {
        return Prune(tally_, "tp-divides", PerTp(), [&] {
          return "tp " + std::to_string(tp) + " does not divide the heads (" +
                 std::to_string(m.heads) + "), KV heads (" + std::to_string(kv) +
                 ") and FFN width (" + std::to_string(m.ffn_hidden) + ")";
        });
      }
    }
    c_.tp = s_.parallel.tp = tp;
    for (int mb : space_.micro_batch) MicroBatch(mb);
  }

  void MicroBatch(int mb) {
    c_.micro_batch = s_.training.micro_batch = mb;
    if (s_.training.global_batch % mb) {
      return Prune(tally_, "batch", PerMicroBatch(), [&] {
        return "micro batch " + std::to_string(mb) + " does not divide the global batch " +
               std::to_string(s_.training.global_batch);
      });
    }
    if (visit_.on_figures) visit_.on_figures(s_);
    figures_degrees_ = DegreesOf(s_.parallel);
    for (int n = space_.min_nodes; n <= space_.max_nodes; ++n) Nodes(n);
  }

  void Nodes(int n) {
    c_.nodes = s_.cluster.nodes = n;
    // Chosen below each strategy's degree.
    s_.parallel.ep = 1;
    s_.parallel.shard_group = 0;
    Strategies(n, 0);
  }

  // The degrees of strategy `i` and those after it (core/strategy.h), each one its check
  // (Strategy::unfit) allows; pruned with the reason where not.
  void Strategies(int n, int i) {
    if (i == kStrategyCount) {
      // The per-token figures depend on the degrees: made again where they change.
      if (visit_.on_figures && DegreesOf(s_.parallel) != figures_degrees_) {
        visit_.on_figures(s_);
        figures_degrees_ = DegreesOf(s_.parallel);
      }
      return Pipelines(n, n * s_.instance.gpus, LayerCount(s_.model));
    }
    const Strategy& st = *kStrategies[i];
    for (int degree : space_.strategies[i]) {
      c_.degrees[i] = s_.parallel.*st.degree = degree;
      if (degree > 1) {
        if (const std::string why = st.unfit(s_); !why.empty()) {
          Prune(tally_, st.name, static_cast<int64_t>(space_.pp.size()) * PerLayout(),
                [&] { return Cat(st.title, " ", degree, " ", why); });
          continue;
        }
      }
      Strategies(n, i + 1);
    }
    c_.degrees[i] = s_.parallel.*st.degree = 1;  // not a pruned degree for the figures above
  }

  void Pipelines(int n, int gpus, int layers) {
    for (int pp : space_.pp) {
      if (layers % pp) {
        Prune(tally_, "pp-layers", PerLayout(), [&] {
          return "pp " + std::to_string(pp) + " does not divide the model's " +
                 std::to_string(layers) + " layers";
        });
        continue;
      }
      const int split = SlotSplit(s_.parallel);  // GPUs per data-parallel slot
      if (gpus % (c_.tp * pp * split)) {
        Prune(tally_, "gpus", PerLayout(), [&] {
          std::string names = "tp * pp";
          for (const Strategy* st : kStrategies) {
            if (st->splits_slots && s_.parallel.*st->degree > 1) names += Cat(" * ", st->name);
          }
          return names + " = " + std::to_string(c_.tp * pp * split) + " does not divide the " +
                 std::to_string(gpus) + " GPUs of " + std::to_string(n) + " x " + s_.instance.name;
        });
        continue;
      }
      const int dp = gpus / (c_.tp * pp * split);
      if (s_.training.global_batch % (static_cast<int64_t>(dp) * c_.micro_batch)) {
        Prune(tally_, "batch", PerLayout(), [&] {
          return "the global batch " + std::to_string(s_.training.global_batch) +
                 " is not divisible by dp * micro batch = " + std::to_string(dp) + " * " +
                 std::to_string(c_.micro_batch);
        });
        continue;
      }
      c_.pp = s_.parallel.pp = pp;
      c_.dp = s_.parallel.dp = dp;
      Layouts();
    }
  }

  void Layouts() {
    const int64_t per_zero = static_cast<int64_t>(space_.recompute.size() * picks_.size());
    const bool offload_params = s_.training.offload_params;
    for (int zero : space_.zero_stages) {
      if (offload_params && zero != 3) {
        Prune(tally_, "offload-params-zero", per_zero, [&] {
          return "ZeRO-" + std::to_string(zero) +
                 ": training.offload_params offloads ZeRO-3 shards (needs ZeRO-3)";
        });
        continue;
      }
      // ZeRO-3 over one replica still offloads whole layers with offload_params.
      if (zero > 0 && c_.dp == 1 && !offload_params) {
        Prune(tally_, "zero-dp", per_zero, [&] {
          return "ZeRO-" + std::to_string(zero) + " shards over dp, and dp is 1 (same as ZeRO-0)";
        });
        continue;
      }
      if (zero == 3 && ZeroThreeUnvalidated()) {
        Prune(tally_, "zero3-unvalidated", per_zero, [&] {
          char text[320];
          std::snprintf(text, sizeof text,
                        "ZeRO-3 with tp %d, pp %d on %d GPUs for a %.0fB-parameter model, where "
                        "the search offers other layouts: no measurement supports ZeRO-3 beyond "
                        "%d GPUs, nor without model parallelism beyond %dB parameters "
                        "(docs/validation.md section 0.4)",
                        c_.tp, c_.pp, c_.tp * c_.pp * c_.dp, ParameterCount(s_.model) / 1e9,
                        kValidatedZeroThreeGpus, kValidatedZeroThreeBillions);
          return std::string(text);
        });
        continue;
      }
      if (zero >= 2 && c_.pp > 1) {
        Prune(tally_, "zero-pp", per_zero, [&] {
          return "ZeRO-" + std::to_string(zero) + " with pipeline parallelism (pp " +
                 std::to_string(c_.pp) + "): DeepSpeed's pipeline engine supports ZeRO-1 only";
        });
        continue;
      }
      c_.zero_stage = s_.parallel.zero_stage = zero;
      ShardGroupChoices();
    }
  }

  // The whole DP group, and with ZeRO-2/3 each hybrid shard group (ShardGroups).
  // Listed groups that do not fit the layout are pruned; of the default ones, those no
  // measurement supports (HybridUnvalidated).
  void ShardGroupChoices() {
    std::vector<int> groups = {0};
    // Hybrid groups with a strategy above 1 are not modelled (context parallelism refuses them).
    if (c_.zero_stage >= 2 && c_.degrees == kNoStrategies) {
      const int64_t per_group = static_cast<int64_t>(space_.recompute.size() * picks_.size());
      for (int g : ShardGroups(space_, c_.dp, c_.tp, s_.instance.gpus)) {
        if (space_.shard_groups.empty() && HybridUnvalidated(g)) {
          Prune(tally_, "hybrid-unvalidated", per_group, [&] {
            return "ZeRO-" + std::to_string(c_.zero_stage) + " in hybrid groups of " +
                   std::to_string(g) + " with tp " + std::to_string(c_.tp) + " on " +
                   std::to_string(s_.instance.gpus) +
                   "-GPU nodes: the measurements of hybrid sharding are ZeRO-3 groups of one "
                   "node (docs/validation.md section 0.3.19); list the group in "
                   "search.shard_groups to plan with it";
          });
          continue;
        }
        groups.push_back(g);
      }
      for (int g : space_.shard_groups) {
        if (std::find(groups.begin(), groups.end(), g) != groups.end()) continue;
        Prune(tally_, "shard-group", per_group, [&] {
          return "shard group " + std::to_string(g) + " with dp " + std::to_string(c_.dp) +
                 ": a hybrid group must divide dp and be smaller than it";
        });
      }
    }
    for (int g : groups) {
      c_.shard_group = s_.parallel.shard_group = g;
      for (int ep : EpChoices()) {
        c_.ep = s_.parallel.ep = ep;
        Confirmable();
      }
    }
  }

  // Expert-parallel degrees of a mixture-of-experts model (EpDegrees); listed ones that do
  // not fit the layout are pruned. Dense models and ZeRO-2/3 or hybrid layouts: 1.
  std::vector<int> EpChoices() {
    // EP with a strategy above 1 is not modelled (context parallelism refuses it).
    if (s_.model.experts == 0 || c_.degrees != kNoStrategies) return {1};
    // Whole experts (parallel.expert_tp 1): EP groups over the stage's tp x dp GPUs, each TP
    // rank dispatching its sequence-parallel share of the tokens.
    const bool whole = s_.parallel.expert_tp == 1;
    if (whole && c_.tp > 1 && !s_.training.sequence_parallel) {
      Prune(tally_, "ep", static_cast<int64_t>(space_.recompute.size() * picks_.size()), [&] {
        return "whole experts (parallel.expert_tp 1) with tp " + std::to_string(c_.tp) +
               ": needs training.sequence_parallel";
      });
      return {};
    }
    const int span = whole ? c_.tp * c_.dp : c_.dp;
    const std::vector<int> fit = EpDegrees(space_, s_.model.experts, span);
    const bool takes_ep = c_.zero_stage <= 1 && c_.shard_group == 0;
    for (int e : space_.ep) {
      if (e > 1 && takes_ep && std::find(fit.begin(), fit.end(), e) != fit.end()) continue;
      if (e == 1) continue;
      Prune(tally_, "ep", static_cast<int64_t>(space_.recompute.size() * picks_.size()), [&] {
        return "expert parallel " + std::to_string(e) + " with " +
               std::to_string(s_.model.experts) + " experts, " + (whole ? "tp x dp " : "dp ") +
               std::to_string(span) + ", ZeRO-" + std::to_string(c_.zero_stage) +
               ": ep must divide both, with ZeRO-0/1 and no hybrid group";
      });
    }
    if (!takes_ep) return {1};
    return fit;
  }

  // Layouts the simulator would refuse could not be confirmed (sim/simulate.h).
  void Confirmable() {
    const sim::Fold fold = sim::PlanFold(s_, sim::SimMode::kReduced, sim::ModelParams{});
    if (sim::BuiltNodes(s_, fold) > sim::kMaxReducedNodes) {
      Prune(tally_, "beyond-simulator",
            static_cast<int64_t>(space_.recompute.size() * picks_.size()), [&] {
              return std::to_string(c_.nodes) + " nodes: the simulator takes on at most " +
                     std::to_string(sim::kMaxReducedNodes) +
                     " unless the cluster folds, and this layout does not (" + fold.why_not + ")";
            });
      return;
    }
    for (Recompute r : space_.recompute) RecomputeChoice(r);
  }

  // The validation corpus measures ZeRO-3 / FSDP on up to 512 GPUs (with tensor parallelism
  // up to 405B parameters, without it up to 70B; docs/validation.md section 0.4) and holds no
  // comparison of it with tp/pp; the held-out results of issue 14 found it far slower than
  // simulated for 175B-530B models at 384-2240 GPUs. Beyond that range the planner does not put
  // ZeRO-3 forward while the search offers other layouts; a search that fixes ZeRO-3 and the
  // layout (one zero stage, one tp, one pp) keeps it.
  static constexpr int kValidatedZeroThreeGpus = 512;
  static constexpr int kValidatedZeroThreeBillions = 70;
  bool ZeroThreeUnvalidated() const {
    // With offload_params the scenario itself commits to ZeRO-3 shards.
    const bool others_offered =
        !s_.training.offload_params &&
        (space_.zero_stages.size() > 1 || space_.tp.size() > 1 || space_.pp.size() > 1);
    const bool beyond =
        c_.tp * c_.pp * c_.dp > kValidatedZeroThreeGpus ||
        (c_.tp == 1 && c_.pp == 1 && ParameterCount(s_.model) > kValidatedZeroThreeBillions * 1e9);
    return others_offered && beyond;
  }

  // The validation corpus measures hybrid sharding as FSDP HYBRID_SHARD over the GPUs of one
  // node (fms-fsdp, 96-128 A100 and H100; docs/validation.md section 0.3.19): not ZeRO-2 in
  // groups, not groups across nodes. The default search leaves those out; a search that lists
  // its groups (search.shard_groups) keeps what it lists.
  bool HybridUnvalidated(int group) const {
    return c_.zero_stage != 3 || group * c_.tp != s_.instance.gpus;
  }

  void RecomputeChoice(Recompute r) {
    if (r != Recompute::kNone && s_.model.kind == ModelKind::kLayerList) {
      return Prune(tally_, "recompute-layer-list", static_cast<int64_t>(picks_.size()), [&] {
        return std::string("recompute ") + ToString(r) + " applies to transformer layers only";
      });
    }
    if (r == Recompute::kSelective && s_.training.flash_attention &&
        std::find(space_.recompute.begin(), space_.recompute.end(), Recompute::kNone) !=
            space_.recompute.end()) {
      return Prune(tally_, "recompute-flash", static_cast<int64_t>(picks_.size()), [] {
        return std::string(
            "selective recompute with flash attention is the same as none (no stored scores)");
      });
    }
    if (IsOpLevelPolicy(r) && !s_.training.flash_attention) {
      return Prune(tally_, "recompute-op-flash", static_cast<int64_t>(picks_.size()), [] {
        return std::string(
            "selective_op and MaxText's recompute policies keep no attention scores: they need "
            "flash attention");
      });
    }
    c_.recompute = s_.training.recompute = r;
    for (const SchedulePick& pick : picks_) Schedule(pick);
  }

  void Schedule(const SchedulePick& pick) {
    const int pp = c_.pp, v = pick.virtual_stages;
    if (pp == 1 && pick.schedule != Schedule::k1F1B) {
      return Prune(tally_, "schedule-pp1", 1, [&] {
        return std::string("schedule ") + ToString(pick.schedule) +
               " with pp 1 is the same as no pipeline";
      });
    }
    if (pick.schedule == Schedule::kInterleaved) {
      const int64_t m = MicrobatchesPerPipeline(s_.training.global_batch, c_.dp, c_.micro_batch);
      const int layers = LayerCount(s_.model);
      if (layers % (pp * v) || m % pp) {
        return Prune(tally_, "interleaved", 1, [&] {
          return "interleaved with " + std::to_string(v) +
                 " virtual stages needs pp * v = " + std::to_string(pp * v) + " to divide the " +
                 std::to_string(layers) + " layers and the " + std::to_string(m) +
                 " microbatches per pipeline to be a "
                 "multiple of pp " +
                 std::to_string(pp);
        });
      }
    }
    c_.schedule = s_.parallel.schedule = pick.schedule;
    c_.virtual_stages = s_.parallel.virtual_stages = v;
    const sim::MemoryBreakdown mem = sim::ComputeMemory(s_);
    if (!mem.fits) {
      return Prune(tally_, "memory", 1,
                   [&] { return Describe(space_, c_) + ": " + sim::DescribeShortfall(mem, s_); });
    }
    visit_.on_candidate(c_, s_, mem);
  }

  Scenario s_;
  std::shared_ptr<const HardwareProfile> base_profile_;
  const SearchSpace& space_;
  const SpaceVisitor& visit_;
  PruneTally* tally_;
  StrategyDegrees figures_degrees_ = kNoStrategies;  // of the last on_figures call
  std::vector<SchedulePick> picks_;
  Candidate c_;
};

}  // namespace

Expected<SearchSpace> ResolveSpace(const Scenario& s, const SearchConfig& q,
                                   const Catalog& catalog) {
  SearchSpace space;
  std::vector<std::string> names = q.instances;
  if (names.empty()) {
    for (const std::string& n : catalog.Names()) {
      const InstanceType* t = catalog.Find(n);
      if (t->is_aws && t->gpus > 0) names.push_back(n);
    }
  }
  int max_gpus = 1;
  for (const std::string& n : names) {
    const InstanceType* t = catalog.Find(n);
    if (!t) return Status::InvalidInput("search.instances: unknown instance type \"" + n + "\"");
    space.instances.push_back(t);
    max_gpus = std::max(max_gpus, t->gpus);
  }
  std::vector<int> tp;
  for (int t = 1; t <= max_gpus; t *= 2) tp.push_back(t);
  space.tp = Or(q.tp, tp);
  space.pp = Or(q.pp, Divisors(LayerCount(s.model), q.max_pp));
  space.micro_batch = Or(q.micro_batch, {1, 2, 4, 8});
  space.zero_stages = Or(q.zero_stages, {0, 1, 2, 3});
  space.shard_groups = q.shard_groups;
  space.ep = q.ep;
  for (int i = 0; i < kStrategyCount; ++i) {
    space.strategies[i] = Or(q.strategies[i], kStrategies[i]->default_axis(s));
  }
  space.recompute = Or(q.recompute, {Recompute::kNone, Recompute::kSelective, Recompute::kFull});
  space.schedules = Or(q.schedules, {Schedule::k1F1B, Schedule::kInterleaved});
  space.virtual_stages = Or(q.virtual_stages, {2, 4});
  if (Status st = ResolvePricing(q, &space); !st.ok()) return st;
  space.min_nodes = q.min_nodes;
  space.max_nodes = q.max_nodes;
  space.time_only = q.objective == Objective::kMinTime;
  return space;
}

std::vector<int> EpDegrees(const SearchSpace& space, int experts, int dp) {
  std::vector<int> out;
  if (!space.ep.empty()) {
    for (int e : space.ep) {
      if (e == 1 || (experts % e == 0 && dp % e == 0)) out.push_back(e);
    }
    return out;
  }
  for (int e = 1; e <= dp && e <= experts; e *= 2) {
    if (experts % e == 0 && dp % e == 0) out.push_back(e);
  }
  return out;
}

std::vector<int> ShardGroups(const SearchSpace& space, int dp, int tp, int gpus_per_node) {
  std::vector<int> out;
  if (!space.shard_groups.empty()) {
    for (int g : space.shard_groups) {
      if (g < dp && dp % g == 0) out.push_back(g);
    }
    return out;
  }
  for (int g = std::max(2, gpus_per_node / tp); g < dp && dp % g == 0; g *= 2) out.push_back(g);
  return out;
}

void ApplyCandidate(const SearchSpace& space, const Candidate& c, Scenario* s) {
  const InstanceType& t = *space.instances[c.instance];
  if (s->profile && s->profile->gpu != t.gpu.name) s->profile = nullptr;
  s->instance = t;
  s->cluster.instance = t.name;
  s->cluster.nodes = c.nodes;
  s->parallel.tp = c.tp;
  s->parallel.pp = c.pp;
  s->parallel.dp = c.dp;
  s->parallel.zero_stage = c.zero_stage;
  s->parallel.shard_group = c.shard_group;
  s->parallel.ep = c.ep;
  for (int i = 0; i < kStrategyCount; ++i) s->parallel.*kStrategies[i]->degree = c.degrees[i];
  s->parallel.schedule = c.schedule;
  s->parallel.virtual_stages = c.virtual_stages;
  s->training.micro_batch = c.micro_batch;
  s->training.recompute = c.recompute;
}

namespace {

// ", context parallel 2" for each strategy above 1.
std::string StrategiesText(const Candidate& c) {
  std::string out;
  for (int i = 0; i < kStrategyCount; ++i) {
    if (c.degrees[i] > 1) out += Cat(", ", kStrategies[i]->title, " ", c.degrees[i]);
  }
  return out;
}

}  // namespace

std::string Describe(const SearchSpace& space, const Candidate& c) {
  std::string out = space.instances[c.instance]->name + " x " + std::to_string(c.nodes) + ": tp " +
                    std::to_string(c.tp) + ", pp " + std::to_string(c.pp) + ", dp " +
                    std::to_string(c.dp) + ", ZeRO-" + std::to_string(c.zero_stage) +
                    (c.shard_group > 0 ? ", hybrid shard " + std::to_string(c.shard_group) : "") +
                    (c.ep > 1 ? ", expert parallel " + std::to_string(c.ep) : "") +
                    StrategiesText(c) + ", micro batch " + std::to_string(c.micro_batch) + ", " +
                    ToString(c.recompute) + " recompute";
  if (c.pp > 1) {
    out += std::string(", ") + ToString(c.schedule);
    if (c.schedule == Schedule::kInterleaved) out += " x" + std::to_string(c.virtual_stages);
  }
  return out;
}

void WalkSpace(const Scenario& base, const SearchSpace& space, const SpaceVisitor& visit,
               PruneTally* tally) {
  Walker(base, space, visit, tally).Run();
}

}  // namespace trainsim::planner
