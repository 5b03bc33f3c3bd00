// `trainsim launch` through the real binary: run in a temporary folder, with
// PATH set per test so fake `aws` and `sbatch` scripts stand in for the real
// tools (they record the arguments they get).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

extern char** environ;

namespace trainsim {

using trainsim::test::ReadFile;
namespace {

namespace fs = std::filesystem;

const std::string kPlan =
    std::string(TRAINSIM_SOURCE_DIR) + "/tests/launch/data/tp-pp-spot.plan.json";

struct RunResult {
  int exit_code = -1;
  std::string out, err;
  std::string FirstErrLine() const { return err.substr(0, err.find('\n')); }
};

class LaunchCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "launch_cli_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "work");
    fs::create_directories(root_ / "bin");
    fs::create_directories(root_ / "empty-bin");
    path_ = (root_ / "bin").string() + ":/usr/bin:/bin";
  }
  void TearDown() override { fs::remove_all(root_); }

  // A fake tool that records its arguments, one per line, and exits with `status`.
  void Fake(const std::string& tool, int status = 0) {
    const fs::path path = root_ / "bin" / tool;
    std::ofstream(path) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" << (root_ / tool).string()
                        << ".args'\nexit " << status << "\n";
    fs::permissions(path, fs::perms::owner_all);
  }
  std::string Recorded(const std::string& tool) { return ReadFile(root_ / (tool + ".args")); }
  bool Ran(const std::string& tool) { return fs::exists(root_ / (tool + ".args")); }

  // Runs trainsim with `args` in root/work, PATH = path_.
  RunResult Run(const std::vector<std::string>& args) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      if (std::string(*e).rfind("PATH=", 0) != 0) env.push_back(*e);
    }
    env.push_back("PATH=" + path_);
    std::vector<std::string> words = {TRAINSIM_BINARY};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv, envp;
    for (std::string& w : words) argv.push_back(w.data());
    for (std::string& e : env) envp.push_back(e.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    const std::string out = (root_ / "stdout").string(), err = (root_ / "stderr").string();
    const std::string work = (root_ / "work").string();
    pid_t pid = fork();
    if (pid == 0) {
      int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || chdir(work.c_str()) != 0) {
        _exit(126);
      }
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
  }

  fs::path Work(const std::string& name) { return root_ / "work" / name; }

  fs::path root_;
  std::string path_;
};

