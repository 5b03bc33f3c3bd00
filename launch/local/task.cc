#include "launch/local/task.h"

#include "launch/local/counter_rng.h"

namespace trainsim::local {
namespace {
constexpr uint64_t kRuleStream = 0x72756c65;  // "rule"
constexpr uint64_t kDataStream = 0x64617461;  // "data"
}  // namespace

AffineRule RuleOf(uint64_t seed, int vocab) {
  // a odd and not 1, so that the rule is no mere shift (for an even vocab a
  // permutation of the tokens).
  AffineRule r;
  r.a = (2 * static_cast<int64_t>(Hash3(seed, kRuleStream, 0) % (vocab / 2 + 1)) + 3) % vocab;
  r.c = static_cast<int64_t>(Hash3(seed, kRuleStream, 1) % vocab);
  return r;
}

void FillSamples(uint64_t seed, int vocab, int seq, int64_t step, int64_t first, int64_t count,
                 int32_t* inputs, int32_t* targets) {
  const AffineRule rule = RuleOf(seed, vocab);
  for (int64_t n = 0; n < count; ++n) {
    const uint64_t sample = static_cast<uint64_t>(step) * 0x100000000ull + (first + n);
    int64_t token = static_cast<int64_t>(Hash3(seed, kDataStream, sample) % vocab);
    for (int i = 0; i < seq; ++i) {
      inputs[n * seq + i] = static_cast<int32_t>(token);
      token = (rule.a * token + rule.c) % vocab;
      targets[n * seq + i] = static_cast<int32_t>(token);
    }
  }
}

}  // namespace trainsim::local
