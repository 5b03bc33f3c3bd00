// What kind of file `trainsim observe` was given, from its first bytes (docs/observe.md): the
// checks that pick a reader when --format is not given. The Chakra and SageMaker checks are
// beside their readers (observe/chakra.h LooksLikeChakra, observe/sagemaker.h
// DetectSageMakerFormat) and take FileHead's text too.
#pragma once

#include <string>
#include <string_view>

namespace trainsim::observe {

// The first 64 KiB of a file ("" when it cannot be read).
std::string FileHead(const std::string& file);

// A Kineto trace: JSON with a "traceEvents" array near its start.
bool LooksLikeKineto(std::string_view head);

// An nccl-tests output: its column header ("... time   algbw   busbw #wrong ...") within the
// file's first 2000 lines.
bool LooksLikeNcclTests(const std::string& file);

}  // namespace trainsim::observe
