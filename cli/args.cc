#include "cli/args.h"

#include <charconv>
#include <iostream>
#include <limits>

namespace trainsim {

bool ParsedArgs::Has(std::string_view name) const {
  for (const auto& [n, v] : given_) {
    if (n == name) return true;
  }
  return false;
}

std::string ParsedArgs::Value(std::string_view name, std::string fallback) const {
  for (auto it = given_.rbegin(); it != given_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return fallback;
}

Expected<int> ParsedArgs::Int(std::string_view name, int min, int max, std::string_view what,
                              int fallback) const {
  if (!Has(name)) return fallback;
  const std::string text = Value(name);
  if (std::optional<int> v = ParseIntInRange(text, min, max)) return *v;
  const std::string range = max == std::numeric_limits<int>::max()
                                ? " >= " + std::to_string(min)
                                : " from " + std::to_string(min) + " to " + std::to_string(max);
  return Status::InvalidInput(std::string(name) + ": expected " + std::string(what) + range +
                              ", got \"" + text + "\"");
}

Expected<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                               const std::vector<OptionSpec>& options) {
  ParsedArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      out.positional_.push_back(arg);
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      out.help_ = true;
      continue;
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& o : options) {
      if (o.name == arg) spec = &o;
    }
    if (!spec) return Status::InvalidInput("unknown option " + arg);
    if (spec->value.empty()) {
      out.given_.emplace_back(arg, "");
      continue;
    }
    if (i + 1 >= args.size()) {
      return Status::InvalidInput(arg + " needs " + std::string(spec->value));
    }
    out.given_.emplace_back(arg, args[++i]);
  }
  return out;
}

std::optional<int> ParseIntInRange(std::string_view text, int min, int max) {
  int v = 0;
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || stop != end || v < min || v > max) return std::nullopt;
  return v;
}

int Fail(const Status& s) {
  std::cerr << "trainsim: " << s.message() << "\n";
  return s.code() == Status::Code::kInternal ? 2 : 1;
}

}  // namespace trainsim
