#include "launch/bundle_writer.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "launch/hosts.h"
#include "tests/test_util.h"

namespace trainsim::launch {

using trainsim::test::ReadFile;
namespace {

namespace fs = std::filesystem;

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "writer_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string root_;
};

const Bundle kBundle = {"job",
                        {{"README.md", "read me\n", false},
                         {"sagemaker/launch.py", "print(1)\n", true},
                         {"hostfile", "node-0 slots=8\n", false}},
                        {}};

TEST_F(WriterTest, WritesFilesModesAndTheManifest) {
  const fs::path dir = fs::path(root_) / "a b" / "out";  // parents are created
  ASSERT_TRUE(WriteBundle(dir.string(), kBundle).ok());
  EXPECT_EQ(ReadFile(dir / "README.md"), "read me\n");
  EXPECT_EQ(ReadFile(dir / "sagemaker/launch.py"), "print(1)\n");
  EXPECT_EQ(ReadFile(dir / kManifestName), "README.md\nsagemaker/launch.py\nhostfile\n");
  EXPECT_NE(fs::status(dir / "sagemaker/launch.py").permissions() & fs::perms::owner_exec,
            fs::perms::none);
  EXPECT_EQ(fs::status(dir / "hostfile").permissions() & fs::perms::owner_exec, fs::perms::none);
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name[0] != '.' || name == kManifestName) << "a temporary left: " << name;
  }
}

TEST_F(WriterTest, RewritesItsOwnFolderAndRemovesWhatTheNewBundleLacks) {
  const fs::path dir = fs::path(root_) / "out";
  ASSERT_TRUE(WriteBundle(dir.string(), kBundle).ok());
  std::ofstream(dir / "notes.txt") << "mine\n";  // not in the manifest: kept
  const Bundle smaller = {"job", {{"README.md", "new\n", false}}, {}};
  ASSERT_TRUE(WriteBundle(dir.string(), smaller).ok());
  EXPECT_EQ(ReadFile(dir / "README.md"), "new\n");
  EXPECT_FALSE(fs::exists(dir / "hostfile"));
  EXPECT_FALSE(fs::exists(dir / "sagemaker"));  // emptied, removed
  EXPECT_EQ(ReadFile(dir / "notes.txt"), "mine\n");
  EXPECT_EQ(ReadFile(dir / kManifestName), "README.md\n");
}

TEST_F(WriterTest, AManifestCannotRemoveFilesOutsideTheFolder) {
  const fs::path dir = fs::path(root_) / "out";
  fs::create_directories(dir);
  std::ofstream(fs::path(root_) / "precious") << "x";
  std::ofstream(dir / kManifestName) << "../precious\n" << (fs::path(root_) / "precious").string();
  ASSERT_TRUE(WriteBundle(dir.string(), kBundle).ok());
  EXPECT_TRUE(fs::exists(fs::path(root_) / "precious"));
}

TEST_F(WriterTest, RefusesAFolderOfOtherFiles) {
  const fs::path dir = fs::path(root_) / "home";
  fs::create_directories(dir);
  std::ofstream(dir / "thesis.tex") << "x";
  EXPECT_EQ(WriteBundle(dir.string(), kBundle).message(),
            dir.string() +
                ": not empty and not written by `trainsim launch` (no .trainsim-launch); "
                "choose another --out or empty it");
  EXPECT_FALSE(fs::exists(dir / "README.md"));
  std::ofstream(fs::path(root_) / "file") << "x";
  EXPECT_EQ(WriteBundle(root_ + "/file", kBundle).message(),
            root_ + "/file: exists and is not a folder; choose another --out");
  fs::create_directories(fs::path(root_) / "empty");
  EXPECT_TRUE(WriteBundle(root_ + "/empty", kBundle).ok());
}

TEST(Hosts, ParsesNamesAndSlots) {
  Expected<std::vector<std::string>> h = ParseHosts(
      "# cluster\nhost-a slots=8\n\n  host-b   # spare\nip-10-0-0-1.ec2.internal\n", "h");
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(*h, (std::vector<std::string>{"host-a", "host-b", "ip-10-0-0-1.ec2.internal"}));
}

TEST(Hosts, Errors) {
  EXPECT_EQ(ParseHosts("a\nb;reboot\n", "my hosts").status().message(),
            "my hosts:2: \"b;reboot\" is not a valid host name: ';' at position 2 is not allowed "
            "(1 to 253 letters, digits, '.' and '-', starting with a letter or digit)");
  EXPECT_EQ(ParseHosts("a $(reboot)\n", "h").status().message(),
            "h:1: expected HOST or HOST slots=N, got \"a $(reboot)\"");
  EXPECT_EQ(ParseHosts("a slots=x\n", "h").status().message(),
            "h:1: expected HOST or HOST slots=N, got \"a slots=x\"");
  EXPECT_EQ(ParseHosts("# none\n\n", "h").status().message(), "h: no hosts");
  EXPECT_EQ(LoadHostsFile("/nonexistent/hosts").status().message(),
            "/nonexistent/hosts: cannot read the hosts file");
}

}  // namespace
}  // namespace trainsim::launch
