// Model parameters of the simulator that are not catalog facts: latencies and
// efficiencies. Each carries its provenance. Until calibration (issue 4) and
// fitting (issue 3) replace them, they are stated assumptions, documented in
// docs/model.md; none of them is presented as a measurement.
#pragma once

#include <optional>

namespace trainsim::sim {

struct ModelParams {
  // One-way latency of an NVLink/NVSwitch hop. Assumption (order of magnitude
  // of GPU peer-to-peer latency); fitted in a later issue.
  double nvlink_latency_s = 1.0e-6;
  // One-way latency of a PCIe hop. Assumption, as above.
  double pcie_latency_s = 1.0e-6;
  // NIC-to-NIC one-way latency over EFA: 17.2 us, OSU MPI latency of 0-8 B
  // messages between two c5n.18xlarge over EFA (aws-parallelcluster
  // integration tests, shared/reference/aws-instances-sources.json _efa_latency).
  // CPU buffers; no GPU-instance figure was found.
  double efa_latency_s = 17.2e-6;
  // NIC-to-NIC latency over InfiniBand (reference systems) and plain ENA:
  // assumptions, no figure in the reference sources.
  double infiniband_latency_s = 5.0e-6;
  double ena_latency_s = 30.0e-6;
  // PCIe bandwidth per GPU and direction when the catalog gives no PCIe
  // generation (g5): assumption, the Gen3 x16 rate, the lowest of the
  // catalog's generations.
  double unknown_pcie_GBps_per_dir = 15.75;
  // Fabric switch hop latency (leaf or spine). Assumption.
  double switch_latency_s = 0.5e-6;

  // Achievable fraction of the NVLink and NIC line rates for collectives,
  // when the catalog has no fitted or measured figure for the GPU
  // (GpuSpec::nvlink_efficiency) or the network
  // (InstanceType::network_efficiency): 1, the line rate (assumption: no
  // figure).
  double nvlink_efficiency = 1.0;
  double network_efficiency = 1.0;

  // NCCL protocol latency, added once per all-reduce, reduce-scatter and
  // all-gather on top of the links' own latencies, in the form of NCCL's
  // tuning model (src/graph/tuning.cc, ncclTopoTuneModel): a base latency
  // plus one latency per algorithm step, intra-node or across the network.
  // Ring: base + (steps - inter_steps) x intra + inter_steps x inter, with
  // 2(n-1) steps of which 2(nodes-1) cross the network for an all-reduce
  // (n-1 and nodes-1 for reduce-scatter/all-gather). Tree and hierarchical:
  // base + 2 ((n/nodes - 1) x intra + ceil(log2 nodes) x inter).
  // Values: NCCL's Simple-protocol ring constants (baseLat 8.4 us, NVLink
  // hwLat 3.4 us, network hwLat 9.6 us; NCCL 2.9 tuning.cc) scaled by
  // protocol_latency_scale, fitted to the all-reduce rows below 128 MiB of
  // bench/data/validation/fit/protocol_latency_scale.json by
  // `bench/accuracy --fit` (2026-11-25: 2.75, mean error 32.8%; 1.75 before,
  // when the fit also read rows of a source reserved for the held-out check).
  double protocol_base_latency_s = 8.4e-6;
  double protocol_intra_step_latency_s = 3.4e-6;
  double protocol_inter_step_latency_s = 9.6e-6;
  // Applies to collectives that cross the network of AWS instances (EFA, or
  // TCP, slower still), the network of the rows it is fitted to
  // (ProtocolLatencyScale); inside one node and over InfiniBand, where NCCL's
  // constants were measured, they apply as they are (scale 1).
  double protocol_latency_scale = 2.75;

