// Error bands (core/error_bands.h): quantiles, the family back-off, widening
// beyond what a family measured, the file's round trip and its errors, and
// the built-in file.
#include "core/error_bands.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/test_util.h"

namespace trainsim {
namespace {

BandSample Sample(const std::string& source, const std::string& strategy, const std::string& gpu,
                  int gpus, double log_error) {
  static int n = 0;
  BandSample s;
  s.id = "p" + std::to_string(n++);
  s.source = source;
  s.key = {strategy, gpu, "16-bit", gpus};
  s.log_error = log_error;
  return s;
}

TEST(ErrorBands, QuantilesInterpolateBetweenOrderStatistics) {
  const std::vector<double> v = {0, 1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(Quantile(v, 0), 0);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.1), 0.4);  // h = 4 x 0.1
  EXPECT_DOUBLE_EQ(Quantile(v, 0.5), 2);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.9), 3.6);
  EXPECT_DOUBLE_EQ(Quantile(v, 1), 4);
}

// Eleven zero3 / A100 samples with errors -0.5 .. +0.5 (step 0.1) on 64 GPUs: the 80% band is
// exp(-0.4) .. exp(0.4) of the prediction (h = 10 x 0.1 = 1: the 2nd and 10th values).
ErrorBands Eleven() {
  ErrorBands b;
  for (int i = 0; i <= 10; ++i)
    b.samples.push_back(Sample("s", "zero3", "A100", 64, -0.5 + 0.1 * i));
  return b;
}

TEST(ErrorBands, TheBandIsTheCentralIntervalOfTheFamilysErrors) {
  const Band band = BandFor(Eleven(), {"zero3", "A100", "16-bit", 64});
  EXPECT_NEAR(band.lo, std::exp(-0.4), 1e-12);
  EXPECT_NEAR(band.hi, std::exp(0.4), 1e-12);
  EXPECT_EQ(band.points, 11);
  EXPECT_EQ(band.family, "zero3 / A100 / 16-bit / 9-128 GPUs");
  EXPECT_EQ(band.note, "");
  const Band half = BandFor(Eleven(), {"zero3", "A100", "16-bit", 64}, 0.5);
  EXPECT_NEAR(half.lo, std::exp(-0.25), 1e-12);
  EXPECT_NEAR(half.hi, std::exp(0.25), 1e-12);
}

// Every source weighs the same in a family, whatever its number of points: ten samples of one
// source at 0.00 .. 0.09 and two of another at 0.5 and 0.6 weigh 1 each in all. The i-th sorted
// error sits at (W_<i + w_i / 2 - w_0 / 2) / (W - w_0 / 2 - w_last / 2), here 1.7 below: 0.5 at
// (1 + 0.25 - 0.05) / 1.7 and 0.6 at 1, so the 90% quantile is 0.5 + 0.1 x (0.9 - 1.2 / 1.7) /
// (0.5 / 1.7); unweighted it would lie between 0.09 and 0.5 (0.459).
TEST(ErrorBands, EverySourceWeighsTheSame) {
  ErrorBands b;
  for (int i = 0; i < 10; ++i) b.samples.push_back(Sample("big", "zero3", "A100", 64, 0.01 * i));
  b.samples.push_back(Sample("small", "zero3", "A100", 64, 0.5));
  b.samples.push_back(Sample("small", "zero3", "A100", 64, 0.6));
  const Band band = BandFor(b, {"zero3", "A100", "16-bit", 64});
  EXPECT_NEAR(band.hi, std::exp(0.5 + 0.1 * (0.9 - 1.2 / 1.7) / (0.5 / 1.7)), 1e-12);
  EXPECT_EQ(band.points, 12);
  // The errors a Monte-Carlo trial draws from follow the same weights: as many as samples, at
  // evenly spaced quantiles, from the smallest to the largest.
  const std::vector<double> draws = BandErrors(b, {"zero3", "A100", "16-bit", 64});
  ASSERT_EQ(draws.size(), 12u);
  EXPECT_DOUBLE_EQ(draws.front(), 0);
  EXPECT_DOUBLE_EQ(draws.back(), 0.6);
  EXPECT_GT(draws[9], 0.09);  // the small source's share reaches below the top two draws
}

// Fewer than kMinBandPoints in a family: the next coarser one (here the scale bucket is
// dropped, then the precision, then the GPU).
TEST(ErrorBands, SmallFamiliesBackOffToCoarserOnes) {
  ErrorBands b = Eleven();
  EXPECT_EQ(BandFor(b, {"zero3", "A100", "16-bit", 8}).family, "zero3 / A100 / 16-bit");
  EXPECT_EQ(BandFor(b, {"zero3", "A100", "fp8", 64}).family, "zero3 / A100");
  // Another GPU of the same strategy: the strategy's samples, and a note (nothing measured
  // on that GPU), widened to all training points (the same samples here).
  const Band h100 = BandFor(b, {"zero3", "H100", "16-bit", 64});
  EXPECT_EQ(h100.family, "zero3, widened to all training points");
  EXPECT_EQ(h100.note, "no published measurement of zero3 on H100");
}

