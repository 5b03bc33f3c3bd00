#include "core/json_doc.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace trainsim {
namespace {

// Recursive-descent parser over a string_view, tracking line and column.
class Parser {
 public:
  Parser(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  Expected<JsonValue> ParseDocument() {
    JsonValue root;
    SkipSpace();
    if (!ParseValue(&root, 0)) return error_;
    SkipSpace();
    if (i_ < text_.size()) return Fail("unexpected " + Found() + " after the JSON value");
    return root;
  }

 private:
  static constexpr int kMaxDepth = 256;

  SourcePos Here() const { return pos_; }
  char Peek() const { return i_ < text_.size() ? text_[i_] : '\0'; }
  bool AtEnd() const { return i_ >= text_.size(); }
  void Advance() {
    if (text_[i_] == '\n') {
      ++pos_.line;
      pos_.column = 1;
    } else {
      ++pos_.column;
    }
    ++i_;
  }
  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')) {
      Advance();
    }
  }
  Status Fail(std::string_view what) {
    error_ = Status::InvalidInput(
        Located(file_, pos_, std::string("invalid JSON: ") + std::string(what)));
    return error_;
  }
  bool FailB(std::string_view what) {
    Fail(what);
    return false;
  }
  // What stands at the current position, for "expected X, got Y".
  std::string Found() const {
    if (AtEnd()) return "end of input";
    unsigned char c = static_cast<unsigned char>(Peek());
    if (c < 0x20 || c >= 0x7f)
      return "byte 0x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
    return std::string("'") + Peek() + "'";
  }
  bool Expect(char c, std::string_view what) {
    if (Peek() != c) return FailB("expected " + std::string(what) + ", got " + Found());
    Advance();
    return true;
  }
  bool Literal(std::string_view word) {
    if (text_.substr(i_, word.size()) != word) return FailB("expected a value, got " + Found());
    for (size_t k = 0; k < word.size(); ++k) Advance();
    return true;
  }

  bool ParseValue(JsonValue* out, int depth) {
    if (depth > kMaxDepth) return FailB("nesting deeper than 256 levels");
    out->pos = Here();
    switch (Peek()) {
      case '{':
        return ParseObject(out, depth);
      case '[':
        return ParseArray(out, depth);
      case '"':
        out->type = JsonValue::Type::kString;
        return ParseString(&out->text);
      case 't':
        out->type = JsonValue::Type::kBool;
        out->boolean = true;
        return Literal("true");
      case 'f':
        out->type = JsonValue::Type::kBool;
        return Literal("false");
      case 'n':
        out->type = JsonValue::Type::kNull;
        return Literal("null");
      default:
        if (Peek() == '-' || (Peek() >= '0' && Peek() <= '9')) return ParseNumber(out);
        return FailB("expected a value, got " + Found());
    }
  }

  bool ParseObject(JsonValue* out, int depth) {
    out->type = JsonValue::Type::kObject;
    Advance();  // '{'
    SkipSpace();
    if (Peek() == '}') {
      Advance();
      return true;
    }
    while (true) {
      SkipSpace();
      JsonMember m;
      m.key_pos = Here();
      if (Peek() == '}' && !out->members.empty())
        return FailB("expected a string key after ',', got '}' (no trailing commas in JSON)");
      if (Peek() != '"') return FailB("expected a string key, got " + Found());
      if (!ParseString(&m.key)) return false;
      for (const JsonMember& prev : out->members) {
        if (prev.key == m.key) {
          pos_ = m.key_pos;
          return FailB("duplicate key \"" + m.key + "\"");
        }
      }
      SkipSpace();
      if (!Expect(':', "':' after the key")) return false;
      SkipSpace();
      if (!ParseValue(&m.value, depth + 1)) return false;
      out->members.push_back(std::move(m));
      SkipSpace();
      if (Peek() == ',') {
        Advance();
        continue;
      }
      return Expect('}', "',' or '}' in object");
    }
  }

