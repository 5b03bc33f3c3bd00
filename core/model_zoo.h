// The model zoo: named presets with published dimensions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model_spec.h"

namespace trainsim {

// All presets, in a fixed order.
const std::vector<ModelSpec>& ModelZoo();
// The preset with this name, if any.
std::optional<ModelSpec> FindModel(std::string_view name);

}  // namespace trainsim