TEST_F(LaunchCliTest, WritesTheBundleAndPrintsTheSubmitCommands) {
  RunResult r = Run({"launch", kPlan, "--s3", "s3://my-bucket/runs"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "# sagemaker\n"
            "'aws' 'sagemaker' 'create-training-job' '--cli-input-json' "
            "'file://launch-out/sagemaker/create_training_job.json'\n"
            "# slurm\n"
            "'sbatch' 'launch-out/slurm.sbatch'\n"
            "# scripts: run 'launch-out/torchrun.sh' on every node, or 'launch-out/mpirun.sh' on "
            "the first host\n"
            "# hyperpod-slurm\n"
            "# first 'launch-out/hyperpod/check-slurm.sh' on the cluster's head or login node\n"
            "'sbatch' 'launch-out/hyperpod/slurm.sbatch'\n"
            "# hyperpod-eks\n"
            "# first 'launch-out/hyperpod/check-eks.sh' where kubectl reaches the cluster\n"
            "'kubectl' 'apply' '-f' 'launch-out/hyperpod/pytorchjob.json'\n");
  EXPECT_EQ(
      r.err,
      "launch bundle for tp-pp-spot written to launch-out (13 files; launch-out/README.md says "
      "what to fill in)\n"
      "dry run: nothing submitted (--submit --target TARGET --yes submits)\n");
  for (const char* f : {"README.md", "sagemaker/create_training_job.json", "sagemaker/launch.py",
                        "torchrun.sh", "mpirun.sh", "hostfile", "slurm.sbatch",
                        "deepspeed_config.json", "megatron_args.sh", ".trainsim-launch"}) {
    EXPECT_TRUE(fs::exists(Work("launch-out") / f)) << f;
  }
  // Again into the same folder: the same bytes.
  const std::string request = ReadFile(Work("launch-out/sagemaker/create_training_job.json"));
  ASSERT_EQ(Run({"launch", kPlan, "--s3", "s3://my-bucket/runs"}).exit_code, 0);
  EXPECT_EQ(ReadFile(Work("launch-out/sagemaker/create_training_job.json")), request);
}

TEST_F(LaunchCliTest, ErrorsExitOneWithTheExactFirstLineAndWriteNothing) {
  std::ofstream(Work("bad-hosts")) << "node-0\nnode-1;reboot\n";
  const std::string bad_hosts = Work("bad-hosts").string();
  const struct {
    std::vector<std::string> args;
    std::string first_line;
  } kCases[] = {
      {{"launch"}, "trainsim: launch needs a plan file (from `trainsim plan`)"},
      {{"launch", kPlan, "--frobnicate"}, "trainsim: unknown option --frobnicate"},
      {{"launch", kPlan, kPlan}, "trainsim: launch takes one plan file"},
      {{"launch", kPlan, "--out"}, "trainsim: --out needs a value"},
      {{"launch", kPlan, "--s3", "s3://b-1/x", "--job-name", "x; rm -rf ~"},
       "trainsim: --job-name: \"x; rm -rf ~\" is not a valid SageMaker training job name: ';' at "
       "position 2 is not allowed (1 to 63 letters, digits and hyphens, starting and ending with "
       "a letter or digit)"},
      {{"launch", kPlan},
       "trainsim: --s3 is required for the sagemaker target (checkpoints, output and code go "
       "there): give --s3 s3://BUCKET/PREFIX, or leave SageMaker out with --target "
       "slurm,scripts"},
      {{"launch", kPlan, "--target", "slurm", "--out", "~/x"},
       "trainsim: --out: \"~/x\" is not a valid path: '~' at position 1 is not allowed (1 to 4096 "
       "letters, digits, spaces, '.', '_', '-', '/', '+', ',', '=' and '@', not starting with "
       "'-')"},
      {{"launch", kPlan, "--target", "scripts", "--hosts", bad_hosts},
       "trainsim: " + bad_hosts +
           ":2: \"node-1;reboot\" is not a valid host name: ';' at position 7 is not allowed (1 "
           "to 253 letters, digits, '.' and '-', starting with a letter or digit)"},
      {{"launch", kPlan, "--target", "k8s"},
       "trainsim: --target: unknown target \"k8s\"; expected all, or a comma-separated list of "
       "sagemaker, slurm, scripts, hyperpod-slurm, hyperpod-eks"},
      {{"launch", kPlan, "--volume-gb", "0"},
       "trainsim: --volume-gb: expected a size in GB from 1 to 16384, got \"0\""},
      {{"launch", kPlan, "--yes"}, "trainsim: --yes applies only with --submit"},
      {{"launch", kPlan, "--submit"},
       "trainsim: --submit needs one --target: sagemaker, slurm, hyperpod-slurm or hyperpod-eks"},
      {{"launch", kPlan, "--submit", "--target", "scripts"},
       "trainsim: --submit needs one --target: sagemaker, slurm, hyperpod-slurm or hyperpod-eks"},
      {{"launch", kPlan, "--submit", "--yes", "--target", "sagemaker", "--s3", "s3://b-1/x"},
       "trainsim: --submit --target sagemaker needs --role ARN: the request holds the "
       "placeholder REPLACE_WITH_ROLE_ARN"},
      {{"launch", kPlan, "--backend", "k8s"},
       "trainsim: --backend: expected bundle or local, got \"k8s\""},
      {{"launch", kPlan, "--backend", "local", "--submit", "--target", "slurm"},
       "trainsim: --submit applies to bundles, not to --backend local"},
      {{"launch", kPlan, "--steps", "5"},
       "trainsim: --ranks, --steps, --profile, --device, --checkpoint-every and --resume apply "
       "only with --backend local"},
      {{"launch", kPlan, "--backend", "local", "--device", "tpu"},
       "trainsim: --device: expected cpu or cuda, got \"tpu\""},
      {{"launch", kPlan, "--backend", "local", "--ranks", "0"},
       "trainsim: --ranks: expected a whole number from 1 to 1000000, got \"0\""},
      {{"launch", "/nonexistent.plan.json"},
       "trainsim: /nonexistent.plan.json: cannot read the plan"},
  };
  for (const auto& c : kCases) {
    RunResult r = Run(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.first_line;
    EXPECT_EQ(r.FirstErrLine(), c.first_line);
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(Work("launch-out"))) << c.first_line;
  }
}

TEST_F(LaunchCliTest, RefusesAFolderItDidNotWrite) {
  fs::create_directories(Work("mine"));
  std::ofstream(Work("mine/notes.txt")) << "x";
  RunResult r = Run({"launch", kPlan, "--target", "slurm", "--out", "mine"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.FirstErrLine(),
            "trainsim: mine: not empty and not written by `trainsim launch` (no "
            ".trainsim-launch); choose another --out or empty it");
  EXPECT_FALSE(fs::exists(Work("mine/slurm.sbatch")));
}

TEST_F(LaunchCliTest, SubmitWithoutYesPrintsTheCommandAndRunsNothing) {
  Fake("sbatch");
  RunResult r = Run({"launch", kPlan, "--target", "slurm", "--out", "my out", "--submit"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "'sbatch' 'my out/slurm.sbatch'\n");
  EXPECT_EQ(r.err.substr(r.err.find('\n') + 1),
            "dry run: nothing submitted; add --yes to run the command above\n");
  EXPECT_FALSE(Ran("sbatch"));
  EXPECT_TRUE(fs::exists(Work("my out/slurm.sbatch")));
}

TEST_F(LaunchCliTest, SubmitWithYesRunsTheToolWithTheExactArguments) {
  Fake("sbatch");
  RunResult r = Run({"launch", kPlan, "--target", "slurm", "--out", "my out", "--submit", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Recorded("sbatch"), "my out/slurm.sbatch\n");
  EXPECT_NE(r.err.find("submitting: 'sbatch' 'my out/slurm.sbatch'\n"), std::string::npos);

  Fake("aws");
  r = Run({"launch", kPlan, "--target", "sagemaker", "--s3", "s3://my-bucket/runs", "--role",
           "arn:aws:iam::123456789012:role/SageMaker", "--image", "repo/train:1", "--submit",
           "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Recorded("aws"),
            "sagemaker\ncreate-training-job\n--cli-input-json\n"
            "file://launch-out/sagemaker/create_training_job.json\n");
}

TEST_F(LaunchCliTest, SubmitErrorsNameTheTool) {
  path_ = (root_ / "empty-bin").string();
  RunResult r = Run({"launch", kPlan, "--target", "slurm", "--submit", "--yes"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.substr(r.err.rfind("trainsim:")),
            "trainsim: sbatch not found on PATH: submit from a Slurm login node, or run the "
            "command yourself: 'sbatch' 'launch-out/slurm.sbatch'\n");
  path_ = (root_ / "bin").string() + ":/usr/bin:/bin";
  Fake("sbatch", 2);
  r = Run({"launch", kPlan, "--target", "slurm", "--submit", "--yes"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.substr(r.err.rfind("trainsim:")),
            "trainsim: sbatch exited with status 2: 'sbatch' 'launch-out/slurm.sbatch'\n");
}

TEST_F(LaunchCliTest, Help) {
  RunResult r = Run({"launch", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "usage: trainsim launch PLAN [--out DIR] [--target LIST] [--job-name NAME] [--s3 URI]");
}

}  // namespace
}  // namespace trainsim
