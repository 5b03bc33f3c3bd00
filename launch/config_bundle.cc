// Framework configurations of a bundle: a DeepSpeed config (JSON) and
// Megatron-LM arguments (a bash array), for the plan's tp/pp/dp/ZeRO/micro batch.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/strategy.h"
#include "launch/bundle_parts.h"
#include "launch/names.h"
#include "sim/memory_model.h"

namespace trainsim::launch {
namespace {

// Megatron-LM's model shape arguments for a transformer.
std::vector<std::string> ModelArgs(const ModelSpec& m) {
  std::vector<std::string> a = {"--num-layers",
                                std::to_string(m.layers),
                                "--hidden-size",
                                std::to_string(m.hidden),
                                "--ffn-hidden-size",
                                std::to_string(m.ffn_hidden),
                                "--num-attention-heads",
                                std::to_string(m.heads),
                                "--seq-length",
                                std::to_string(m.seq_len),
                                "--max-position-embeddings",
                                std::to_string(m.seq_len)};
  if (m.kv_heads < m.heads) {
    a.insert(a.end(),
             {"--group-query-attention", "--num-query-groups", std::to_string(m.kv_heads)});
  }
  if (m.mlp == MlpKind::kSwiGlu) a.push_back("--swiglu");
  if (!m.bias) a.insert(a.end(), {"--disable-bias-linear", "--normalization", "RMSNorm"});
  if (!m.learned_positions) a.insert(a.end(), {"--position-embedding-type", "rope"});
  if (!m.tied_embeddings) a.push_back("--untie-embeddings-and-output-weights");
  if (m.kv_lora_rank > 0) {  // multi-head latent attention (Megatron-Core's MLA)
    a.push_back("--multi-latent-attention");
    if (m.q_lora_rank > 0) a.insert(a.end(), {"--q-lora-rank", std::to_string(m.q_lora_rank)});
    a.insert(a.end(),
             {"--kv-lora-rank", std::to_string(m.kv_lora_rank), "--qk-head-dim",
              std::to_string(m.qk_nope_head_dim), "--qk-pos-emb-head-dim",
              std::to_string(m.qk_rope_head_dim), "--v-head-dim", std::to_string(m.v_head_dim)});
  }
  if (m.experts > 0) {  // a mixture of experts: Megatron-Core MoE, all-to-all dispatcher
    a.insert(a.end(), {"--num-experts", std::to_string(m.experts), "--moe-router-topk",
                       std::to_string(m.experts_per_token), "--moe-ffn-hidden-size",
                       std::to_string(m.expert_ffn_hidden > 0 ? m.expert_ffn_hidden : m.ffn_hidden),
                       "--moe-token-dispatcher-type", "alltoall", "--moe-grouped-gemm"});
    if (m.shared_experts > 0) {
      const int width = m.expert_ffn_hidden > 0 ? m.expert_ffn_hidden : m.ffn_hidden;
      a.insert(a.end(),
               {"--moe-shared-expert-intermediate-size", std::to_string(m.shared_experts * width)});
    }
    if (m.dense_layers > 0 || m.moe_every > 1) {  // which layers are MoE, as a Python list
      std::string freq;
      for (int l = 0; l < m.layers; ++l) freq += (l ? "," : "[") + std::to_string(IsMoeLayer(m, l));
      a.insert(a.end(), {"--moe-layer-freq", freq + "]"});
    }
    if (m.capacity_factor > 0) {
      char c[32];
      std::snprintf(c, sizeof c, "%g", m.capacity_factor);
      a.insert(a.end(), {"--moe-expert-capacity-factor", c, "--moe-pad-expert-input-to-capacity"});
    }
    if (m.router_bias) a.push_back("--moe-router-enable-expert-bias");
  }
  return a;
}

std::vector<std::string> PrecisionArgs(Precision p) {
  switch (p) {
    case Precision::kBf16:
      return {"--bf16"};
    case Precision::kFp16:
      return {"--fp16"};
    case Precision::kFp8:
      return {"--bf16", "--fp8-format", "hybrid"};
    case Precision::kFp32:
    case Precision::kTf32:
      return {};
  }
  return {};
}

std::vector<std::string> ParallelArgs(const JobFacts& f) {
  const Scenario& s = *f.s;
  const ParallelConfig& p = s.parallel;
  std::vector<std::string> a = {"--tensor-model-parallel-size", std::to_string(p.tp),
                                "--pipeline-model-parallel-size", std::to_string(p.pp)};
  if (p.pp > 1 && p.schedule == Schedule::kInterleaved) {
    // With the embedding and the loss counted in the split, each takes a layer's place.
    const int counted = p.split_counts_embedding + p.split_counts_loss;
    a.insert(a.end(), {"--num-layers-per-virtual-pipeline-stage",
                       std::to_string((s.model.layers + counted) / (p.pp * p.virtual_stages))});
  }
  if (p.split_counts_embedding) a.push_back("--account-for-embedding-in-pipeline-split");
  if (p.split_counts_loss) a.push_back("--account-for-loss-in-pipeline-split");
  if (p.ep > 1) a.insert(a.end(), {"--expert-model-parallel-size", std::to_string(p.ep)});
  // Megatron-Core's expert tensor parallelism defaults to tp: only whole experts need the flag.
  if (p.expert_tp == 1) a.insert(a.end(), {"--expert-tensor-parallel-size", "1"});
  for (const Strategy* st : kStrategies) {
    const int degree = p.*st->degree;
    if (degree > 1 && !st->megatron_flag.empty()) {
      a.insert(a.end(), {std::string(st->megatron_flag), std::to_string(degree)});
    }
  }
  if (s.training.sequence_parallel) a.push_back("--sequence-parallel");
  if (p.zero_stage == 1 || p.zero_stage == 2) a.push_back("--use-distributed-optimizer");
  // The overlap the plan was simulated with (Megatron-LM's defaults are off).
  if (s.replicas() > 1 && p.overlap_dp && p.zero_stage < 3) a.push_back("--overlap-grad-reduce");
  if (s.replicas() > 1 && p.overlap_param_gather) a.push_back("--overlap-param-gather");
  if (p.zero_stage == 3) a.push_back("--use-torch-fsdp2");
  return a;
}

}  // namespace

BundleFile DeepSpeedConfig(const JobFacts& f) {
  const Scenario& s = *f.s;
  nlohmann::ordered_json c;
  c["train_batch_size"] = s.training.global_batch;
  c["train_micro_batch_size_per_gpu"] = s.training.micro_batch;
  c["gradient_accumulation_steps"] = f.microbatches;
  c["zero_optimization"] = {{"stage", s.parallel.zero_stage}};
  if (s.parallel.shard_group > 0) {
    // MiCS (DeepSpeed's zero/mics.py): ZeRO-3 partitioned within groups of this many ranks,
    // replicated across them (DeepSpeedGap refuses it with other stages).
    c["zero_optimization"]["mics_shard_size"] = s.parallel.shard_group;
    c["zero_optimization"]["mics_hierarchical_params_gather"] = false;
  }
  if (s.training.offload_optimizer) {
    c["zero_optimization"]["offload_optimizer"] = {{"device", "cpu"}};
  }
  if (s.training.offload_params) {  // ZeRO-Infinity's parameter offload (stage 3)
    c["zero_optimization"]["offload_param"] = {{"device", "cpu"}};
  }
  const Precision p = s.training.precision;
  c["bf16"] = {{"enabled", p == Precision::kBf16 || p == Precision::kFp8}};
  c["fp16"] = {{"enabled", p == Precision::kFp16}};
  // Gradients averaged in fp32 (DeepSpeed's docs/_pages/config-json.md: the data type of the
  // gradient communication; by default that of the precision).
  if (s.training.grad_reduce_dtype == GradReduceDtype::kFp32) c["communication_data_type"] = "fp32";
  if (s.training.recompute != Recompute::kNone) {
    c["activation_checkpointing"] = {{"partition_activations", s.parallel.tp > 1},
                                     {"cpu_checkpointing", s.training.offload_activations},
                                     {"contiguous_memory_optimization", false},
                                     {"synchronize_checkpoint_boundary", false}};
  }
  c["steps_per_print"] = 100;
  return {"deepspeed_config.json", c.dump(2) + "\n", false};
}

std::optional<std::string> DeepSpeedGap(const Scenario& s) {
  if (s.parallel.zero_stage == 3 && s.parallel.zero_impl != ZeroImpl::kDeepSpeed) {
    return std::string("parallel.zero_impl \"") + ToString(s.parallel.zero_impl) +
           "\": the plan's ZeRO-3 collectives are that implementation's, not DeepSpeed's (plan "
           "with parallel.zero_impl \"deepspeed\" to run it under DeepSpeed)";
  }
  if (s.parallel.shard_group > 0 && s.parallel.zero_stage != 3) {
    return "parallel.shard_group with zero_stage " + std::to_string(s.parallel.zero_stage) +
           ": DeepSpeed shards in groups only at stage 3 (MiCS, mics_shard_size)";
  }
  for (const Strategy* st : kStrategies) {
    if (s.parallel.*st->degree > 1 && !st->deepspeed_gap.empty()) {
      return std::string(st->deepspeed_gap);
    }
  }
  return std::nullopt;
}

std::optional<std::string> MegatronGap(const Scenario& s) {
  if (s.parallel.shard_group > 0) {
    return "parallel.shard_group (hybrid sharding) has no Megatron-LM flag";
  }
  const TrainingConfig& t = s.training;
  if (t.recompute == Recompute::kSelectiveOp) {
    return "training.recompute \"selective_op\" (torchtitan's op-level checkpointing) has no "
           "Megatron-LM flag";
  }
  if (KeepsProjections(t.recompute)) {
    return std::string("training.recompute \"") + ToString(t.recompute) +
           "\" (MaxText's remat policy) has no Megatron-LM flag";
  }
  if (t.offload_params) {
    return "training.offload_params (FSDP's parameter offload to the host) has no Megatron-LM flag";
  }
  if (t.offload_activations) {
    return "training.offload_activations (every layer's activations to the host) is not mapped to "
           "Megatron-LM's --cpu-offloading";
  }
  if (t.precision == Precision::kFp8 && t.fp8_scaling == Fp8Scaling::kRowwise) {
    return "training.fp8_scaling \"rowwise\" (torchao's recipe) has no Megatron-LM flag";
  }
  const int chunks = s.parallel.pp * s.parallel.virtual_stages;
  if (t.recompute == Recompute::kFull && t.recompute_every > 1 && s.model.layers % chunks != 0) {
    return "training.recompute_every " + std::to_string(t.recompute_every) +
           " on pipeline stages of unequal size: Megatron-LM's --recompute-method block "
           "recomputes the same number of layers on every stage";
  }
  if (s.parallel.zero_stage == 3 && s.parallel.zero_impl != ZeroImpl::kFsdp2) {
    return std::string("parallel.zero_impl \"") + ToString(s.parallel.zero_impl) +
           "\": Megatron-LM's ZeRO-3 is PyTorch FSDP2 (--use-torch-fsdp2; plan with "
           "parallel.zero_impl \"fsdp2\" to run it under Megatron-LM)";
  }
  return std::nullopt;
}

BundleFile MegatronArgs(const JobFacts& f) {
  const Scenario& s = *f.s;
  std::vector<std::string> a = ParallelArgs(f);
  a.insert(a.end(), {"--micro-batch-size", std::to_string(s.training.micro_batch),
                     "--global-batch-size", std::to_string(s.training.global_batch)});
  for (const std::string& w : ModelArgs(s.model)) a.push_back(w);
  const TrainingConfig& t = s.training;
  if (t.recompute == Recompute::kFull && t.recompute_every > 1) {
    // Every k-th layer: Megatron's "block" method recomputes the first N layers of each stage
    // (model chunk), the same count (MegatronGap refuses chunks of unequal size).
    const int chunk = s.model.layers / (s.parallel.pp * s.parallel.virtual_stages);
    a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "block",
                       "--recompute-num-layers", std::to_string(sim::RecomputedLayers(t, chunk))});
  } else if (t.recompute == Recompute::kFull) {
    a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "uniform",
                       "--recompute-num-layers", "1"});
  } else if (t.recompute == Recompute::kSelective) {
    a.insert(a.end(), {"--recompute-granularity", "selective"});
    if (t.recompute_modules != kRecomputeCoreAttn) {  // Megatron-Core's default otherwise
      a.push_back("--recompute-modules");
      for (const std::string& name : RecomputeModuleNames(t.recompute_modules)) a.push_back(name);
    }
  }
  for (const std::string& w : PrecisionArgs(t.precision)) a.push_back(w);
  // The attention kernel the plan was simulated with.
  const char* backend = !t.flash_attention                              ? "unfused"
                        : t.attention_kernel == AttentionKernel::kCudnn ? "fused"
                                                                        : "flash";
  a.insert(a.end(), {"--attention-backend", backend});
  if (s.parallel.tp_overlap) a.push_back("--tp-comm-overlap");
  if (t.offload_optimizer) {  // the whole optimizer step on the CPU
    a.insert(a.end(), {"--optimizer-cpu-offload", "--optimizer-offload-fraction", "1",
                       "--use-precision-aware-optimizer"});
  }
  if (t.grad_reduce_dtype == GradReduceDtype::kFp32) {
    a.push_back("--accumulate-allreduce-grads-in-fp32");
  }
  a.insert(a.end(), {"--optimizer", s.training.optimizer == Optimizer::kSgd ? "sgd" : "adam",
                     "--train-iters", std::to_string(f.steps)});
  if (f.plan->checkpoint_interval_s > 0 && f.plan->step_time_s > 0) {
    const double steps = std::round(f.plan->checkpoint_interval_s / f.plan->step_time_s);
    a.insert(a.end(), {"--save-interval",
                       std::to_string(std::max<int64_t>(1, static_cast<int64_t>(steps)))});
  }
  std::string text =
      "# megatron_args.sh: Megatron-LM arguments for the plan. Use them as\n"
      "#   source megatron_args.sh\n"
      "#   torchrun ... pretrain_gpt.py \"${MEGATRON_ARGS[@]}\" --data-path ... --tokenizer-type "
      "...\n# " +
      f.Describe() +
      "\n# Made by `trainsim launch` (docs/launch.md); every value is single-quoted.\n"
      "MEGATRON_ARGS=(\n";
  for (size_t i = 0; i < a.size(); ++i) {
    const bool value_follows = i + 1 < a.size() && a[i + 1][0] != '-';
    text += "  " + ShellQuote(a[i]);
    if (value_follows) text += " " + ShellQuote(a[++i]);
    text += "\n";
  }
  return {"megatron_args.sh", text + ")\n", false};
}

}  // namespace trainsim::launch
