#include "launch/submit.h"

#include <gtest/gtest.h>

#include <set>

namespace trainsim::launch {
namespace {

// Knows some tools; records what it is asked to run; returns a set status.
class FakeRunner : public CommandRunner {
 public:
  explicit FakeRunner(std::set<std::string> tools, int status = 0)
      : tools_(std::move(tools)), status_(status) {}
  bool Exists(const std::string& tool) override { return tools_.count(tool) > 0; }
  Expected<int> Run(const std::vector<std::string>& argv) override {
    runs.push_back(argv);
    return status_;
  }
  std::vector<std::vector<std::string>> runs;

 private:
  std::set<std::string> tools_;
  int status_;
};

const std::vector<std::string> kAws = {"aws", "sagemaker", "create-training-job",
                                       "--cli-input-json",
                                       "file://my out/sagemaker/create_training_job.json"};

TEST(SubmitArgv, ExactCommands) {
  EXPECT_EQ(SubmitArgv(Target::kSagemaker, "my out"), kAws);
  EXPECT_EQ(SubmitArgv(Target::kSagemaker, "my out/"), kAws);
  EXPECT_EQ(SubmitArgv(Target::kSlurm, "/tmp/b"),
            (std::vector<std::string>{"sbatch", "/tmp/b/slurm.sbatch"}));
  EXPECT_TRUE(SubmitArgv(Target::kScripts, "x").empty());
  EXPECT_EQ(SubmitArgv(Target::kHyperpodSlurm, "b"),
            (std::vector<std::string>{"sbatch", "b/hyperpod/slurm.sbatch"}));
  EXPECT_EQ(SubmitArgv(Target::kHyperpodEks, "b"),
            (std::vector<std::string>{"kubectl", "apply", "-f", "b/hyperpod/pytorchjob.json"}));
}

TEST(Submit, WithoutYesNothingRuns) {
  FakeRunner runner({"aws", "sbatch"});
  Expected<SubmitOutcome> r = Submit(Target::kSagemaker, "my out", false, runner);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ran);
  EXPECT_EQ(r->argv, kAws);
  EXPECT_TRUE(runner.runs.empty());
}

TEST(Submit, AMissingToolIsAnErrorNamingIt) {
  FakeRunner runner({});
  EXPECT_EQ(Submit(Target::kSagemaker, "my out", true, runner).status().message(),
            "aws not found on PATH: install the AWS CLI, or run the command yourself: 'aws' "
            "'sagemaker' 'create-training-job' '--cli-input-json' "
            "'file://my out/sagemaker/create_training_job.json'");
  EXPECT_EQ(Submit(Target::kSlurm, "b", true, runner).status().message(),
            "sbatch not found on PATH: submit from a Slurm login node, or run the command "
            "yourself: 'sbatch' 'b/slurm.sbatch'");
  EXPECT_TRUE(runner.runs.empty());
}

TEST(Submit, WithYesAndTheToolItRunsTheExactArgv) {
  FakeRunner runner({"sbatch"});
  Expected<SubmitOutcome> r = Submit(Target::kSlurm, "my out", true, runner);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ran);
  ASSERT_EQ(runner.runs.size(), 1u);
  EXPECT_EQ(runner.runs[0], (std::vector<std::string>{"sbatch", "my out/slurm.sbatch"}));
}

TEST(Submit, AFailingToolIsAnError) {
  FakeRunner runner({"sbatch"}, 3);
  EXPECT_EQ(Submit(Target::kSlurm, "b", true, runner).status().message(),
            "sbatch exited with status 3: 'sbatch' 'b/slurm.sbatch'");
}

TEST(CheckSubmittable, SagemakerNeedsARoleAndAnImage) {
  LaunchOptions o;
  EXPECT_EQ(CheckSubmittable(Target::kSagemaker, o).message(),
            "--submit --target sagemaker needs --role ARN: the request holds the placeholder "
            "REPLACE_WITH_ROLE_ARN");
  o.role_arn = "arn:aws:iam::123456789012:role/R";
  EXPECT_EQ(CheckSubmittable(Target::kSagemaker, o).message(),
            "--submit --target sagemaker needs --image URI: the request holds the placeholder "
            "REPLACE_WITH_TRAINING_IMAGE_URI");
  o.image_uri = "repo/img:1";
  EXPECT_TRUE(CheckSubmittable(Target::kSagemaker, o).ok());
  EXPECT_TRUE(CheckSubmittable(Target::kSlurm, LaunchOptions()).ok());
  EXPECT_TRUE(CheckSubmittable(Target::kHyperpodSlurm, LaunchOptions()).ok());
}

TEST(CheckSubmittable, ATrainingPlanNeedsItsArn) {
  LaunchOptions o;
  o.role_arn = "arn:aws:iam::123456789012:role/R";
  o.image_uri = "repo/img:1";
  EXPECT_EQ(CheckSubmittable(Target::kSagemaker, o, Pricing::kTrainingPlan).message(),
            "--submit --target sagemaker needs --training-plan-arn ARN: the request holds the "
            "placeholder REPLACE_WITH_TRAINING_PLAN_ARN");
  o.training_plan_arn = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/my-plan-1";
  EXPECT_TRUE(CheckSubmittable(Target::kSagemaker, o, Pricing::kTrainingPlan).ok());
}

TEST(CheckSubmittable, HyperpodEksNeedsAnImage) {
  LaunchOptions o;
  EXPECT_EQ(CheckSubmittable(Target::kHyperpodEks, o).message(),
            "--submit --target hyperpod-eks needs --image URI: the PyTorchJob holds the "
            "placeholder REPLACE_WITH_TRAINING_IMAGE_URI");
  o.image_uri = "repo/img:1";
  EXPECT_TRUE(CheckSubmittable(Target::kHyperpodEks, o).ok());
}

// The real runner, with harmless real programs.
TEST(SpawnCommandRunner, FindsAndRunsProgramsWithoutAShell) {
  SpawnCommandRunner runner;
  EXPECT_TRUE(runner.Exists("sh"));
  EXPECT_TRUE(runner.Exists("/bin/sh"));
  EXPECT_FALSE(runner.Exists("no-such-tool-trainsim"));
  EXPECT_FALSE(runner.Exists("/nonexistent/sh"));
  EXPECT_FALSE(runner.Exists("/tmp"));  // a folder is not a program
  EXPECT_EQ(*runner.Run({"true"}), 0);
  EXPECT_EQ(*runner.Run({"false"}), 1);
  EXPECT_EQ(*runner.Run({"sh", "-c", "exit 7"}), 7);
  // One word each, not split or expanded: `test 'a b' = 'a b'` holds.
  EXPECT_EQ(*runner.Run({"test", "a b", "=", "a b"}), 0);
  EXPECT_EQ(*runner.Run({"test", "$(echo x)", "=", "x"}), 1);
  EXPECT_EQ(*runner.Run({"sh", "-c", "kill -TERM $$"}), 128 + 15);
  EXPECT_EQ(runner.Run({"no-such-tool-trainsim"}).status().message(),
            "no-such-tool-trainsim: cannot start it: No such file or directory");
}

}  // namespace
}  // namespace trainsim::launch
