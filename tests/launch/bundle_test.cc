// MakeBundle on real plans (tests/launch/data) and on variants of them: what
// each file says for a data-parallel plan, a tp/pp plan under managed spot,
// and each SageMaker distribution; determinism; rejected names.
#include "launch/bundle.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/test_util.h"

namespace trainsim::launch {

using trainsim::test::ReadFile;
namespace {

using nlohmann::json;

const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/launch/data/";
// small.plan.json: gpt-like 8 layers on 1 x p4d.24xlarge, tp 1 pp 1 dp 8, ZeRO-1, EC2 spot.
const std::string kSmall = kData + "small.plan.json";
// tp-pp-spot.plan.json (from tp-pp-spot.json): 2 x p4d.24xlarge, tp 2 pp 2 dp 4, ZeRO-1,
// micro batch 2, full recompute, interleaved x2, sagemaker-spot.
const std::string kTpPpSpot = kData + "tp-pp-spot.plan.json";

LaunchPlan Load(const std::string& path) {
  Expected<LaunchPlan> p = LoadPlanFile(path, test::BuiltinCatalog());
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : LaunchPlan();
}

json& Config(json& plan) {
  return plan["candidates"][plan["recommendation"]["candidate"].get<int>()]["config"];
}

// The small plan with `edit` applied to its JSON.
LaunchPlan Variant(const std::function<void(json&)>& edit) {
  json j = json::parse(ReadFile(kSmall));
  edit(j);
  Expected<LaunchPlan> p = ParsePlan(j.dump(), "p.json", test::BuiltinCatalog());
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : LaunchPlan();
}

LaunchOptions WithS3() {
  LaunchOptions o;
  o.job_name = "job-1";
  o.s3_uri = "s3://my-bucket/runs";
  return o;
}

Bundle Make(const LaunchPlan& plan, const LaunchOptions& o = WithS3()) {
  Expected<Bundle> b = MakeBundle(plan, o);
  EXPECT_TRUE(b.ok()) << b.status().message();
  return b.ok() ? *b : Bundle();
}

const BundleFile* Find(const Bundle& b, const std::string& path) {
  for (const BundleFile& f : b.files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

std::string File(const Bundle& b, const std::string& path) {
  const BundleFile* f = Find(b, path);
  EXPECT_NE(f, nullptr) << path << " missing";
  return f ? f->content : "";
}

json Request(const Bundle& b) { return json::parse(File(b, "sagemaker/create_training_job.json")); }

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(MakeBundle, WritesEveryFileInAFixedOrder) {
  const Bundle b = Make(Load(kTpPpSpot));
  std::vector<std::string> paths;
  for (const BundleFile& f : b.files) paths.push_back(f.path);
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "README.md", "sagemaker/create_training_job.json", "sagemaker/launch.py",
                       "torchrun.sh", "mpirun.sh", "hostfile", "slurm.sbatch",
                       "hyperpod/check-slurm.sh", "hyperpod/slurm.sbatch", "hyperpod/check-eks.sh",
                       "hyperpod/pytorchjob.json", "deepspeed_config.json", "megatron_args.sh"}));
  for (const char* script :
       {"sagemaker/launch.py", "torchrun.sh", "mpirun.sh", "slurm.sbatch", "hyperpod/slurm.sbatch",
        "hyperpod/check-slurm.sh", "hyperpod/check-eks.sh"}) {
    EXPECT_TRUE(Find(b, script)->executable) << script;
  }
  EXPECT_FALSE(Find(b, "hostfile")->executable);
}

TEST(MakeBundle, TargetsChooseTheFiles) {
  LaunchOptions o = WithS3();
  o.targets = {Target::kSlurm};
  const Bundle b = Make(Load(kSmall), o);
  EXPECT_NE(Find(b, "slurm.sbatch"), nullptr);
  EXPECT_EQ(Find(b, "sagemaker/launch.py"), nullptr);
  EXPECT_EQ(Find(b, "torchrun.sh"), nullptr);
  EXPECT_NE(Find(b, "deepspeed_config.json"), nullptr);
  o.s3_uri.clear();  // not needed without SageMaker
  EXPECT_TRUE(MakeBundle(Load(kSmall), o).ok());
}

TEST(MakeBundle, SameInputsSameBytes) {
  const LaunchPlan plan = Load(kTpPpSpot);
  const Bundle a = Make(plan), b = Make(plan);
  ASSERT_EQ(a.files.size(), b.files.size());
  for (size_t i = 0; i < a.files.size(); ++i) {
    EXPECT_EQ(a.files[i].path, b.files[i].path);
    EXPECT_EQ(a.files[i].content, b.files[i].content) << a.files[i].path;
  }
}

// SageMaker refuses a MaxRuntimeInSeconds above 28 days: a longer plan's
// request asks for 28 days, and the bundle says how to go on.
TEST(SagemakerRequest, RuntimeIsCappedAtTwentyEightDays) {
  LaunchPlan plan = Load(kSmall);
  plan.expected_hours = 1000;
  Expected<Bundle> b = MakeBundle(plan, WithS3());
  ASSERT_TRUE(b.ok()) << b.status().message();
  const json r = Request(*b);
  EXPECT_EQ(r["StoppingCondition"]["MaxRuntimeInSeconds"], 28 * 24 * 3600);
  ASSERT_EQ(b->warnings.size(), 1u);
  EXPECT_EQ(b->warnings[0],
            "the plan expects 1000.00 h, more than SageMaker's 28-day MaxRuntimeInSeconds: the "
            "request asks for 28 days; continue with further jobs that resume from the "
            "checkpoints in S3");
  EXPECT_NE(b->files[0].content.find(b->warnings[0]), std::string::npos);  // README.md
  plan.expected_hours = 10;
  EXPECT_TRUE(MakeBundle(plan, WithS3())->warnings.empty());
}

// The small plan is data parallel, priced EC2 spot: the SageMaker request is on demand.
TEST(SagemakerRequest, DataParallelOnDemand) {
  const LaunchPlan plan = Load(kSmall);
  const json r = Request(Make(plan));
  EXPECT_EQ(r["TrainingJobName"], "job-1");
  EXPECT_EQ(r["ResourceConfig"]["InstanceType"], "ml.p4d.24xlarge");
  EXPECT_EQ(r["ResourceConfig"]["InstanceCount"], 1);
  EXPECT_EQ(r["ResourceConfig"]["VolumeSizeInGB"], 100);
  EXPECT_EQ(r["AlgorithmSpecification"]["TrainingImage"], kImagePlaceholder);
  EXPECT_EQ(r["RoleArn"], kRolePlaceholder);
  EXPECT_EQ(r["EnableManagedSpotTraining"], false);
  EXPECT_FALSE(r.contains("CheckpointConfig"));
  EXPECT_FALSE(r["StoppingCondition"].contains("MaxWaitTimeInSeconds"));
  // 1.5 x 0.743 h, rounded up to whole hours.
  EXPECT_EQ(r["StoppingCondition"]["MaxRuntimeInSeconds"], 7200);
  EXPECT_EQ(r["OutputDataConfig"]["S3OutputPath"], "s3://my-bucket/runs/output");
  const json& hp = r["HyperParameters"];
  const json& config = plan.plan["recommendation"]["config"];
  for (const char* k : {"tp", "pp", "dp", "zero_stage", "micro_batch"}) {
    EXPECT_EQ(hp[k], std::to_string(config[k].get<int>())) << k;
  }
  EXPECT_EQ(hp["global_batch"], "64");
  EXPECT_EQ(hp["gradient_accumulation_steps"], "2");  // 64 / (8 x 4)
  EXPECT_EQ(hp["steps"], "30518");
  EXPECT_EQ(hp["sagemaker_program"], "train.py");
  EXPECT_EQ(hp["sagemaker_submit_directory"], "s3://my-bucket/runs/source/sourcedir.tar.gz");
}

TEST(SagemakerRequest, HyperparametersAreStringsWithinTheApiLimits) {
  for (const std::string& path : {kSmall, kTpPpSpot}) {
    const json hp = Request(Make(Load(path)))["HyperParameters"];
    EXPECT_LE(hp.size(), 100u);
    for (const auto& [key, value] : hp.items()) {
      EXPECT_TRUE(value.is_string()) << key << " = " << value;
      EXPECT_LE(key.size(), 256u);
      EXPECT_LE(value.get<std::string>().size(), 256u);
    }
  }
}

TEST(SagemakerRequest, ManagedSpotWaitsAtLeastTheRuntimeAndCheckpointsToS3) {
  const LaunchPlan plan = Load(kTpPpSpot);
  LaunchOptions o = WithS3();
  o.s3_uri = "s3://my-bucket/runs/";  // a trailing slash is not doubled
  o.role_arn = "arn:aws:iam::123456789012:role/SageMaker";
  o.image_uri = "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1";
  const json r = Request(Make(plan, o));
  EXPECT_EQ(r["EnableManagedSpotTraining"], true);
  const json& stop = r["StoppingCondition"];
  EXPECT_EQ(stop["MaxRuntimeInSeconds"], *plan.max_runtime_s);
  EXPECT_EQ(stop["MaxWaitTimeInSeconds"], *plan.max_wait_s);
  EXPECT_GE(stop["MaxWaitTimeInSeconds"].get<int64_t>(),
            stop["MaxRuntimeInSeconds"].get<int64_t>());
  EXPECT_EQ(r["CheckpointConfig"], json({{"S3Uri", "s3://my-bucket/runs/checkpoints"},
                                         {"LocalPath", "/opt/ml/checkpoints"}}));
  EXPECT_EQ(r["RoleArn"], o.role_arn);
  EXPECT_EQ(r["AlgorithmSpecification"]["TrainingImage"], o.image_uri);
  EXPECT_EQ(r["HyperParameters"]["checkpoint_interval_s"], "609");
  EXPECT_EQ(r["ResourceConfig"]["InstanceCount"], 2);
}

TEST(SagemakerRequest, SpotOnlyUnderSagemakerSpotPricing) {
  const LaunchPlan spot =
      Variant([](json& j) { j["recommendation"]["pricing"] = "sagemaker-spot"; });
  const json r = Request(Make(spot));
  EXPECT_EQ(r["EnableManagedSpotTraining"], true);
  EXPECT_EQ(r["StoppingCondition"]["MaxWaitTimeInSeconds"], 3600);
  EXPECT_TRUE(r.contains("CheckpointConfig"));
  const LaunchPlan od = Variant([](json& j) { j["recommendation"]["pricing"] = "sagemaker"; });
  EXPECT_FALSE(Request(Make(od)).contains("CheckpointConfig"));
  EXPECT_TRUE(Contains(File(Make(Load(kSmall)), "README.md"),
                       "The plan priced EC2 spot; the SageMaker request is on demand."));
  // Elastic spot: no launcher here keeps training on the replicas left; the bundle says so.
  const Bundle elastic =
      Make(Variant([](json& j) { j["recommendation"]["pricing"] = "spot-elastic"; }));
  EXPECT_TRUE(Contains(File(elastic, "README.md"),
                       "The plan priced EC2 spot; the SageMaker request is on demand."));
  EXPECT_TRUE(
      std::any_of(elastic.warnings.begin(), elastic.warnings.end(), [](const std::string& w) {
        return w.rfind("spot-elastic: the plan assumes the job keeps training on the replicas left",
                       0) == 0;
      }));
  EXPECT_FALSE(Contains(File(Make(Load(kSmall)), "README.md"), "spot-elastic"));
}

// Reserved capacity: a training plan's ARN in the request, a Capacity Block's id in the
// README's launch command, placeholders until they are given.
TEST(SagemakerRequest, ReservedCapacityTravelsWithTheBundle) {
  const LaunchPlan plan =
      Variant([](json& j) { j["recommendation"]["pricing"] = "training-plan"; });
  Bundle b = Make(plan);
  EXPECT_EQ(Request(b)["ResourceConfig"]["TrainingPlanArn"], "REPLACE_WITH_TRAINING_PLAN_ARN");
  EXPECT_TRUE(Contains(File(b, "README.md"), "`REPLACE_WITH_TRAINING_PLAN_ARN` in the request"));
  EXPECT_TRUE(std::any_of(b.warnings.begin(), b.warnings.end(), [](const std::string& w) {
    return w.rfind("training-plan: sagemaker/create_training_job.json runs on the plan", 0) == 0;
  }));
  LaunchOptions o = WithS3();
  o.training_plan_arn = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/my-plan-1";
  EXPECT_EQ(Request(Make(plan, o))["ResourceConfig"]["TrainingPlanArn"], o.training_plan_arn);
  EXPECT_FALSE(Request(Make(Load(kSmall)))["ResourceConfig"].contains("TrainingPlanArn"));

  const LaunchPlan block = Variant([](json& j) {
    j["recommendation"]["pricing"] = "capacity-block";
    json& priced = j["candidates"][j["recommendation"]["candidate"].get<int>()]["pricing"];
    json option = priced[0];
    option["pricing"] = "capacity-block";
    option["blocks"] = {{"kind", "capacity block"}, {"days", {3}}};
    priced.push_back(option);
  });
  EXPECT_EQ(block.block_days, std::vector<int>{3});
  b = Make(block);
  const std::string readme = File(b, "README.md");
  EXPECT_TRUE(Contains(readme, "- Capacity Block: buy 3 days for 1 x p4d.24xlarge"));
  EXPECT_TRUE(Contains(readme,
                       "CapacityReservationTarget={CapacityReservationId="
                       "REPLACE_WITH_CAPACITY_BLOCK_ID}"));
  EXPECT_FALSE(Request(b)["ResourceConfig"].contains("TrainingPlanArn"));
  o.capacity_reservation_id = "cr-0123456789abcdef0";
  EXPECT_TRUE(
      Contains(File(Make(block, o), "README.md"), "CapacityReservationId=cr-0123456789abcdef0}"));
  o.capacity_reservation_id = "cr-x";
  EXPECT_NE(MakeBundle(block, o).status().message().find("--capacity-reservation-id"),
            std::string::npos);
}

TEST(SagemakerRequest, AWarmPoolKeepsItsInstances) {
  const LaunchPlan pool = Variant([](json& j) {
    j["recommendation"]["pricing"] = "sagemaker";
    j["scenario_json"]["search"]["warm_pool_keep_alive_s"] = 1800;
  });
  const Bundle b = Make(pool);
  EXPECT_EQ(Request(b)["ResourceConfig"]["KeepAlivePeriodInSeconds"], 1800);
  EXPECT_TRUE(Contains(File(b, "sagemaker/launch.py"), "keep_alive_period_in_seconds=1800,"));
  // Not under managed spot: SageMaker's warm pools do not run spot.
  const LaunchPlan spot = Variant([](json& j) {
    j["recommendation"]["pricing"] = "sagemaker-spot";
    j["scenario_json"]["search"]["warm_pool_keep_alive_s"] = 1800;
  });
  EXPECT_FALSE(Request(Make(spot))["ResourceConfig"].contains("KeepAlivePeriodInSeconds"));
}

TEST(SagemakerRequest, VolumeFromTheCheckpointOrTheOption) {
  const LaunchPlan big = Variant([](json& j) {
    j["scenario_json"]["search"]["checkpoint_bytes"] = 120.5 * 1024 * 1024 * 1024;
  });
  EXPECT_EQ(Request(Make(big))["ResourceConfig"]["VolumeSizeInGB"], 241);  // 2 x 120.5 GiB
  LaunchOptions o = WithS3();
  o.volume_gb = 500;
  EXPECT_EQ(Request(Make(big, o))["ResourceConfig"]["VolumeSizeInGB"], 500);
}

struct DistributionCase {
  const char* what;
  std::function<void(json&)> edit;
  std::vector<std::string> expected;  // in launch.py
  std::vector<std::string> absent;
};

TEST(SagemakerScript, DistributionFollowsThePlan) {
  const DistributionCase kCases[] = {
      {"pure data parallel on p4d: SMDDP",
       [](json&) {},
       {"from sagemaker.pytorch import PyTorch",
        "\"smdistributed\": {\n            \"dataparallel\": {\n                \"enabled\": "
        "True,"},
       {"modelparallel", "torch_distributed", "\"mpi\""}},
      {"data parallel on p5.48xlarge: SMDDP does not run there, torchrun",
       [](json& j) { Config(j)["instance"] = "p5.48xlarge"; },
       {"\"torch_distributed\": {\n            \"enabled\": True,"},
       {"smdistributed"}},
      {"p3.16xlarge without ZeRO: SMDDP",
       [](json& j) {
         Config(j)["instance"] = "p3.16xlarge";
         Config(j)["zero_stage"] = 0;
         j["scenario_json"]["training"]["precision"] = "fp16";
       },
       {"\"dataparallel\""},
       {"torch_distributed"}},
      {"p3.16xlarge with ZeRO-1: SMDDP's AllGather is P4 only, torchrun",
       [](json& j) {
         Config(j)["instance"] = "p3.16xlarge";
         j["scenario_json"]["training"]["precision"] = "fp16";
       },
       {"\"torch_distributed\""},
       {"smdistributed"}},
      {"Horovod: MPI",
       [](json& j) {
         Config(j)["zero_stage"] = 0;
         j["scenario_json"]["parallel"] = {{"dp_fusion", "horovod"}};
       },
       {"\"mpi\": {\n            \"enabled\": True,\n            \"processes_per_host\": 8,"},
       {"smdistributed", "torch_distributed"}},
      {"parameter servers: the TensorFlow estimator",
       [](json& j) {
         Config(j)["zero_stage"] = 0;
         j["scenario_json"]["parallel"] = {{"dp_algorithm", "parameter_server"}};
       },
       {"from sagemaker.tensorflow import TensorFlow", "estimator = TensorFlow(",
        "\"parameter_server\": {\n            \"enabled\": True,", "framework_version=\"2.13\""},
       {"smdistributed", "PyTorch"}},
      {"tp 2 on p4d: SMP v2 under torchrun",
       [](json& j) {
         Config(j)["tp"] = 2;
         Config(j)["dp"] = 4;
       },
       {"\"torch_distributed\": {\n            \"enabled\": True,", "\"modelparallel\": {",
        "\"tensor_parallel_degree\": 2,", "framework_version=\"2.5.1\"", "py_version=\"py311\"",
        "FSDP NO_SHARD"},
       {"dataparallel", "\"mpi\"", "pipeline_parallel_degree", "hybrid_shard_degree"}},
      {"tp 2 on p3dn: SMP v1 with MPI, as SMP v2 does not run there",
       [](json& j) {
         Config(j)["instance"] = "p3dn.24xlarge";
         j["scenario_json"]["training"]["precision"] = "fp16";
         Config(j)["tp"] = 2;
         Config(j)["dp"] = 4;
       },
       {"\"modelparallel\"", "\"pipeline_parallel_degree\": 1,", "\"tensor_parallel_degree\": 2,",
        "\"microbatches\": 4,", "\"placement_strategy\": \"PDT\",", "\"ddp\": True,",
        "\"shard_optimizer_state\": True,", "\"processes_per_host\": 8,",
        "where SMP v2 does not run", "framework_version=\"2.0.0\""},
       {"dataparallel", "torch_distributed"}},
      {"hybrid sharding on p4d: SMP v2 with hybrid_shard_degree under torchrun",
       [](json& j) {
         j["scenario_json"]["parallel"] = {{"zero_stage", 3}, {"shard_group", 4}};
         Config(j)["zero_stage"] = 3;
         Config(j)["shard_group"] = 4;
       },
       {"\"torch_distributed\": {\n            \"enabled\": True,", "\"modelparallel\": {",
        "\"hybrid_shard_degree\": 4,", "FSDP HYBRID_SHARD"},
       {"dataparallel", "\"mpi\"", "tensor_parallel_degree"}},
      {"hybrid sharding with tp 2: SMP v2 carries both",
       [](json& j) {
         j["scenario_json"]["parallel"] = {{"zero_stage", 2}, {"shard_group", 2}};
         Config(j)["zero_stage"] = 2;
         Config(j)["shard_group"] = 2;
         Config(j)["tp"] = 2;
         Config(j)["dp"] = 4;
       },
       {"\"hybrid_shard_degree\": 2,", "\"tensor_parallel_degree\": 2,",
        "FSDP _HYBRID_SHARD_ZERO2"},
       {"\"mpi\"", "pipeline_parallel_degree"}},
      {"hybrid sharding on p3dn: SMP v2 does not run there, torchrun",
       [](json& j) {
         Config(j)["instance"] = "p3dn.24xlarge";
         j["scenario_json"]["training"]["precision"] = "fp16";
         j["scenario_json"]["parallel"] = {{"zero_stage", 3}, {"shard_group", 4}};
         Config(j)["zero_stage"] = 3;
         Config(j)["shard_group"] = 4;
       },
       {"\"torch_distributed\"", "SMP v2 does not run on p3dn.24xlarge"},
       {"smdistributed"}},
      {"pp 2 with GPipe: SMP's simple pipeline",
       [](json& j) {
         Config(j)["pp"] = 2;
         Config(j)["dp"] = 4;
         Config(j)["zero_stage"] = 0;
         Config(j)["schedule"] = "gpipe";
       },
       {"\"pipeline_parallel_degree\": 2,", "\"pipeline\": \"simple\",",
        "pipeline parallelism, which SMP v2 lacks"},
       {"\"shard_optimizer_state\": True"}},
  };
  for (const DistributionCase& c : kCases) {
    const std::string py = File(Make(Variant(c.edit)), "sagemaker/launch.py");
    for (const std::string& e : c.expected)
      EXPECT_TRUE(Contains(py, e)) << c.what << ": " << e << "\n" << py;
    for (const std::string& a : c.absent) EXPECT_FALSE(Contains(py, a)) << c.what << ": " << a;
  }
}

TEST(SagemakerScript, SpotSettingsAndTheJobName) {
  const std::string spot = File(Make(Load(kTpPpSpot)), "sagemaker/launch.py");
  for (const char* part :
       {"    use_spot_instances=True,\n", "    max_wait=3600,\n", "    max_run=3600,\n",
        "    checkpoint_s3_uri=\"s3://my-bucket/runs/checkpoints\",\n",
        "    instance_type=\"ml.p4d.24xlarge\",\n", "    instance_count=2,\n",
        "        \"zero_stage\": \"1\",\n", "estimator.fit(job_name=\"job-1\")\n"}) {
    EXPECT_TRUE(Contains(spot, part)) << part;
  }
  const std::string od = File(Make(Load(kSmall)), "sagemaker/launch.py");
  EXPECT_TRUE(Contains(od, "    use_spot_instances=False,\n"));
  EXPECT_FALSE(Contains(od, "max_wait"));
  EXPECT_FALSE(Contains(od, "checkpoint_s3_uri"));
  LaunchOptions o = WithS3();
  o.image_uri = "repo/train:2";
  const std::string own = File(Make(Load(kSmall), o), "sagemaker/launch.py");
  EXPECT_TRUE(Contains(own, "    image_uri=\"repo/train:2\",\n"));
  EXPECT_FALSE(Contains(own, "framework_version"));
}

TEST(Configs, DeepSpeedMatchesTheLayout) {
  const json ds = json::parse(File(Make(Load(kTpPpSpot)), "deepspeed_config.json"));
  EXPECT_EQ(ds["train_batch_size"], 64);
  EXPECT_EQ(ds["train_micro_batch_size_per_gpu"], 2);
  EXPECT_EQ(ds["gradient_accumulation_steps"], 8);  // 64 = 2 x 8 x dp 4
  EXPECT_EQ(ds["zero_optimization"]["stage"], 1);
  EXPECT_EQ(ds["bf16"]["enabled"], true);
  EXPECT_EQ(ds["fp16"]["enabled"], false);
  EXPECT_TRUE(ds.contains("activation_checkpointing"));
  const json small = json::parse(File(Make(Load(kSmall)), "deepspeed_config.json"));
  EXPECT_FALSE(small.contains("activation_checkpointing"));  // no recompute
  EXPECT_EQ(small["train_batch_size"].get<int>(),
            small["train_micro_batch_size_per_gpu"].get<int>() *
                small["gradient_accumulation_steps"].get<int>() * 8);
}

// ZeRO-Infinity's parameter offload goes with the optimizer's, which it implies.
TEST(Configs, DeepSpeedOffloadsParametersWhenTheScenarioDoes) {
  const LaunchPlan plan = Variant([](json& j) {
    j["scenario_json"]["training"]["offload_params"] = true;
    j["scenario_json"]["parallel"] = {{"zero_stage", 3}, {"zero_impl", "deepspeed"}};
    Config(j)["zero_stage"] = 3;
  });
  const json ds = json::parse(File(Make(plan), "deepspeed_config.json"));
  EXPECT_EQ(ds["zero_optimization"]["stage"], 3);
  EXPECT_EQ(ds["zero_optimization"]["offload_param"]["device"], "cpu");
  EXPECT_EQ(ds["zero_optimization"]["offload_optimizer"]["device"], "cpu");
  const json plain = json::parse(File(Make(Load(kSmall)), "deepspeed_config.json"));
  EXPECT_FALSE(plain["zero_optimization"].contains("offload_param"));
}

// Hybrid sharding: DeepSpeed's MiCS group at ZeRO-3, the FSDP strategy and the group as the
// script's arguments; DeepSpeed has no grouped ZeRO-2 and Megatron-LM no hybrid flag, so
// those files are left out with a warning each.
TEST(Configs, HybridShardingReachesEveryFrameworkThatHasIt) {
  const auto hybrid = [](int stage) {
    return Variant([stage](json& j) {
      j["scenario_json"]["parallel"] = {{"zero_stage", stage}, {"shard_group", 4}};
      if (stage == 3) j["scenario_json"]["parallel"]["zero_impl"] = "deepspeed";
      Config(j)["zero_stage"] = stage;
      Config(j)["shard_group"] = 4;
    });
  };
  const Bundle three = Make(hybrid(3));
  const json ds = json::parse(File(three, "deepspeed_config.json"));
  EXPECT_EQ(ds["zero_optimization"]["stage"], 3);
  EXPECT_EQ(ds["zero_optimization"]["mics_shard_size"], 4);
  EXPECT_EQ(ds["zero_optimization"]["mics_hierarchical_params_gather"], false);
  EXPECT_TRUE(Contains(File(three, "torchrun.sh"),
                       "  '--shard_group' '4' \\\n  '--fsdp_sharding_strategy' 'HYBRID_SHARD'"))
      << File(three, "torchrun.sh");
  EXPECT_EQ(Find(three, "megatron_args.sh"), nullptr);
  EXPECT_EQ(three.warnings, std::vector<std::string>{"megatron_args.sh is not written: "
                                                     "parallel.shard_group (hybrid sharding) has "
                                                     "no Megatron-LM flag"});
  const Bundle two = Make(hybrid(2));
  EXPECT_EQ(Find(two, "deepspeed_config.json"), nullptr);
  EXPECT_TRUE(
      Contains(File(two, "torchrun.sh"), "'--fsdp_sharding_strategy' '_HYBRID_SHARD_ZERO2'"));
  ASSERT_EQ(two.warnings.size(), 2u);
  EXPECT_EQ(two.warnings[0],
            "deepspeed_config.json is not written: parallel.shard_group with zero_stage 2: "
            "DeepSpeed shards in groups only at stage 3 (MiCS, mics_shard_size)");
  // Without hybrid sharding: no MiCS field, the plain FSDP strategy, every file.
  const json plain = json::parse(File(Make(Load(kSmall)), "deepspeed_config.json"));
  EXPECT_FALSE(plain["zero_optimization"].contains("mics_shard_size"));
}

// ZeRO-3 that keeps the gathered weights from forward to backward is FSDP's SHARD_GRAD_OP.
TEST(Configs, KeptGatheredWeightsAreShardGradOp) {
  const Bundle kept = Make(Variant([](json& j) {
    j["scenario_json"]["parallel"] = {{"zero_stage", 3}, {"reshard_after_forward", false}};
    Config(j)["zero_stage"] = 3;
  }));
  EXPECT_TRUE(Contains(File(kept, "torchrun.sh"), "'--fsdp_sharding_strategy' 'SHARD_GRAD_OP'"))
      << File(kept, "torchrun.sh");
}

TEST(Configs, MegatronArguments) {
  const std::string m = File(Make(Load(kTpPpSpot)), "megatron_args.sh");
  for (const char* line :
       {"  '--tensor-model-parallel-size' '2'\n", "  '--pipeline-model-parallel-size' '2'\n",
        "  '--num-layers-per-virtual-pipeline-stage' '2'\n",  // 8 layers / (pp 2 x 2)
        "  '--use-distributed-optimizer'\n", "  '--micro-batch-size' '2'\n",
        "  '--global-batch-size' '64'\n", "  '--num-layers' '8'\n", "  '--hidden-size' '1024'\n",
        "  '--num-attention-heads' '16'\n", "  '--seq-length' '1024'\n",
        "  '--recompute-granularity' 'full'\n", "  '--recompute-method' 'uniform'\n",
        "  '--bf16'\n", "  '--train-iters' '30518'\n"}) {
    EXPECT_TRUE(Contains(m, line)) << line << m;
  }
  EXPECT_FALSE(Contains(m, "--sequence-parallel"));
  const std::string small = File(Make(Load(kSmall)), "megatron_args.sh");
  EXPECT_FALSE(Contains(small, "virtual-pipeline"));
  EXPECT_FALSE(Contains(small, "--recompute"));
  // The overlap the plan was simulated with: gradient buckets during the backward pass (the
  // default parallel.overlap_dp), and the weight gather only where the scenario asks for it.
  EXPECT_TRUE(Contains(small, "  '--overlap-grad-reduce'\n")) << small;
  EXPECT_FALSE(Contains(small, "--overlap-param-gather"));
  const std::string overlapped = File(
      Make(Variant([](json& j) { j["scenario_json"]["parallel"]["overlap_param_gather"] = true; })),
      "megatron_args.sh");
  EXPECT_TRUE(Contains(overlapped, "  '--overlap-param-gather'\n")) << overlapped;
  // Selective recompute names its modules where they are not Megatron-Core's default.
  auto selective = [](const json& modules) {
    return File(Make(Variant([&](json& j) {
                  j["scenario_json"]["training"]["recompute"] = "selective";
                  if (!modules.is_null())
                    j["scenario_json"]["training"]["recompute_modules"] = modules;
                  Config(j)["recompute"] = "selective";
                })),
                "megatron_args.sh");
  };
  // A plan whose scenario names modules but whose recommendation recomputes in full launches
  // the recommendation (the modules qualify selective recompute only).
  const LaunchPlan full = Variant([](json& j) {
    j["scenario_json"]["training"]["recompute"] = "selective";
    j["scenario_json"]["training"]["recompute_modules"] = json::array({"mlp"});
    Config(j)["recompute"] = "full";
  });
  EXPECT_EQ(full.scenario.training.recompute, Recompute::kFull);
  const std::string core = selective(nullptr);
  EXPECT_TRUE(Contains(core, "  '--recompute-granularity' 'selective'\n")) << core;
  EXPECT_FALSE(Contains(core, "--recompute-modules")) << core;
  // The embedding and the loss counted in the split: Megatron-Core's flags, and each chunk's
  // layers counted with them (6 layers and the 2 counted, over pp 2 x 2 chunks: 2 a chunk).
  json plan = json::parse(ReadFile(kTpPpSpot));
  plan["scenario_json"]["model"]["layers"] = 6;
  plan["scenario_json"]["parallel"]["split_counts_embedding"] = true;
  plan["scenario_json"]["parallel"]["split_counts_loss"] = true;
  Expected<LaunchPlan> counted = ParsePlan(plan.dump(), "p.json", test::BuiltinCatalog());
  ASSERT_TRUE(counted.ok()) << counted.status().message();
  const std::string split = File(Make(*counted), "megatron_args.sh");
  for (const char* line : {"  '--account-for-embedding-in-pipeline-split'\n",
                           "  '--account-for-loss-in-pipeline-split'\n",
                           "  '--num-layers-per-virtual-pipeline-stage' '2'\n"}) {
    EXPECT_TRUE(Contains(split, line)) << line << split;
  }
  const std::string modules = selective(json::array({"mlp", "layernorm"}));
  EXPECT_TRUE(Contains(modules, "  '--recompute-modules' 'layernorm'\n  'mlp'\n")) << modules;
  // The launchers' scripts get them as one argument after --recompute.
  const Bundle with_modules = Make(Variant([](json& j) {
    j["scenario_json"]["training"]["recompute"] = "selective";
    j["scenario_json"]["training"]["recompute_modules"] = json::array({"mlp", "layernorm"});
    Config(j)["recompute"] = "selective";
  }));
  const std::string torchrun = File(with_modules, "torchrun.sh");
  EXPECT_TRUE(
      Contains(torchrun, "'--recompute' 'selective' \\\n  '--recompute_modules' 'layernorm,mlp'"))
      << torchrun;
}

// A mixture of experts with expert parallelism: Megatron-Core's MoE arguments (the experts,
// top-k, their width, which layers are MoE, the all-to-all dispatcher, ep); DeepSpeed's
// config and the SageMaker and launcher scripts cannot set ep and say so.
TEST(Configs, MixtureOfExpertsReachesMegatronArguments) {
  const LaunchPlan plan = Variant([](json& j) {
    json& m = j["scenario_json"]["model"];
    m["experts"] = 8;
    m["experts_per_token"] = 2;
    m["dense_layers"] = 1;
    m["capacity_factor"] = 1.25;
    Config(j)["ep"] = 4;
  });
  ASSERT_EQ(plan.scenario.parallel.ep, 4);
  const Bundle b = Make(plan);
  const std::string m = File(b, "megatron_args.sh");
  for (const char* line :
       {"  '--expert-model-parallel-size' '4'\n", "  '--num-experts' '8'\n",
        "  '--moe-router-topk' '2'\n", "  '--moe-ffn-hidden-size' '4096'\n",
        "  '--moe-token-dispatcher-type' 'alltoall'\n",
        "  '--moe-layer-freq' '[0,1,1,1,1,1,1,1]'\n", "  '--moe-expert-capacity-factor' '1.25'\n",
        "  '--moe-pad-expert-input-to-capacity'\n"}) {
    EXPECT_TRUE(Contains(m, line)) << line << m;
  }
  EXPECT_FALSE(Contains(m, "--expert-tensor-parallel-size")) << m;  // Megatron's default: tp
  // Whole experts (parallel.expert_tp 1) are Megatron-Core's expert tensor parallelism of 1.
  const LaunchPlan whole = Variant([](json& j) {
    json& m = j["scenario_json"]["model"];
    m["experts"] = 8;
    m["experts_per_token"] = 2;
    j["scenario_json"]["training"]["sequence_parallel"] = true;
    j["scenario_json"]["parallel"]["expert_tp"] = 1;
    Config(j)["tp"] = 2;
    Config(j)["dp"] = 4;
    Config(j)["micro_batch"] = 1;
    Config(j)["ep"] = 4;  // 4 consecutive GPUs of the 2 x 4: across the TP ranks
  });
  ASSERT_EQ(whole.scenario.expert_tp(), 1);
  EXPECT_TRUE(
      Contains(File(Make(whole), "megatron_args.sh"), "  '--expert-tensor-parallel-size' '1'\n"));
  // DeepSpeed: the config holds the batch and ZeRO; DeepSpeed-MoE's ep_size is the model code's.
  const json ds = json::parse(File(b, "deepspeed_config.json"));
  EXPECT_EQ(ds["zero_optimization"]["stage"], 1);
  EXPECT_TRUE(Contains(File(b, "README.md"), "the model code sets DeepSpeed-MoE's ep_size 4"));
  // SMP v2 on p4d carries expert parallelism; the script gets --ep 4 under every launcher.
  const std::string py = File(b, "sagemaker/launch.py");
  EXPECT_TRUE(Contains(py, "\"expert_parallel_degree\": 4,")) << py;
  EXPECT_TRUE(Contains(py, "        \"ep\": \"4\",\n")) << py;
  EXPECT_TRUE(Contains(File(b, "torchrun.sh"), "  '--ep' '4' \\\n"));
  EXPECT_EQ(json::parse(File(b, "hyperpod/smp_config.json")),
            json::parse(R"({"expert_parallel_degree": 4})"));
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_EQ(b.warnings[0].rfind("ZeRO-1 under SMP v2: SMP v2 runs PyTorch FSDP", 0), 0u)
      << b.warnings[0];

  // With pipeline stages SMP v2 is out: SMP v1 has no expert parallelism, and the bundle says so.
  const Bundle piped = Make(Variant([](json& j) {
    json& m = j["scenario_json"]["model"];
    m["experts"] = 8;
    m["experts_per_token"] = 2;
    Config(j)["ep"] = 2;
    Config(j)["pp"] = 2;
    Config(j)["dp"] = 4;
  }));
  EXPECT_EQ(Find(piped, "hyperpod/smp_config.json"), nullptr);
  ASSERT_EQ(piped.warnings.size(), 1u);
  EXPECT_EQ(piped.warnings[0],
            "parallel.ep 2 (--ep): SMP v2, which has expert and context parallelism, does not run "
            "pipeline stages, so sagemaker/launch.py's distribution does not set it: the training "
            "script must apply it itself (megatron_args.sh has Megatron-LM's arguments)");
}

// Context parallelism on p5: SMP v2's context_parallel_degree (with tensor parallelism beside
// it), and no ZeRO-1 warning under ZeRO-0; DeepSpeed has no context parallelism.
TEST(SagemakerScript, ContextParallelRunsUnderSmpV2) {
  const Bundle b = Make(Variant([](json& j) {
    Config(j)["instance"] = "p5.48xlarge";
    Config(j)["cp"] = 2;
    Config(j)["tp"] = 2;
    Config(j)["dp"] = 2;
    Config(j)["zero_stage"] = 0;
    j["scenario_json"]["training"]["flash_attention"] = true;
  }));
  const std::string py = File(b, "sagemaker/launch.py");
  for (const char* part : {"\"tensor_parallel_degree\": 2,", "\"context_parallel_degree\": 2,",
                           "FSDP NO_SHARD", "        \"cp\": \"2\",\n"}) {
    EXPECT_TRUE(Contains(py, part)) << part << py;
  }
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_EQ(b.warnings[0].rfind("deepspeed_config.json is not written: parallel.cp", 0), 0u);
}

// HyperPod, Slurm flavour: the batch script asks for whole nodes (no GPU GRES there) and runs
// srun --auto-resume=1; the check compares the cluster with the plan.
TEST(Hyperpod, SlurmFiles) {
  const Bundle b = Make(Load(kTpPpSpot));
  const std::string s = File(b, "hyperpod/slurm.sbatch");
  EXPECT_EQ(s.substr(0, s.find("# hyperpod/slurm.sbatch")),
            "#!/usr/bin/env bash\n#SBATCH --job-name=job-1\n#SBATCH --nodes=2\n"
            "#SBATCH --ntasks-per-node=1\n#SBATCH --exclusive\n#SBATCH --time=0-01:08:00\n");
  EXPECT_TRUE(Contains(s, "'srun' \\\n  '--auto-resume=1' \\\n  'torchrun' \\\n")) << s;
  EXPECT_TRUE(Contains(s, "export FI_PROVIDER='efa'\n"));
  const std::string check = File(b, "hyperpod/check-slurm.sh");
  for (const char* part :
       {"need_nodes='2'\n", "need_gpus='8'\n", "gpu='A100'\n", "fi_info -p efa"}) {
    EXPECT_TRUE(Contains(check, part)) << part << check;
  }
  EXPECT_TRUE(Find(b, "hyperpod/check-slurm.sh")->executable);
  EXPECT_EQ(Find(b, "hyperpod/smp_config.json"), nullptr);  // pp 2: SMP v1
}

// HyperPod, EKS flavour: a Kubeflow PyTorchJob with HyperPod's auto-resume annotations, one
// worker per node on healthy nodes of the plan's instance type, the GPUs and EFA devices.
TEST(Hyperpod, EksPyTorchJob) {
  LaunchOptions o = WithS3();
  o.image_uri = "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1";
  const Bundle b = Make(Load(kTpPpSpot), o);
  const json job = json::parse(File(b, "hyperpod/pytorchjob.json"));
  EXPECT_EQ(job["apiVersion"], "kubeflow.org/v1");
  EXPECT_EQ(job["kind"], "PyTorchJob");
  EXPECT_EQ(job["metadata"]["name"], "job-1");
  EXPECT_EQ(job["metadata"]["namespace"], "kubeflow");
  EXPECT_EQ(job["metadata"]["annotations"]["sagemaker.amazonaws.com/enable-job-auto-resume"],
            "true");
  EXPECT_EQ(job["spec"]["elasticPolicy"]["minReplicas"], 2);
  EXPECT_EQ(job["spec"]["nprocPerNode"], "8");
  const json& worker = job["spec"]["pytorchReplicaSpecs"]["Worker"];
  EXPECT_EQ(worker["replicas"], 2);
  EXPECT_EQ(worker["restartPolicy"], "OnFailure");
  const json& pod = worker["template"]["spec"];
  EXPECT_EQ(pod["nodeSelector"]["node.kubernetes.io/instance-type"], "ml.p4d.24xlarge");
  EXPECT_EQ(pod["nodeSelector"]["sagemaker.amazonaws.com/node-health-status"], "Schedulable");
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["image"], o.image_uri);
  EXPECT_EQ(c["command"][0], "torchrun");
  EXPECT_EQ(c["command"][1], "train.py");
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], 8);
  EXPECT_EQ(c["resources"]["limits"]["vpc.amazonaws.com/efa"], 4);
  EXPECT_EQ(c["env"][0], json::parse(R"({"name": "FI_PROVIDER", "value": "efa"})"));
  const std::string check = File(b, "hyperpod/check-eks.sh");
  EXPECT_TRUE(Contains(check,
                       "selector='node.kubernetes.io/instance-type=ml.p4d.24xlarge,"
                       "sagemaker.amazonaws.com/node-health-status=Schedulable'\n"))
      << check;
  EXPECT_TRUE(Contains(check, "need_efa='4'\n"));

  // Kubernetes names are lowercase: a SageMaker job name with capitals is refused for EKS only.
  o.job_name = "Job-1";
  EXPECT_EQ(MakeBundle(Load(kTpPpSpot), o).status().message(),
            "the hyperpod-eks target's job name: \"Job-1\" is not a valid Kubernetes object name: "
            "'J' at position 1 is not allowed (1 to 63 lowercase letters, digits and hyphens, "
            "starting with a letter and ending with a letter or digit)");
  o.targets = {Target::kSagemaker, Target::kHyperpodSlurm};
  EXPECT_TRUE(MakeBundle(Load(kTpPpSpot), o).ok());
}

