// Counter-based random numbers: every value is a pure function of (seed,
// stream, index), so a tensor or a sample comes out the same whatever rank
// holds it and in whatever order it is generated. SplitMix64's finaliser as
// the hash (Steele et al. 2014).
#pragma once

#include <cmath>
#include <cstdint>

namespace trainsim::local {

inline uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t Hash3(uint64_t seed, uint64_t stream, uint64_t index) {
  return Mix64(Mix64(Mix64(seed) ^ stream) ^ index);
}

// Uniform in (0, 1], from the top 53 bits.
inline double Unit(uint64_t bits) { return static_cast<double>((bits >> 11) + 1) * 0x1p-53; }

// A standard normal value (Box-Muller on two hashed uniforms).
inline double Normal(uint64_t seed, uint64_t stream, uint64_t index) {
  const double u1 = Unit(Hash3(seed, stream, 2 * index));
  const double u2 = Unit(Hash3(seed, stream, 2 * index + 1));
  return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace trainsim::local
