#include "planner/search/estimator.h"

#include <algorithm>
#include <cmath>

#include "sim/memory_model.h"
#include "sim/topology.h"

namespace trainsim::planner {
namespace {

// Link rates of one node, bytes per second, efficiencies applied.
struct Links {
  double intra_Bps = 0;  // one GPU to its peers inside the node, one direction
  // NVLink meshes: intra_Bps is one brick's, and a group inside the node runs
  // a ring channel per brick-disjoint cycle and direction (sim::NvlinkChannels).
  const InstanceType* mesh = nullptr;
  double node_net_Bps = 0;  // all the node's NICs together, one direction
  double nvls_Bps = 0;      // NVLink SHARP all-reduce rate of one GPU's link (0: no NVLS)
  // Per-step latencies (protocol and links) of a collective inside one node
  // (`local`) and of one across nodes (`cross`: the protocol latency scaled
  // unless the network is InfiniBand, sim::ProtocolLatencyScale).
  struct Latency {
    double intra_s = 0, inter_s = 0, base_s = 0;
  } local, cross;
};

Links NodeLinks(const Scenario& s, const sim::ModelParams& p) {
  const InstanceType& t = s.instance;
  const double nvlink_eff = sim::NvlinkEfficiency(t, p);
  const double pcie =
      (t.pcie_GBps_per_dir > 0 ? t.pcie_GBps_per_dir : p.unknown_pcie_GBps_per_dir) * 1e9;
  Links l;
  if (t.topology == IntraTopology::kNvswitch && t.nvlink_GBps_per_gpu_per_dir) {
    l.intra_Bps = *t.nvlink_GBps_per_gpu_per_dir * 1e9 * nvlink_eff;
    if (t.nvlink_sharp)
      l.nvls_Bps = *t.nvlink_GBps_per_gpu_per_dir * 1e9 * sim::NvlsEfficiency(t, p);
  } else if (t.topology == IntraTopology::kNvlinkCubeMesh && t.nvlink_GBps_per_link_per_dir) {
    l.intra_Bps = *t.nvlink_GBps_per_link_per_dir * 1e9 * nvlink_eff;
    l.mesh = &t;
  } else {
    l.intra_Bps = pcie;
  }
  double net = t.nics * t.nic_gbps / 8 * 1e9 * t.network_efficiency.value_or(p.network_efficiency);
  if (s.cluster.nodes > s.cluster.nodes_per_leaf) net /= s.cluster.oversubscription;
  const long long pod_nodes =
      static_cast<long long>(s.cluster.nodes_per_leaf) * s.cluster.leaves_per_pod;
  if (pod_nodes > 0 && s.cluster.nodes > pod_nodes) net /= s.cluster.pod_oversubscription;
  l.node_net_Bps = net;
  const double nic_latency = t.efa ? p.efa_latency_s : p.ena_latency_s;
  auto latency = [&](double scale) {
    return Links::Latency{
        p.protocol_intra_step_latency_s * scale + p.nvlink_latency_s,
        p.protocol_inter_step_latency_s * scale + nic_latency + 2 * p.switch_latency_s,
        p.protocol_base_latency_s * scale};
  };
  l.local = latency(1.0);
  l.cross =
      latency(sim::ProtocolLatencyScale(p, t.infiniband, /*nodes=*/2, t.protocol_latency_scale));
  return l;
}

// A group of `n` members with `per_node` of them on each node, `stride` local
// ranks apart (TP groups 1, DP groups tp); every GPU of a node is in one such
// group at the same time (DP and PP groups), so the node's NICs are shared by
// gpus / per_node groups.
struct Group {
  int n = 1;
  int per_node = 1;
  int stride = 1;
  int nodes() const { return (n + per_node - 1) / per_node; }
};

// The layout's group of `kind` (sim::ShapeOf) on nodes of `gpus_per_node` GPUs.
Group GroupOf(const Scenario& s, sim::GroupKind kind, int gpus_per_node) {
  const sim::GroupShape g = sim::ShapeOf(s, kind);
  return {g.members, g.PerNode(gpus_per_node), g.stride};
}

double GroupBps(const Links& l, const Group& g, int gpus_per_node) {
  if (g.nodes() <= 1) {
    if (!l.mesh) return l.intra_Bps;
    std::vector<int> locals;
    for (int i = 0; i < g.n; ++i) locals.push_back(i * g.stride);
    return l.intra_Bps * static_cast<double>(sim::NvlinkChannels(*l.mesh, locals).size());
  }
  return std::min(l.intra_Bps, l.node_net_Bps * g.per_node / gpus_per_node);
}

// Ring collectives: `steps` latency steps, of which 2(nodes - 1) (all-reduce)
// or nodes - 1 cross the network, and `traffic` bytes through each member's link.
double RingSeconds(const Links& l, const Group& g, int gpus_per_node, double bytes,
                   bool all_reduce) {
  if (g.n <= 1 || bytes <= 0) return 0;
  const int rounds = all_reduce ? 2 : 1;
  const double steps = rounds * (g.n - 1.0), inter = rounds * (g.nodes() - 1.0);
  const Links::Latency& lat = g.nodes() > 1 ? l.cross : l.local;
  const double latency = lat.base_s + (steps - inter) * lat.intra_s + inter * lat.inter_s;
  return latency + steps / g.n * bytes / GroupBps(l, g, gpus_per_node);
}

// All-reduces: the ring, or inside one node of NVLink SHARP the NVLS pass
// (sim/collectives.cc Nvls: S (n + 1) / n through each member's link, the
// latency of NCCL's non-ring algorithms).
double AllReduceSeconds(const Links& l, const Group& g, int gpus_per_node, double bytes) {
  const double ring = RingSeconds(l, g, gpus_per_node, bytes, true);
  if (l.nvls_Bps <= 0 || g.nodes() > 1 || g.n <= 1 || bytes <= 0) return ring;
  const double latency = l.local.base_s + 2 * (g.n - 1) * l.local.intra_s;
  return std::min(ring, latency + bytes * (g.n + 1) / g.n / l.nvls_Bps);
}

// All-to-all (sim/collectives.cc AllToAll): every member sends bytes / n to each
// other member at once, in one latency step. Inside a node that is (n - 1) / n of
// the bytes through each GPU's link; across nodes the node's NICs carry what its
// GPUs send to other nodes, (n - per_node) / n of each one's bytes.
double AllToAllSeconds(const Links& l, const Group& g, int gpus_per_node, double bytes) {
  if (g.n <= 1 || bytes <= 0) return 0;
  const int local_members = std::min(g.n, g.per_node);
  double seconds = bytes * (local_members - 1.0) / g.n / l.intra_Bps;
  if (g.nodes() > 1) {
    const double node_bytes = gpus_per_node * bytes * (g.n - local_members) / g.n;
    seconds = std::max(seconds, node_bytes / l.node_net_Bps);
  }
  const Links::Latency& lat = g.nodes() > 1 ? l.cross : l.local;
  return lat.base_s + (g.nodes() > 1 ? lat.inter_s : lat.intra_s) + seconds;
}

// One microbatch on one stage: compute, and the blocking TP collectives.
struct StageMicrobatch {
  double fwd_s = 0, bwd_s = 0, recompute_s = 0, tp_s = 0;
  double total() const { return fwd_s + bwd_s + recompute_s + tp_s; }
};

// The data-parallel traffic of a stage: bytes of weights and of gradients (as reduced) of
// the dense part and of the routed experts.
struct DpTraffic {
  double weight_bytes = 0, grad_bytes = 0;
  double expert_weight_bytes = 0, expert_grad_bytes = 0;
};

// The TP collectives of one kind of layer (dense or MoE) on the layout's links, read from its
// pass (sim::ForwardPass / BackwardPass).
struct LayerTp {
  double blocking = 0;  // the collectives that block the compute, one pass
  // With tp_overlap: what the blocking ones and those pipelined with a GEMM add beyond the
  // GEMMs, per forward and per backward pass.
  double beyond_fwd = 0, beyond_bwd = 0;
};

// What one layer's TP, EP and CP collectives cost per pass on the layout's links.
struct LayerComm {
  LayerTp dense_tp, moe_tp;
  double ep_pass = 0;             // an MoE layer's all-to-alls of one pass
  double cp_fwd = 0, cp_bwd = 0;  // the K/V ring beyond the attention core, per pass
};

// The estimator's closed forms over one scenario's stage model (sim/stage_model.h).
class StepModel {
 public:
  StepModel(const Scenario& s, const sim::PieceCosts& f, const sim::ComputeModel& cm,
            const sim::ModelParams& params)
      : s_(s),
        f_(f),
        cm_(cm),
        params_(params),
        links_(NodeLinks(s, params)),
        gpn_(s.instance.gpus),
        tp_group_(GroupOf(s, sim::GroupKind::kTp, gpn_)),
        m_(static_cast<double>(s.microbatches_per_pipeline())),
        // The MoE layer's figures depend on ep (its experts' GEMMs, the all-to-all), which
        // the planner varies below the (tp, micro batch) the figures were made for.
        moe_layer_(s.model.experts > 0 && f.ep != s.parallel.ep
                       ? sim::TransformerLayerCost(s, cm, true)
                       : f.moe_layer),
        comm_(MakeLayerComm()) {}