  bool ParseArray(JsonValue* out, int depth) {
    out->type = JsonValue::Type::kArray;
    Advance();  // '['
    SkipSpace();
    if (Peek() == ']') {
      Advance();
      return true;
    }
    while (true) {
      SkipSpace();
      JsonValue item;
      if (!ParseValue(&item, depth + 1)) return false;
      out->items.push_back(std::move(item));
      SkipSpace();
      if (Peek() == ',') {
        Advance();
        continue;
      }
      return Expect(']', "',' or ']' in array");
    }
  }

  bool ParseString(std::string* out) {
    Advance();  // opening quote
    while (true) {
      if (AtEnd()) return FailB("unterminated string");
      char c = Peek();
      if (c == '"') {
        Advance();
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return FailB("control character in string");
      if (static_cast<unsigned char>(c) >= 0x80) {
        if (!ParseUtf8(out)) return false;
        continue;
      }
      if (c != '\\') {
        out->push_back(c);
        Advance();
        continue;
      }
      Advance();
      if (!ParseEscape(out)) return false;
    }
  }

  // One character of two to four bytes (its first byte >= 0x80) into *out. JSON text is UTF-8
  // (RFC 8259 section 8.1), and what is read here is written with nlohmann::json, which
  // refuses anything else.
  bool ParseUtf8(std::string* out) {
    const SourcePos start = Here();
    const auto lead = static_cast<unsigned char>(Peek());
    int more = 0;
    unsigned code = 0, min = 0;
    if ((lead & 0xE0) == 0xC0) {
      more = 1, code = lead & 0x1F, min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      more = 2, code = lead & 0x0F, min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      more = 3, code = lead & 0x07, min = 0x10000;
    } else {
      return FailB("invalid UTF-8 in string: " + Found());
    }
    out->push_back(Peek());
    Advance();
    for (int k = 0; k < more; ++k) {
      if (AtEnd() || (static_cast<unsigned char>(Peek()) & 0xC0) != 0x80) {
        return FailB("invalid UTF-8 in string: " + Found());
      }
      code = code << 6 | (static_cast<unsigned char>(Peek()) & 0x3F);
      out->push_back(Peek());
      Advance();
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      pos_ = start;
      return FailB("invalid UTF-8 in string: an overlong, surrogate or out-of-range sequence");
    }
    return true;
  }

  bool ParseEscape(std::string* out) {
    char e = Peek();
    static constexpr std::string_view kFrom = "\"\\/bfnrt";
    static constexpr std::string_view kTo = "\"\\/\b\f\n\r\t";
    if (size_t k = kFrom.find(e); k != std::string_view::npos && e != '\0') {
      out->push_back(kTo[k]);
      Advance();
      return true;
    }
    if (e != 'u') return FailB("invalid escape in string");
    Advance();
    unsigned code = 0;
    if (!Hex4(&code)) return false;
    if (code >= 0xD800 && code <= 0xDBFF) {  // surrogate pair
      if (text_.substr(i_, 2) != "\\u") return FailB("unpaired surrogate in \\u escape");
      Advance();
      Advance();
      unsigned low = 0;
      if (!Hex4(&low)) return false;
      if (low < 0xDC00 || low > 0xDFFF) return FailB("invalid low surrogate in \\u escape");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    } else if (code >= 0xDC00 && code <= 0xDFFF) {
      return FailB("unpaired low surrogate in \\u escape");
    }
    AppendUtf8(code, out);
    return true;
  }

  bool Hex4(unsigned* code) {
    for (int k = 0; k < 4; ++k) {
      char h = Peek();
      int v = (h >= '0' && h <= '9')   ? h - '0'
              : (h >= 'a' && h <= 'f') ? h - 'a' + 10
              : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                       : -1;
      if (v < 0) return FailB("expected 4 hex digits in \\u escape");
      *code = *code * 16 + static_cast<unsigned>(v);
      Advance();
    }
    return true;
  }

  static void AppendUtf8(unsigned c, std::string* out) {
    if (c < 0x80) {
      out->push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (c >> 6)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (c >> 12)));
      out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (c >> 18)));
      out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }

  bool Digits() {
    if (!(Peek() >= '0' && Peek() <= '9'))
      return FailB("expected a digit in number, got " + Found());
    while (Peek() >= '0' && Peek() <= '9') Advance();
    return true;
  }

  bool ParseNumber(JsonValue* out) {
    out->type = JsonValue::Type::kNumber;
    size_t start = i_;
    bool integer = true;
    if (Peek() == '-') Advance();
    if (Peek() == '0') {
      Advance();
      if (Peek() >= '0' && Peek() <= '9') return FailB("leading zero in number");
    } else if (!Digits()) {
      return false;
    }
    if (Peek() == '.') {
      integer = false;
      Advance();
      if (!Digits()) return false;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      integer = false;
      Advance();
      if (Peek() == '+' || Peek() == '-') Advance();
      if (!Digits()) return false;
    }
    out->text = std::string(text_.substr(start, i_ - start));
    out->is_integer = integer;
    errno = 0;
    out->number = std::strtod(out->text.c_str(), nullptr);
    if (!std::isfinite(out->number)) {
      pos_ = out->pos;
      return FailB("number out of range");
    }
    return true;
  }

  std::string_view text_;
  std::string_view file_;
  size_t i_ = 0;
  SourcePos pos_;
  Status error_;
};

}  // namespace