// The settings issue 14 added to the scenario reach Megatron-LM's arguments (the attention
// kernel, TP overlap, fp32 gradient reduction, full recompute of every k-th layer) and
// DeepSpeed's config (fp32 gradient communication).
TEST(Configs, FrameworkConfigsCarryTheKernelsOverlapAndReduction) {
  const std::string plain = File(Make(Load(kSmall)), "megatron_args.sh");
  EXPECT_TRUE(Contains(plain, "  '--attention-backend' 'flash'\n")) << plain;
  EXPECT_FALSE(Contains(plain, "--tp-comm-overlap"));
  EXPECT_FALSE(Contains(plain, "--accumulate-allreduce-grads-in-fp32"));
  const LaunchPlan plan = Variant([](json& j) {
    json& t = j["scenario_json"]["training"];
    t["attention_kernel"] = "cudnn";
    t["grad_reduce_dtype"] = "fp32";
    t["recompute"] = "full";
    t["recompute_every"] = 3;
    t["sequence_parallel"] = true;
    j["scenario_json"]["parallel"] = {{"tp", 2}, {"tp_overlap", true}};
    Config(j)["tp"] = 2;
    Config(j)["dp"] = 4;
    Config(j)["recompute"] = "full";
  });
  const Bundle b = Make(plan);
  const std::string m = File(b, "megatron_args.sh");
  EXPECT_EQ(json::parse(File(b, "deepspeed_config.json"))["communication_data_type"], "fp32");
  EXPECT_FALSE(json::parse(File(Make(Load(kSmall)), "deepspeed_config.json"))
                   .contains("communication_data_type"));
  for (const char* line :
       {"  '--attention-backend' 'fused'\n", "  '--tp-comm-overlap'\n",
        "  '--accumulate-allreduce-grads-in-fp32'\n", "  '--recompute-method' 'block'\n",
        "  '--recompute-num-layers' '2'\n"}) {  // 8 layers on one stage, every 3rd: 2 of them
    EXPECT_TRUE(Contains(m, line)) << line << m;
  }
  const LaunchPlan optimizer =
      Variant([](json& j) { j["scenario_json"]["training"]["offload_optimizer"] = true; });
  EXPECT_TRUE(Contains(File(Make(optimizer), "megatron_args.sh"),
                       "  '--optimizer-cpu-offload'\n  '--optimizer-offload-fraction' '1'\n"
                       "  '--use-precision-aware-optimizer'\n"));
  const LaunchPlan unfused =
      Variant([](json& j) { j["scenario_json"]["training"]["flash_attention"] = false; });
  EXPECT_TRUE(
      Contains(File(Make(unfused), "megatron_args.sh"), "  '--attention-backend' 'unfused'\n"));
}