  StepEstimate Step() const;

 private:
  bool TpOverlap() const { return s_.parallel.tp > 1 && s_.parallel.tp_overlap; }
  LayerComm MakeLayerComm() const;
  double TpSeconds(const sim::PassStep& step) const;
  double BlockingTp(const sim::LayerPass& pass) const;
  // With tp_overlap, what a pass's TP collectives add beyond the GEMMs they are pipelined with
  // (the blocking ones in full); `reverse` reads a backward pass in forward order.
  double BeyondGemms(const sim::LayerPass& pass, bool reverse) const;
  LayerTp MakeLayerTp(const sim::LayerCost& c) const;
  StageMicrobatch StageCompute(const sim::StageShare& share) const;
  double StageComm(const sim::StageShare& share) const;
  double PipelineBubble(const StageMicrobatch& worst) const;
  DpTraffic MakeDpTraffic(const sim::StageShare& share) const;
  // A data-parallel collective of the stage model on the layout's links.
  double Seconds(const sim::DpCall& call) const;
  // The reduction of `bytes` of gradients (sim::GradientReduction): its reduce-scatter or
  // all-reduce, and with hybrid sharding the all-reduce across the shard groups (0 without).
  double Reduce(double bytes, double* across) const;
  void AddDataParallel(const StageMicrobatch& worst, const sim::StageShare& share,
                       StepEstimate* e) const;
  void AddOptimizer(const sim::StageShare& share, StepEstimate* e) const;
  // The stage's dense and MoE layers' sum of `part`.
  template <class Part>
  double SumLayers(const sim::StageShare& share, Part&& part) const {
    const int layers = share.layers.count, moe = share.moe_layers;
    return (layers - moe) * part(f_.layer) + moe * part(moe_layer_);
  }

