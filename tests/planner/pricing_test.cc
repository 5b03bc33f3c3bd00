#include "planner/job/pricing.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace trainsim::planner {
namespace {

// A p4d.24xlarge scenario (8 GPUs per node) with the layout given.
Scenario Layout(int nodes, int tp, int pp, int dp, int zero_stage = 0) {
  Expected<PlanningScenario> s = ParsePlanningScenario(
      R"({"model": {"layers": 32, "hidden": 1024, "heads": 16, "ffn_hidden": 4096,
                    "seq_len": 1024, "vocab": 32000},
          "training": {"global_batch": 512, "tokens": 2e9},
          "cluster": {"instance": "p4d.24xlarge"}})",
      "layout.json", test::BuiltinCatalog());
  EXPECT_TRUE(s.ok()) << s.status().message();
  Scenario out = s->scenario;
  out.cluster.nodes = nodes;
  out.parallel.tp = tp;
  out.parallel.pp = pp;
  out.parallel.dp = dp;
  out.parallel.zero_stage = zero_stage;
  return out;
}

// rank = (stage x dp + replica) x tp + tp_rank on nodes of 8 GPUs.
TEST(ElasticGroups, FollowTheRankLayout) {
  // tp 8 pp 32 dp 4: each stage's 32 GPUs are 4 nodes, one replica each; a group is the 32
  // nodes holding one replica's stages.
  EXPECT_EQ(ElasticGroups(Layout(128, 8, 32, 4)), 4);
  EXPECT_EQ(ElasticGroups(Layout(2, 1, 1, 16)), 2);  // 8 replicas per node
  EXPECT_EQ(ElasticGroups(Layout(4, 16, 1, 2)), 2);  // a replica spans 2 nodes
  EXPECT_EQ(ElasticGroups(Layout(8, 2, 4, 8)), 2);   // 4 replicas' stage slices per node
  // tp 2 pp 4 dp 4: a stage's 8 GPUs fill one node, so every node holds a stage of every
  // replica: one loss takes them all.
  EXPECT_EQ(ElasticGroups(Layout(4, 2, 4, 4)), 0);
  EXPECT_EQ(ElasticGroups(Layout(1, 1, 1, 8)), 0);      // one node: one group
  EXPECT_EQ(ElasticGroups(Layout(2, 1, 1, 16, 1)), 0);  // ZeRO-1 shards the optimizer state
  Scenario experts = Layout(2, 1, 1, 16);
  experts.parallel.ep = 2;
  EXPECT_EQ(ElasticGroups(experts), 0);
}

TEST(ElasticGroups, SpotElasticInputsCarryThePauses) {
  const Scenario s = Layout(2, 1, 1, 16);
  SearchConfig q;
  q.checkpoint_bytes = 1.6e11;
  q.elastic_reconfigure_s = 5;
  std::optional<PricingInputs> in = MakeJobInputs(s, q, 2.5, 1000, Pricing::kSpotElastic);
  ASSERT_TRUE(in.has_value());
  EXPECT_EQ(in->job.elastic_groups, 2);
  EXPECT_DOUBLE_EQ(in->job.elastic_loss_pause_s, 2.5 + 5);  // the step again, then rebuild
  // A joining node receives 8 replicas' worth (dp / nodes) over its network.
  const double node_Bps = s.instance.nics * s.instance.nic_gbps / 8 * 1e9;
  EXPECT_DOUBLE_EQ(in->job.elastic_join_pause_s, 1.6e11 * 8 / node_Bps + 5);
  EXPECT_FALSE(in->job.checkpoint_on_notice);
  EXPECT_EQ(in->price_usd_hr, PriceUsdHr(s.instance, Pricing::kSpot, q));
  EXPECT_FALSE(MakeJobInputs(Layout(2, 1, 1, 16, 1), q, 2.5, 1000, Pricing::kSpotElastic));
  EXPECT_EQ(MakeJobInputs(s, q, 2.5, 1000, Pricing::kSpot)->job.elastic_groups, 0);
}

// Named storage, the image pull and streaming, by hand: 2 p4d nodes (their network far above
// the storage rates below), 1.6e11 checkpoint bytes, a 4e9-byte dataset (2e9 tokens of 2
// bytes), 1000 steps of 2.5 s.
TEST(NamedStorage, SetsTheWritesReadsPullAndStream) {
  const Scenario s = Layout(2, 1, 1, 16);
  SearchConfig q;
  q.checkpoint_bytes = 1.6e11;
  q.provisioning_s = 600;
  q.restart_s = 300;
  StorageConfig fsx;  // persistent-2 at 250 MB/s/TiB x 4 TiB = 1 GB/s both ways
  fsx.MBps_per_TiB = 250;
  fsx.capacity_TiB = 4;
  q.storage = fsx;
  EXPECT_DOUBLE_EQ(NamedStorageBps(fsx, true), 1e9);
  std::optional<PricingInputs> in = MakeJobInputs(s, q, 2.5, 1000, Pricing::kOnDemand);
  ASSERT_TRUE(in.has_value());
  EXPECT_DOUBLE_EQ(in->job.checkpoint_write_s, 160);
  EXPECT_DOUBLE_EQ(*in->job.checkpoint_read_s, 160);
  EXPECT_DOUBLE_EQ(in->job.restart_s, 300 + 160);
  EXPECT_DOUBLE_EQ(in->job.download_s, 4e9 / (1e9 / 2));  // each node its share of 1 GB/s
  EXPECT_DOUBLE_EQ(in->job.work_s, 2500);

  StorageConfig s3;  // one prefix, 8 MiB parts: 3,500 x 8 MiB out, 5,500 x 8 MiB in
  s3.kind = StorageKind::kS3;
  q.storage = s3;
  q.image_bytes = 2e10;
  in = MakeJobInputs(s, q, 2.5, 1000, Pricing::kOnDemand);
  const double part = 8.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(in->job.checkpoint_write_s, 1.6e11 / (3500 * part));
  EXPECT_DOUBLE_EQ(*in->job.checkpoint_read_s, 1.6e11 / (5500 * part));
  const double pull_s = 2e10 / (s.instance.nics * s.instance.nic_gbps / 8 * 1e9);
  EXPECT_DOUBLE_EQ(in->job.provisioning_s, 600 + pull_s);
  EXPECT_DOUBLE_EQ(in->job.restart_s, 300 + pull_s + 1.6e11 / (5500 * part));

  StorageConfig slow;  // scratch at the user's 1 MB/s/TiB x 1 TiB: 1 MB/s
  slow.deployment = FsxDeployment::kScratch2;
  slow.MBps_per_TiB = 1;
  slow.capacity_TiB = 1;
  q.storage = slow;
  q.image_bytes.reset();
  q.stream_dataset = true;
  in = MakeJobInputs(s, q, 2.5, 1000, Pricing::kOnDemand);
  EXPECT_EQ(in->job.download_s, 0);
  EXPECT_DOUBLE_EQ(in->job.work_s, 1000 * (4e9 / 1000 / 1e6));  // 4 s of reading per step
  slow.MBps_per_TiB = 100;
  q.storage = slow;
  EXPECT_DOUBLE_EQ(MakeJobInputs(s, q, 2.5, 1000, Pricing::kOnDemand)->job.work_s, 2500);
  const std::vector<std::string> assumed = JobAssumptions(s, q);
  EXPECT_NE(std::find_if(assumed.begin(), assumed.end(),
                         [](const std::string& a) {
                           return a.rfind("the dataset is streamed during training", 0) == 0;
                         }),
            assumed.end());
}

}  // namespace
}  // namespace trainsim::planner
