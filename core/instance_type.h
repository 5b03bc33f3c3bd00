// InstanceType: one machine type of the catalog (an AWS instance or a
// reference system such as DGX A100), with what the simulator needs.
//
// Units: GB/s = gigabytes per second (`_GBps`), Gb/s = gigabits (`_gbps`).
// Figures the sources do not confirm stay std::nullopt, never guessed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

enum class Precision { kFp32, kTf32, kFp16, kBf16, kFp8 };
enum class IntraTopology { kSingle, kPcie, kNvlinkCubeMesh, kNvswitch };

// Peak dense throughput of one GPU, per precision (tensor cores where they
// apply), in FLOP/s; nullopt where the part does not support it or no source
// gives it.
struct GpuSpec {
  std::string name;  // "A100-SXM4-40GB"
  std::optional<double> fp32_flops, tf32_flops, fp16_flops, bf16_flops, fp8_flops;
  std::optional<double> hbm_GBps;
  double mem_gib = 0;
  // Fraction of the peak that large GEMMs reach in training, when fitted or
  // measured for this part (with where it comes from); else the simulator's
  // stated assumption applies (sim/model_params.h).
  std::optional<double> gemm_efficiency;
  std::string gemm_efficiency_provenance;
  // The same for TF32 GEMMs (fp32 training on Ampere and later, whose matmuls
  // run on TF32 tensor cores with 4-byte operands), a fraction of the TF32
  // peak, when fitted; else the GEMM efficiency applies to them too.
  std::optional<double> tf32_gemm_efficiency;
  std::string tf32_gemm_efficiency_provenance;
  // Fraction of the peak that fused (flash) attention kernels reach, when
  // fitted for this part; else the GEMM efficiency stands for it
  // (sim/model_params.h).
  std::optional<double> attention_efficiency;
  std::string attention_efficiency_provenance;
  // The same for cuDNN's fused attention (training.attention_kernel "cudnn"),
  // when fitted for this part; else the attention efficiency above applies.
  std::optional<double> cudnn_attention_efficiency;
  std::string cudnn_attention_efficiency_provenance;
  // Fraction of the 16-bit tensor-core peak that the attention core's batched
  // GEMMs (QK^T and AV, without flash attention) reach when the head size is
  // not a multiple of 8 elements (16 bytes), when fitted for this part; else
  // they run at the GEMM efficiency like aligned ones (sim/model_params.h).
  std::optional<double> unaligned_gemm_efficiency;
  std::string unaligned_gemm_efficiency_provenance;
  // Fraction of the FP8 peak that rowwise-scaled FP8 GEMMs reach
  // (training.fp8_scaling "rowwise"), when fitted for this part; else they run
  // at the GEMM efficiency like tensorwise ones (sim/model_params.h).
  std::optional<double> fp8_rowwise_gemm_efficiency;
  std::string fp8_rowwise_gemm_efficiency_provenance;
  // Fraction of the 16-bit (fp16/bf16) tensor-core peak that convolutions
  // reach where they are compute-bound, when fitted or measured for this part;
  // else (and in fp32/tf32) they run at the GEMM efficiency (sim/model_params.h).
  std::optional<double> conv_efficiency;
  std::string conv_efficiency_provenance;
  // The same for TF32 convolutions (fp32 training on Ampere and later, where
  // cuDNN runs convolutions on TF32 tensor cores), a fraction of the TF32 peak.
  std::optional<double> tf32_conv_efficiency;
  std::string tf32_conv_efficiency_provenance;
  // The same for FP32 convolutions on the CUDA cores (before Ampere, where
  // fp32 training has no tensor cores), a fraction of the FP32 peak.
  std::optional<double> fp32_conv_efficiency;
  std::string fp32_conv_efficiency_provenance;
  // Fraction of the NVLink line rate that collectives reach on this part
  // (protocol, flow control, kernel copy limits), when fitted or measured,
  // with where it comes from; else ModelParams::nvlink_efficiency applies.
  std::optional<double> nvlink_efficiency;
  std::string nvlink_efficiency_provenance;
  // Fraction of the NVLink line rate that NVLink SHARP all-reduces reach
  // (InstanceType::nvlink_sharp), counted on the traffic of each GPU's link
  // (docs/model.md section 3), with where it comes from; else the NVLink
  // efficiency applies to them too.
  std::optional<double> nvls_efficiency;
  std::string nvls_efficiency_provenance;
  std::vector<std::string> sources;
  // The CUDA device names of this part (catalog field "device_names"): each entry the words
  // that all appear in the name the driver reports ("NVIDIA H100 80GB HBM3": H100, 80GB,
  // HBM3), so a calibration run names its GPU (Catalog::FindGpuByDeviceName).
  std::vector<std::vector<std::string>> device_names;

