// The source tree's layering: which folder may include which (core <- sim <- planner <- launch
// <- cli, gui; observe beside launch; calibrate on core alone), and the headers a folder keeps
// to itself (a first line "// Internal to planner/: ...").
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

#ifndef TRAINSIM_SOURCE_DIR
#define TRAINSIM_SOURCE_DIR "."
#endif

namespace trainsim {
namespace {

namespace fs = std::filesystem;

// The project folders each library folder may include from (its own among them).
const std::map<std::string, std::set<std::string>>& Allowed() {
  static const std::map<std::string, std::set<std::string>> allowed = {
      {"core", {"core"}},
      {"calibrate", {"core", "calibrate"}},
      {"sim", {"core", "sim"}},
      {"planner", {"core", "sim", "planner"}},
      {"launch", {"core", "sim", "planner", "launch", "calibrate"}},
      {"observe", {"core", "sim", "planner", "observe"}},
      {"cli", {"core", "sim", "planner", "launch", "observe", "cli"}},
      {"gui", {"core", "sim", "planner", "launch", "observe", "gui"}},
  };
  return allowed;
}

struct Include {
  std::string from;  // "cli/plan_cmd.cc"
  std::string path;  // "planner/search/plan.h"
};

bool IsSource(const fs::path& p) {
  const std::string e = p.extension().string();
  return e == ".h" || e == ".cc" || e == ".cu";
}

// Every `#include "folder/..."` of the library folders (tests inside them included).
std::vector<Include> Includes() {
  static const std::regex kInclude(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<Include> out;
  const fs::path root = TRAINSIM_SOURCE_DIR;
  for (const auto& [folder, _] : Allowed()) {
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(root / folder)) {
      if (!e.is_regular_file() || !IsSource(e.path())) continue;
      const std::string from = fs::relative(e.path(), root).generic_string();
      std::istringstream in(test::ReadFile(e.path()));
      std::string line;
      std::smatch m;
      while (std::getline(in, line)) {
        if (std::regex_search(line, m, kInclude)) out.push_back({from, m[1]});
      }
    }
  }
  return out;
}

std::string FolderOf(const std::string& path) { return path.substr(0, path.find('/')); }

bool IsTest(const std::string& path) {
  return path.rfind("tests/", 0) == 0 || path.find("/tests/") != std::string::npos;
}

TEST(LayeringTest, FoldersIncludeOnlyTheLayersBelowThem) {
  const std::vector<Include> includes = Includes();
  ASSERT_GT(includes.size(), 100u);
  for (const Include& i : includes) {
    if (IsTest(i.from)) continue;
    const std::string to = FolderOf(i.path);
    if (!Allowed().count(to)) continue;  // a system or third-party header
    EXPECT_TRUE(Allowed().at(FolderOf(i.from)).count(to)) << i.from << " includes " << i.path;
  }
}

TEST(LayeringTest, InternalHeadersAreIncludedOnlyFromTheirFolder) {
  const fs::path root = TRAINSIM_SOURCE_DIR;
  std::map<std::string, std::string> internal;  // header -> the folder that keeps it
  static const std::regex kMarker(R"(^// Internal to ([a-z_/]+)/:)");
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root / "planner")) {
    if (e.path().extension() != ".h") continue;
    const std::string text = test::ReadFile(e.path());
    std::smatch m;
    if (std::regex_search(text, m, kMarker)) {
      internal[fs::relative(e.path(), root).generic_string()] = m[1].str() + "/";
    }
  }
  EXPECT_GE(internal.size(), 10u);
  int checked = 0;
  for (const Include& i : Includes()) {
    auto it = internal.find(i.path);
    if (it == internal.end() || IsTest(i.from)) continue;
    ++checked;
    EXPECT_EQ(i.from.rfind(it->second, 0), 0u) << i.from << " includes internal " << i.path;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace trainsim
