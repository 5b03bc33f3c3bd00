// Helpers the subcommands' argument parsers share.
#pragma once

#include <optional>
#include <string_view>

#include "core/status.h"

namespace trainsim {

// A whole decimal number within [min, max]; nullopt for anything else (empty,
// a sign or characters after the digits, out of range). Each caller says in
// its own message what it expected.
std::optional<int> ParseIntInRange(std::string_view text, int min, int max);

// Prints "trainsim: MESSAGE" on stderr; the exit code: 2 for an internal error, else 1.
int Fail(const Status& s);

}  // namespace trainsim