// Beyond the largest GPU count its strategy measured on its GPU, the band takes at least the
// whole corpus's spread, and says why.
TEST(ErrorBands, BeyondTheMeasuredScaleTheBandWidens) {
  ErrorBands b = Eleven();
  for (int i = 0; i < 10; ++i) b.samples.push_back(Sample("t", "tp-pp", "A100", 512, 2.0));
  const Band far = BandFor(b, {"zero3", "A100", "16-bit", 1024});
  EXPECT_EQ(far.note, "no published measurement of zero3 on A100 beyond 64 GPUs");
  // Its family (zero3 / A100 / 16-bit, 11 samples): exp(-0.4) .. exp(0.4); all 21 samples:
  // the 3rd and 19th of -0.5 .. 0.5, 2.0 x 10, exp(-0.3) .. exp(2). The wider of each end.
  EXPECT_NEAR(far.lo, std::exp(-0.4), 1e-12);
  EXPECT_NEAR(far.hi, std::exp(2.0), 1e-12);
  EXPECT_EQ(far.family, "zero3 / A100 / 16-bit, widened to all training points");
  const Band near = BandFor(b, {"zero3", "A100", "16-bit", 64});
  EXPECT_EQ(near.note, "");
  EXPECT_NEAR(near.hi, std::exp(0.4), 1e-12);
}