  // GEMM time = kernel_overhead_s + flops / (gemm_efficiency * peak).
  // Assumptions: large tensor-core GEMMs reach about 70-80% of the datasheet
  // peak in practice; calibration (issue 4) measures the real table.
  double gemm_efficiency = 0.75;
  // A GPU's catalog entry may carry its own fitted or measured efficiency
  // (GpuSpec::gemm_efficiency, a tensor-core figure: it replaces the
  // assumption above in every precision but fp32, whose GEMMs run on the CUDA
  // cores); false keeps the assumption (for fitting).
  bool use_catalog_gemm_efficiency = true;
  double kernel_overhead_s = 4.0e-6;
  // Flash-attention kernels (training.flash_attention; workload.cc) take
  // max(compute time of their FLOPs, memory-bound time of their bytes). Their
  // compute runs at this fraction of the peak when set: a GPU's catalog entry
  // may carry a fitted one (GpuSpec::attention_efficiency), applied with the
  // catalog's GEMM efficiency (use_catalog_gemm_efficiency). Unset (the
  // default, and every GPU without a fit), the GEMM efficiency stands for it:
  // no figure is invented. FLOPs are counted over the whole score matrix
  // (causal masking not subtracted), so a fitted figure is per such FLOP.
  std::optional<double> attention_efficiency;
  // The attention core's batched GEMMs (QK^T and AV, without flash attention)
  // when the head size is not a multiple of 8 elements: cuBLAS's tensor-core
  // kernels load 16-byte-aligned rows (cuBLAS documentation, "Tensor Core
  // Usage"), and a head of, say, 225 halves leaves every row but the first
  // misaligned, so cuBLAS runs them in a slower kernel. They run at this
  // fraction of the 16-bit peak when set: a GPU's catalog entry may carry a
  // fitted one (GpuSpec::unaligned_gemm_efficiency), applied with the catalog's
  // GEMM efficiency (use_catalog_gemm_efficiency). Unset (the default, and
  // every GPU without a fit), they run at the GEMM efficiency like aligned ones.
  std::optional<double> unaligned_gemm_efficiency;
  // FP8 GEMMs with rowwise scaling (training.fp8_scaling "rowwise", torchao):
  // every row of each operand carries its own scale, which cuBLAS's FP8
  // kernels of the time did not take, so they run in other (CUTLASS) kernels.
  // When set, the FP8 linear layers' GEMMs run at this fraction of the FP8
  // peak instead of the GEMM efficiency; the 16-bit core (SixteenBit()) does
  // not. A GPU's catalog entry may carry a fitted one
  // (GpuSpec::fp8_rowwise_gemm_efficiency), applied with the catalog's GEMM
  // efficiency (use_catalog_gemm_efficiency); unset, rowwise GEMMs run as
  // tensorwise ones.
  std::optional<double> fp8_rowwise_gemm_efficiency;
  // Convolutions (layer-list models) are rooflines: kernel_overhead_s +
  // max(flops / (conv_efficiency * peak), operand bytes / (hbm_efficiency *
  // HBM bandwidth)). A GPU's catalog entry may carry a fitted conv efficiency
  // (GpuSpec::conv_efficiency, a 16-bit tensor-core figure), which is used
  // for fp16/bf16 when use_catalog_conv_efficiency is true, and TF32 and FP32
  // ones (GpuSpec::tf32_conv_efficiency, fp32_conv_efficiency) for those
  // precisions; otherwise
  // `conv_efficiency` when set, else the GEMM efficiency (no knowledge about
  // convolutions beyond GEMMs).
  std::optional<double> conv_efficiency;
  bool use_catalog_conv_efficiency = true;
  // Fraction of a GPU's compute rate that an in-flight data-parallel
  // collective (gradient all-reduce or reduce-scatter, ZeRO all-gather) takes
  // from the kernels it overlaps: NCCL runs its channels as thread blocks on
  // the GPU's SMs and moves its data through the same HBM. Compute running
  // beside such a collective goes at 1 - comm_compute_share of its rate
  // (sim/engine.cc Work/Occupying; the estimator mirrors it). The GEMM a TP
  // collective is pipelined with (parallel.tp_overlap) pays the same share
  // while they overlap (PipelinedSeconds). 0 is free overlap, the model
  // before this figure. Fitted to fms-fsdp's batch-2 FSDP
  // rows on 128 A100 and 96 H100 (all 7 simulated since hybrid sharding,
  // parallel.shard_group, expresses the two 7B rows)
  // (bench/data/validation/fit/comm_compute_share.json) by `bench/accuracy
  // --fit` (grid search of the mean absolute error): 0.22 on 2026-11-26, mean
  // 10.0% (0.21: 10.1%, 0.25: 10.1%, 0: 13.1%); 0.21 over the 5 rows simulated
  // before (mean 8.6%, after the A100 GEMM efficiency refit 0.71 -> 0.67);
  // 0.07 on 2026-11-25 (mean 6.2%). Weakly determined: the A100 rows alone want
  // about 0, the H100 rows about 0.25.
  // Below 0.5 (the engine's fair sharing would cap the collective's part there).
  double comm_compute_share = 0.22;
  // Memory-bound kernels: bytes / (hbm_efficiency * HBM bandwidth).
  double hbm_efficiency = 0.80;
  // Rate at which a node's CPU runs an offloaded optimizer step, in bytes of
  // optimizer state swept per second (the GPU path's bytes per parameter).
  // Assumption: a fraction of a two-socket server's DDR bandwidth for a
  // vectorised CPU Adam (DeepSpeed's CPU-Adam, Ren et al. 2021); no measured
  // figure in the reference sources.
  double host_optimizer_GBps = 50.0;
  // Collective message chunk for pipelined tree algorithms.
  double pipeline_chunk_bytes = 4.0 * 1024 * 1024;
  // The piece of the buffer that the hierarchical all-reduce pipelines
  // through its three phases. Assumption.
  double hierarchical_piece_bytes = 4.0 * 1024 * 1024;
  // Pieces of a hierarchical all-reduce in flight at once on each member
  // (their phases overlap, as NCCL keeps several chunk slots in flight,
  // NCCL_STEPS = 8). Assumption.
  int hierarchical_pieces_in_flight = 8;
  // Rings longer than this many steps simulate this many and extrapolate the
  // rest at the measured per-step time (0 = simulate every step). A speed
  // shortcut, not a model parameter: tests prove it against full rings.
  int max_ring_steps = 16;
  // Largest all-reduce for which the automatic choice tries the tree. The
  // tree wins on latency, for small messages; large ones go to the ring or
  // the hierarchical algorithm, and simulating a large flat tree over
  // thousands of GPUs is the costliest collective here.
  double tree_max_bytes = 16.0 * 1024 * 1024;
  // Trees of more than 2x this many chunks (per half buffer), when measured
  // alone (MeasureConcurrent), are simulated with this many and twice as many
  // and extrapolated (0 = simulate every chunk).
  int max_tree_chunks = 32;
  // The same for the pieces of a hierarchical all-reduce: more than 2x this
  // many are simulated with this many and twice as many, and extrapolated.
  int max_hierarchical_pieces = 16;
  // Node-local collectives measured together (MeasureConcurrent) are
  // simulated on one node of each kind: nodes share no link for them, so the
  // others take the same time; and calls of a shape measured before take that
  // time again (docs/model.md section 4, items 4 and 5). false = every node,
  // every time. A speed shortcut, proved against the long way in the tests.
  bool node_by_node = true;
  // Large clusters that repeat leaf by leaf are built and measured on a few
  // leaves of each pipeline stage (sim/fold.h; docs/model.md section 4, "The
  // fold"). false = every node. Proved against the long way in the tests.
  bool fold = true;
  // A step of many microbatches is simulated with a few and extended on the
  // line through them (simulate.cc MicrobatchSamples; docs/model.md section 4,
  // "Microbatches"). false = every microbatch. Proved against the long way in
  // the tests.
  bool microbatch_line = true;
  // Rings across nodes are measured on the first and last node of each leaf
  // they pass through (collectives.cc RingEnds; docs/model.md section 4,
  // "Ring ends"). false = every member. Proved against the long way in the tests.
  bool ring_ends = true;
};

// The scale of NCCL's protocol latency for a collective over `nodes` nodes:
// the fitted protocol_latency_scale when it crosses a network other than
// InfiniBand, else 1 (NCCL's own constants, measured on NVLink and InfiniBand).
// `refitted`: the instance's own scale (InstanceType::protocol_latency_scale), in place of the
// fitted one.
inline double ProtocolLatencyScale(const ModelParams& p, bool infiniband, int nodes,
                                   std::optional<double> refitted = std::nullopt) {
  return nodes > 1 && !infiniband ? refitted.value_or(p.protocol_latency_scale) : 1.0;
}

}  // namespace trainsim::sim
