// The strategy registry (core/strategy.h): every registered module is reachable through the
// scenario's field table, the parser and the search section, and the layout arithmetic that
// reads the registry (slots, labels) agrees with the fields it names.
#include "core/strategy.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/scenario_fields.h"
#include "core/search.h"
#include "tests/test_util.h"

namespace trainsim {
namespace {

constexpr char kLongContext[] =
    R"({"model": {"name": "long", "layers": 4, "hidden": 512, "heads": 8, "seq_len": 32768,
                  "vocab": 1000},
        "training": {"global_batch": 8, "flash_attention": true},
        "cluster": {"instance": "p4d.24xlarge", "nodes": 1},
        "parallel": {"tp": 2, "STRATEGY": 2}})";

std::string WithStrategy(const Strategy& st, const std::string& text = kLongContext) {
  std::string out = text;
  out.replace(out.find("STRATEGY"), 8, std::string(st.name));
  return out;
}

TEST(Strategies, EachHasItsOwnNameAFieldRowAndItsHooks) {
  std::set<std::string> names;
  for (const Strategy* st : kStrategies) {
    SCOPED_TRACE(std::string(st->name));
    EXPECT_TRUE(names.insert(std::string(st->name)).second);
    EXPECT_FALSE(st->title.empty());
    EXPECT_FALSE(st->tag.empty());
    ASSERT_NE(st->unfit, nullptr);
    ASSERT_NE(st->default_axis, nullptr);
    const ScenarioField* f = FindScenarioField("parallel." + std::string(st->name));
    ASSERT_NE(f, nullptr) << "a strategy's degree is a row of the field table";
    EXPECT_EQ(f->type, FieldType::kInteger);
    EXPECT_EQ(f->int_min, 1);
  }
  EXPECT_EQ(StrategyIndex(kContextParallel), 0);
}

// parallel.<name> lands in the member the module names, and search.<name> in its axis.
TEST(Strategies, TheParserAndTheSearchSectionReadEachDegree) {
  for (const Strategy* st : kStrategies) {
    SCOPED_TRACE(std::string(st->name));
    std::string text = WithStrategy(*st);
    Expected<Scenario> s = ParseScenario(text, "x.json", test::BuiltinCatalog());
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->parallel.*st->degree, 2);
    EXPECT_EQ(DegreesOf(s->parallel)[StrategyIndex(*st)], 2);
    if (st->splits_slots) {
      EXPECT_EQ(s->replicas(), s->parallel.dp * 2);
    }

    text.insert(text.rfind('}'), ", \"search\": {\"" + std::string(st->name) + "\": [1, 4]}");
    Expected<PlanningScenario> p = ParsePlanningScenario(text, "x.json", test::BuiltinCatalog());
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->search.strategies[StrategyIndex(*st)], (std::vector<int>{1, 4}));
  }
}

// The module's check is the parser's: reported at the field, with the module's reason.
TEST(Strategies, AnUnfitDegreeIsRefusedAtItsField) {
  std::string text = WithStrategy(kContextParallel);
  text.replace(text.find("\"flash_attention\": true"), 23, "\"flash_attention\": false");
  Expected<Scenario> s = ParseScenario(text, "x.json", test::BuiltinCatalog());
  ASSERT_FALSE(s.ok());
  Scenario fit = *ParseScenario(WithStrategy(kContextParallel), "x.json", test::BuiltinCatalog());
  EXPECT_EQ(kContextParallel.unfit(fit), "");
  fit.training.flash_attention = false;
  const std::string why = kContextParallel.unfit(fit);
  ASSERT_FALSE(why.empty());
  EXPECT_EQ(s.status().message(), "x.json:5:37: parallel.cp = 2 " + why);
}

TEST(Strategies, LayoutArithmeticReadsTheDegrees) {
  ParallelConfig p;
  EXPECT_EQ(DegreesOf(p), kNoStrategies);
  EXPECT_EQ(SlotSplit(p), 1);
  EXPECT_EQ(DegreesText(p), "");
  EXPECT_EQ(FirstStrategy(p), nullptr);
  p.cp = 4;
  EXPECT_EQ(SlotSplit(p), 4);
  EXPECT_EQ(SlotSplit(DegreesOf(p)), 4);
  EXPECT_EQ(DegreesText(p), " cp 4");
  EXPECT_EQ(FirstStrategy(p), &kContextParallel);
}

}  // namespace
}  // namespace trainsim
