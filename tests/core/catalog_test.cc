#include "core/catalog.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#ifndef TRAINSIM_SOURCE_DIR
#define TRAINSIM_SOURCE_DIR "."
#endif

namespace trainsim {
namespace {

std::string BuiltinDir() { return std::string(TRAINSIM_SOURCE_DIR) + "/instance-catalog"; }

const Catalog& Builtin() {
  static const Catalog* catalog = [] {
    Expected<Catalog> c = Catalog::LoadBuiltin(BuiltinDir());
    if (!c.ok()) {
      ADD_FAILURE() << c.status().message();
      return new Catalog();
    }
    return new Catalog(std::move(c).value());
  }();
  return *catalog;
}

// Links per GPU summed over the NVLink pairs.
std::map<int, int> LinksPerGpu(const InstanceType& t) {
  std::map<int, int> links;
  for (const NvlinkPair& p : t.nvlink_pairs) {
    links[p.a] += p.links;
    links[p.b] += p.links;
  }
  return links;
}

TEST(CatalogBuiltin, LoadsEveryNvidiaAwsTypeAndTheReferenceSystems) {
  const std::vector<std::string> expected = {
      "dgx-a100-80gb", "dgx-h100",      "g4dn.12xlarge", "g4dn.metal",  "g5.12xlarge",
      "g5.48xlarge",   "p3.16xlarge",   "p3.2xlarge",    "p3.8xlarge",  "p3dn.24xlarge",
      "p4d.24xlarge",  "p4de.24xlarge", "p5.48xlarge",   "p5e.48xlarge"};
  EXPECT_EQ(Builtin().Names(), expected);
  EXPECT_EQ(Builtin().Find("trn1.32xlarge"), nullptr);  // not an NVIDIA GPU
  EXPECT_EQ(Builtin().Find("no-such-type"), nullptr);
}

struct TypeCase {
  std::string name;
  std::string gpu;
  int gpus;
  double gpu_mem_gib;
  IntraTopology topology;
  int nics;
  double nic_gbps;
  bool efa;
  bool is_aws;
  std::optional<double> on_demand_usd_hr;
};

TEST(CatalogBuiltin, EntriesMatchTheReferenceFigures) {
  const std::vector<TypeCase> cases = {
      {"g4dn.12xlarge", "T4", 4, 16, IntraTopology::kPcie, 1, 50, true, true, 3.912},
      {"g5.48xlarge", "A10G", 8, 24, IntraTopology::kPcie, 1, 100, true, true, 16.288},
      {"p3.2xlarge", "V100-SXM2-16GB", 1, 16, IntraTopology::kSingle, 1, 10, false, true, 3.06},
      {"p3.16xlarge", "V100-SXM2-16GB", 8, 16, IntraTopology::kNvlinkCubeMesh, 1, 25, false, true,
       24.48},
      {"p3dn.24xlarge", "V100-SXM2-32GB", 8, 32, IntraTopology::kNvlinkCubeMesh, 1, 100, true, true,
       31.212},
      {"p4d.24xlarge", "A100-SXM4-40GB", 8, 40, IntraTopology::kNvswitch, 4, 100, true, true,
       21.957642},
      {"p5.48xlarge", "H100-SXM5-80GB", 8, 80, IntraTopology::kNvswitch, 32, 100, true, true,
       55.04},
      {"p5e.48xlarge", "H200-141GB", 8, 141, IntraTopology::kNvswitch, 32, 100, true, true,
       std::nullopt},
      {"dgx-a100-80gb", "A100-SXM4-80GB", 8, 80, IntraTopology::kNvswitch, 8, 200, true, false,
       std::nullopt},
      {"dgx-h100", "H100-SXM5-80GB", 8, 80, IntraTopology::kNvswitch, 8, 400, true, false,
       std::nullopt},
  };
  for (const TypeCase& c : cases) {
    SCOPED_TRACE(c.name);
    const InstanceType* t = Builtin().Find(c.name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->gpu.name, c.gpu);
    EXPECT_EQ(t->gpus, c.gpus);
    EXPECT_DOUBLE_EQ(t->gpu_mem_gib, c.gpu_mem_gib);
    EXPECT_EQ(t->topology, c.topology);
    EXPECT_EQ(t->nics, c.nics);
    EXPECT_DOUBLE_EQ(t->nic_gbps, c.nic_gbps);
    EXPECT_EQ(t->efa, c.efa);
    EXPECT_EQ(t->infiniband, c.efa && !c.is_aws);  // the reference systems' RDMA network
    EXPECT_EQ(t->is_aws, c.is_aws);
    EXPECT_EQ(t->price_on_demand_usd_hr, c.on_demand_usd_hr);
  }
}

TEST(CatalogBuiltin, P4dHasEightA100OnNvswitchAndFourHundredGbpsNics) {
  const InstanceType* t = Builtin().Find("p4d.24xlarge");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->gpu.name, "A100-SXM4-40GB");
  EXPECT_EQ(t->gpus, 8);
  EXPECT_EQ(t->topology, IntraTopology::kNvswitch);
  EXPECT_EQ(t->nvlink_GBps_per_gpu_per_dir, 300.0);  // 600 GB/s bidirectional, halved
  EXPECT_EQ(t->nics, 4);
  EXPECT_DOUBLE_EQ(t->nic_gbps, 100);
  EXPECT_EQ(t->gpus_per_nic(), 2);
  EXPECT_EQ(t->price_on_demand_usd_hr, 21.957642);
  EXPECT_EQ(t->price_sagemaker_usd_hr, 37.688);
  EXPECT_EQ(t->spot_discount, 0.67);
  EXPECT_EQ(t->spot_interruption_bucket, "10-15%");
  EXPECT_EQ(t->price_capacity_block_usd_hr, 14.75);  // with the date its source gives
  EXPECT_EQ(t->capacity_block_valid_until, "2025-01-01");
  EXPECT_EQ(t->pcie_gen, 4);
  EXPECT_NEAR(t->pcie_GBps_per_dir, 31.5, 0.01);
  EXPECT_EQ(t->gpu.PeakFlops(Precision::kBf16), 312e12);
  EXPECT_EQ(t->gpu.PeakFlops(Precision::kFp8), std::nullopt);
}

// Which of SageMaker's distributed training libraries run on a type is catalog data with its
// sources (the launch bundle reads it): SMDDP's all-reduce on P3 and P4, its all-gather on P4
// only, SMP v2 on P4 and P5.
TEST(CatalogBuiltin, SagemakerLibrariesAreDataWithSources) {
  const std::map<std::string, std::vector<std::string>> expected = {
      {"p3.16xlarge", {"smddp-allreduce"}},
      {"p3dn.24xlarge", {"smddp-allreduce"}},
      {"p4d.24xlarge", {"smddp-allreduce", "smddp-allgather", "smp-v2"}},
      {"p4de.24xlarge", {"smddp-allreduce", "smddp-allgather", "smp-v2"}},
      {"p5.48xlarge", {"smp-v2"}},
      {"p5e.48xlarge", {}},
      {"g5.48xlarge", {}}};
  for (const auto& [name, libraries] : expected) {
    SCOPED_TRACE(name);
    const InstanceType* t = Builtin().Find(name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->sagemaker_libraries, libraries);
    for (const std::string& l : libraries) EXPECT_TRUE(t->RunsSagemakerLibrary(l));
    EXPECT_EQ(t->sources.count("sagemaker_libraries"), libraries.empty() ? 0u : 1u);
  }
  EXPECT_FALSE(Builtin().Find("p5.48xlarge")->RunsSagemakerLibrary("smddp-allreduce"));
}

// Every built-in GPU names the CUDA devices it is (calibrate/calibration.h CatalogGpuName).
TEST(CatalogBuiltin, GpusNameTheirDevices) {
  const std::map<std::string, std::string> devices = {{"NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"},
                                                      {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
                                                      {"Tesla V100-SXM2-16GB", "V100-SXM2-16GB"},
                                                      {"NVIDIA H200", "H200-141GB"},
                                                      {"Tesla T4", "T4"},
                                                      {"NVIDIA A10G", "A10G"}};
  for (const auto& [device, gpu] : devices) {
    const GpuSpec* g = Builtin().FindGpuByDeviceName(device);
    ASSERT_NE(g, nullptr) << device;
    EXPECT_EQ(g->name, gpu);
  }
  EXPECT_EQ(Builtin().FindGpuByDeviceName("NVIDIA A100-PCIe-40GB"), nullptr);
  EXPECT_EQ(Builtin().FindGpuByDeviceName("NVIDIA B200"), nullptr);
}

TEST(CatalogBuiltin, UnconfirmedFiguresStayNull) {
  const InstanceType* p5e = Builtin().Find("p5e.48xlarge");
  ASSERT_NE(p5e, nullptr);
  EXPECT_EQ(p5e->price_on_demand_usd_hr, std::nullopt);
  EXPECT_EQ(p5e->price_sagemaker_usd_hr, std::nullopt);
  EXPECT_EQ(p5e->spot_discount, std::nullopt);
  EXPECT_EQ(p5e->spot_interruption_bucket, std::nullopt);
  EXPECT_EQ(Builtin().Find("p4de.24xlarge")->price_capacity_block_usd_hr, std::nullopt);

  const InstanceType* p3dn = Builtin().Find("p3dn.24xlarge");
  ASSERT_NE(p3dn, nullptr);
  EXPECT_EQ(p3dn->nvlink_GBps_per_gpu_per_dir, std::nullopt);

  const InstanceType* g5 = Builtin().Find("g5.12xlarge");
  ASSERT_NE(g5, nullptr);
  EXPECT_EQ(g5->pcie_gen, 0);
  EXPECT_EQ(g5->pcie_GBps_per_dir, 0);
  EXPECT_EQ(g5->gpu.PeakFlops(Precision::kFp16), std::nullopt);
  EXPECT_EQ(g5->gpu.PeakFlops(Precision::kFp32), 31.52e12);

  const InstanceType* dgx = Builtin().Find("dgx-a100-80gb");
  ASSERT_NE(dgx, nullptr);
  EXPECT_EQ(dgx->vcpus, 0);
  EXPECT_EQ(dgx->ram_gib, 0);
  EXPECT_EQ(dgx->price_on_demand_usd_hr, std::nullopt);
  EXPECT_EQ(Builtin().Find("g4dn.metal")->price_sagemaker_usd_hr, std::nullopt);
  EXPECT_EQ(Builtin().Find("p4de.24xlarge")->price_sagemaker_usd_hr, std::nullopt);
}

// Fitted figures say so; GPUs without a fit keep none (the simulator's
// stated assumption applies to them).
TEST(CatalogBuiltin, FittedGemmEfficiencyCarriesItsProvenance) {
  const GpuSpec& a100 = Builtin().Find("dgx-a100-80gb")->gpu;
  ASSERT_TRUE(a100.gemm_efficiency.has_value());
  EXPECT_GT(*a100.gemm_efficiency, 0.3);
  EXPECT_LT(*a100.gemm_efficiency, 0.95);
  EXPECT_EQ(a100.gemm_efficiency_provenance.rfind("fitted to", 0), 0u);
  const GpuSpec& h100 = Builtin().Find("p5.48xlarge")->gpu;
  ASSERT_TRUE(h100.gemm_efficiency && h100.attention_efficiency);
  EXPECT_EQ(h100.attention_efficiency_provenance.rfind("fitted to", 0), 0u);
  EXPECT_EQ(a100.attention_efficiency, std::nullopt);  // no fit: the GEMM efficiency stands
  ASSERT_TRUE(a100.unaligned_gemm_efficiency.has_value());
  EXPECT_EQ(a100.unaligned_gemm_efficiency_provenance.rfind("fitted to", 0), 0u);
  EXPECT_EQ(h100.unaligned_gemm_efficiency, std::nullopt);
  EXPECT_EQ(Builtin().Find("g4dn.12xlarge")->gpu.gemm_efficiency, std::nullopt);
}

// The conv efficiencies are fitted (V100, A100) or carried over from a fit of the
// same compute die, and say so; GPUs without one run convolutions at the GEMM efficiency.
TEST(CatalogBuiltin, FittedConvEfficiencyCarriesItsProvenance) {
  for (const char* name : {"p3.16xlarge", "dgx-a100-80gb", "p4d.24xlarge", "p3dn.24xlarge"}) {
    SCOPED_TRACE(name);
    const GpuSpec& gpu = Builtin().Find(name)->gpu;
    ASSERT_TRUE(gpu.conv_efficiency.has_value());
    EXPECT_GT(*gpu.conv_efficiency, 0.2);
    EXPECT_LT(*gpu.conv_efficiency, 0.95);
    const std::string& p = gpu.conv_efficiency_provenance;
    EXPECT_TRUE(p.rfind("fitted to", 0) == 0 || p.rfind("carried over from", 0) == 0) << p;
    EXPECT_NE(p.find("--fit-conv-efficiency"), std::string::npos) << p;
  }
  EXPECT_EQ(Builtin().Find("p5.48xlarge")->gpu.conv_efficiency, std::nullopt);
}

// The collective efficiencies fitted to nccl-tests say so; parts and
// networks without a fit keep none (the simulator's assumption applies).
TEST(CatalogBuiltin, FittedLinkEfficienciesCarryTheirProvenance) {
  for (const char* name : {"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge"}) {
    SCOPED_TRACE(name);
    const InstanceType* t = Builtin().Find(name);
    ASSERT_NE(t, nullptr);
    ASSERT_TRUE(t->gpu.nvlink_efficiency.has_value());
    EXPECT_GT(*t->gpu.nvlink_efficiency, 0.5);
    EXPECT_LE(*t->gpu.nvlink_efficiency, 1.0);
    EXPECT_NE(t->gpu.nvlink_efficiency_provenance.find("fitted to"), std::string::npos);
    ASSERT_TRUE(t->network_efficiency.has_value());
    EXPECT_GT(*t->network_efficiency, 0.5);
    EXPECT_LE(*t->network_efficiency, 1.0);
    EXPECT_NE(t->network_efficiency_provenance.find("fitted to"), std::string::npos);
  }
  EXPECT_EQ(Builtin().Find("dgx-a100-80gb")->network_efficiency, std::nullopt);
  EXPECT_EQ(Builtin().Find("p3dn.24xlarge")->gpu.nvlink_efficiency, std::nullopt);
}

// NVLink SHARP: the third-generation NVSwitch of H100/H200 nodes, not the
// A100's, with the GPUs' fitted NVLS efficiency.
TEST(CatalogBuiltin, HopperNvswitchNodesHaveNvlinkSharp) {
  for (const char* name : {"p5.48xlarge", "p5e.48xlarge", "dgx-h100"}) {
    SCOPED_TRACE(name);
    const InstanceType* t = Builtin().Find(name);
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(t->nvlink_sharp);
    ASSERT_TRUE(t->gpu.nvls_efficiency.has_value());
    EXPECT_NE(t->gpu.nvls_efficiency_provenance.find("fitted"), std::string::npos);
  }
  for (const char* name : {"p4d.24xlarge", "p4de.24xlarge", "dgx-a100-80gb", "p3.16xlarge"}) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(Builtin().Find(name)->nvlink_sharp);
  }
}

TEST(CatalogBuiltin, P3CubeMeshHasSixteenPairsAndSixLinksPerGpu) {
  for (const char* name : {"p3.16xlarge", "p3dn.24xlarge"}) {
    SCOPED_TRACE(name);
    const InstanceType* t = Builtin().Find(name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->nvlink_pairs.size(), 16u);
    std::map<int, int> links = LinksPerGpu(*t);
    ASSERT_EQ(links.size(), 8u);
    for (const auto& [gpu, count] : links) EXPECT_EQ(count, 6) << "GPU " << gpu;
    EXPECT_EQ(t->nvlink_GBps_per_link_per_dir, 25.0);
  }
  EXPECT_EQ(Builtin().Find("p3.16xlarge")->nvlink_GBps_per_gpu_per_dir, 150.0);
}

TEST(CatalogBuiltin, P3EightXlIsTheFirstQuadOfTheCubeMesh) {
  const InstanceType* quad = Builtin().Find("p3.8xlarge");
  const InstanceType* full = Builtin().Find("p3.16xlarge");
  ASSERT_NE(quad, nullptr);
  ASSERT_NE(full, nullptr);
  std::vector<NvlinkPair> first_quad;
  for (const NvlinkPair& p : full->nvlink_pairs) {
    if (p.a < 4 && p.b < 4) first_quad.push_back(p);
  }
  ASSERT_EQ(quad->nvlink_pairs.size(), first_quad.size());
  for (size_t i = 0; i < first_quad.size(); ++i) {
    EXPECT_EQ(quad->nvlink_pairs[i].a, first_quad[i].a);
    EXPECT_EQ(quad->nvlink_pairs[i].b, first_quad[i].b);
    EXPECT_EQ(quad->nvlink_pairs[i].links, first_quad[i].links);
  }
}

TEST(CatalogBuiltin, EveryFigureCitesKnownSources) {
  const std::map<std::string, std::string>& text = Builtin().source_text();
  EXPECT_TRUE(text.count("pci_sig"));
  for (const std::string& name : Builtin().Names()) {
    SCOPED_TRACE(name);
    const InstanceType* t = Builtin().Find(name);
    ASSERT_FALSE(t->gpu.sources.empty());
    for (const std::string& id : t->gpu.sources) EXPECT_TRUE(text.count(id)) << id;
    ASSERT_TRUE(t->sources.count("*"));
    for (const auto& [field, ids] : t->sources) {
      EXPECT_FALSE(ids.empty()) << field;
      for (const std::string& id : ids) EXPECT_TRUE(text.count(id)) << field << ": " << id;
    }
    if (t->pcie_gen > 0) {
      ASSERT_TRUE(t->sources.count("pcie_GBps_per_dir"));
      EXPECT_EQ(t->sources.at("pcie_GBps_per_dir"), std::vector<std::string>{"pci_sig"});
    }
  }
}

// Fabrics cite known sources; what the sources do not confirm stays 0 (null).
TEST(CatalogBuiltin, FabricsCiteTheirSources) {
  const Catalog& c = Builtin();
  EXPECT_EQ(c.FabricNames(), (std::vector<std::string>{"aws-ultracluster", "dgx-superpod-b200",
                                                       "dgx-superpod-h100"}));
  for (const std::string& name : c.FabricNames()) {
    const Fabric* f = c.FindFabric(name);
    ASSERT_FALSE(f->sources.empty()) << name;
    for (const std::string& id : f->sources) EXPECT_TRUE(c.source_text().count(id)) << id;
  }
  const Fabric* b200 = c.FindFabric("dgx-superpod-b200");
  EXPECT_EQ(b200->nodes_per_leaf, 32);
  EXPECT_EQ(b200->leaves_per_pod, 4);
  EXPECT_EQ(b200->pod_oversubscription, 1.0);
  const Fabric* aws = c.FindFabric("aws-ultracluster");
  EXPECT_EQ(aws->nodes_per_leaf, 0);
  EXPECT_EQ(aws->leaves_per_pod, 0);
  EXPECT_EQ(aws->oversubscription, 1.0);
  EXPECT_EQ(c.FindFabric("nope"), nullptr);
}

TEST(CatalogBuiltin, PcieBandwidthFollowsTheGeneration) {
  EXPECT_NEAR(Builtin().Find("p3.16xlarge")->pcie_GBps_per_dir, 15.75, 0.01);
  EXPECT_NEAR(Builtin().Find("p4de.24xlarge")->pcie_GBps_per_dir, 31.5, 0.01);
  EXPECT_NEAR(Builtin().Find("p5.48xlarge")->pcie_GBps_per_dir, 63.0, 0.02);
}

TEST(CatalogBuiltin, MissingDirectoryIsNotFound) {
  Expected<Catalog> c = Catalog::LoadBuiltin("/nonexistent-trainsim-dir");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(c.status().message(),
            "/nonexistent-trainsim-dir/sources.json: cannot open file: No such file or directory");
}

TEST(CatalogDefaultDir, EnvironmentOverridesTheCompiledInDirectory) {
  const char* old = std::getenv("TRAINSIM_CATALOG_DIR");
  std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::setenv("TRAINSIM_CATALOG_DIR", "/tmp/my-catalog", 1);
  EXPECT_EQ(Catalog::DefaultDir(), "/tmp/my-catalog");
  ::unsetenv("TRAINSIM_CATALOG_DIR");
  EXPECT_FALSE(Catalog::DefaultDir().empty());
  EXPECT_NE(Catalog::DefaultDir(), "/tmp/my-catalog");
  if (saved) ::setenv("TRAINSIM_CATALOG_DIR", saved->c_str(), 1);
}

constexpr const char* kExtra = R"({"version": 1,
  "sources": {"lab_bench": "Our own lab measurement, 2025"},
  "gpus": [{"name": "LabGPU", "fp32_tflops": 10, "tf32_tflops": null, "fp16_tflops": 80,
            "bf16_tflops": 80, "fp8_tflops": null, "hbm_GBps": 1000, "mem_gib": 48,
            "sources": ["lab_bench"]}],
  "instances": [
    {"name": "lab-node", "is_aws": false, "gpu": "LabGPU", "gpus": 4,
     "topology": {"kind": "pcie", "pcie_gen": 4},
     "network": {"nic_gbps": 200, "rdma": "infiniband", "rdma_nics": 2},
     "sources": {"*": ["lab_bench"], "pcie_GBps_per_dir": ["pci_sig"]}},
    {"name": "lab-a100", "gpu": "A100-SXM4-80GB", "gpus": 8,
     "topology": {"kind": "nvswitch", "nvlink_GBps_per_gpu_bidir": 600},
     "network": {"net_gbps": 800, "rdma": "efa", "rdma_nics": 8},
     "pricing": {"on_demand_usd_hr": 20, "spot_interruption_bucket": "<5%"}},
    {"name": "lab-inline", "gpus": 1,
     "gpu": {"name": "InlineGPU", "fp32_tflops": 5, "mem_gib": 8},
     "topology": {"kind": "single"}, "network": {"net_gbps": 10, "rdma": "none"}}
  ]})";

