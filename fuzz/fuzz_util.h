// What the libFuzzer harnesses (fuzz/*_fuzzer.cc, docs/fuzzing.md) share: the checks they
// make of a parser's answer, a writer for the located JSON tree, a digest of a parsed
// scenario, and the built-in catalog.
//
// A check that fails prints what it found to stderr and traps (__builtin_trap), which
// libFuzzer reports as a crash and saves the input of. Everything here is for the harnesses:
// single-threaded, and free to abort.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/catalog.h"
#include "core/json_doc.h"
#include "core/scenario.h"
#include "core/search.h"
#include "observe/run_log.h"

namespace trainsim::fuzz {

// The fuzzer's bytes as text.
inline std::string_view Text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Prints "fuzz check failed: what" and `detail` to stderr, then traps, unless `ok`.
void Check(bool ok, std::string_view what, std::string_view detail = {});

// Where a message says the problem is. Each returns false when the message does not start so.
//   "FILE:L:C: ..." (the located JSON reader's form): *line, *column from 1.
bool StartsWithLineColumn(std::string_view message, std::string_view file, int* line, int* column);
//   "FILE:L: ..." or "FILE:L:C: ...": *line from 1.
bool StartsWithLine(std::string_view message, std::string_view file, int* line);
//   "FILE: ..." (a whole-file error, or one naming a field path without a place).
bool StartsWithFile(std::string_view message, std::string_view file);

// Whether line `line` (from 1) exists in `text` and has at least column - 1 bytes (a column
// one past the last byte is the end of the line). Lines end at '\n'.
bool PositionExists(std::string_view text, int line, int column);
// Lines in `text` ("a" and "a\n" have 1; "" has 1).
int LineCount(std::string_view text);

// Checks that `message` starts with "FILE:L:C: " at a position that exists in `text`.
void CheckLocated(std::string_view message, std::string_view file, std::string_view text);

// Checks that `message` starts with "FILE:L:C: " at a position that exists in `text`, or is
// a whole-file error, "FILE: ..." (no place: what the format's header documents as such).
void CheckLocatedOrWholeFile(std::string_view message, std::string_view file,
                             std::string_view text);

// Whether `text` is valid UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool IsUtf8(std::string_view text);

// The tree written back as compact JSON: members in file order, numbers as written, strings
// with '"', '\\' and control bytes escaped and every other byte as read. ParseJson reads it
// back to the same tree (positions aside).
std::string WriteJson(const JsonValue& v);

// The parsed scenario's fields (what the simulator reads), for comparing two parses of one
// scenario; PlanningScenarioDigest adds what the planner and the sweep read.
nlohmann::ordered_json ScenarioDigest(const Scenario& s);
nlohmann::ordered_json PlanningScenarioDigest(const PlanningScenario& s);

// The built-in catalog (Catalog::LoadDefault), loaded once; aborts when it cannot be loaded.
const Catalog& BuiltinCatalog();  // tests/test_util.h's, loaded once

// A run-log format picked by a fuzz input's first byte (nullopt: detected).
std::optional<observe::LogFormat> LogFormatOfByte(uint8_t b);

}  // namespace trainsim::fuzz
