// RunIsolated's cancel flag: a raised flag kills the simulation process and
// gives Cancelled promptly; a flag that stays down changes nothing. Progress
// reports reach the parent in order, beside the reply.
#include "sim/isolate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace trainsim::sim {
namespace {

TEST(RunIsolated, ACancelFlagKillsTheChildAndSaysCancelled) {
  std::atomic<bool> cancel{false};
  std::thread raiser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  // A simulation that never ends: only the cancel can end this test (without
  // it, ctest's timeout fails it).
  Expected<std::string> out = RunIsolated(
      []() -> std::string {
        for (;;) pause();
      },
      &cancel);
  raiser.join();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Status::Code::kCancelled);
  EXPECT_EQ(out.status().message(), "simulation cancelled");
}

// Many reports, more than a pipe holds at once, then a large reply: every report arrives in
// order, whole, and the reply is intact. Without a callback, reports go nowhere.
TEST(RunIsolated, ProgressReportsArriveInOrderBesideTheReply) {
  std::vector<Progress> seen;
  const std::string big(200000, 'x');
  Expected<std::string> out = RunIsolated(
      [&big] {
        for (int i = 0; i < 5000; ++i) ReportProgress({i, 5000, "part " + std::to_string(i)});
        return big;
      },
      nullptr, [&](const Progress& p) { seen.push_back(p); });
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(*out, big);
  ASSERT_EQ(seen.size(), 5000u);
  for (int i = 0; i < 5000; ++i) {
    EXPECT_EQ(seen[i].done, i);
    EXPECT_EQ(seen[i].total, 5000);
    EXPECT_EQ(seen[i].what, "part " + std::to_string(i));
  }
  Expected<std::string> quiet = RunIsolated([] {
    ReportProgress({1, 2, "unheard"});
    return std::string("done");
  });
  ASSERT_TRUE(quiet.ok()) << quiet.status().message();
  EXPECT_EQ(*quiet, "done");
}

TEST(RunIsolated, AFlagRaisedBeforehandRunsNothingToTheEnd) {
  std::atomic<bool> cancel{true};
  Expected<std::string> out = RunIsolated([] { return std::string("finished"); }, &cancel);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Status::Code::kCancelled);
}

TEST(RunIsolated, AFlagThatStaysDownChangesNothing) {
  std::atomic<bool> cancel{false};
  Expected<std::string> out = RunIsolated([] { return std::string("finished"); }, &cancel);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(*out, "finished");
}

}  // namespace
}  // namespace trainsim::sim
