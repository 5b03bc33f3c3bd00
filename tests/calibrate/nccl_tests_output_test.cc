#include "calibrate/nccl_tests_output.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace trainsim::calibrate {
namespace {

ProfilePoint Collective(const std::string& op, int ranks, int nodes, double bytes, double median_s,
                        double bus_factor) {
  ProfilePoint p;
  p.kind = "collective";
  p.what = op;
  p.ranks = ranks;
  p.nodes = nodes;
  p.bytes = bytes;
  p.repetitions = 20;
  p.median_s = median_s;
  p.algbw_Bps = bytes / median_s;
  p.rate = p.algbw_Bps * bus_factor;
  return p;
}

// A cuda run on one node: all_reduce over 2 GPUs at two sizes, then others.
HardwareProfile CudaProfile() {
  HardwareProfile p;
  ProfileProvenance& v = p.provenance;
  v.backend = "cuda";
  v.device = "NVIDIA H100 80GB HBM3";
  v.devices = 8;
  v.collectives = "NCCL 2.21.5";
  v.host = "gpu-node-1";
  v.date = "2026-11-21T00:00:00Z";
  v.warmup = 5;
  v.repetitions = 20;
  p.gpu = "H100-SXM5-80GB";
  p.points.push_back(Collective("all_reduce", 2, 1, 8, 10e-6, 1));
  p.points.push_back(Collective("all_reduce", 2, 1, 1 << 30, 5e-3, 1));
  p.points.push_back(Collective("all_gather", 4, 1, 1 << 20, 20e-6, 0.75));
  p.points.push_back(Collective("broadcast", 2, 1, 4096, 8e-6, 1));
  p.points.push_back(Collective("send_recv", 2, 1, 4096, 6e-6, 1));
  p.points.push_back(Collective("all_reduce", 16, 2, 1 << 30, 9e-3, 1.875));
  p.points.push_back(Collective("alltoall", 2, 1, 4096, 9e-6, 0.5));
  return p;
}

NcclTestsContext Context() {
  return {.command_line = "trainsim-calibrate --nccl-tests-out out/h100",
          .pid = 4242,
          .size_factor = 2};
}

const NcclTestsText* Find(const NcclTestsTexts& t, const std::string& name) {
  for (const NcclTestsText& x : t.texts) {
    if (x.name == name) return &x;
  }
  return nullptr;
}

// Layout: nccl-tests src/util.cu at commit a0b82b2 (writeDeviceReport,
// writeResultHeader, writeBenchmarkLinePreamble/Body with #wrong N/A,
// writeResultFooter); trainsim's own comment lines first.
TEST(NcclTestsOutputTest, AGroupIsWrittenInNcclTestsLayout) {
  const NcclTestsTexts t = FormatNcclTests(CudaProfile(), Context());
  const NcclTestsText* all_reduce = Find(t, "all_reduce.ranks2.nodes1");
  ASSERT_NE(all_reduce, nullptr);
  EXPECT_EQ(
      all_reduce->text,
      "# trainsim-calibrate --nccl-tests-out out/h100\n"
      "# trainsim-calibrate: its own all_reduce over 2 ranks on 1 node (cuda backend: NCCL "
      "2.21.5), measured 2026-11-21T00:00:00Z, in nccl-tests' output layout; not an nccl-tests "
      "run\n"
      "# trainsim-calibrate: time: the median of 20 timed runs after 5 warm-up runs (nccl-tests: "
      "the mean of iters); out of place only: the in-place columns repeat it; #wrong: not "
      "counted\n"
      "# trainsim-calibrate: Pid: this process's, on every rank line\n"
      "# Collective test starting: all_reduce_perf\n"
      "# nThread 1 nGpus 2 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: "
      "20 agg iters: 1 validation: 0 graph: 0 unalign: 0\n"
      "#\n"
      "# Using devices\n"
      "#  Rank  0 Group  0 Pid   4242 on gpu-node-1 device  0 [n/a] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid   4242 on gpu-node-1 device  1 [n/a] NVIDIA H100 80GB HBM3\n"
      "#\n"
      "#                                                              out-of-place              "
      "         in-place          \n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     "
      "time   algbw   busbw  #wrong \n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             "
      "(us)  (GB/s)  (GB/s)         \n"
      "           8             2     float     sum      -1    10.00    0.00    0.00    N/A    "
      "10.00    0.00    0.00    N/A\n"
      "  1073741824     268435456     float     sum      -1  5000.00  214.75  214.75    N/A  "
      "5000.00  214.75  214.75    N/A\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 107.375 \n"
      "#\n"
      "# Collective test concluded: all_reduce_perf\n");
}

TEST(NcclTestsOutputTest, EachTestPrintsItsCountRedopAndRoot) {
  const NcclTestsTexts t = FormatNcclTests(CudaProfile(), Context());
  std::vector<std::string> names;
  for (const NcclTestsText& x : t.texts) names.push_back(x.name);
  EXPECT_EQ(names, (std::vector<std::string>{"all_reduce.ranks2.nodes1", "all_gather.ranks4.nodes1",
                                             "broadcast.ranks2.nodes1", "sendrecv.ranks2.nodes1"}));
  // all_gather: the count is per rank (1 MiB / 4 B / 4 ranks), no reduction.
  EXPECT_NE(Find(t, "all_gather.ranks4.nodes1")
                ->text.find("     1048576         65536     float    none      -1    20.00   "
                            "52.43   39.32    N/A"),
            std::string::npos);
  EXPECT_NE(Find(t, "broadcast.ranks2.nodes1")
                ->text.find("        4096          1024     float    none       0     8.00 "),
            std::string::npos);
  const std::string& sendrecv = Find(t, "sendrecv.ranks2.nodes1")->text;
  EXPECT_NE(sendrecv.find("# Collective test starting: sendrecv_perf\n"), std::string::npos);
  EXPECT_NE(sendrecv.find("        4096          1024     float     sum      -1     6.00 "),
            std::string::npos);
}

TEST(NcclTestsOutputTest, MultiNodeGroupsAndUnknownTestsAreLeftOutWithTheReason) {
  const NcclTestsTexts t = FormatNcclTests(CudaProfile(), Context());
  EXPECT_EQ(t.left_out,
            (std::vector<std::string>{
                "all_reduce over 16 ranks on 2 nodes: the profile records rank 0's host only, "
                "and the rank lines need every rank's",
                "alltoall over 2 ranks on 1 node: nccl-tests has no such test"}));
}

TEST(NcclTestsOutputTest, CpuRanksNameTheProfilesCatalogGpuAndTheProcessor) {
  HardwareProfile p = CudaProfile();
  p.provenance.backend = "cpu";
  p.provenance.device = "AMD EPYC 7R13 Processor (2 cores)";
  p.provenance.warmup = 1;
  p.gpu = "local-cpu-core";
  const std::string text = Find(FormatNcclTests(p, Context()), "all_reduce.ranks2.nodes1")->text;
  EXPECT_NE(text.find("#  Rank  1 Group  0 Pid   4242 on gpu-node-1 device  1 [cpu] "
                      "local-cpu-core: AMD EPYC 7R13 Processor (2 cores)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("after 1 warm-up run (nccl-tests"), std::string::npos) << text;
  EXPECT_NE(text.find("; device D: the D-th CPU the run may use\n"), std::string::npos) << text;
}

TEST(NcclTestsOutputTest, NumbersAreRoundedAsNcclTestsRoundsThem) {
  struct Case {
    double value;
    int width;
    const char* text;
  };
  const Case cases[] = {{0, 6, "  0.00"},         {0.004, 6, "  0.00"},   {3.25, 6, "  3.25"},
                        {487.09, 6, "487.09"},    {1234.56, 6, "1234.6"}, {99999.4, 6, " 99999"},
                        {1234567, 6, " 1e+06"},   {66132, 7, "66132.0"},  {1234567, 7, "1234567"},
                        {12345678, 7, "1.2e+07"}, {9074.5, 7, "9074.50"}};
  for (const Case& c : cases) {
    EXPECT_EQ(NcclTestsNumber(c.value, c.width), c.text) << c.value << " in " << c.width;
  }
}

class WriteNcclTestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("nccl-tests-output-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(WriteNcclTestsTest, EachTextGoesToPrefixNameTxt) {
  const NcclTestsTexts t = FormatNcclTests(CudaProfile(), Context());
  std::vector<std::string> paths;
  const std::string prefix = (dir_ / "h100").string();
  ASSERT_TRUE(WriteNcclTests(t.texts, prefix, &paths).ok());
  ASSERT_EQ(paths.size(), t.texts.size());
  EXPECT_EQ(paths[0], prefix + ".all_reduce.ranks2.nodes1.txt");
  std::ostringstream text;
  text << std::ifstream(paths[0]).rdbuf();
  EXPECT_EQ(text.str(), t.texts[0].text);
  const auto files = std::distance(std::filesystem::directory_iterator(dir_), {});
  EXPECT_EQ(files, static_cast<long>(paths.size()));  // no temporary left
}

TEST_F(WriteNcclTestsTest, AMissingFolderIsAClearError) {
  const NcclTestsTexts t = FormatNcclTests(CudaProfile(), Context());
  std::vector<std::string> paths;
  const std::string prefix = (dir_ / "no" / "h100").string();
  const Status s = WriteNcclTests(t.texts, prefix, &paths);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            prefix + ".all_reduce.ranks2.nodes1.txt: cannot write: No such file or directory");
  EXPECT_TRUE(paths.empty());
}

}  // namespace
}  // namespace trainsim::calibrate
