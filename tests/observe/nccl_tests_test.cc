// nccl-tests output read back (observe/nccl_tests.h): a real 2 x p5.48xlarge all_reduce_perf
// excerpt under srun -l, and the refusals.
#include "observe/nccl_tests.h"

#include <gtest/gtest.h>

#include <string>

namespace trainsim::observe {
namespace {

const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/observe/data/";

TEST(NcclTests, TwoP5NodesAllReduce) {
  Expected<NcclTestsRun> run = LoadNcclTests(kData + "nccl-tests-p5-2node.txt", std::nullopt);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(*run->op, NcclOp::kAllReduce);
  EXPECT_EQ(run->ranks, 16);
  EXPECT_EQ(run->nodes, 2);
  EXPECT_EQ(run->gpu, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(run->rows.size(), 9u);
  const NcclRow& big = run->rows[7];  // the README's 2 GiB row
  EXPECT_DOUBLE_EQ(big.bytes, 2147483648.0);
  EXPECT_EQ(big.count, 536870912);
  EXPECT_EQ(big.type, "float");
  EXPECT_EQ(big.redop, "sum");
  EXPECT_EQ(big.root, -1);
  EXPECT_DOUBLE_EQ(big.time_us, 9074.5);
  EXPECT_DOUBLE_EQ(big.algbw_GBps, 236.65);
  EXPECT_DOUBLE_EQ(big.busbw_GBps, 443.72);
  EXPECT_DOUBLE_EQ(big.inplace_busbw_GBps, 442.06);
  // busbw = algbw x 2 (n - 1) / n for all-reduce, as nccl-tests defines it (n = 16)
  EXPECT_NEAR(big.busbw_GBps, big.algbw_GBps * 2 * 15 / 16, 0.01);
}

TEST(NcclTests, Errors) {
  const std::string rank = "#  Rank  0 Group  0 Pid  1 on host-a device  0 [0x53] NVIDIA H100\n";
  const std::string row =
      "     1048576        262144     float     sum      -1    123.2    8.51   15.95      0    "
      "121.3    8.64   16.21      0\n";
  struct Case {
    std::string text;
    std::optional<NcclOp> op;
    std::string message;
  };
  const Case kCases[] = {
      {rank + row, std::nullopt,
       "x.txt: the output does not name its test (no *_perf command line in it): give --op "
       "all_reduce|all_gather|reduce_scatter|..."},
      {"# ./build/all_gather_perf -b 8\n" + rank + row, NcclOp::kAllReduce,
       "x.txt:1: the output of all_gather_perf, not of all_reduce_perf (--op)"},
      {row, NcclOp::kAllReduce,
       "x.txt: no \"#  Rank N Group G Pid P on HOST device D\" line: the output is cut, or not "
       "nccl-tests'"},
      {rank + "     1048576        262144     float     sum      -1    123.2    8.51\n",
       NcclOp::kAllReduce,
       "x.txt:2: a result row of 7 columns; expected 13 (size count type redop root, then time "
       "algbw busbw #wrong out of place and in place): a cut line?"},
      {rank + "     1048576        262144     float     sum      -1    fast    8.51   15.95      "
              "0    121.3    8.64   16.21      0\n",
       NcclOp::kAllReduce, "x.txt:2: column 6: expected a number, got \"fast\""},
      // A count beyond int64 was cast to it (undefined behaviour; found by
      // fuzz/nccl_tests_fuzzer.cc), a fractional root truncated.
      {rank + "     1048576        5e186     float     sum      -1    123.2    8.51   15.95      "
              "0    121.3    8.64   16.21      0\n",
       NcclOp::kAllReduce, "x.txt:2: column 2: expected a whole number, got \"5e186\""},
      {rank + "     1048576        262144     float     sum      0.5    123.2    8.51   15.95      "
              "0    121.3    8.64   16.21      0\n",
       NcclOp::kAllReduce, "x.txt:2: column 5: expected a whole number, got \"0.5\""},
      {rank, NcclOp::kAllReduce,
       "x.txt: no nccl-tests result row (\"SIZE COUNT TYPE REDOP ROOT TIME ALGBW BUSBW #WRONG "
       "...\")"},
      {"# ./all_reduce_perf\n" + rank + row + "# ./reduce_scatter_perf\n" + row, std::nullopt,
       "x.txt:4: a second test (reduce_scatter_perf after all_reduce_perf): give each test its "
       "own file"},
  };
  for (const Case& c : kCases) {
    Expected<NcclTestsRun> run = ParseNcclTests(c.text, "x.txt", c.op);
    ASSERT_FALSE(run.ok()) << c.text;
    EXPECT_EQ(run.status().message(), c.message);
  }
  EXPECT_EQ(ParseNcclOp("all_reduce_perf", "--op").value(), NcclOp::kAllReduce);
  EXPECT_EQ(ParseNcclOp("gather", "--op").status().message(),
            "--op: unknown nccl-tests test \"gather\"; expected all_reduce, all_gather, "
            "reduce_scatter, alltoall, sendrecv, broadcast or reduce");
}

}  // namespace
}  // namespace trainsim::observe
