// The synthetic learnable task: every sequence starts at a random token and
// follows one fixed rule, next = (a x previous + c) mod vocab, with a and c
// drawn from the seed. Only the first token is unpredictable, so a model
// that learns the rule reaches a loss of about ln(vocab) / seq_len per
// token. Sample `index` of step `step` is a pure function of (seed, step,
// index): replicas and ranks agree on it without talking, and a resumed run
// sees the same data as an uninterrupted one.
#pragma once

#include <cstdint>

namespace trainsim::local {

struct AffineRule {
  int64_t a = 1, c = 0;
};

AffineRule RuleOf(uint64_t seed, int vocab);

// Writes `count` samples, index first..first+count-1 of `step`, as inputs
// (count x seq tokens) and targets (the inputs shifted by one: the next token).
void FillSamples(uint64_t seed, int vocab, int seq, int64_t step, int64_t first, int64_t count,
                 int32_t* inputs, int32_t* targets);

}  // namespace trainsim::local