TEST(CatalogExtra, UserEntriesLoadBesideTheBuiltinOnes) {
  Catalog c = Builtin();
  Status s = c.AddFromString(kExtra, "extra.json");
  ASSERT_TRUE(s.ok()) << s.message();

  const InstanceType* node = c.Find("lab-node");
  ASSERT_NE(node, nullptr);
  EXPECT_FALSE(node->is_aws);
  EXPECT_EQ(node->gpu.name, "LabGPU");
  EXPECT_EQ(node->gpu_mem_gib, 48);  // defaults to the GPU's memory
  EXPECT_EQ(node->gpu.PeakFlops(Precision::kFp16), 80e12);
  EXPECT_EQ(node->nics, 2);
  EXPECT_EQ(node->nic_gbps, 200);
  EXPECT_TRUE(node->efa);
  EXPECT_EQ(c.source_text().at("lab_bench"), "Our own lab measurement, 2025");

  const InstanceType* a100 = c.Find("lab-a100");
  ASSERT_NE(a100, nullptr);
  EXPECT_TRUE(a100->is_aws);
  EXPECT_EQ(a100->nic_gbps, 100);
  EXPECT_EQ(a100->price_on_demand_usd_hr, 20);
  EXPECT_EQ(a100->price_sagemaker_usd_hr, std::nullopt);
  EXPECT_EQ(a100->spot_interruption_bucket, "<5%");

  const InstanceType* inline_gpu = c.Find("lab-inline");
  ASSERT_NE(inline_gpu, nullptr);
  EXPECT_EQ(inline_gpu->gpu.name, "InlineGPU");
  EXPECT_EQ(inline_gpu->topology, IntraTopology::kSingle);
  EXPECT_EQ(c.Names().size(), Builtin().Names().size() + 3);
}

