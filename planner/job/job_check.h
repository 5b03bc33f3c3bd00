// Internal to planner/: only planner/ and the tests include it (tests/core/layering_test.cc).
// The checks EstimateJob makes on its inputs, apart so that job.cc stays
// about the model. Each returns InvalidInput naming the JobInputs field
// ("restart_s: expected a finite number >= 0, got -1") or ok.
#pragma once

#include "core/status.h"
#include "planner/job/job.h"

namespace trainsim::planner {

// Each field alone, then the combinations: interruptions with no way to
// checkpoint, checkpoint_on_notice with a write longer than the notice or a
// pricing without one.
Status CheckJobInputs(const JobInputs& in);

// interval_s splits the work into at most 1e12 segments (the closed form and
// the simulator count them in 64 bits and step over them in bulk).
// from_daly: the interval came from checkpoint_write_s, name that field.
Status CheckSegmentCount(const JobInputs& in, double interval_s, bool from_daly);

// The expected wall time is finite: failures are not so frequent that a
// segment or a restart would practically never finish.
Status CheckFinishes(const JobInputs& in, double expected_wall_s, double mtbi_s);

}  // namespace trainsim::planner
