// nccl-tests rows beside the simulated collective, the network refitted from them, and the
// refitted profile in a scenario (observe/nccl_compare.h, core/scenario.h AttachProfile).
#include "observe/nccl_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "core/scenario.h"
#include "tests/test_util.h"

namespace trainsim::observe {
namespace {

const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/observe/data/";

NcclTestsRun P5Run() {
  Expected<NcclTestsRun> run = LoadNcclTests(kData + "nccl-tests-p5-2node.txt", std::nullopt);
  EXPECT_TRUE(run.ok()) << run.status().message();
  return run.ok() ? *run : NcclTestsRun();
}

const InstanceType& Type(const std::string& name) {
  static const Catalog catalog = test::BuiltinCatalog();
  return *catalog.Find(name);
}

// The README's 2 x p5 rows on the catalog's p5 (whose network efficiency, 0.94, was fitted to
// these same rows in the validation corpus): the bandwidth rows within 10%.
TEST(NcclCompare, RowsBesideTheSimulatedAllReduce) {
  const NcclTestsRun run = P5Run();
  Expected<std::vector<ComparedRow>> rows = CompareNccl(run, Type("p5.48xlarge"), {});
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), run.rows.size());
  for (const ComparedRow& r : *rows) {
    if (r.measured_busbw_GBps == 0) {  // 8 and 128 bytes: nccl-tests prints 0.00
      EXPECT_FALSE(r.error);
      continue;
    }
    ASSERT_TRUE(r.error);
    EXPECT_NEAR(*r.error, r.simulated_busbw_GBps / r.measured_busbw_GBps - 1, 1e-12);
    if (r.bytes >= kNetworkFitMinBytes) {
      EXPECT_LT(std::fabs(*r.error), 0.10) << r.bytes;
    }
  }
  ASSERT_TRUE(MeanFitError(*rows));
  EXPECT_LT(*MeanFitError(*rows), 0.06);
}

// A refit from those rows lands near the corpus fit (0.94, fitted without a latency refit) and
// NCCL's protocol latency scale below the model's 2.75 (the small rows ran 40-70% faster than
// simulated): the mean error over every row with a bandwidth falls; a slower network in the
// measurement gives a lower efficiency.
TEST(NcclCompare, RefitFindsTheNetworkEfficiency) {
  const NcclTestsRun run = P5Run();
  Expected<NetworkFit> fit = RefitNetwork({run}, Type("p5.48xlarge"), {});
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->instance, "p5.48xlarge");
  EXPECT_EQ(fit->nodes, 2);
  EXPECT_NEAR(fit->efficiency, 0.94, 0.05);
  ASSERT_TRUE(fit->latency_scale.has_value());
  EXPECT_LT(*fit->latency_scale, 2.75);
  auto all_rows_error = [](const std::vector<ComparedRow>& rows) {
    double sum = 0;
    int n = 0;
    for (const ComparedRow& r : rows) {
      if (r.error) sum += std::fabs(*r.error), ++n;
    }
    return sum / n;
  };
  Expected<std::vector<ComparedRow>> before = CompareNccl(run, Type("p5.48xlarge"), {});
  ASSERT_TRUE(before.ok());
  InstanceType refitted = Type("p5.48xlarge");
  refitted.network_efficiency = fit->efficiency;
  refitted.protocol_latency_scale = fit->latency_scale;
  Expected<std::vector<ComparedRow>> after = CompareNccl(run, refitted, {});
  ASSERT_TRUE(after.ok());
  EXPECT_LT(all_rows_error(*after), all_rows_error(*before) / 2);
  NcclTestsRun slow = run;  // the same run with 30% less bus bandwidth on every row
  for (NcclRow& r : slow.rows) r.busbw_GBps *= 0.7;
  Expected<NetworkFit> slower = RefitNetwork({slow}, Type("p5.48xlarge"), {});
  ASSERT_TRUE(slower.ok());
  EXPECT_LT(slower->efficiency, fit->efficiency - 0.15);
  EXPECT_NE(fit->source.find("3 rows >= 128 MiB"), std::string::npos) << fit->source;
  EXPECT_NE(fit->source.find("latency: 4 rows below 128 MiB"), std::string::npos) << fit->source;
}