// ZeRO-3 runs as the plan's implementation (parallel.zero_impl): DeepSpeed's config only for
// DeepSpeed, Megatron-LM's arguments (--use-torch-fsdp2) only for FSDP2; the others are left
// out with a warning each.
TEST(Configs, ZeroThreeFilesFollowTheImplementation) {
  const auto zero3 = [](const char* impl) {
    return Make(Variant([impl](json& j) {
      j["scenario_json"]["parallel"] = {{"zero_stage", 3}, {"zero_impl", impl}};
      Config(j)["zero_stage"] = 3;
    }));
  };
  const Bundle fsdp1 = zero3("fsdp1");
  EXPECT_EQ(Find(fsdp1, "deepspeed_config.json"), nullptr);
  EXPECT_EQ(Find(fsdp1, "megatron_args.sh"), nullptr);
  EXPECT_EQ(fsdp1.warnings,
            (std::vector<std::string>{
                "deepspeed_config.json is not written: parallel.zero_impl \"fsdp1\": the plan's "
                "ZeRO-3 collectives are that implementation's, not DeepSpeed's (plan with "
                "parallel.zero_impl \"deepspeed\" to run it under DeepSpeed)",
                "megatron_args.sh is not written: parallel.zero_impl \"fsdp1\": Megatron-LM's "
                "ZeRO-3 is PyTorch FSDP2 (--use-torch-fsdp2; plan with parallel.zero_impl "
                "\"fsdp2\" to run it under Megatron-LM)"}));
  const Bundle fsdp2 = zero3("fsdp2");
  EXPECT_TRUE(Contains(File(fsdp2, "megatron_args.sh"), "  '--use-torch-fsdp2'\n"));
  EXPECT_EQ(Find(fsdp2, "deepspeed_config.json"), nullptr);
  const Bundle deepspeed = zero3("deepspeed");
  EXPECT_EQ(json::parse(File(deepspeed, "deepspeed_config.json"))["zero_optimization"]["stage"], 3);
  EXPECT_EQ(Find(deepspeed, "megatron_args.sh"), nullptr);
}

