// Helpers the subcommands' argument parsers share.
#pragma once

#include <optional>
#include <string_view>

namespace trainsim {

// A whole decimal number within [min, max]; nullopt for anything else (empty,
// a sign or characters after the digits, out of range). Each caller says in
// its own message what it expected.
std::optional<int> ParseIntInRange(std::string_view text, int min, int max);

}  // namespace trainsim