TEST(CatalogExtra, AddFileReadsFromDisk) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / "trainsim_extra_test.json";
  std::ofstream(path) << kExtra;
  Catalog c = Builtin();
  Status s = c.AddFile(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NE(c.Find("lab-node"), nullptr);

  Status missing = c.AddFile("/nonexistent/extra.json");
  EXPECT_EQ(missing.message(),
            "/nonexistent/extra.json: cannot open file: No such file or directory");
}

// What every command's --catalog loads: the built-in catalog, plus the file.
TEST(CatalogExtra, LoadDefaultAddsTheExtraFile) {
  Expected<Catalog> plain = Catalog::LoadDefault();
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->Names(), Builtin().Names());

  std::filesystem::path path =
      std::filesystem::temp_directory_path() / "trainsim_default_test.json";
  std::ofstream(path) << kExtra;
  Expected<Catalog> extra = Catalog::LoadDefault(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(extra.ok()) << extra.status().message();
  EXPECT_NE(extra->Find("lab-node"), nullptr);
  EXPECT_NE(extra->Find("p4d.24xlarge"), nullptr);

  Expected<Catalog> missing = Catalog::LoadDefault("/nonexistent/extra.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "/nonexistent/extra.json: cannot open file: No such file or directory");
}

TEST(CatalogExtra, AFailedFileAddsNothing) {
  Catalog c = Builtin();
  std::string text = kExtra;
  text.replace(text.find("\"gpus\": 1"), 9, "\"gpus\": 0");
  EXPECT_FALSE(c.AddFromString(text, "extra.json").ok());
  EXPECT_EQ(c.Find("lab-node"), nullptr);
  EXPECT_EQ(c.source_text().count("lab_bench"), 0u);
  EXPECT_EQ(c.Names(), Builtin().Names());
}

// A one-instance file, one field per line:
//   line 1 {"version": 1, "instances": [{
//   line 2   "name": ...       line 5   "topology": ...
//   line 3   "gpu": ...        line 6   "network": ...
//   line 4   "gpus": ...       line 7+  extra lines
// Each override replaces the line of that field ("" removes it).
std::string OneEntry(const std::map<std::string, std::string>& overrides,
                     const std::vector<std::string>& extra = {}) {
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"name", R"("name": "x1")"},
      {"gpu", R"("gpu": "T4")"},
      {"gpus", R"("gpus": 4)"},
      {"topology", R"("topology": {"kind": "pcie", "pcie_gen": 3})"},
      {"network", R"("network": {"net_gbps": 50, "rdma": "efa", "rdma_nics": 1})"}};
  std::vector<std::string> lines;
  for (const auto& [key, line] : fields) {
    auto it = overrides.find(key);
    std::string text = it == overrides.end() ? line : it->second;
    if (!text.empty()) lines.push_back(text);
  }
  lines.insert(lines.end(), extra.begin(), extra.end());
  std::string out = "{\"version\": 1, \"instances\": [{\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    out += "  " + lines[i] + (i + 1 < lines.size() ? ",\n" : "\n");
  }
  return out + "}]}";
}