// What Megatron-LM has no flag for leaves megatron_args.sh out, with a warning that says why;
// the rest of the bundle is still made.
TEST(Configs, NoMegatronArgumentsForWhatMegatronCannotRun) {
  const struct {
    std::function<void(json&)> edit;
    std::string why;
  } cases[] = {
      {[](json& j) {
         j["scenario_json"]["training"]["recompute"] = "selective_op";
         Config(j)["recompute"] = "selective_op";
       },
       "training.recompute \"selective_op\" (torchtitan's op-level checkpointing) has no "
       "Megatron-LM flag"},
      {[](json& j) {  // FP8 needs an H100
         j["scenario_json"]["cluster"]["instance"] = "p5.48xlarge";
         Config(j)["instance"] = "p5.48xlarge";
         j["scenario_json"]["training"]["precision"] = "fp8";
         j["scenario_json"]["training"]["fp8_scaling"] = "rowwise";
       },
       "training.fp8_scaling \"rowwise\" (torchao's recipe) has no Megatron-LM flag"},
      {[](json& j) {
         j["scenario_json"]["training"]["offload_params"] = true;
         j["scenario_json"]["parallel"] = {{"zero_stage", 3}, {"zero_impl", "deepspeed"}};
         Config(j)["zero_stage"] = 3;
       },
       "training.offload_params (FSDP's parameter offload to the host) has no Megatron-LM flag"},
      {[](json& j) {  // 9 layers on 2 stages: 5 and 4
         j["scenario_json"]["model"]["layers"] = 9;
         j["scenario_json"]["training"]["recompute"] = "full";
         j["scenario_json"]["training"]["recompute_every"] = 2;
         Config(j)["recompute"] = "full";
         Config(j)["pp"] = 2;
         Config(j)["dp"] = 4;
       },
       "training.recompute_every 2 on pipeline stages of unequal size: Megatron-LM's "
       "--recompute-method block recomputes the same number of layers on every stage"},
  };
  for (const auto& c : cases) {
    const Bundle b = Make(Variant(c.edit));
    EXPECT_EQ(Find(b, "megatron_args.sh"), nullptr) << c.why;
    EXPECT_NE(Find(b, "deepspeed_config.json"), nullptr) << c.why;
    EXPECT_FALSE(Contains(File(b, "README.md"), "megatron_args.sh")) << c.why;
    ASSERT_EQ(b.warnings.size(), 1u) << c.why;
    EXPECT_EQ(b.warnings[0], "megatron_args.sh is not written: " + c.why);
  }
}

