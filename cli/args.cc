#include "cli/args.h"

#include <charconv>
#include <iostream>

namespace trainsim {

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
