// The lines trainsim-train prints on stdout (docs/local-run.md section 5):
// one JSON object per step and a summary at the end, numbers in their
// shortest round-trip form, no spaces beyond those after ':' and ','.
#pragma once

#include <string>

#include "launch/local/trainer.h"

namespace trainsim::local {

// {"step": 3, "loss": 4.1, "step_s": 0.25}
std::string StepLine(const StepResult& step);

// {"summary": {"steps": n, "mean_step_s": ..., "median_step_s": ...,
// "first_loss": ..., "last_loss": ...}}, the numbers null when n is 0.
std::string SummaryLine(const RunSummary& summary);

}  // namespace trainsim::local