TEST(Slurm, DirectivesFromThePlan) {
  const std::string s = File(Make(Load(kTpPpSpot)), "slurm.sbatch");
  EXPECT_EQ(s.substr(0, s.find("# slurm.sbatch")),
            "#!/usr/bin/env bash\n#SBATCH --job-name=job-1\n#SBATCH --nodes=2\n"
            "#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n#SBATCH --exclusive\n"
            "#SBATCH --time=0-01:08:00\n");  // 1.5 x 0.753 h = 67.8 min
}

// --- rejected inputs: MakeBundle returns the error, so no file exists to write.

TEST(MakeBundle, RejectsAJobNameWithShellCharacters) {
  LaunchOptions o = WithS3();
  o.job_name = "x; rm -rf ~";
  EXPECT_EQ(MakeBundle(Load(kSmall), o).status().message(),
            "--job-name: \"x; rm -rf ~\" is not a valid SageMaker training job name: ';' at "
            "position 2 is not allowed (1 to 63 letters, digits and hyphens, starting and ending "
            "with a letter or digit)");
}

TEST(MakeBundle, RejectsAScenarioNameWithShellCharacters) {
  const LaunchPlan plan = Variant([](json& j) { j["scenario_json"]["name"] = "gpt$(reboot)"; });
  EXPECT_EQ(MakeBundle(plan, WithS3()).status().message(),
            "p.json: scenario name: \"gpt$(reboot)\" is not a valid name: '$' at position 4 is "
            "not allowed (1 to 128 letters, digits, '.', '_' and '-')");
}

