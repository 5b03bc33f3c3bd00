// The parts of `trainsim observe` (cli/observe_cmd.cc dispatches to them by the files'
// format): the parsed arguments, the prediction a run is set beside, and the number formats
// they share (docs/observe.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error_bands.h"
#include "core/scenario.h"
#include "core/status.h"
#include "observe/sagemaker.h"
#include "sim/simulate.h"

namespace trainsim::observe_cli {

using nlohmann::ordered_json;

struct ObserveArgs {
  std::vector<std::string> files;
  std::string format, op, scenario, plan, profile, catalog, instance, refit, log_stream;
  int warmup = 1;
  bool json = false;
};

std::string Fixed(double v, int digits);
// "+4.6%" of a fraction.
std::string Signed(double fraction);

// The configuration the run used, simulated.
struct Prediction {
  Scenario scenario;
  sim::SimulationResult result;
  std::optional<Band> band;
};

// The configuration the run used (--scenario, --profile; or --plan's recommendation), simulated.
Expected<Prediction> Predict(const ObserveArgs& a);

// --instance's catalog entry (SageMaker's "ml." prefix allowed); nullopt without --instance.
Expected<std::optional<InstanceType>> InstanceArg(const ObserveArgs& a);

// A SageMaker export's format: --format's, else detected from the file's first bytes.
std::optional<observe::SageMakerFormat> SageMakerFormatOf(const ObserveArgs& a,
                                                          const std::string& file);

// Each format's command, from observe_*.cc.
int ObserveLogs(const ObserveArgs& a);          // training logs (and log-stream exports)
int ObserveSystemMetrics(const ObserveArgs& a,  // CloudWatch metrics, Debugger files
                         observe::SageMakerFormat format);
int ObserveNccl(const ObserveArgs& a);    // nccl-tests output
int ObserveTraces(const ObserveArgs& a);  // Kineto and Chakra traces

}  // namespace trainsim::observe_cli