// Fit points measured a scale without giving samples: the band is not widened up to it.
// A strategy with too few samples on the configuration's GPU borrows its other GPUs' samples
// and is widened, with a note.
TEST(ErrorBands, CoveredScalesAndThinFamilies) {
  ErrorBands b = Eleven();
  b.covered.push_back(CoveredKey{"fit", {"zero3", "A100", "16-bit", 2048}});
  EXPECT_EQ(BandFor(b, {"zero3", "A100", "16-bit", 1024}).note, "");
  b.samples.push_back(Sample("s", "zero3", "H100", 64, 3.0));
  const Band thin = BandFor(b, {"zero3", "H100", "16-bit", 64});
  EXPECT_EQ(thin.family, "zero3, widened to all training points");
  EXPECT_EQ(thin.note, "fewer than 10 judged measurements of zero3 on H100");
  // The file keeps the covered keys, distinct and sorted.
  b.covered.push_back(b.covered[0]);
  Expected<ErrorBands> back = ParseErrorBands(ErrorBandsText(b), "b.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->covered.size(), 1u);
}

TEST(ErrorBands, ASourceLeftOutDoesNotCount) {
  ErrorBands b = Eleven();
  for (int i = 0; i < 10; ++i) b.samples.push_back(Sample("u", "zero3", "A100", 64, 1.0));
  EXPECT_EQ(BandFor(b, {"zero3", "A100", "16-bit", 64}).points, 21);
  const Band without = BandFor(b, {"zero3", "A100", "16-bit", 64}, 0.8, "u");
  EXPECT_EQ(without.points, 11);
  EXPECT_NEAR(without.hi, std::exp(0.4), 1e-12);
}

TEST(ErrorBands, NoSamplesNoBand) {
  const Band none = BandFor(ErrorBands(), {"dp", "A100", "16-bit", 8});
  EXPECT_EQ(none.points, 0);
  EXPECT_EQ(none.lo, 1);
  EXPECT_EQ(none.hi, 1);
  EXPECT_EQ(none.note, "no published measurement to judge the prediction by");
}

// The model's kind counts as coverage: ZeRO-3 measured on transformers only says nothing of a
// layer-list model (a CNN), whose band is widened; data parallelism measured on both is not.
TEST(ErrorBands, AModelKindNeverMeasuredWithTheStrategyWidens) {
  ErrorBands b = Eleven();
  for (int i = 0; i <= 10; ++i) {
    BandSample s = Sample("c", "dp", "A100", 8, -0.05 + 0.01 * i);
    s.key.model = "layer list";
    b.samples.push_back(s);
  }
  const Band cnn_zero3 = BandFor(b, {"zero3", "A100", "16-bit", 64, "layer list"});
  EXPECT_EQ(cnn_zero3.note, "no published measurement of zero3 of a layer list model on A100");
  EXPECT_EQ(cnn_zero3.family, "zero3 / A100 / 16-bit / 9-128 GPUs, widened to all training points");
  EXPECT_EQ(BandFor(b, {"zero3", "A100", "16-bit", 64}).note, "");
  EXPECT_EQ(BandFor(b, {"dp", "A100", "16-bit", 8, "layer list"}).note, "");
  // The file keeps the kind.
  Expected<ErrorBands> back = ParseErrorBands(ErrorBandsText(b), "bands.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  int layer_list = 0;
  for (const BandSample& x : back->samples) layer_list += x.key.model == "layer list";
  EXPECT_EQ(layer_list, 11);
}

// A mixture of experts is a model kind of its own: the corpus's dense measurements do not
// judge it, so its band widens and says why.
TEST(ErrorBands, MixturesOfExpertsAreTheirOwnKind) {
  Expected<Scenario> s = ParseScenario(
      R"({"model": {"preset": "mixtral-8x7b", "seq_len": 4096}, "training": {"global_batch": 64},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 4}, "parallel": {"tp": 8, "pp": 2}})",
      "x.json", test::BuiltinCatalog());
  ASSERT_TRUE(s.ok()) << s.status().message();
  const BandKey key = BandKeyOf(*s);
  EXPECT_EQ(key.model, "mixture-of-experts");
  EXPECT_EQ(BandFor(Eleven(), key).note,
            "no published measurement of tp-pp of a mixture-of-experts model on A100");
}

// ZeRO-3's implementation (parallel.zero_impl) is part of the key: one never measured on the
// GPU widens the band and says so; the file keeps it.
TEST(ErrorBands, AZeroThreeImplementationNeverMeasuredWidens) {
  ErrorBands b = Eleven();
  for (BandSample& s : b.samples) s.key.impl = "fsdp1";
  Expected<Scenario> s = ParseScenario(
      R"({"model": "llama2-13b", "training": {"global_batch": 64},
          "cluster": {"instance": "p4d.24xlarge", "nodes": 8},
          "parallel": {"zero_stage": 3, "zero_impl": "deepspeed"}})",
      "x.json", test::BuiltinCatalog());
  ASSERT_TRUE(s.ok()) << s.status().message();
  BandKey key = BandKeyOf(*s);
  EXPECT_EQ(key.impl, "deepspeed");
  EXPECT_EQ(BandFor(b, key).note, "no published measurement of zero3 (deepspeed) on A100");
  key.impl = "fsdp1";
  EXPECT_EQ(BandFor(b, key).note, "");
  Expected<ErrorBands> back = ParseErrorBands(ErrorBandsText(b), "bands.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->samples[0].key.impl, "fsdp1");
  EXPECT_EQ(ErrorBandsText(*back), ErrorBandsText(b));
}

TEST(ErrorBands, TheFileRoundTripsByteForByte) {
  ErrorBands b = Eleven();
  b.generated_by = "accuracy --write-bands x";
  b.corpus_fingerprint = "00ff";
  const std::string text = ErrorBandsText(b);
  Expected<ErrorBands> back = ParseErrorBands(text, "bands.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ErrorBandsText(*back), text);
  EXPECT_EQ(back->samples.size(), 11u);
}

TEST(ErrorBands, BadFilesNameTheFieldAndPosition) {
  const struct {
    std::string text, message;
  } cases[] = {
      {R"({"version": 2, "generated_by": "", "corpus_fingerprint": "", "samples": []})",
       "b.json:1:13: version: expected an integer in [1, 1], got 2"},
      {R"({"version": 1, "generated_by": "", "corpus_fingerprint": "", "samples": {}})",
       "b.json:1:73: samples: expected an array, got {}"},
      {R"({"version": 1, "generated_by": "", "corpus_fingerprint": "", "samples": [
  {"id": "a", "source": "s", "strategy": "fsdp", "gpu": "A100", "precision": "16-bit",
   "gpus": 8, "log_error": 0.1}]})",
       "b.json:2:42: samples[0].strategy: expected one of dp, zero3, tp-pp, zero3+tp-pp, got "
       "\"fsdp\""},
      {R"({"version": 1, "generated_by": "", "corpus_fingerprint": "", "samples": [
  {"id": "a", "source": "s", "strategy": "dp", "gpu": "A100", "precision": "16-bit",
   "gpus": 8}]})",
       "b.json:2:3: missing required field samples[0].log_error"},
      {R"({"version": 1, "generated_by": "", "corpus_fingerprint": "", "samples": [
  {"id": "a", "source": "s", "strategy": "dp", "gpu": "A100", "precision": "16-bit",
   "gpus": 8, "model": "cnn", "log_error": 0}]})",
       "b.json:3:24: samples[0].model: expected one of transformer, layer list, "
       "mixture-of-experts, got \"cnn\""},
  };
  for (const auto& c : cases) {
    Expected<ErrorBands> b = ParseErrorBands(c.text, "b.json");
    ASSERT_FALSE(b.ok()) << c.message;
    EXPECT_EQ(b.status().message(), c.message);
  }
}

TEST(ErrorBands, AMissingFileSaysSo) {
  EXPECT_EQ(LoadErrorBands("/nonexistent/error-bands.json").status().message(),
            "/nonexistent/error-bands.json: cannot be read: No such file or directory");
}

// The file the tools read: written by bench/accuracy from the corpus, and it parses.
TEST(ErrorBands, TheBuiltInFileLoads) {
  Expected<ErrorBands> b = LoadErrorBands(DefaultErrorBandsPath());
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_GT(b->samples.size(), 400u);
  EXPECT_NE(b->generated_by.find("--write-bands"), std::string::npos);
}

}  // namespace
}  // namespace trainsim
