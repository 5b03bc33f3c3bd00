// The run configuration of trainsim-train: the model, the batch, the
// parallel layout, the optimizer and the checkpoints of one local training
// run (docs/local-run.md). Read from a JSON file, strictly: unknown fields,
// wrong types and values out of range are errors naming the file, line,
// column and field. Plain data; no side effects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace trainsim::local {

enum class Schedule { k1F1B, kGpipe };
enum class Backend { kCpu, kCuda };

struct RunConfig {
  // The model: a GPT-style decoder (docs/local-run.md section 1).
  int layers = 0;
  int hidden = 0;
  int heads = 0;  // divides hidden
  int ffn_hidden = 0;
  int seq_len = 0;
  int vocab = 0;
  // The batch: global_batch sequences per optimizer step, in microbatches of
  // micro_batch sequences; global_batch is a multiple of dp x micro_batch.
  int micro_batch = 0;
  int64_t global_batch = 0;
  // Parallel layout: world = pp x dp ranks. dp is world / pp unless given, in
  // which case it must match; tp must be 1.
  int pp = 1;
  int dp = 0;  // 0: world / pp
  int tp = 1;
  Schedule schedule = Schedule::k1F1B;
  double bucket_mb = 25;  // data-parallel gradient buckets (PyTorch DDP's bucket_cap_mb)
  // Training.
  int steps = 0;  // the run ends after this optimizer step (counted from 1)
  double lr = 1e-3;
  int64_t seed = 1;
  int warmup_steps = 1;  // the first steps of this invocation, left out of the summary's times
  // Checkpoints: every checkpoint_every steps (0 = never) into checkpoint_dir;
  // resume continues from the latest one there (from step 1 when there is none).
  int checkpoint_every = 0;
  std::string checkpoint_dir;
  bool resume = false;
  Backend backend = Backend::kCpu;
  // Rank 0 writes a PyTorch-profiler (Kineto) format trace of its steps here: each kernel
  // of its Ops and each wait for the other ranks as a complete event, each step as a
  // ProfilerStep#N annotation (docs/local-run.md, docs/observe.md). "": none. cpu only.
  std::string trace_file;

  int64_t tokens_per_microbatch() const { return int64_t{micro_batch} * seq_len; }
};

// The config as JSON text (2-space indent; empty strings and false flags left out), which
// ParseRunConfig reads back to the same config: what `trainsim launch --backend local` writes.
std::string RunConfigToJson(const RunConfig& config);

// Parses the JSON text of a run config; errors read "file:line:col: field: ...".
Expected<RunConfig> ParseRunConfig(const std::string& text, const std::string& file);
Expected<RunConfig> LoadRunConfig(const std::string& path);

// A config from an optional file and `--field value` overrides (each value
// JSON, or a bare word taken as a string): `--steps 20 --resume true`.
// Without a file the overrides are the whole config. Errors in an override
// name it ("--steps: expected an integer >= 1, got 0").
Expected<RunConfig> RunConfigFromArgs(const std::string& file,
                                      const std::vector<std::pair<std::string, std::string>>& sets);

// The checks that need the world size: pp divides it, dp matches, the
// global batch splits into whole microbatches per replica. Sets config->dp.
Status ResolveLayout(RunConfig* config, int world);

// The fields that decide the training trajectory (everything but steps,
// warmup_steps, checkpoint_every, checkpoint_dir and resume), as "name=value"
// pairs in a fixed order: a checkpoint resumes only under the same ones.
std::vector<std::pair<std::string, std::string>> TrajectoryFields(const RunConfig& config);

std::string ToString(Schedule s);
std::string ToString(Backend b);

}  // namespace trainsim::local
