// A JSON document that remembers where each value came from.
//
// nlohmann::json does not keep source positions, and every user-facing file
// error here must name file:line:column. ParseJson builds a small tree of
// JsonValue nodes that carry their position; ObjectReader walks an object
// strictly (typed getters, unknown keys are errors). Output is written with
// nlohmann::json elsewhere; this is the input side only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainsim {

struct SourcePos {
  int line = 1;    // 1-based
  int column = 1;  // 1-based, in bytes
};

struct JsonMember;

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  Type type = Type::kNull;
  SourcePos pos;
  bool boolean = false;
  double number = 0;
  bool is_integer = false;  // number written without '.', 'e' or 'E'
  std::string text;         // string value, or the number as written
  std::vector<JsonValue> items;
  std::vector<JsonMember> members;  // in file order

  bool is_object() const { return type == Type::kObject; }
  bool is_array() const { return type == Type::kArray; }
  bool is_string() const { return type == Type::kString; }
  bool is_number() const { return type == Type::kNumber; }
  // nullptr when absent (or when this is not an object).
  const JsonValue* Find(std::string_view key) const;
  // "object", "array", "string", "number", "boolean", "null".
  const char* TypeName() const;
};

struct JsonMember {
  std::string key;
  SourcePos key_pos;
  JsonValue value;
};

// A value as an error message quotes it: "\"abc\"", 3.5, true, null, [],
// "an array", {}, "an object".
std::string Describe(const JsonValue& v);

// A number as messages quote it: up to 15 significant digits, no trailing zeros (3.5, 256, 1e+12).
std::string FormatNumber(double v);

// "file:line:col: message".
std::string Located(std::string_view file, SourcePos pos, std::string_view message);

// Parses RFC 8259 JSON (no comments, no trailing commas), its strings UTF-8
// (raw or escaped; a lone surrogate is refused). Errors name the file, line and
// column of the offending character.
Expected<JsonValue> ParseJson(std::string_view text, std::string_view filename);
Expected<JsonValue> ParseJsonFile(const std::string& path);
// The file's bytes, or an error naming it (a folder, a file that cannot be opened or read).
Expected<std::string> ReadJsonText(const std::string& path);

// Reads one JSON object field by field. Every getter marks its key as known;
// Finish() reports the first key that no getter asked for. Field paths in
// messages are dotted ("parallel.tp"). Getters leave *out untouched when the
// key is absent, so callers pre-fill defaults.
class ObjectReader {
 public:
  // `value` must outlive the reader. An error is recorded if it is not an object.
  ObjectReader(const JsonValue& value, std::string path, std::string file);

  ObjectReader& Int(std::string_view key, int64_t* out, int64_t min, int64_t max);
  ObjectReader& Int(std::string_view key, int* out, int min, int max);
  // `above_min`: the value must exceed `min` ("expected a number > 0").
  ObjectReader& Double(std::string_view key, double* out, double min, double max,
                       bool above_min = false);
  ObjectReader& Bool(std::string_view key, bool* out);
  ObjectReader& String(std::string_view key, std::string* out);
  // The string must be one of `allowed`; *out gets its index.
  ObjectReader& Enum(std::string_view key, const std::vector<std::string>& allowed, int* out);
  // Marks `key` as known and returns its value (nullptr if absent).
  const JsonValue* Child(std::string_view key);
  // Records an error unless `key` is present.
  ObjectReader& Require(std::string_view key);

  // First error so far, or the first unknown key. Ok when all is well.
  Status Finish();
  // Error at a value of this object: "file:l:c: path.key ...".
  Status ErrorAt(const JsonValue& at, std::string_view key, std::string_view message) const;
  std::string FieldPath(std::string_view key) const;
  const std::string& file() const { return file_; }
  bool ok() const { return status_.ok(); }

 private:
  void Know(std::string_view key);  // records key as known, once
  const JsonValue* Take(std::string_view key);
  void Fail(Status s) {
    if (status_.ok()) status_ = std::move(s);
  }

  const JsonValue& value_;
  std::string path_;
  std::string file_;
  std::vector<std::string> known_;
  Status status_;
};

}  // namespace trainsim
