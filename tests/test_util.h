// Small helpers shared by the GoogleTest suites.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/catalog.h"

namespace trainsim::test {

// The built-in catalog (Catalog::LoadDefault), loaded once per test program.
// Without it no test could run: the loader's message, then abort.
inline const Catalog& BuiltinCatalog() {
  static const Catalog catalog = [] {
    Expected<Catalog> c = Catalog::LoadDefault();
    if (!c.ok()) {
      std::fprintf(stderr, "built-in catalog: %s\n", c.status().message().c_str());
      std::abort();
    }
    return std::move(*c);
  }();
  return catalog;
}

// The file's bytes; "" when it cannot be read (the test's checks then fail).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text's lines, without their newlines.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace trainsim::test
