// A trace's sized collectives grouped as nccl-tests rows (observe/trace_comms.h): every op name
// the trace readers give, the bus factors, the groups placed on nodes, the warm-up left out.
#include "observe/trace_comms.h"

#include <gtest/gtest.h>

namespace trainsim::observe {
namespace {

TEST(TraceComms, GroupsSizesAndPlacesThemOnNodes) {
  KinetoTrace t;
  t.file = "t.json";
  t.steps.resize(2);
  t.steps[0].comms = {{"all_reduce", 1e6, 8, 1.0, {}}};  // the warm-up step: left out
  t.steps[1].comms = {{"all_to_all", 8e6, 8, 100e-6, {0, 1, 2, 3, 4, 5, 6, 7}},  // one node of 8
                      {"all_to_all", 8e6, 8, 300e-6, {0, 1, 2, 3, 4, 5, 6, 7}},
                      {"send_recv", 1e6, 2, 50e-6, {0, 8}},  // two nodes
                      {"all_reduce", 4e6, 16, 200e-6, {}},   // not recorded: the fewest nodes, 2
                      {"barrier", 4, 8, 10e-6, {}},          // no nccl-tests test: left out
                      {"all_gather", 2e6, 1, 10e-6, {}}};    // one member: no collective
  const std::vector<TraceCollectives> c = CollectivesOfTraces({t}, 1, 8);
  ASSERT_EQ(c.size(), 3u);  // in order of op: all_reduce, alltoall, sendrecv
  EXPECT_EQ(*c[0].run.op, NcclOp::kAllReduce);
  EXPECT_EQ(c[0].run.nodes, 2);
  // busbw = 4 MB / 200 us x 2 x 15 / 16
  EXPECT_NEAR(c[0].run.rows[0].busbw_GBps, 4e6 / 200e-6 / 1e9 * 2 * 15 / 16, 1e-9);
  EXPECT_EQ(*c[1].run.op, NcclOp::kAllToAll);
  EXPECT_EQ(c[1].run.nodes, 1);
  EXPECT_EQ(c[1].samples[0], 2);
  EXPECT_DOUBLE_EQ(c[1].run.rows[0].time_us, 200);  // the median of 100 and 300
  EXPECT_NEAR(c[1].run.rows[0].busbw_GBps, 8e6 / 200e-6 / 1e9 * 7 / 8, 1e-9);
  EXPECT_EQ(*c[2].run.op, NcclOp::kSendRecv);
  EXPECT_EQ(c[2].run.nodes, 2);
  EXPECT_NEAR(c[2].run.rows[0].busbw_GBps, 1e6 / 50e-6 / 1e9, 1e-9);  // factor 1
  // Without GPUs per node the groups are not placed.
  EXPECT_EQ(CollectivesOfTraces({t}, 1, 0)[0].run.nodes, 0);
}

}  // namespace
}  // namespace trainsim::observe
