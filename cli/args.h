// The one argument parser of the subcommands: each declares its options (OptionSpec) and reads
// what ParseArgs gives back. Errors read the same everywhere: "unknown option --x",
// "--out needs a directory", "--jobs: expected a count from 1 to 100000, got "0"".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace trainsim {

// One option of a subcommand, and for one that takes a value, what the value is: the error
// for a missing one reads "NAME needs VALUE" ("--out needs a directory").
struct OptionSpec {
  std::string_view name;        // "--out"
  std::string_view value = {};  // empty: a flag
};

// A subcommand's arguments: its positional words, in order, and the options given.
class ParsedArgs {
 public:
  const std::vector<std::string>& positional() const { return positional_; }
  bool help() const { return help_; }  // --help or -h was given
  bool Has(std::string_view name) const;
  // The option's value (the last one given), or `fallback` when it is absent.
  std::string Value(std::string_view name, std::string fallback = "") const;
  // A whole-number option within [min, max], or `fallback` when it is absent. The error names
  // the option and `what` it expected: "--ranks: expected a whole number from 1 to 1000000,
  // got "x"" (">= 1" when max is INT_MAX).
  Expected<int> Int(std::string_view name, int min, int max, std::string_view what,
                    int fallback) const;

 private:
  friend Expected<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                        const std::vector<OptionSpec>& options);
  std::vector<std::string> positional_;
  std::vector<std::pair<std::string, std::string>> given_;  // name, value ("" for a flag)
  bool help_ = false;
};

// Reads `args` (the words after the subcommand's name) against `options`. A word starting
// with "-" (but "-" alone) is an option: one not among `options` is an error, as is one that
// needs a value and ends the line. --help and -h are always known.
Expected<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                               const std::vector<OptionSpec>& options);

// A whole decimal number within [min, max]; nullopt for anything else (empty,
// a sign or characters after the digits, out of range). Each caller says in
// its own message what it expected.
std::optional<int> ParseIntInRange(std::string_view text, int min, int max);

// Prints "trainsim: MESSAGE" on stderr; the exit code: 2 for an internal error, else 1.
int Fail(const Status& s);

}  // namespace trainsim
