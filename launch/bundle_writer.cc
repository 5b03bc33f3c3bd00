#include "launch/bundle_writer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/durable_file.h"

namespace trainsim::launch {
namespace {

namespace fs = std::filesystem;

// The paths an earlier bundle's manifest lists; only plain relative paths
// without ".." are taken, so removing them stays inside the folder.
std::vector<std::string> ReadManifest(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> paths;
  for (std::string line; std::getline(in, line);) {
    const fs::path p(line);
    const bool inside =
        !line.empty() && p.is_relative() &&
        std::none_of(p.begin(), p.end(), [](const fs::path& c) { return c == ".."; });
    if (inside) paths.push_back(line);
  }
  return paths;
}

Status CheckFolder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return Status::Ok();
  if (!fs::is_directory(dir, ec)) {
    return Status::InvalidInput(dir.string() +
                                ": exists and is not a folder; choose another --out");
  }
  if (fs::is_empty(dir, ec) || fs::is_regular_file(dir / kManifestName, ec)) return Status::Ok();
  return Status::InvalidInput(dir.string() +
                              ": not empty and not written by `trainsim launch` (no " +
                              kManifestName + "); choose another --out or empty it");
}

Status WriteFile(const fs::path& path, const std::string& content, bool executable) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  return WriteFileDurably(path.string(), content, executable ? 0755 : 0644);
}

}  // namespace

Status WriteBundle(const std::string& dir_name, const Bundle& bundle) {
  const fs::path dir(dir_name);
  if (Status st = CheckFolder(dir); !st.ok()) return st;
  const std::vector<std::string> earlier = ReadManifest(dir / kManifestName);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::InvalidInput(dir_name + ": cannot create the folder: " + ec.message());
  std::string manifest;
  for (const BundleFile& f : bundle.files) {
    if (Status st = WriteFile(dir / f.path, f.content, f.executable); !st.ok()) return st;
    manifest += f.path + "\n";
  }
  for (const std::string& old : earlier) {
    const bool kept = std::any_of(bundle.files.begin(), bundle.files.end(),
                                  [&](const BundleFile& f) { return f.path == old; });
    if (kept || !fs::is_regular_file(dir / old, ec)) continue;
    fs::remove(dir / old, ec);
    const fs::path parent = (dir / old).parent_path();
    if (parent != dir && fs::is_empty(parent, ec)) fs::remove(parent, ec);
  }
  return WriteFile(dir / kManifestName, manifest, false);
}

}  // namespace trainsim::launch
