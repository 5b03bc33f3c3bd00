// Context parallelism (Megatron-Core's context_parallel_size, SMP v2's context_parallel_degree):
// each sequence splits over `cp` GPUs that hold the same weights and pass keys and values
// around a ring (ring attention). Its share of the stage model: the CP group (sim::ShapeOf),
// the ring's steps in a layer's pass (sim::ForwardPass / BackwardPass), each GPU's 1 / cp of
// the tokens (sim/workload.cc TransformerLayerCost, sim/memory_model.cc).
#include <algorithm>

#include "core/scenario.h"
#include "core/scenario_sections.h"
#include "core/strategy.h"

namespace trainsim {
namespace {

// Sequences from this length on are "long context": the planner tries context parallelism on
// them by default. A choice of the search space (where a single GPU's share of attention and
// activations starts to dominate), not a measured figure.
constexpr int kLongContextTokens = 32768;

// The sequence splits into 2 cp chunks (Megatron-Core's causal load balancing), with flash
// attention (ring attention's kernels); the combinations not modelled yet are refused.
std::string Unfit(const Scenario& s) {
  const ParallelConfig& p = s.parallel;
  const ModelSpec& m = s.model;
  if (m.kind != ModelKind::kTransformer) return "needs a transformer model (it splits sequences)";
  if (m.seq_len % (2 * p.cp) != 0) {
    return Cat("does not split model.seq_len = ", m.seq_len, " into 2 * cp = ", 2 * p.cp,
               " equal chunks (the causal load balancing of ring attention)");
  }
  if (!s.training.flash_attention) {
    return "needs training.flash_attention (ring attention runs the flash kernels on each "
           "key/value chunk)";
  }
  if (p.ep > 1 || p.shard_group > 0 || p.dp_algorithm == DpAlgorithm::kParameterServer ||
      s.training.offload_params || s.training.offload_activations) {
    return "is not modelled with parallel.ep, parallel.shard_group, parameter servers or offload";
  }
  return "";
}

// The scenario's parallel.cp, and for a long-context transformer with flash attention
// (seq_len >= kLongContextTokens) also 1, 2, 4 and 8, ascending.
std::vector<int> DefaultAxis(const Scenario& s) {
  std::vector<int> out = {s.parallel.cp};
  const ModelSpec& m = s.model;
  if (m.kind != ModelKind::kTransformer || !s.training.flash_attention ||
      m.seq_len < kLongContextTokens) {
    return out;
  }
  for (int cp = 1; cp <= 8; cp *= 2) {
    if (cp != s.parallel.cp) out.push_back(cp);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

const Strategy kContextParallel = {
    .name = "cp",
    .title = "context parallel",
    .tag = "c",
    .degree = &ParallelConfig::cp,
    .splits_slots = true,
    .unfit = Unfit,
    .default_axis = DefaultAxis,
    .exchange = "K/V ring",
    .not_elastic = "context parallelism splits each sequence over the data-parallel slots",
    .megatron_flag = "--context-parallel-size",
    .smp_v2_key = "context_parallel_degree",
    .deepspeed_gap =
        "parallel.cp (context parallelism) has no DeepSpeed config field (DeepSpeed-Ulysses "
        "sequence parallelism is a different scheme, set in code)",
};

}  // namespace trainsim
