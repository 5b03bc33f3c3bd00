// The scenario's field table (core/scenario_fields.h) against the parser it drives, the sweep's
// axes and docs/formats.md's field tables.
#include "core/scenario_fields.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/sweep_grid.h"
#include "tests/test_util.h"

#ifndef TRAINSIM_SOURCE_DIR
#define TRAINSIM_SOURCE_DIR "."
#endif

namespace trainsim {
namespace {

struct DocRow {
  std::string key, type, default_text;
};

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' ');
  const size_t b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The cells of a Markdown table row; "\|" inside a cell is not a separator.
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += "\\|";
      ++i;
    } else if (line[i] == '|') {
      cells.push_back(Trim(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// The rows of the first table after the heading "### `section`" in docs/formats.md.
std::vector<DocRow> DocTable(const std::string& section) {
  std::istringstream in(test::ReadFile(TRAINSIM_SOURCE_DIR "/docs/formats.md"));
  std::string line;
  while (std::getline(in, line) && line != "### `" + section + "`") {
  }
  std::vector<DocRow> rows;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    const std::vector<std::string> cells = Cells(line);
    if (cells.size() < 3 || cells[0] == "field" || cells[0].rfind("---", 0) == 0) continue;
    const std::string& key = cells[0];
    EXPECT_TRUE(key.size() > 2 && key.front() == '`' && key.back() == '`') << line;
    rows.push_back({key.substr(1, key.size() - 2), cells[1], cells[2]});
  }
  return rows;
}

TEST(ScenarioFieldsTest, DocsFieldTablesMatchTheTable) {
  for (const std::string section : {"training", "cluster", "parallel"}) {
    SCOPED_TRACE(section);
    std::vector<const ScenarioField*> fields;
    for (const ScenarioField& f : ScenarioFields()) {
      if (f.section() == section) fields.push_back(&f);
    }
    const std::vector<DocRow> rows = DocTable(section);
    ASSERT_EQ(rows.size(), fields.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const ScenarioField& f = *fields[i];
      SCOPED_TRACE(f.path);
      EXPECT_EQ(rows[i].key, f.key());
      EXPECT_EQ(rows[i].type.rfind(DocType(f), 0), 0u)
          << "docs: " << rows[i].type << "; table: " << DocType(f);
      EXPECT_EQ(rows[i].default_text, f.default_text);
    }
  }
}

TEST(ScenarioFieldsTest, EveryScalarFieldIsSweepable) {
  std::vector<std::string> expected = {"model"};
  for (const ScenarioField& f : ScenarioFields()) {
    if (f.scalar()) expected.push_back(f.path);
  }
  EXPECT_EQ(SweepableFields(), expected);
  EXPECT_EQ(FindScenarioField("cluster.stragglers")->type, FieldType::kList);
  EXPECT_EQ(FindScenarioField("parallel.bogus"), nullptr);
}

// A minimal scenario with `value` at the field's place (replacing a required field's value).
std::string WithField(const ScenarioField& f, const std::string& value) {
  std::vector<std::pair<std::string, std::string>> sections = {
      {"training", R"("global_batch": 8)"},
      {"cluster", R"("instance": "p4d.24xlarge")"},
      {"parallel", ""}};
  std::string text = R"({"model": "gpt-1.7b")";
  for (auto& [name, members] : sections) {
    const std::string key = "\"" + std::string(f.key()) + "\": ";
    if (name == f.section()) {
      if (members.rfind(key, 0) == 0) members.clear();
      members += (members.empty() ? "" : ", ") + key + value;
    }
    text += ",\n \"" + name + "\": {" + members + "}";
  }
  return text + "}";
}

// The parser reads every field through the table: a value of the wrong type is an error at the
// value that names the field.
TEST(ScenarioFieldsTest, TheParserChecksEveryFieldsType) {
  const Catalog& catalog = test::BuiltinCatalog();
  ASSERT_TRUE(
      ParseScenario(WithField(*FindScenarioField("parallel.tp"), "1"), "x.json", catalog).ok());
  for (const ScenarioField& f : ScenarioFields()) {
    SCOPED_TRACE(f.path);
    const std::string bad = f.type == FieldType::kString ? "5" : "\"not-a-choice\"";
    const std::string text = WithField(f, f.type == FieldType::kList ? "5" : bad);
    Expected<Scenario> s = ParseScenario(text, "x.json", catalog);
    ASSERT_FALSE(s.ok());
    const size_t line = f.section() == "training" ? 2 : f.section() == "cluster" ? 3 : 4;
    const std::string at = "x.json:" + std::to_string(line) + ":";
    EXPECT_EQ(s.status().message().rfind(at, 0), 0u) << s.status().message();
    EXPECT_NE(s.status().message().find(f.path), std::string::npos) << s.status().message();
  }
}

// Each field's value reads back what the file gave, in the file's unit and spelling.
TEST(ScenarioFieldsTest, ValuesAreInTheFilesUnitAndSpelling) {
  const Catalog& catalog = test::BuiltinCatalog();
  const std::pair<const char*, const char*> cases[] = {
      {"parallel.bucket_mb", "50"},
      {"training.precision", "\"fp16\""},
      {"cluster.nics", "2"},
      {"training.global_batch", "16"},
      {"training.input_samples_per_s_per_node", "1"},
      {"parallel.overlap_dp", "false"}};
  for (const auto& [path, value] : cases) {
    SCOPED_TRACE(path);
    const ScenarioField& f = *FindScenarioField(path);
    Expected<Scenario> s = ParseScenario(WithField(f, value), "x.json", catalog);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(f.value(*s, f), nlohmann::json::parse(value));
  }
  Expected<Scenario> plain =
      ParseScenario(WithField(*FindScenarioField("parallel.tp"), "1"), "x.json", catalog);
  const ScenarioField& nics = *FindScenarioField("cluster.nics");
  EXPECT_TRUE(nics.value(*plain, nics).is_null());
  EXPECT_EQ(plain->parallel.bucket_bytes, 25.0 * 1024 * 1024);
}

}  // namespace
}  // namespace trainsim
