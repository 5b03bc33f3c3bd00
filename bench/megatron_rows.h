// The Megatron-LM weak-scaling rows of published-measurements.json
// (Narayanan et al. SC'21, Table 1) as scenarios: shared by bench/accuracy
// (simulated against published) and bench/planner_bench (the planner against
// the published configuration).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/model_zoo.h"

namespace trainsim::bench {

using nlohmann::json;

struct MegatronRow {
  std::string name;  // as published ("GPT-1.7B")
  int layers = 0, hidden = 0;
  int nodes = 0, tp = 1, pp = 1, dp = 1;
  int64_t global_batch = 0;
  double published_tflops = 0;
};

inline MegatronRow ParseMegatronRow(const json& entry) {
  MegatronRow r;
  r.name = entry.at("model").at("name");
  r.layers = entry.at("model").at("layers");
  r.hidden = entry.at("model").at("hidden");
  r.nodes = entry.at("hardware").at("nodes");
  const json& p = entry.at("parallel");
  r.tp = p.at("tp");
  r.pp = p.at("pp");
  r.dp = p.at("dp");
  r.global_batch = p.at("global_batch");
  r.published_tflops = entry.at("metric").at("value");
  return r;
}

// The zoo preset with the row's dimensions (gpt-1.7b ... gpt-1t).
inline std::optional<std::string> ZooPresetFor(const MegatronRow& row) {
  for (const ModelSpec& m : ModelZoo()) {
    if (m.name.rfind("gpt-", 0) == 0 && m.layers == row.layers && m.hidden == row.hidden) {
      return m.name;
    }
  }
  return std::nullopt;
}

// The paper ran the interleaved 1F1B schedule without giving the number of
// chunks; take the smallest v >= 2 that divides the layers of a stage (and
// keep 1F1B where the schedule's conditions do not hold).
inline int VirtualStages(const MegatronRow& row) {
  const int per_stage = row.layers / row.pp;
  const long long microbatches = row.global_batch / row.dp;
  if (row.pp < 2 || microbatches % row.pp != 0) return 1;
  for (int v = 2; v <= per_stage; ++v) {
    if (per_stage % v == 0) return v;
  }
  return 1;
}

inline std::string MegatronScenarioJson(const MegatronRow& row, const std::string& preset,
                                        int zero) {
  const int v = VirtualStages(row);
  json parallel = {{"tp", row.tp}, {"pp", row.pp}, {"dp", row.dp}, {"zero_stage", zero}};
  if (v > 1) {
    parallel["schedule"] = "interleaved";
    parallel["virtual_stages"] = v;
  } else {
    parallel["schedule"] = "1f1b";
  }
  json s = {{"version", 1},
            {"name", preset},
            {"model", preset},
            {"training",
             {{"global_batch", row.global_batch},
              {"micro_batch", 1},
              {"precision", "fp16"},
              {"optimizer", "adam"},
              {"recompute", "full"}}},
            {"cluster", {{"instance", "dgx-a100-80gb"}, {"nodes", row.nodes}}},
            {"parallel", parallel}};
  return s.dump();
}

}  // namespace trainsim::bench
