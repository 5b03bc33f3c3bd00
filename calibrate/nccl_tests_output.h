// The calibration's own collective runs written in the output layout of
// NVIDIA's nccl-tests (all_reduce_perf, ...), so that `trainsim observe`
// (observe/nccl_tests.h) and other readers of nccl-tests output read them
// back (docs/calibration.md, "Collectives as nccl-tests output").
//
// One text per collective group of a profile: op x ranks x nodes. Its rows
// are the profile's collective points of that group, in the order measured:
// the median time, algbw and busbw the profile records, printed with
// nccl-tests' rounding. The layout follows nccl-tests' src/util.cu
// (writeDeviceReport, writeResultHeader, writeBenchmarkLine*,
// writeResultFooter) at github.com/NVIDIA/nccl-tests commit a0b82b2. Where
// the calibration differs from an nccl-tests run, comment lines in the text
// say so: the time is a median, not a mean; only out-of-place runs are
// measured (the in-place columns repeat them, as readers expect 13 columns);
// #wrong is not counted (N/A); every rank line carries the writing process's
// pid (nccl-tests' one-process layout, "nThread 1 nGpus N").
//
// Pure functions of their arguments, except WriteNcclTests.
#pragma once

#include <string>
#include <vector>

#include "core/hardware_profile.h"
#include "core/status.h"

namespace trainsim::calibrate {

// What the texts say about the run besides the profile.
struct NcclTestsContext {
  std::string command_line;  // the calibration's own, for each text's first line
  int pid = 0;               // printed on every rank line
  long size_factor = 2;      // the plan's step between collective sizes ("step: 8(factor)")
};

struct NcclTestsText {
  std::string name;  // "all_reduce.ranks2.nodes1": written as PREFIX.NAME.txt
  std::string text;
};

struct NcclTestsTexts {
  std::vector<NcclTestsText> texts;
  // Groups not written, each with the reason ("all_reduce over 16 ranks on 2 nodes: ...").
  std::vector<std::string> left_out;
};

// nccl-tests' number format (getFloatStr): `value` in `width` characters with
// 2 decimals, else 1, else 0, else in exponent notation.
std::string NcclTestsNumber(double value, int width);

// The nccl-tests texts of `profile`'s collective points. Groups over more than
// one node are left out: the profile records rank 0's host only, and the rank
// lines need every rank's.
NcclTestsTexts FormatNcclTests(const HardwareProfile& profile, const NcclTestsContext& context);

// Writes each text to PREFIX.NAME.txt durably (core/durable_file.h);
// `paths` receives the files written, in order.
Status WriteNcclTests(const std::vector<NcclTestsText>& texts, const std::string& prefix,
                      std::vector<std::string>* paths);

}  // namespace trainsim::calibrate