TEST(MakeBundle, JobNameDefaultsToAValidScenarioName) {
  LaunchOptions o = WithS3();
  o.job_name.clear();
  EXPECT_EQ(Make(Load(kTpPpSpot), o).job_name, "tp-pp-spot");
  const LaunchPlan underscore = Variant([](json& j) { j["scenario_json"]["name"] = "gpt_3"; });
  EXPECT_EQ(MakeBundle(underscore, o).status().message(),
            "the scenario name \"gpt_3\" is not a valid SageMaker training job name (1 to 63 "
            "letters, digits and hyphens, starting and ending with a letter or digit): give one "
            "with --job-name NAME");
  o.job_name = "gpt-3";
  EXPECT_EQ(Make(underscore, o).job_name, "gpt-3");
}

TEST(MakeBundle, OtherErrors) {
  const LaunchPlan plan = Load(kTpPpSpot);
  const struct {
    std::function<void(LaunchOptions&)> edit;
    std::string message;
  } kCases[] = {
      {[](LaunchOptions& o) { o.s3_uri.clear(); },
       "--s3 is required for the sagemaker target (checkpoints, output and code go there): give "
       "--s3 s3://BUCKET/PREFIX, or leave SageMaker out with --target slurm,scripts"},
      {[](LaunchOptions& o) { o.s3_uri = "s3://b/$(reboot)"; },
       "--s3: \"s3://b/$(reboot)\" is not a valid S3 URI: the bucket has 1 character "
       "(s3://BUCKET/PREFIX, at most 1024 characters: a bucket of 3 to 63 lowercase letters, "
       "digits, '.' and '-' that starts and ends with a letter or digit, a prefix of letters, "
       "digits, '.', '_', '-', '/' and '=')"},
      {[](LaunchOptions& o) { o.entry_point = "train.py; reboot"; },
       "--entry-point: \"train.py; reboot\" is not a valid entry point: ';' at position 9 is not "
       "allowed (a relative path of 1 to 256 letters, digits, '.', '_', '-' and '/', without a "
       "'..' component, not starting with '-' or '/')"},
      {[](LaunchOptions& o) {
         o.hosts_file = "/tmp/hosts";
         o.hosts = {"a"};
       },
       "--hosts /tmp/hosts: lists 1 host for the plan's 2 nodes"},
      {[](LaunchOptions& o) { o.volume_gb = 20000; },
       "--volume-gb: 20000 is out of range (1 to 16384)"},
      {[](LaunchOptions& o) { o.targets.clear(); }, "--target: no target given"},
  };
  for (const auto& c : kCases) {
    LaunchOptions o = WithS3();
    c.edit(o);
    EXPECT_EQ(MakeBundle(plan, o).status().message(), c.message);
  }
  const LaunchPlan dgx = Variant([](json& j) {
    Config(j)["instance"] = "dgx-a100-80gb";
    j["recommendation"]["pricing"] = "on-demand";
  });
  EXPECT_EQ(MakeBundle(dgx, WithS3()).status().message(),
            "the sagemaker target needs an AWS instance type; dgx-a100-80gb is a reference system");
}

TEST(ParseTargets, ListsAndErrors) {
  EXPECT_EQ(*ParseTargets("all"),
            (std::vector<Target>{Target::kSagemaker, Target::kSlurm, Target::kScripts,
                                 Target::kHyperpodSlurm, Target::kHyperpodEks}));
  EXPECT_EQ(*ParseTargets("hyperpod-eks,hyperpod-slurm"),
            (std::vector<Target>{Target::kHyperpodEks, Target::kHyperpodSlurm}));
  EXPECT_EQ(*ParseTargets("slurm,sagemaker"),
            (std::vector<Target>{Target::kSlurm, Target::kSagemaker}));
  EXPECT_EQ(ParseTargets("slurm,k8s").status().message(),
            "--target: unknown target \"k8s\"; expected all, or a comma-separated list of "
            "sagemaker, slurm, scripts, hyperpod-slurm, hyperpod-eks");
  EXPECT_EQ(ParseTargets("slurm,slurm").status().message(), "--target: slurm is listed twice");
  EXPECT_FALSE(ParseTargets("").ok());
}

}  // namespace
}  // namespace trainsim::launch
