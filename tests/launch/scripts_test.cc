// The bundle's shell scripts, run for real by bash with fake torchrun, mpirun,
// srun and scontrol on PATH that print the arguments they get: every value
// arrives as one argument, spaces and all. And a check of the text itself:
// every word of a command is single-quoted, or a double-quoted expansion the
// script makes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "launch/bundle.h"
#include "launch/bundle_writer.h"
#include "tests/test_util.h"

namespace trainsim::launch {
namespace {

namespace fs = std::filesystem;

const std::string kPlan =
    std::string(TRAINSIM_SOURCE_DIR) + "/tests/launch/data/tp-pp-spot.plan.json";

class ScriptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "scripts_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(root_ + "/bin");
    // Each fake prints its name and arguments, one per line, in brackets.
    for (const char* tool : {"torchrun", "mpirun", "srun"}) {
      Fake(tool, std::string("printf '[%s]\\n' ") + tool + " \"$@\"\n");
    }
    Fake("scontrol", "printf 'host-a\\nhost-b\\n'\n");
    plan_ = *LoadPlanFile(kPlan, test::BuiltinCatalog());
  }
  void TearDown() override { fs::remove_all(root_); }

  void Fake(const std::string& name, const std::string& body) {
    const std::string path = root_ + "/bin/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    fs::permissions(path, fs::perms::owner_all);
  }

  // Writes the bundle into root/`dir` and returns that path.
  std::string Write(const LaunchOptions& o, const std::string& dir) {
    Expected<Bundle> b = MakeBundle(plan_, o);
    EXPECT_TRUE(b.ok()) << b.status().message();
    const std::string out = root_ + "/" + dir;
    EXPECT_TRUE(WriteBundle(out, *b).ok());
    return out;
  }

