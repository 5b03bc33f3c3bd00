#include "launch/hosts.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "launch/names.h"

namespace trainsim::launch {
namespace {

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

bool IsSlots(const std::string& w) {
  const std::string kKey = "slots=";
  if (w.rfind(kKey, 0) != 0 || w.size() == kKey.size()) return false;
  return w.find_first_not_of("0123456789", kKey.size()) == std::string::npos;
}

}  // namespace

Expected<std::vector<std::string>> ParseHosts(std::string_view text, const std::string& file) {
  std::vector<std::string> hosts;
  std::istringstream in{std::string(text)};
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string where = file + ":" + std::to_string(number);
    line = line.substr(0, line.find('#'));
    std::vector<std::string> words = Words(line);
    if (words.empty()) continue;
    if (words.size() > 2 || (words.size() == 2 && !IsSlots(words[1]))) {
      const std::string shown =
          nlohmann::json(line).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
      return Status::InvalidInput(where + ": expected HOST or HOST slots=N, got " + shown);
    }
    if (Status st = ValidateHostName(words[0], where); !st.ok()) return st;
    hosts.push_back(words[0]);
  }
  if (hosts.empty()) return Status::InvalidInput(file + ": no hosts");
  return hosts;
}

Expected<std::vector<std::string>> LoadHostsFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidInput(path + ": cannot read the hosts file");
  std::stringstream text;
  text << in.rdbuf();
  return ParseHosts(text.str(), path);
}

}  // namespace trainsim::launch
