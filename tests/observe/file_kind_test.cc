// The checks that pick observe's reader when --format is not given (observe/file_kind.h).
#include "observe/file_kind.h"

#include <gtest/gtest.h>

#include <string>

#ifndef TRAINSIM_SOURCE_DIR
#define TRAINSIM_SOURCE_DIR "."
#endif

namespace trainsim::observe {
namespace {

const std::string kData = TRAINSIM_SOURCE_DIR "/tests/observe/data/";

TEST(FileKindTest, EachFixtureIsTakenForWhatItIs) {
  EXPECT_TRUE(LooksLikeKineto(FileHead(kData + "kineto-synthetic.json")));
  EXPECT_TRUE(LooksLikeNcclTests(kData + "nccl-tests-p5-2node.txt"));
  for (const char* other :
       {"megatron-synthetic.log", "cloudwatch-get-metric-data.json", "trainsim-local.jsonl"}) {
    SCOPED_TRACE(other);
    EXPECT_FALSE(LooksLikeKineto(FileHead(kData + other)));
    EXPECT_FALSE(LooksLikeNcclTests(kData + other));
  }
}

TEST(FileKindTest, HeadsAreShortAndAMissingFileIsEmpty) {
  EXPECT_EQ(FileHead(kData + "no-such-file"), "");
  EXPECT_FALSE(LooksLikeNcclTests(kData + "no-such-file"));
  EXPECT_LE(FileHead(kData + "kineto-synthetic.json").size(), 65536u);
  EXPECT_TRUE(LooksLikeKineto("  \n{\"schemaVersion\": 1, \"traceEvents\": []}"));
  EXPECT_FALSE(LooksLikeKineto("[{\"traceEvents\": 1}]"));  // not an object
  EXPECT_FALSE(LooksLikeKineto(""));
}

}  // namespace
}  // namespace trainsim::observe