  // Runs `bash script` with the fakes first on PATH; its stdout (and stderr) lines. The script
  // must exit with `expected_status`.
  std::vector<std::string> Run(const std::string& script, int expected_status = 0) {
    const std::string out_path = root_ + "/stdout";
    std::vector<std::string> env = {"PATH=" + root_ + "/bin:/usr/bin:/bin",
                                    "SLURM_JOB_NODELIST=host-[a-b]", "SLURM_JOB_ID=4242"};
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string bash = "/bin/bash", s = script;
    char* argv[] = {bash.data(), s.data(), nullptr};
    pid_t pid = fork();
    if (pid == 0) {
      int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(126);
      execve(argv[0], argv, envp.data());
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == expected_status) << script;
    std::ifstream in(out_path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  LaunchPlan plan_;
  std::string root_;
};

std::vector<std::string> Bracketed(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const std::string& w : words) out.push_back("[" + w + "]");
  return out;
}

// The training script and its arguments, as every launcher passes them.
const std::vector<std::string> kScriptArgs = {"train.py",    "--tp",
                                              "2",           "--pp",
                                              "2",           "--dp",
                                              "4",           "--zero_stage",
                                              "1",           "--micro_batch",
                                              "2",           "--global_batch",
                                              "64",          "--gradient_accumulation_steps",
                                              "8",           "--precision",
                                              "bf16",        "--recompute",
                                              "full",        "--schedule",
                                              "interleaved", "--virtual_stages",
                                              "2",           "--sequence_parallel",
                                              "false",       "--steps",
                                              "30518",       "--checkpoint_interval_s",
                                              "609"};

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(ScriptsTest, TorchrunGetsEveryValueAsOneArgument) {
  LaunchOptions o;
  o.targets = {Target::kScripts};
  o.job_name = "job-1";
  const std::string dir = Write(o, "out dir");
  EXPECT_EQ(
      Run(dir + "/torchrun.sh"),
      Bracketed(Concat({"torchrun", "--nnodes", "2", "--nproc-per-node", "8", "--rdzv-backend",
                        "c10d", "--rdzv-endpoint", "node-0:29500", "--rdzv-id", "job-1"},
                       kScriptArgs)));
}

TEST_F(ScriptsTest, MpirunFindsTheBundlesHostfileInAFolderWithASpace) {
  LaunchOptions o;
  o.targets = {Target::kScripts};
  o.job_name = "job-1";
  const std::string dir = Write(o, "out dir");
  const std::string real_dir = fs::canonical(dir).string();
  EXPECT_EQ(Run(dir + "/mpirun.sh"),
            Bracketed(Concat({"mpirun", "-np", "16", "--hostfile", real_dir + "/hostfile",
                              "--map-by", "ppr:8:node", "--bind-to", "none", "-x", "PATH", "-x",
                              "LD_LIBRARY_PATH", "-x", "FI_PROVIDER=efa", "python3"},
                             kScriptArgs)));
}

TEST_F(ScriptsTest, AHostsFileWithASpaceInItsPathIsOneArgument) {
  LaunchOptions o;
  o.targets = {Target::kScripts};
  o.job_name = "job-1";
  o.hosts_file = root_ + "/my hosts, v2";
  o.hosts = {"host-a", "host-b"};
  const std::string dir = Write(o, "out");
  EXPECT_FALSE(fs::exists(dir + "/hostfile"));  // the user's file is used
  const std::vector<std::string> mpirun = Run(dir + "/mpirun.sh");
  ASSERT_GE(mpirun.size(), 5u);
  EXPECT_EQ(mpirun[3], "[--hostfile]");
  EXPECT_EQ(mpirun[4], "[" + root_ + "/my hosts, v2]");
  const std::string text = trainsim::test::ReadFile(dir + "/mpirun.sh");
  EXPECT_NE(text.find("  '--hostfile' '" + root_ + "/my hosts, v2' \\\n"), std::string::npos);
  const std::vector<std::string> torchrun = Run(dir + "/torchrun.sh");
  ASSERT_GE(torchrun.size(), 9u);
  EXPECT_EQ(torchrun[8], "[host-a:29500]");
}

TEST_F(ScriptsTest, SlurmRunsTorchrunOncePerNodeWithTheFirstNodeAsRendezvous) {
  LaunchOptions o;
  o.targets = {Target::kSlurm};
  o.job_name = "job-1";
  const std::string dir = Write(o, "out");
  EXPECT_EQ(Run(dir + "/slurm.sbatch"),
            Bracketed(Concat(
                {"srun", "torchrun", "--nnodes", "2", "--nproc-per-node", "8", "--rdzv-backend",
                 "c10d", "--rdzv-endpoint", "host-a:29500", "--rdzv-id", "4242"},
                kScriptArgs)));
}

// HyperPod's Slurm script runs srun --auto-resume=1 (HyperPod's flag) around torchrun.
TEST_F(ScriptsTest, HyperpodSlurmAutoResumes) {
  LaunchOptions o;
  o.targets = {Target::kHyperpodSlurm};
  o.job_name = "job-1";
  const std::string dir = Write(o, "out");
  EXPECT_EQ(Run(dir + "/hyperpod/slurm.sbatch"),
            Bracketed(Concat(
                {"srun", "--auto-resume=1", "torchrun", "--nnodes", "2", "--nproc-per-node", "8",
                 "--rdzv-backend", "c10d", "--rdzv-endpoint", "host-a:29500", "--rdzv-id", "4242"},
                kScriptArgs)));
}

// The HyperPod Slurm check against fake sinfo, srun (runs its command once per node asked
// for), nvidia-smi and fi_info: it passes on a cluster like the plan's and names what is short.
TEST_F(ScriptsTest, HyperpodSlurmCheckComparesTheClusterWithThePlan) {
  LaunchOptions o;
  o.targets = {Target::kHyperpodSlurm};
  o.job_name = "job-1";
  const std::string dir = Write(o, "out");
  Fake("srun",
       "n=1\nwhile [ $# -gt 0 ]; do case \"$1\" in -N) n=$2; shift 2;; -*) shift;; *) break;; "
       "esac; done\ni=0; while [ $i -lt $n ]; do \"$@\"; i=$((i+1)); done\n");
  Fake("nvidia-smi",
       "i=0; while [ $i -lt 8 ]; do echo \"GPU $i: NVIDIA A100-SXM4-40GB\"; "
       "i=$((i+1)); done\n");
  Fake("fi_info", "exit 0\n");
  Fake("sinfo", "printf 'host-a\\nhost-b\\nhost-c\\n'\n");
  EXPECT_EQ(Run(dir + "/hyperpod/check-slurm.sh"),
            std::vector<std::string>{"check: ok: 3 usable nodes, 16 A100 GPUs on 2 of them"});
  Fake("sinfo", "printf 'host-a\\n'\n");
  EXPECT_EQ(Run(dir + "/hyperpod/check-slurm.sh", 1),
            std::vector<std::string>{"check: the cluster has 1 usable nodes; the plan needs 2"});
  Fake("sinfo", "printf 'host-a\\nhost-b\\n'\n");
  Fake("fi_info", "exit 1\n");
  EXPECT_EQ(Run(dir + "/hyperpod/check-slurm.sh", 1),
            std::vector<std::string>{"check: EFA answers on 0 of 2 nodes (fi_info -p efa)"});
}

// The HyperPod EKS check against a fake kubectl that answers the way a cluster with two healthy
// p4d nodes does; then with one node short of EFA devices, and without the training operator.
TEST_F(ScriptsTest, HyperpodEksCheckComparesTheClusterWithThePlan) {
  LaunchOptions o;
  o.targets = {Target::kHyperpodEks};
  o.job_name = "job-1";
  const std::string dir = Write(o, "out");
  auto kubectl = [&](const std::string& efa, const std::string& crd_status) {
    Fake("kubectl",
         "case \"$*\" in\n"
         "  *'get crd'*) exit " +
             crd_status +
             ";;\n"
             "  *'get namespace'*) exit 0;;\n"
             "  *'-o name'*) printf 'node/a\\nnode/b\\n';;\n"
             "  *nvidia*) printf '8\\n8\\n';;\n"
             "  *efa*) printf '" +
             efa +
             "';;\n"
             "esac\n");
  };
  kubectl("4\\n4\\n", "0");
  EXPECT_EQ(Run(dir + "/hyperpod/check-eks.sh"),
            std::vector<std::string>{
                "check: ok: 2 schedulable nodes match node.kubernetes.io/instance-type=ml.p4d."
                "24xlarge,sagemaker.amazonaws.com/node-health-status=Schedulable"});
  kubectl("4\\n0\\n", "0");
  EXPECT_EQ(Run(dir + "/hyperpod/check-eks.sh", 1),
            std::vector<std::string>{"check: 1 nodes offer 4 EFA devices (vpc.amazonaws.com/efa; "
                                     "the EFA device plugin); the plan needs 2"});
  kubectl("4\\n4\\n", "1");
  EXPECT_EQ(Run(dir + "/hyperpod/check-eks.sh", 1),
            std::vector<std::string>{"check: no PyTorchJob resource: install the Kubeflow "
                                     "training operator (HyperPod's Helm chart)"});
}

// Every word of the command lines (from the line starting the command to the
// end) is '...' or "$...".
void ExpectQuotedWords(const std::string& name, const std::string& text) {
  std::istringstream in(text);
  bool in_command = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("exec ", 0) == 0) line = line.substr(5), in_command = true;
    if (line.rfind("'srun'", 0) == 0) in_command = true;
    if (line.rfind("export ", 0) == 0) {
      EXPECT_EQ(line.find('=') + 1, line.find('\'')) << name << ": " << line;
      EXPECT_EQ(line.back(), '\'') << name << ": " << line;
    }
    if (!in_command) continue;
    std::string rest = line.substr(line.find_first_not_of(' '));
    if (rest.size() >= 2 && rest.substr(rest.size() - 2) == " \\") rest.resize(rest.size() - 2);
    while (!rest.empty()) {
      const char q = rest[0];
      ASSERT_TRUE(q == '\'' || (q == '"' && rest[1] == '$')) << name << ": " << line;
      const size_t end = rest.find(q, 1);
      ASSERT_NE(end, std::string::npos) << name << ": " << line;
      rest = rest.substr(end + 1);
      if (!rest.empty()) {
        ASSERT_EQ(rest[0], ' ') << name << ": " << line;
        rest = rest.substr(1);
      }
    }
  }
  EXPECT_TRUE(in_command) << name;
}

TEST_F(ScriptsTest, EveryValueIsQuoted) {
  LaunchOptions o;
  o.targets = {Target::kScripts, Target::kSlurm};
  o.job_name = "job-1";
  Expected<Bundle> b = MakeBundle(plan_, o);
  ASSERT_TRUE(b.ok());
  for (const BundleFile& f : b->files) {
    if (f.path == "torchrun.sh" || f.path == "mpirun.sh" || f.path == "slurm.sbatch") {
      ExpectQuotedWords(f.path, f.content);
    }
  }
}

}  // namespace
}  // namespace trainsim::launch
