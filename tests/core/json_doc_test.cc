// The located JSON reader (core/json_doc.h): what it reads, and the exact message and place of
// what it refuses.
#include "core/json_doc.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trainsim {
namespace {

TEST(JsonDoc, ReadsUtf8StringsRawAndEscaped) {
  Expected<JsonValue> v = ParseJson(
      "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\", \"\\u00e9\\u20ac\\ud83d\\ude00\"]", "x.json");
  ASSERT_TRUE(v.ok()) << v.status().message();
  ASSERT_EQ(v->items.size(), 2u);
  EXPECT_EQ(v->items[0].text, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(v->items[1].text, v->items[0].text);
}

struct FailCase {
  const char* what;
  std::string text;
  std::string message;  // exact
};

// Text that is not UTF-8, raw or escaped, was read and then refused by every writer
// (nlohmann::json throws on it): found by fuzz/json_fuzzer.cc and
// fuzz/hardware_profile_fuzzer.cc.
TEST(JsonDoc, RefusesWhatIsNotUtf8WhereItIs) {
  const std::vector<FailCase> cases = {
      {"lone low surrogate", "[\"\\udc00\"]",
       "x.json:1:9: invalid JSON: unpaired low surrogate in \\u escape"},
      {"high surrogate without its low one", "[\"\\ud800x\"]",
       "x.json:1:9: invalid JSON: unpaired surrogate in \\u escape"},
      {"continuation byte first",
       "[\"a\x89"
       "b\"]",
       "x.json:1:4: invalid JSON: invalid UTF-8 in string: byte 0x89"},
      {"lead byte without its continuation", "[\"\xc3(\"]",
       "x.json:1:4: invalid JSON: invalid UTF-8 in string: '('"},
      {"overlong encoding", "[\"\xc0\x80\"]",
       "x.json:1:3: invalid JSON: invalid UTF-8 in string: an overlong, surrogate or "
       "out-of-range sequence"},
      {"encoded surrogate", "[\"\xed\xa0\x80\"]",
       "x.json:1:3: invalid JSON: invalid UTF-8 in string: an overlong, surrogate or "
       "out-of-range sequence"},
      {"beyond U+10FFFF", "[\"\xf4\x90\x80\x80\"]",
       "x.json:1:3: invalid JSON: invalid UTF-8 in string: an overlong, surrogate or "
       "out-of-range sequence"},
      {"not a lead byte", "[\"\xff\"]",
       "x.json:1:3: invalid JSON: invalid UTF-8 in string: byte 0xff"},
      {"cut inside a character", "\n[\"\xe2\x82",
       "x.json:2:5: invalid JSON: invalid UTF-8 in string: end of input"},
  };
  for (const FailCase& c : cases) {
    Expected<JsonValue> v = ParseJson(c.text, "x.json");
    ASSERT_FALSE(v.ok()) << c.what;
    EXPECT_EQ(v.status().message(), c.message) << c.what;
  }
}

}  // namespace
}  // namespace trainsim