  const Scenario& s_;
  const sim::PieceCosts& f_;
  const sim::ComputeModel& cm_;
  const sim::ModelParams& params_;
  Links links_;
  int gpn_;
  Group tp_group_;
  double m_;  // microbatches per pipeline
  sim::LayerCost moe_layer_;
  LayerComm comm_;
};

// One TP collective of a pass: an all-reduce, or with sequence parallelism a ring pass (the
// all-gather before a block, the reduce-scatter after it), inside one node (or over the network
// when the group is wider than a node).
double StepModel::TpSeconds(const sim::PassStep& step) const {
  return step.coll == sim::CollKind::kAllReduce
             ? AllReduceSeconds(links_, tp_group_, gpn_, step.bytes)
             : RingSeconds(links_, tp_group_, gpn_, step.bytes, false);
}

// A pass's blocking TP collectives, summed per block (its own, then the block nested in it: an
// MoE MLP's shared experts) and over the blocks in order.
double StepModel::BlockingTp(const sim::LayerPass& pass) const {
  double total = 0;
  for (sim::PassStep::Block block :
       {sim::PassStep::Block::kAttention, sim::PassStep::Block::kMlp}) {
    double own = 0, inner = 0;
    for (const sim::PassStep& step : pass) {
      if (step.kind != sim::PassStep::Kind::kTp || step.seconds > 0 || step.block != block)
        continue;
      (step.inner ? inner : own) += TpSeconds(step);
    }
    total += own + inner;
  }
  return total;
}

// The GEMMs stay in compute; a collective pipelined with one (its window) adds what
// sim::PipelinedSeconds gives beyond it.
double StepModel::BeyondGemms(const sim::LayerPass& pass, bool reverse) const {
  double s = BlockingTp(pass);
  const int n = pass.size();
  for (int i = 0; i < n; ++i) {
    const sim::PassStep& step = *(pass.begin() + (reverse ? n - 1 - i : i));
    if (step.kind != sim::PassStep::Kind::kTp || step.seconds <= 0) continue;
    s += sim::PipelinedSeconds(step.seconds, TpSeconds(step), s_.parallel.tp,
                               params_.comm_compute_share) -
         step.seconds;
  }
  return s;
}

LayerTp StepModel::MakeLayerTp(const sim::LayerCost& c) const {
  LayerTp tp;
  const sim::LayerPass forward = sim::ForwardPass(s_, c);
  tp.blocking = BlockingTp(forward);
  if (TpOverlap()) {
    tp.beyond_fwd = BeyondGemms(forward, false);
    tp.beyond_bwd = BeyondGemms(sim::BackwardPass(s_, c), true);
  }
  return tp;
}

LayerComm StepModel::MakeLayerComm() const {
  const ParallelConfig& par = s_.parallel;
  LayerComm c;
  // TP: each block's exchange, per pass, as the pass has it.
  if (par.tp > 1) {
    c.dense_tp = MakeLayerTp(f_.layer);
    if (s_.model.experts > 0) c.moe_tp = MakeLayerTp(moe_layer_);
  }
  // EP: the all-to-alls of an MoE layer's pass (sim::ForwardPass: dispatch and combine, over
  // groups of ep consecutive DP ranks tp ranks apart); the backward's are the same.
  const Group ep_group = GroupOf(s_, sim::GroupKind::kEp, gpn_);
  for (const sim::PassStep& step : sim::ForwardPass(s_, moe_layer_)) {
    if (step.kind == sim::PassStep::Kind::kEp) {
      c.ep_pass += AllToAllSeconds(links_, ep_group, gpn_, step.bytes);
    }
  }
  // CP: the ring's collectives of a dense layer's pass (sim::ForwardPass / BackwardPass: the
  // K/V all-gather over cp ranks tp apart, pipelined in cp pieces with the attention core; the
  // backward's dK/dV reduce-scatter after it), each beyond the compute it hides behind. MoE
  // with CP is not modelled.
  if (par.cp > 1) {
    const Group cp_group = GroupOf(s_, sim::GroupKind::kCp, gpn_);
    auto beyond = [&](const sim::LayerPass& pass) {
      double seconds = 0;
      for (const sim::PassStep& step : pass) {
        if (step.kind != sim::PassStep::Kind::kCp) continue;
        const double ring = RingSeconds(links_, cp_group, gpn_, step.bytes, false);
        seconds += sim::PipelinedSeconds(step.seconds, ring, par.cp, params_.comm_compute_share) -
                   step.seconds;
      }
      return seconds;
    };
    c.cp_fwd = beyond(sim::ForwardPass(s_, f_.layer));
    c.cp_bwd = beyond(sim::BackwardPass(s_, f_.layer));
  }
  return c;
}

StageMicrobatch StepModel::StageCompute(const sim::StageShare& share) const {
  StageMicrobatch mb;
  const int layers = share.layers.count, first = share.layers.first;
  if (s_.model.kind != ModelKind::kTransformer) {
    for (int l = first; l < first + layers; ++l) {
      mb.fwd_s += f_.layers[l].fwd;
      mb.bwd_s += f_.layers[l].bwd;
    }
    return mb;
  }
  // The stage's dense and MoE layers; recomputed ones in proportion.
  const double fwd =
      SumLayers(share, [](const sim::LayerCost& c) { return c.attn_fwd_s + c.mlp_fwd_s; });
  mb.fwd_s = fwd;
  mb.bwd_s = SumLayers(share, [](const sim::LayerCost& c) { return c.attn_bwd_s + c.mlp_bwd_s; });
  // Full recompute runs the forward of its layers again.
  if (s_.training.recompute == Recompute::kFull) {
    mb.recompute_s = fwd * share.recomputed_layers / layers;
  } else if (s_.training.recompute == Recompute::kSelective) {
    mb.recompute_s = SumLayers(
        share, [](const sim::LayerCost& c) { return c.selective_recompute_s + c.mlp_replay_s; });
  } else if (s_.training.recompute == Recompute::kSelectiveOp) {
    mb.recompute_s = SumLayers(share, [](const sim::LayerCost& c) { return c.op_recompute_s; });
  } else if (KeepsProjections(s_.training.recompute)) {
    mb.recompute_s = SumLayers(share, [](const sim::LayerCost& c) { return c.proj_recompute_s; });
  }
  mb.tp_s = StageComm(share);
  if (share.first()) mb.fwd_s += f_.embed_fwd_s, mb.bwd_s += f_.embed_bwd_s;
  if (share.last()) mb.fwd_s += f_.logits_fwd_s, mb.bwd_s += f_.logits_bwd_s;
  return mb;
}

// The blocking TP, EP and CP collectives of one microbatch on a transformer stage.
double StepModel::StageComm(const sim::StageShare& share) const {
  const int layers = share.layers.count, moe = share.moe_layers;
  if (layers == 0) return 0;  // the embedding or the loss alone (parallel.split_counts_*)
  const int recomputed = share.recomputed_layers;
  const int forward_passes = layers + recomputed;
  double tp_s = 0;
  // The stage's dense and MoE layers' sum of one kind of TP figure.
  auto sum = [&](double LayerTp::*part) {
    return (layers - moe) * (comm_.dense_tp.*part) + moe * (comm_.moe_tp.*part);
  };
  if (TpOverlap()) {
    tp_s = forward_passes * (sum(&LayerTp::beyond_fwd) / layers) + sum(&LayerTp::beyond_bwd);
  } else if (s_.parallel.tp > 1) {  // each pass's blocks (attention, MLP)
    tp_s = (forward_passes + layers) * (sum(&LayerTp::blocking) / layers);
  }
  // EP: each MoE layer's pass exchanges, forward and backward; recomputed layers exchange
  // their tokens again, in proportion.
  tp_s += comm_.ep_pass * moe * (2.0 + static_cast<double>(recomputed) / layers);
  // Selective recompute's MLP replays ("mlp", "moe"): the block's exchanges again, about half
  // a forward pass's TP traffic, and the MoE layers' tokens.
  const TrainingConfig& t = s_.training;
  const int replayed =
      (Recomputes(t, kRecomputeMlp) ? layers - moe : 0) + (Recomputes(t, kRecomputeMoe) ? moe : 0);
  if (replayed > 0) {
    const double tp_pass = TpOverlap()          ? sum(&LayerTp::beyond_fwd) / layers
                           : s_.parallel.tp > 1 ? sum(&LayerTp::blocking) / layers
                                                : 0;
    tp_s += replayed * tp_pass / 2;
    if (Recomputes(t, kRecomputeMoe)) tp_s += comm_.ep_pass * moe;
  }
  // CP: each forward pass's K/V ring beyond the core it is pipelined with; the
  // backward's, and the gradients' way back.
  tp_s += forward_passes * comm_.cp_fwd + layers * comm_.cp_bwd;
  return tp_s;
}

double StepModel::PipelineBubble(const StageMicrobatch& worst) const {
  const int pp = s_.parallel.pp;
  if (pp <= 1) return 0;
  const double v = s_.parallel.schedule == Schedule::kInterleaved ? s_.parallel.virtual_stages : 1;
  // Neighbouring stages sit tp * dp ranks apart: on another node once that
  // fills a node, and then all the node's GPUs send at once.
  const bool across = s_.parallel.tp * s_.replicas() >= gpn_;
  const double p2p_Bps = across ? links_.node_net_Bps / gpn_ : links_.intra_Bps;
  const double p2p_s =
      (across ? links_.cross.inter_s : links_.local.intra_s) + f_.p2p_bytes / p2p_Bps;
  // Fill and drain, and in the steady state about one message per microbatch on the
  // critical path: sends run beside the sender's next pass (the simulator's send
  // stream), but the receiver waits for them. Checked against the simulator per family
  // (BENCHMARKS.md); it matters where the messages are slow (whole activations over
  // one NIC per node: parallel.pp_scatter_gather false).
  return (pp - 1) * (worst.total() / v + 2 * p2p_s) + m_ * p2p_s;
}

DpTraffic StepModel::MakeDpTraffic(const sim::StageShare& share) const {
  const double eb = sim::ActivationBytesPerElem(s_.training.precision);
  // With expert parallelism the routed experts' part goes over the expert-data-parallel
  // group (sim::ExpertGradientReduction).
  const double experts = s_.parallel.ep > 1 ? share.expert_params : 0;
  DpTraffic t;
  t.weight_bytes = (share.params - experts) * eb;
  t.grad_bytes = t.weight_bytes * sim::GradReduceScale(s_.training);
  t.expert_weight_bytes = experts * eb;
  t.expert_grad_bytes = t.expert_weight_bytes * sim::GradReduceScale(s_.training);
  return t;
}

// Members sit tp ranks apart (sim::ShapeOf), g / tp of them per node.
double StepModel::Seconds(const sim::DpCall& call) const {
  const Group group = GroupOf(s_, call.group, gpn_);
  return call.kind == sim::CollKind::kAllReduce
             ? AllReduceSeconds(links_, group, gpn_, call.bytes)
             : RingSeconds(links_, group, gpn_, call.bytes, false);
}

double StepModel::Reduce(double bytes, double* across) const {
  const sim::GradientCalls calls = sim::GradientReduction(s_, bytes);
  *across = calls.count > 1 ? Seconds(calls.calls[1]) : 0.0;
  return Seconds(calls.calls[0]);
}

// Gradient reduction and ZeRO's gathers of the slowest stage `share`, and what of them
// its compute does not hide.
void StepModel::AddDataParallel(const StageMicrobatch& worst, const sim::StageShare& share,
                                StepEstimate* e) const {
  if (s_.replicas() <= 1) return;
  const ParallelConfig& par = s_.parallel;
  const DpTraffic t = MakeDpTraffic(share);
  const double overlap = worst.bwd_s + worst.recompute_s;  // the last backward pass
  const double bucket_share = std::min(1.0, par.bucket_bytes / std::max(t.grad_bytes, 1.0));
  // A collective running beside `hidden_by` of compute slows it by `slowed` (the one overlap
  // rule, sim::StretchedComputeSeconds), which hides that much more of the collective.
  // Gradient reduction runs beside compute only with overlap_dp; ZeRO-3's gathers always do.
  auto slowed = [&](double comm, double hidden_by) {
    return sim::StretchedComputeSeconds(comm, hidden_by, params_.comm_compute_share);
  };
  auto reduce_slowed = [&](double comm, double hidden_by) {
    return par.overlap_dp ? slowed(comm, hidden_by) : 0.0;
  };
  auto exposed = [&](double comm, double hidden_by) {
    if (!par.overlap_dp) return comm;
    return std::max(comm * bucket_share, comm - hidden_by - slowed(comm, hidden_by));
  };
  double across = 0;
  const double reduced = Reduce(t.grad_bytes, &across);
  const double expert_reduced = Seconds(sim::ExpertGradientReduction(s_, t.expert_grad_bytes));
  // ZeRO-1/2's gather of the updated weights: after the optimizer step, or layer by layer beside
  // the first microbatch's forward pass (overlap_param_gather), which hides all of it but what
  // runs ahead of the first layer.
  double gather = Seconds(sim::WeightGather(s_, t.weight_bytes)) +
                  Seconds(sim::ExpertWeightGather(s_, t.expert_weight_bytes));
  if (sim::UpdatesGatheredInForward(s_)) {
    // In the simulator's buckets (sim::UpdateGatherBucketBytes), each chunk its share.
    const int chunks = par.schedule == Schedule::kInterleaved ? par.virtual_stages : 1;
    double buckets = 0;
    for (int c = 0; c < chunks; ++c) {
      const double cap = sim::UpdateGatherBucketBytes(s_, share.stage, c);
      buckets += std::max(1.0, std::ceil(t.weight_bytes / chunks / cap));
    }
    gather = buckets * Seconds(sim::WeightGather(s_, t.weight_bytes / buckets)) +
             Seconds(sim::ExpertWeightGather(s_, t.expert_weight_bytes));
    e->compute_s += slowed(gather, worst.fwd_s);
    gather = std::max(gather / buckets, gather - worst.fwd_s - slowed(gather, worst.fwd_s));
  }
  const double scatter = reduced + expert_reduced + across;
  switch (par.zero_stage) {
    case 0: {
      const double reduce = reduced + expert_reduced;
      e->dp_exposed_s = exposed(reduce, overlap);
      e->compute_s += reduce_slowed(reduce, overlap);
      break;
    }
    case 1:
      e->dp_exposed_s = exposed(scatter, overlap) + gather;
      e->compute_s += reduce_slowed(scatter, overlap);
      break;
    case 2:
      e->dp_exposed_s = m_ * exposed(scatter, overlap) + gather;
      e->compute_s += m_ * reduce_slowed(scatter, overlap);
      break;
    default: {  // 3: each layer's weights gathered for its forward and (resharded) its backward
                // (prefetched one layer ahead), its gradients scattered after it, in the
                // implementation's calls (sim::ShardedUnitCalls)
      const int layers = std::max(1, share.layers.count);
      const double unit = t.weight_bytes / layers;
      const sim::UnitCalls calls = sim::ShardedUnitCalls(s_, unit);
      // With expert parallelism each layer's routed experts, on average, gathered and reduced
      // over the GPUs that hold them (as the simulator's LayerTraffic), and copied by FSDP2.
      const bool expert_traffic = t.expert_weight_bytes > 0 && s_.expert_replicas() > 1;
      const double expert_gather =
          expert_traffic ? Seconds(sim::ExpertWeightGather(s_, t.expert_weight_bytes / layers)) : 0;
      const double expert_reduce =
          expert_traffic ? Seconds(sim::ExpertGradientReduction(s_, t.expert_grad_bytes / layers))
                         : 0;
      const double copied = unit + t.expert_weight_bytes / layers;
      const double copied_grad = (t.grad_bytes + t.expert_grad_bytes) / layers;
      if (sim::KeepsStageUnsharded(s_)) {
        // FSDP2 under a pipeline: every unit gathered once, beside the first microbatch's
        // forward; each chunk's units reduced after its last backward, the first chunk's (the
        // last to finish) with nothing left to hide them (v chunks: 1/v of the stage).
        const int chunks = par.schedule == Schedule::kInterleaved ? par.virtual_stages : 1;
        const double gathers = layers * (Seconds(sim::WeightGather(s_, unit)) + expert_gather);
        double unit_across = 0;
        const double unit_reduced = Reduce(t.grad_bytes / layers, &unit_across);
        const double scatters = layers * (unit_reduced + unit_across + expert_reduce);
        if (calls.copies) {
          e->compute_s +=
              layers * (cm_.MemorySeconds(2 * copied) + cm_.MemorySeconds(2 * copied_grad));
        }
        e->compute_s += slowed(gathers, worst.fwd_s);
        e->dp_exposed_s =
            std::max(gathers / layers, gathers - worst.fwd_s - slowed(gathers, worst.fwd_s)) +
            scatters / chunks;
        break;
      }
      double layer_across = 0;
      const double layer_reduced = Reduce(t.grad_bytes / layers / calls.reductions, &layer_across);
      const int passes = par.reshard_after_forward ? 2 : 1;  // the gathers of forward, backward
      const double per_layer =
          passes * (calls.gathers * Seconds(sim::WeightGather(s_, unit / calls.gathers)) +
                    expert_gather) +
          calls.reductions * (layer_reduced + layer_across) + expert_reduce;
      if (calls.copies) {  // FSDP2's copies out of each gather and into one reduction
        e->compute_s +=
            m_ * layers *
            (passes * cm_.MemorySeconds(2 * copied) + cm_.MemorySeconds(2 * copied_grad));
      }
      const double compute_per_layer = worst.total() / layers;
      const double layer_slowed = slowed(per_layer, compute_per_layer);
      e->dp_exposed_s = m_ * (layers * std::max(0.0, per_layer - compute_per_layer - layer_slowed) +
                              per_layer / 3);
      e->compute_s += m_ * layers * layer_slowed;
    }
  }
}

// The optimizer step of the slowest stage `share` (sim::OptimizerStepSeconds) and, with
// offload, the copies its compute does not hide.
void StepModel::AddOptimizer(const sim::StageShare& share, StepEstimate* e) const {
  const double opt_params = share.optimizer_params;
  const sim::OptimizerSeconds optimizer = sim::OptimizerStepSeconds(s_, cm_, opt_params);
  e->optimizer_s = optimizer.gpu_s;
  if (!s_.training.offload_optimizer) return;
  // As sim/workload.cc: the node's CPU sweeps every GPU's state; the GPUs
  // behind one PCIe switch copy through its root link at once.
  e->optimizer_s = optimizer.host_s;
  const double pcie = s_.instance.pcie_GBps_per_dir > 0 ? s_.instance.pcie_GBps_per_dir
                                                        : params_.unknown_pcie_GBps_per_dir;
  const double copy_Bps = pcie * 1e9 * sim::PcieSwitchCount(s_.instance) / gpn_;
  if (s_.training.offload_params) {
    // The shards of the first unit of every pass (its gather cannot start
    // before them) and the last unit's gradients before the CPU step; the
    // rest overlaps compute. Unit and copy sizes as in workload.cc.
    const int layers = std::max(1, share.layers.count);
    const double shard = share.params / layers * sim::kHostShardBytesPerParam / s_.shard_degree();
    e->offload_s = (2 * m_ + 1) * shard / copy_Bps;
  } else {  // gradients out and weights back, the GPU's optimizer shard each way
    e->offload_s = 2 * opt_params * sim::ActivationBytesPerElem(s_.training.precision) / copy_Bps;
  }
}

StepEstimate StepModel::Step() const {
  // The slowest stage: the first (embedding) or the last (logits), or with MoE layers
  // any stage, whose mix of dense and MoE layers differs.
  const int pp = s_.parallel.pp;
  int worst_stage = 0;
  StageMicrobatch worst = StageCompute(sim::StageLayerShare(s_, 0));
  for (int stage = 1; stage < pp; ++stage) {
    if (stage != pp - 1 && s_.model.experts == 0) continue;
    const StageMicrobatch mb = StageCompute(sim::StageLayerShare(s_, stage));
    if (mb.total() > worst.total()) worst = mb, worst_stage = stage;
  }
  const sim::StageShare worst_share = sim::MakeStageShare(s_, worst_stage);

  StepEstimate e;
  e.compute_s = m_ * (worst.fwd_s + worst.bwd_s + worst.recompute_s);
  e.tp_comm_s = m_ * worst.tp_s;
  e.pp_bubble_s = PipelineBubble(worst);
  AddDataParallel(worst, worst_share, &e);
  AddOptimizer(worst_share, &e);
  e.step_s =
      e.compute_s + e.tp_comm_s + e.pp_bubble_s + e.dp_exposed_s + e.optimizer_s + e.offload_s;
  if (s_.training.input_samples_per_s_per_node > 0) {
    const double input_s =
        s_.training.global_batch / (s_.cluster.nodes * s_.training.input_samples_per_s_per_node);
    e.step_s = std::max(e.step_s, input_s);
  }
  return e;
}

}  // namespace

Expected<Estimator> Estimator::Create(const Scenario& s, const sim::ModelParams& params) {
  Expected<sim::ComputeModel> cm = sim::MakeComputeModel(s, params);
  if (!cm.ok()) return cm.status();
  return Estimator(std::move(*cm), params);
}

sim::PieceCosts Estimator::Figures(const Scenario& s) const { return sim::MakePieceCosts(s, cm_); }

StepEstimate Estimator::Step(const Scenario& s, const sim::PieceCosts& f) const {
  // Every per-token figure depends on cp (the planner remakes them where it changes; a
  // caller with figures of another cp gets them made here).
  if (s.model.kind == ModelKind::kTransformer && f.cp != s.parallel.cp) return Step(s, Figures(s));
  return StepModel(s, f, cm_, params_).Step();
}

Expected<StepEstimate> EstimateScenarioStep(const Scenario& s) {
  const sim::MemoryBreakdown memory = sim::ComputeMemory(s);
  if (!memory.fits) {
    return Status::InvalidInput("the configuration does not fit: " +
                                sim::DescribeShortfall(memory, s));
  }
  Expected<Estimator> est = Estimator::Create(s, sim::ModelParams{});
  if (!est.ok()) return est.status();
  return est->Step(s, est->Figures(s));
}

}  // namespace trainsim::planner
