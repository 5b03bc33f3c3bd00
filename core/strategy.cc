#include "core/strategy.h"

#include <cctype>

#include "core/scenario.h"
#include "core/scenario_sections.h"

namespace trainsim {

std::string UpperName(const Strategy& st) {
  std::string out(st.name);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string DegreesText(const ParallelConfig& p) {
  std::string out;
  for (const Strategy* st : kStrategies) {
    if (p.*st->degree > 1) out += Cat(" ", st->name, " ", p.*st->degree);
  }
  return out;
}

}  // namespace trainsim
