// Units the code converts between, named once (bytes, seconds).
#pragma once

namespace trainsim {

inline constexpr double kMiB = 1024.0 * 1024;         // bytes
inline constexpr double kGiB = 1024.0 * 1024 * 1024;  // bytes
inline constexpr double kSecondsPerHour = 3600;

}  // namespace trainsim