TEST(NcclCompare, RefusesARunOfOtherHardware) {
  const NcclTestsRun run = P5Run();
  EXPECT_EQ(CompareNccl(run, Type("p4d.24xlarge"), {}).status().message(),
            run.file +
                ": measured on NVIDIA H100 80GB HBM3, but p4d.24xlarge has A100-SXM4-40GB: give "
                "the instance type it ran on");
  NcclTestsRun one = run;
  one.nodes = 1;
  one.ranks = 8;
  EXPECT_EQ(RefitNetwork({one}, Type("p5.48xlarge"), {}).status().message(),
            "no run over 2 or more nodes with rows of 128 MiB or more: a network refit needs the "
            "bandwidth of a multi-node collective (one node measures NVLink, which "
            "trainsim-calibrate's profile carries)");
  NcclTestsRun uneven = run;
  uneven.ranks = 15;
  EXPECT_EQ(CompareNccl(uneven, Type("p5.48xlarge"), {}).status().message(),
            run.file + ": 15 ranks on 2 hosts, not the same number on each: not simulated");
  NcclTestsRun sendrecv = run;
  sendrecv.op = NcclOp::kSendRecv;
  EXPECT_EQ(CompareNccl(sendrecv, Type("p5.48xlarge"), {}).status().message(),
            run.file +
                ": sendrecv_perf is not simulated as nccl-tests runs it (all_reduce, "
                "all_gather, reduce_scatter and alltoall are)");
}

// A refitted profile sets the scenario's network efficiency, on its instance type only.
TEST(NcclCompare, TheRefittedProfileReachesTheScenario) {
  auto profile = std::make_shared<HardwareProfile>();
  profile->gpu = "H100-SXM5-80GB";
  profile->network = NetworkFit{"p5.48xlarge", 0.81, 2, 0.01, "nccl.txt", 0.7, 0.1};
  Scenario s;
  s.instance = Type("p5.48xlarge");
  ASSERT_TRUE(AttachProfile(profile, "refit.json", &s).ok());
  EXPECT_DOUBLE_EQ(*s.instance.network_efficiency, 0.81);
  EXPECT_DOUBLE_EQ(*s.instance.protocol_latency_scale, 0.7);
  EXPECT_EQ(s.instance.network_efficiency_provenance, "refitted: nccl.txt (refit.json)");
  // The fit is written and read back with the profile.
  Expected<HardwareProfile> back =
      ParseHardwareProfile(HardwareProfileToJson(*profile), "refit.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(*back->network->latency_scale, 0.7);
  EXPECT_DOUBLE_EQ(back->network->latency_mean_error, 0.1);
  Scenario other;
  other.instance = Type("p5.48xlarge");
  other.instance.name = "dgx-h100-like";
  EXPECT_EQ(AttachProfile(profile, "refit.json", &other).message(),
            "refit.json: the profile's network was refitted on p5.48xlarge, but the scenario's "
            "instance is dgx-h100-like: a network fit applies to its instance type");
}

}  // namespace
}  // namespace trainsim::observe

namespace trainsim::observe {
namespace {

// The refitted network goes into a calibration's profile (of the same GPU) or a new one.
TEST(NcclCompare, ProfileWithNetworkKeepsACalibrationOfTheSameGpu) {
  const InstanceType& p4d = *test::BuiltinCatalog().Find("p4d.24xlarge");
  NcclTestsRun run;
  run.gpu = "NVIDIA A100-SXM4-40GB";
  run.ranks = 16;
  run.nodes = 2;
  NetworkFit fit;
  fit.instance = p4d.name;
  fit.efficiency = 0.8;
  fit.nodes = 2;
  Expected<HardwareProfile> fresh = ProfileWithNetwork(nullptr, "", {run}, p4d, fit);
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  EXPECT_EQ(fresh->gpu, "A100-SXM4-40GB");
  EXPECT_EQ(fresh->provenance.backend, "nccl-tests");
  EXPECT_EQ(fresh->provenance.devices, 8);
  ASSERT_TRUE(fresh->network.has_value());
  EXPECT_DOUBLE_EQ(fresh->network->efficiency, 0.8);

  HardwareProfile calibrated;
  calibrated.gpu = "A100-SXM4-40GB";
  calibrated.provenance.backend = "cuda";
  Expected<HardwareProfile> kept = ProfileWithNetwork(&calibrated, "a100.json", {run}, p4d, fit);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->provenance.backend, "cuda");
  EXPECT_DOUBLE_EQ(kept->network->efficiency, 0.8);

  calibrated.gpu = "H100-SXM5-80GB";
  Expected<HardwareProfile> other = ProfileWithNetwork(&calibrated, "h100.json", {run}, p4d, fit);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(),
            "h100.json: measured H100-SXM5-80GB, but p4d.24xlarge has A100-SXM4-40GB");
}

}  // namespace
}  // namespace trainsim::observe
