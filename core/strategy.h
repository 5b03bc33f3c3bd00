// A parallel strategy as one module: a degree the layout carries (parallel.<name>), with
// everything the layers above the stage model ask of it. Its module (core/strategies/) holds
// its check, its search axis, its names and its launch flags; its scenario field is a row of
// core/scenario_fields.cc and a member of ParallelConfig; its groups, pass steps and memory are
// the stage model's (sim/stage_model.cc, sim/workload.cc LayerCost). Parser, search, plan
// files, labels, reasons and launch bundles read a strategy only through kStrategies, so a new
// one is registered here and nowhere else above the stage model.
#pragma once

#include <array>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

struct ParallelConfig;  // core/scenario.h, which includes this header
struct Scenario;

struct Strategy {
  std::string_view name;   // "cp": parallel.<name>, search.<name>, the plan's key and column
  std::string_view title;  // "context parallel": ", context parallel 2" in a layout's description
  std::string_view tag;    // "c": "dp8c2" in a layout's short label
  int ParallelConfig::*degree;
  // Each data-parallel slot splits into `degree` GPUs that hold the same weights, so the
  // world is tp x pp x dp x degree (Scenario::replicas).
  bool splits_slots = false;
  // Why a scenario laid out with this strategy's degree above 1 cannot run so, or "": the
  // parser reports it at the field, the search prunes with it.
  std::string (*unfit)(const Scenario& s) = nullptr;
  // The degrees the search tries when search.<name> is not given.
  std::vector<int> (*default_axis)(const Scenario& s) = nullptr;
  // What its collectives are, in trace and breakdown labels: "K/V ring" gives the trace's
  // "context parallel (K/V ring)" and the GUI's "CP K/V ring".
  std::string_view exchange;
  // Why spot-elastic training (on the replicas left after a reclaim) cannot run it.
  std::string_view not_elastic;
  // Launch: Megatron-LM / NeMo's argument; SMP v2's parameter (SageMaker's model parallel
  // library); why a DeepSpeed config cannot say it ("" where it can).
  std::string_view megatron_flag, smp_v2_key, deepspeed_gap;
};

extern const Strategy kContextParallel;  // core/strategies/context_parallel.cc

// Every strategy module, in the order their fields, columns and flags appear.
inline constexpr const Strategy* kStrategies[] = {&kContextParallel};
inline constexpr int kStrategyCount = static_cast<int>(std::size(kStrategies));

// A layout's degree of each strategy, in kStrategies' order (1: not used).
using StrategyDegrees = std::array<int, kStrategyCount>;
inline constexpr StrategyDegrees kNoStrategies = [] {
  StrategyDegrees d{};
  d.fill(1);
  return d;
}();

// The product of the degrees that split a data-parallel slot. A scenario's degrees and the
// helpers that read them (DegreesOf, SlotSplit, FirstStrategy, NoStrategy, DegreesText) are in
// core/scenario.h, beside ParallelConfig.
inline int SlotSplit(const StrategyDegrees& d) {
  int split = 1;
  for (int i = 0; i < kStrategyCount; ++i) {
    if (kStrategies[i]->splits_slots) split *= d[i];
  }
  return split;
}

// "CP": the name in capitals, for short labels.
std::string UpperName(const Strategy& st);

// kStrategies' index of `st`.
constexpr int StrategyIndex(const Strategy& st) {
  for (int i = 0; i < kStrategyCount; ++i) {
    if (kStrategies[i] == &st) return i;
  }
  return -1;
}

}  // namespace trainsim
