#include "observe/file_kind.h"

#include <fstream>

namespace trainsim::observe {

std::string FileHead(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(1 << 16, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

bool LooksLikeKineto(std::string_view head) {
  const size_t brace = head.find_first_not_of(" \t\r\n");
  return brace != std::string_view::npos && head[brace] == '{' &&
         head.find("\"traceEvents\"") != std::string_view::npos;
}

bool LooksLikeNcclTests(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  for (int n = 0; n < 2000 && std::getline(in, line); ++n) {
    if (line.find("algbw") != std::string::npos && line.find("busbw") != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace trainsim::observe