std::string FormatNumber(double v) {
  std::ostringstream os;
  os.precision(15);
  os << v;
  return os.str();
}

std::string Describe(const JsonValue& v) {
  switch (v.type) {
    case JsonValue::Type::kString:
      return "\"" + v.text + "\"";
    case JsonValue::Type::kNumber:
      return v.text;
    case JsonValue::Type::kBool:
      return v.boolean ? "true" : "false";
    case JsonValue::Type::kArray:
      return v.items.empty() ? "[]" : "an array";
    case JsonValue::Type::kObject:
      return v.members.empty() ? "{}" : "an object";
    default:
      return v.TypeName();
  }
}

const JsonValue* JsonValue::Find(std::string_view key) const {
  for (const JsonMember& m : members) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

const char* JsonValue::TypeName() const {
  switch (type) {
    case Type::kNull:
      return "null";
    case Type::kBool:
      return "boolean";
    case Type::kNumber:
      return "number";
    case Type::kString:
      return "string";
    case Type::kArray:
      return "array";
    case Type::kObject:
      return "object";
  }
  return "?";
}

std::string Located(std::string_view file, SourcePos pos, std::string_view message) {
  std::ostringstream os;
  os << file << ':' << pos.line << ':' << pos.column << ": " << message;
  return os.str();
}

Expected<JsonValue> ParseJson(std::string_view text, std::string_view filename) {
  return Parser(text, filename).ParseDocument();
}

Expected<std::string> ReadJsonText(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Status::InvalidInput(path + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open file: " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Status::InvalidInput(path + ": read error");
  return buf.str();
}

Expected<JsonValue> ParseJsonFile(const std::string& path) {
  Expected<std::string> text = ReadJsonText(path);
  if (!text.ok()) return text.status();
  return ParseJson(*text, path);
}

ObjectReader::ObjectReader(const JsonValue& value, std::string path, std::string file)
    : value_(value), path_(std::move(path)), file_(std::move(file)) {
  if (!value_.is_object()) {
    std::string what = path_.empty() ? "the document" : path_;
    Fail(Status::InvalidInput(
        Located(file_, value_.pos, what + ": expected an object, got " + value_.TypeName())));
  }
}

std::string ObjectReader::FieldPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

Status ObjectReader::ErrorAt(const JsonValue& at, std::string_view key,
                             std::string_view message) const {
  return Status::InvalidInput(Located(file_, at.pos, FieldPath(key) + ": " + std::string(message)));
}

void ObjectReader::Know(std::string_view key) {
  for (const std::string& k : known_) {
    if (k == key) return;
  }
  known_.emplace_back(key);
}

const JsonValue* ObjectReader::Take(std::string_view key) {
  Know(key);
  return value_.is_object() ? value_.Find(key) : nullptr;
}

const JsonValue* ObjectReader::Child(std::string_view key) { return Take(key); }

ObjectReader& ObjectReader::Require(std::string_view key) {
  Know(key);
  if (value_.is_object() && !value_.Find(key)) {
    Fail(Status::InvalidInput(
        Located(file_, value_.pos, "missing required field " + FieldPath(key))));
  }
  return *this;
}

ObjectReader& ObjectReader::Int(std::string_view key, int64_t* out, int64_t min, int64_t max) {
  const JsonValue* v = Take(key);
  if (!v || !ok()) return *this;
  // Beyond 9e15 a JSON number read as a double is no longer an exact integer: the largest
  // accepted, whatever `max` says.
  constexpr double kExact = 9.0e15;
  bool integral =
      v->is_number() && v->number == std::floor(v->number) && std::abs(v->number) < kExact;
  if (!integral || v->number < static_cast<double>(min) || v->number > static_cast<double>(max)) {
    const bool open_ended =
        max == std::numeric_limits<int64_t>::max() || max == std::numeric_limits<int>::max();
    std::string range = open_ended
                            ? ">= " + std::to_string(min)
                            : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    if (open_ended && v->is_number() && std::abs(v->number) >= kExact) {
      range += " and below 9e15 (larger integers are not exact in a JSON number)";
    }
    Fail(ErrorAt(*v, key, "expected an integer " + range + ", got " + Describe(*v)));
    return *this;
  }
  *out = static_cast<int64_t>(v->number);
  return *this;
}

ObjectReader& ObjectReader::Int(std::string_view key, int* out, int min, int max) {
  int64_t wide = *out;
  Int(key, &wide, min, max);
  *out = static_cast<int>(wide);
  return *this;
}

ObjectReader& ObjectReader::Double(std::string_view key, double* out, double min, double max,
                                   bool above_min) {
  const JsonValue* v = Take(key);
  if (!v || !ok()) return *this;
  if (!v->is_number() || v->number < min || v->number > max || (above_min && v->number == min)) {
    std::string range = std::isinf(max) ? (above_min ? "> " : ">= ") + FormatNumber(min)
                                        : (above_min ? "in (" : "in [") + FormatNumber(min) + ", " +
                                              FormatNumber(max) + "]";
    Fail(ErrorAt(*v, key, "expected a number " + range + ", got " + Describe(*v)));
    return *this;
  }
  *out = v->number;
  return *this;
}

ObjectReader& ObjectReader::Bool(std::string_view key, bool* out) {
  const JsonValue* v = Take(key);
  if (!v || !ok()) return *this;
  if (v->type != JsonValue::Type::kBool) {
    Fail(ErrorAt(*v, key, std::string("expected true or false, got ") + Describe(*v)));
    return *this;
  }
  *out = v->boolean;
  return *this;
}

ObjectReader& ObjectReader::String(std::string_view key, std::string* out) {
  const JsonValue* v = Take(key);
  if (!v || !ok()) return *this;
  if (!v->is_string()) {
    Fail(ErrorAt(*v, key, std::string("expected a string, got ") + Describe(*v)));
    return *this;
  }
  *out = v->text;
  return *this;
}

ObjectReader& ObjectReader::Enum(std::string_view key, const std::vector<std::string>& allowed,
                                 int* out) {
  const JsonValue* v = Take(key);
  if (!v || !ok()) return *this;
  for (size_t k = 0; v->is_string() && k < allowed.size(); ++k) {
    if (v->text == allowed[k]) {
      *out = static_cast<int>(k);
      return *this;
    }
  }
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  Fail(ErrorAt(*v, key, "expected one of " + list + ", got " + Describe(*v)));
  return *this;
}

Status ObjectReader::Finish() {
  if (!status_.ok() || !value_.is_object()) return status_;
  for (const JsonMember& m : value_.members) {
    bool known = false;
    for (const std::string& k : known_) known = known || k == m.key;
    if (!known) {
      std::string list;
      for (const std::string& k : known_) list += (list.empty() ? "" : ", ") + k;
      return Status::InvalidInput(Located(
          file_, m.key_pos, "unknown field " + FieldPath(m.key) + " (known: " + list + ")"));
    }
  }
  return status_;
}

}  // namespace trainsim
