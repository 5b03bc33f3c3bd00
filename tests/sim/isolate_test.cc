// RunIsolated's cancel flag: a raised flag kills the simulation process and
// gives Cancelled promptly; a flag that stays down changes nothing.
#include "sim/isolate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

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
