// Checkpoints of a local training run, in a directory:
//
//   step-S/rank-R.bin  each rank's parameters and Adam moments after step S
//   latest.json        {"step": S, "world": N, "fingerprint": ..., "config": {...}}
//
// Every rank writes its file durably (core/durable_file.h: a temporary,
// fsync, rename, the folder's fsync); once all have, rank 0 syncs the
// checkpoint folder, writes latest.json the same way and removes the older
// step folders. A run killed (or a machine losing power) at any moment leaves
// latest.json naming a complete step. The data position needs no saving:
// the samples of step s are a pure function of the seed and s (task.h).
// Errors name the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace trainsim::local {

using ConfigFields = std::vector<std::pair<std::string, std::string>>;

// FNV-1a over the fields and the world size.
uint64_t Fingerprint(const ConfigFields& fields, int world);

// One rank's state: `count` floats each of parameters and the two moments.
struct RankState {
  float* params = nullptr;
  float* first_moment = nullptr;
  float* second_moment = nullptr;
  int64_t count = 0;
};

Status WriteRankCheckpoint(const std::string& dir, int64_t step, int rank, uint64_t fingerprint,
                           const RankState& state);
// Fills `state` (count set by the caller, and checked against the file's).
Status ReadRankCheckpoint(const std::string& dir, int64_t step, int rank, uint64_t fingerprint,
                          const RankState& state);

// Writes latest.json for `step` and removes the other step-* folders.
Status WriteLatest(const std::string& dir, int64_t step, int world, const ConfigFields& fields);

// The step of dir/latest.json; nullopt when there is none. An error when it
// is unreadable or was written by another world size or configuration
// (naming the first field that differs).
Expected<std::optional<int64_t>> ReadLatest(const std::string& dir, int world,
                                            const ConfigFields& fields);

}  // namespace trainsim::local