// The topology line of a cube-mesh entry with the given pairs.
std::string MeshLine(const std::string& pairs) {
  return R"("topology": {"kind": "nvlink-cube-mesh", "nvlink_pairs": [)" + pairs + "]}";
}

struct BadInput {
  std::string what;
  std::string text;
  std::string message;
};

// Every fitted figure of a GPU needs its provenance; the error points at the figure.
TEST(CatalogExtra, GpuFiguresWithoutProvenanceFailAtTheFigure) {
  for (const std::string key :
       {"gemm_efficiency", "tf32_gemm_efficiency", "attention_efficiency",
        "cudnn_attention_efficiency", "unaligned_gemm_efficiency", "fp8_rowwise_gemm_efficiency",
        "conv_efficiency", "tf32_conv_efficiency", "fp32_conv_efficiency", "nvlink_efficiency",
        "nvls_efficiency"}) {
    SCOPED_TRACE(key);
    const std::string text =
        OneEntry({{"gpu", R"("gpu": {"name": "G1", "mem_gib": 8, ")" + key + R"(": 0.5})"}});
    Catalog catalog = Builtin();
    Status s = catalog.AddFromString(text, "extra.json");
    ASSERT_FALSE(s.ok()) << text;
    // The value follows `  "gpu": {"name": "G1", "mem_gib": 8, "KEY": ` on line 3.
    EXPECT_EQ(s.message(), "extra.json:3:" + std::to_string(43 + key.size()) +
                               ": instances[0].gpu." + key + ": needs " + key +
                               "_provenance (where the figure comes from)");
  }
}