  std::optional<double> PeakFlops(Precision p) const;
};

// A GPU's fitted or measured figure: its catalog key (also the parameter name of
// bench/accuracy's fit files), the value and where it comes from.
struct GpuFigure {
  const char* key;
  std::optional<double> GpuSpec::*value;
  std::string GpuSpec::*provenance;
};
// Every such figure, in the catalog's reading order.
const std::vector<GpuFigure>& GpuFigures();

struct NvlinkPair {
  int a = 0, b = 0;
  int links = 1;  // parallel NVLink bricks between a and b
};

struct InstanceType {
  std::string name;  // "p4d.24xlarge"
  bool is_aws = true;
  GpuSpec gpu;
  int gpus = 0;
  double gpu_mem_gib = 0;

  IntraTopology topology = IntraTopology::kPcie;
  // NVSwitch: per-GPU NVLink bandwidth, one direction.
  std::optional<double> nvlink_GBps_per_gpu_per_dir;
  // Cube-mesh: the NVLink pairs and the bandwidth of one link, one direction.
  std::vector<NvlinkPair> nvlink_pairs;
  std::optional<double> nvlink_GBps_per_link_per_dir;
  // NVSwitch with NVLink SHARP (third generation, H100/H200 HGX): the switch
  // reduces and multicasts, and NCCL runs all-reduces inside the node as NVLS.
  bool nvlink_sharp = false;
  int pcie_gen = 0;              // 0 when unknown
  double pcie_GBps_per_dir = 0;  // per GPU, from pcie_gen

  int nics = 0;             // network interfaces used for training traffic
  double nic_gbps = 0;      // per NIC
  bool efa = false;         // EFA (or InfiniBand for reference systems)
  bool infiniband = false;  // the RDMA network is InfiniBand, not EFA
  // Fraction of the NIC line rate that collectives reach over this network
  // (transport, proxy, GPUDirect), when fitted or measured, with where it
  // comes from; else ModelParams::network_efficiency applies.
  std::optional<double> network_efficiency;
  std::string network_efficiency_provenance;
  // NCCL's protocol latency scale across this instance's network, refitted from the user's
  // small nccl-tests rows (HardwareProfile::network, docs/observe.md section 3b); nullopt: the
  // model's (sim::ModelParams::protocol_latency_scale).
  std::optional<double> protocol_latency_scale;
  int gpus_per_nic() const { return nics > 0 && gpus >= nics ? gpus / nics : 1; }

  int vcpus = 0;
  double ram_gib = 0;
  std::optional<double> price_on_demand_usd_hr;
  std::optional<double> price_sagemaker_usd_hr;
  std::optional<double> spot_discount;                  // fraction saved vs on-demand
  std::optional<std::string> spot_interruption_bucket;  // "<5%", "5-10%", ... ">20%"
  // EC2 Capacity Blocks for ML (planner/job/capacity_block.h): the price per instance-hour and the
  // date its source says it holds until ("YYYY-MM-DD"); both or neither. Block prices move with
  // supply and demand: a stale figure is still a figure with its date, never updated by guess.
  std::optional<double> price_capacity_block_usd_hr;
  std::optional<std::string> capacity_block_valid_until;

  // SageMaker's distributed training libraries that run on this type (catalog field
  // "sagemaker_libraries", with its sources): "smddp-allreduce" and "smddp-allgather" (the
  // data parallelism library's collectives; the all-gather serves sharded states) and
  // "smp-v2" (the model parallelism library v2). Empty: none, or none confirmed.
  std::vector<std::string> sagemaker_libraries;
  bool RunsSagemakerLibrary(std::string_view library) const;

  // Source ids per field ("net" -> {"awsdocs_acc", ...}); "*" applies to the entry.
  std::map<std::string, std::vector<std::string>> sources;
  std::string notes;
};

}  // namespace trainsim