TEST(CatalogExtra, ACapacityBlockPriceKeepsItsDate) {
  Catalog c = Builtin();
  const Status s = c.AddFromString(
      OneEntry(
          {},
          {R"("pricing": {"capacity_block_usd_hr": 9, "capacity_block_valid_until": "2024-02-29"})"}),
      "extra.json");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(c.Find("x1")->price_capacity_block_usd_hr, 9);
  EXPECT_EQ(c.Find("x1")->capacity_block_valid_until, "2024-02-29");  // a leap day
}

TEST(CatalogExtra, BadInputsFailWithTheirLocation) {
  const std::string kGpus =
      "A100-SXM4-40GB, A100-SXM4-80GB, A10G, H100-SXM5-80GB, H200-141GB, T4, V100-SXM2-16GB, "
      "V100-SXM2-32GB";
  const std::vector<BadInput> cases = {
      {"negative gpu count", OneEntry({{"gpus", R"("gpus": -2)"}}),
       "extra.json:4:11: instances[0].gpus: expected an integer >= 1, got -2"},
      {"gpu count as a string", OneEntry({{"gpus", R"("gpus": "8")"}}),
       "extra.json:4:11: instances[0].gpus: expected an integer >= 1, got \"8\""},
      {"unknown gpu", OneEntry({{"gpu", R"("gpu": "Z100")"}}),
       "extra.json:3:10: instances[0].gpu: unknown GPU \"Z100\" (known: " + kGpus + ")"},
      {"gpu of the wrong type", OneEntry({{"gpu", R"("gpu": 3)"}}),
       "extra.json:3:10: instances[0].gpu: expected a GPU name or a GPU object, got 3"},
      {"unknown field", OneEntry({}, {R"("colour": "red")"}),
       "extra.json:7:3: unknown field instances[0].colour (known: name, is_aws, gpus, "
       "gpu_mem_gib, vcpus, ram_gib, notes, gpu, topology, network, pricing, "
       "sagemaker_libraries, sources)"},
      {"unknown sagemaker library", OneEntry({}, {R"("sagemaker_libraries": ["smp-v1"])"}),
       "extra.json:7:27: instances[0].sagemaker_libraries[0]: expected one of smddp-allreduce, "
       "smddp-allgather, smp-v2, got \"smp-v1\""},
      {"sagemaker library twice", OneEntry({}, {R"("sagemaker_libraries": ["smp-v2", "smp-v2"])"}),
       "extra.json:7:37: instances[0].sagemaker_libraries[1]: \"smp-v2\" is listed twice"},
      {"device names not words",
       OneEntry({{"gpu", R"("gpu": {"name": "G1", "mem_gib": 8, "device_names": [[]]})"}}),
       "extra.json:3:56: instances[0].gpu.device_names[0]: expected a non-empty array of words "
       "of the device name, got []"},
      {"device name word empty",
       OneEntry({{"gpu", R"("gpu": {"name": "G1", "mem_gib": 8, "device_names": [["G1", ""]]})"}}),
       "extra.json:3:63: instances[0].gpu.device_names[0][1]: expected a non-empty string, got "
       "\"\""},
      {"sagemaker libraries not a list", OneEntry({}, {R"("sagemaker_libraries": "smp-v2")"}),
       "extra.json:7:26: instances[0].sagemaker_libraries: expected an array of library names, "
       "got \"smp-v2\""},
      {"duplicate of a built-in type", OneEntry({{"name", R"("name": "p4d.24xlarge")"}}),
       "extra.json:2:11: instances[0].name: duplicate instance type \"p4d.24xlarge\" (already "
       "defined)"},
      {"missing topology", OneEntry({{"topology", ""}}),
       "extra.json:1:30: missing required field instances[0].topology"},
      {"zero gpu memory", OneEntry({}, {R"("gpu_mem_gib": 0)"}),
       "extra.json:7:18: instances[0].gpu_mem_gib: expected a number > 0 or null, got 0"},
      {"unknown topology kind", OneEntry({{"topology", R"("topology": {"kind": "ring"})"}}),
       "extra.json:5:24: instances[0].topology.kind: expected one of single, pcie, "
       "nvlink-cube-mesh, nvswitch, got \"ring\""},
      {"single with four gpus", OneEntry({{"topology", R"("topology": {"kind": "single"})"}}),
       "extra.json:5:24: instances[0].topology.kind: \"single\" needs gpus = 1, got 4"},
      {"pcie generation out of range",
       OneEntry({{"topology", R"("topology": {"kind": "pcie", "pcie_gen": 6})"}}),
       "extra.json:5:44: instances[0].topology.pcie_gen: expected an integer in [3, 5], got 6"},
      {"nvlink pairs on a pcie node",
       OneEntry({{"topology", R"("topology": {"kind": "pcie", "nvlink_pairs": []})"}}),
       "extra.json:5:48: instances[0].topology.nvlink_pairs: not allowed with kind \"pcie\""},
      {"nvlink sharp on a pcie node",
       OneEntry({{"topology", R"("topology": {"kind": "pcie", "nvlink_sharp": true})"}}),
       "extra.json:5:48: instances[0].topology.nvlink_sharp: not allowed with kind \"pcie\""},
      {"nvlink sharp as a string",
       OneEntry({{"topology", R"("topology": {"kind": "nvswitch", "nvlink_sharp": "yes"})"}}),
       "extra.json:5:52: instances[0].topology.nvlink_sharp: expected true or false, got "
       "\"yes\""},
      {"cube-mesh without pairs",
       OneEntry({{"topology", R"("topology": {"kind": "nvlink-cube-mesh"})"}}),
       "extra.json:5:15: missing required field instances[0].topology.nvlink_pairs (kind is "
       "nvlink-cube-mesh)"},
      {"pair beyond the gpu count",
       OneEntry({{"topology", MeshLine(R"({"a": 0, "b": 4, "links": 1})")}}),
       "extra.json:5:75: instances[0].topology.nvlink_pairs[0].b: expected an integer in [0, 3], "
       "got 4"},
      {"gpu linked to itself",
       OneEntry({{"topology", MeshLine(R"({"a": 2, "b": 2, "links": 1})")}}),
       "extra.json:5:61: instances[0].topology.nvlink_pairs[0]: a GPU cannot link to itself (a = "
       "b = 2)"},
      {"pair listed twice",
       OneEntry({{"topology",
                  MeshLine(R"({"a": 0, "b": 1, "links": 1}, {"a": 1, "b": 0, "links": 2})")}}),
       "extra.json:5:91: instances[0].topology.nvlink_pairs[1]: pair 0-1 already listed at "
       "instances[0].topology.nvlink_pairs[0]"},
      {"zero links", OneEntry({{"topology", MeshLine(R"({"a": 0, "b": 1, "links": 0})")}}),
       "extra.json:5:87: instances[0].topology.nvlink_pairs[0].links: expected an integer >= 1, "
       "got 0"},
      {"both net_gbps and nic_gbps",
       OneEntry({{"network", R"("network": {"net_gbps": 50, "nic_gbps": 50, "rdma": "none"})"}}),
       "extra.json:6:14: instances[0].network: give exactly one of net_gbps and nic_gbps"},
      {"efa without a nic count",
       OneEntry({{"network", R"("network": {"net_gbps": 50, "rdma": "efa"})"}}),
       "extra.json:6:14: instances[0].network: rdma_nics >= 1 is required when rdma is \"efa\""},
      {"rdma nics without rdma",
       OneEntry({{"network", R"("network": {"net_gbps": 50, "rdma": "none", "rdma_nics": 2})"}}),
       "extra.json:6:60: instances[0].network.rdma_nics: must be 0 when rdma is \"none\""},
      {"negative bandwidth",
       OneEntry({{"network", R"("network": {"net_gbps": -5, "rdma": "none"})"}}),
       "extra.json:6:27: instances[0].network.net_gbps: expected a number > 0, got -5"},
      {"spot discount above one", OneEntry({}, {R"("pricing": {"spot_discount": 1.5})"}),
       "extra.json:7:32: instances[0].pricing.spot_discount: expected a number in [0, 1] or null, "
       "got 1.5"},
      {"unknown interruption bucket",
       OneEntry({}, {R"("pricing": {"spot_interruption_bucket": "30%"})"}),
       "extra.json:7:43: instances[0].pricing.spot_interruption_bucket: expected one of <5%, "
       "5-10%, 10-15%, 15-20%, >20%, got \"30%\""},
      {"unknown source id", OneEntry({}, {R"("sources": {"*": ["skypilot", "my_notes"]})"}),
       "extra.json:7:33: instances[0].sources.*[1]: unknown source id \"my_notes\" (define it in "
       "sources.json or in this file's \"sources\")"},
      {"sources for an unknown field", OneEntry({}, {R"("sources": {"colour": ["skypilot"]})"}),
       "extra.json:7:15: instances[0].sources: \"colour\" does not name a field (one of: *, gpu, "
       "gpus, gpu_mem_gib, is_aws, topology, topology.kind, topology.nvlink_GBps_per_gpu_bidir, "
       "topology.nvlink_GBps_per_link_per_dir, topology.nvlink_pairs, topology.nvlink_sharp, "
       "topology.pcie_gen, pcie_GBps_per_dir, network, network.net_gbps, network.nic_gbps, "
       "network.rdma, "
       "network.rdma_nics, vcpus, ram_gib, pricing, pricing.on_demand_usd_hr, "
       "pricing.sagemaker_usd_hr, pricing.spot_discount, pricing.spot_interruption_bucket, "
       "pricing.capacity_block_usd_hr, sagemaker_libraries)"},
      {"capacity block date not a date",
       OneEntry(
           {},
           {R"("pricing": {"capacity_block_usd_hr": 9, "capacity_block_valid_until": "2025-13-01"})"}),
       "extra.json:7:73: instances[0].pricing.capacity_block_valid_until: expected a date "
       "\"YYYY-MM-DD\" or null, got \"2025-13-01\""},
      {"capacity block date that does not exist",
       OneEntry(
           {},
           {R"("pricing": {"capacity_block_usd_hr": 9, "capacity_block_valid_until": "2025-02-29"})"}),
       "extra.json:7:73: instances[0].pricing.capacity_block_valid_until: expected a date "
       "\"YYYY-MM-DD\" or null, got \"2025-02-29\""},
      {"capacity block price without its date",
       OneEntry({}, {R"("pricing": {"capacity_block_usd_hr": 9})"}),
       "extra.json:7:14: instances[0].pricing: give capacity_block_usd_hr and "
       "capacity_block_valid_until together (a block price without its date, or a date without a "
       "price)"},
      {"inline gpu reusing a known name",
       OneEntry({{"gpu", R"("gpu": {"name": "T4", "mem_gib": 16})"}}),
       "extra.json:3:19: instances[0].gpu.name: GPU \"T4\" is already defined; refer to it by "
       "name"},
      {"inline gpu without memory", OneEntry({{"gpu", R"("gpu": {"name": "G1"})"}}),
       "extra.json:3:10: missing required field instances[0].gpu.mem_gib"},
      {"gemm efficiency of zero",
       OneEntry({{"gpu", R"("gpu": {"name": "G1", "mem_gib": 8, "gemm_efficiency": 0})"}}),
       "extra.json:3:58: instances[0].gpu.gemm_efficiency: expected a number in (0, 1], got 0"},
      {"gemm efficiency above one",
       OneEntry({{"gpu", R"("gpu": {"name": "G1", "mem_gib": 8, "gemm_efficiency": 1.5})"}}),
       "extra.json:3:58: instances[0].gpu.gemm_efficiency: expected a number in [0, 1] or null, "
       "got 1.5"},
      {"conv efficiency of zero",
       OneEntry({{"gpu", R"("gpu": {"name": "G1", "mem_gib": 8, "conv_efficiency": 0,)"
                         R"( "conv_efficiency_provenance": "fitted"})"}}),
       "extra.json:3:58: instances[0].gpu.conv_efficiency: expected a number in (0, 1], got 0"},
      {"conv efficiency not a number",
       OneEntry({{"gpu", R"("gpu": {"name": "G1", "mem_gib": 8, "conv_efficiency": "high"})"}}),
       "extra.json:3:58: instances[0].gpu.conv_efficiency: expected a number in [0, 1] or null, "
       "got \"high\""},
      {"nvlink efficiency above one",
       OneEntry({{"gpu", R"("gpu": {"name": "G1", "mem_gib": 8, "nvlink_efficiency": 1.2})"}}),
       "extra.json:3:60: instances[0].gpu.nvlink_efficiency: expected a number in [0, 1] or "
       "null, got 1.2"},
      {"network efficiency without provenance",
       OneEntry(
           {{"network",
             R"("network": {"net_gbps": 50, "rdma": "efa", "rdma_nics": 1, "efficiency": 0.9})"}}),
       "extra.json:6:76: instances[0].network.efficiency: needs efficiency_provenance (where the "
       "figure comes from)"},
      {"network efficiency of zero",
       OneEntry(
           {{"network",
             R"("network": {"net_gbps": 50, "rdma": "efa", "rdma_nics": 1, "efficiency": 0})"}}),
       "extra.json:6:76: instances[0].network.efficiency: expected a number in (0, 1], got 0"},
      {"network efficiency as a string",
       OneEntry(
           {{"network",
             R"("network": {"net_gbps": 50, "rdma": "efa", "rdma_nics": 1, "efficiency": "0.9"})"}}),
       "extra.json:6:76: instances[0].network.efficiency: expected a number in [0, 1] or null, "
       "got \"0.9\""},
      {"duplicate type within the file",
       R"({"version": 1, "instances": [
  {"name": "a", "gpu": "T4", "gpus": 1, "topology": {"kind": "single"},
   "network": {"net_gbps": 1, "rdma": "none"}},
  {"name": "a", "gpu": "T4", "gpus": 1, "topology": {"kind": "single"},
   "network": {"net_gbps": 1, "rdma": "none"}}]})",
       "extra.json:4:12: instances[1].name: duplicate instance type \"a\" (already defined)"},
      {"duplicate gpu", R"({"version": 1, "gpus": [{"name": "T4", "mem_gib": 16}]})",
       "extra.json:1:34: gpus[0].name: duplicate GPU \"T4\" (already defined)"},
      {"source id defined twice", R"({"version": 1, "sources": {"skypilot": "again"}})",
       "extra.json:1:28: sources.skypilot: source id already defined"},
      {"missing version", R"({"instances": []})", "extra.json:1:1: missing required field version"},
      {"future version", R"({"version": 2})",
       "extra.json:1:13: version: expected an integer in [1, 1], got 2"},
      {"instances not an array", R"({"version": 1, "instances": {}})",
       "extra.json:1:29: instances: expected an array, got object"},
      {"malformed JSON", R"({"version": 1,})",
       "extra.json:1:15: invalid JSON: expected a string key after ',', got '}' (no trailing "
       "commas in JSON)"},
      {"fabric oversubscription below 1",
       R"({"version": 1, "fabrics": [{"name": "f", "oversubscription": 0.5}]})",
       "extra.json:1:62: fabrics[0].oversubscription: expected a number >= 1 or null, got 0.5"},
      {"fabric of a built-in name", R"({"version": 1, "fabrics": [{"name": "aws-ultracluster"}]})",
       "extra.json:1:37: fabrics[0].name: duplicate fabric \"aws-ultracluster\" (already "
       "defined)"},
      {"fabric with an unknown field", R"({"version": 1, "fabrics": [{"name": "f", "tiers": 3}]})",
       "extra.json:1:42: unknown field fabrics[0].tiers (known: name, nodes_per_leaf, "
       "leaves_per_pod, oversubscription, pod_oversubscription, sources, notes)"},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.what);
    Catalog catalog = Builtin();
    Status s = catalog.AddFromString(c.text, "extra.json");
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.code(), Status::Code::kInvalidInput);
    EXPECT_EQ(s.message(), c.message) << c.text;
  }
}

}  // namespace
}  // namespace trainsim
