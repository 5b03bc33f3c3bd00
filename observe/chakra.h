// An MLCommons Chakra execution trace, read back as a Kineto trace is (docs/observe.md).
//
// The protobuf ".et" file that Chakra's converters write and ASTRA-sim replays, one per rank
// (NAME.RANK.et): a GlobalMetadata message, then Node messages, each preceded by its length as
// a varint (mlcommons/chakra schema/protobuf/et_def.proto, src/third_party/utils/protolib.py).
// The wire format is decoded here, without a protobuf library; every length is bounded by the
// bytes left, so arbitrary bytes give an error, never a crash. The file is read one message at
// a time (memory: the largest message).
//
// A GPU kernel is a COMP_NODE, COMM_COLL_NODE, COMM_SEND_NODE or COMM_RECV_NODE that is not
// marked as a CPU op (attribute is_cpu_op false or absent) and has a duration_micros; it ran
// from start_time_micros. Collectives are communication, their op from the comm_type
// attribute and their bytes from comm_size; sends and receives are "send_recv"; compute nodes
// are sorted by name as Kineto's kernels are (ClassifyKernel). Memory and metadata nodes are
// no kernels. The steps are the nodes named "ProfilerStep#N"; a trace without them is one
// step, numbered 0, from its first kernel's start to its last kernel's end.
//
// Refused: a trace whose GPU nodes all start at 0 (converted without timing, as Chakra's
// PyTorch converter writes them: durations only, no start_time_micros): its steps cannot be
// measured.
#pragma once

#include <istream>
#include <string>
#include <string_view>

#include "core/status.h"
#include "observe/kineto.h"

namespace trainsim::observe {

// Reads a Chakra trace file. KinetoTrace::events counts the nodes read, kernels the GPU
// kernels; device is "" (a Chakra trace does not name its GPU); device_pid is the rank: the
// GlobalMetadata's integer attribute "rank" where it has one, else RANK of a file named
// NAME.RANK.et (ASTRA-sim's naming), else 0. Errors name the file and the byte (from 0):
// "FILE: byte N: a Node message of L bytes, but the file ends M bytes after its length (cut
// short?)"; a field whose wire type does not fit the schema; "FILE: not a Chakra execution
// trace: ..."; a trace with no timed GPU node, or with no start times.
Expected<KinetoTrace> LoadChakraTrace(const std::string& path);

// The same from a stream (a std::istringstream in tests); `name` names it in errors and
// gives the rank as above.
Expected<KinetoTrace> ReadChakraTrace(std::istream& in, const std::string& name);

// Whether `head`, a file's first bytes (64 KiB say), begins as a Chakra trace, as far as it
// reaches: a varint length; a GlobalMetadata message of that length whose fields end exactly
// at its end, version (1) and attr (2) length-delimited (fields the schema does not have are
// skipped); then the first Node's length (not 0) and the tag of one of Node's fields with the
// schema's wire type; and a byte below 0x20 other than tab, CR and LF somewhere (real traces
// have them in their tags and lengths; text never does, so no JSON, log or nccl-tests file
// passes). Gzip-compressed traces (which Chakra's readers also take) do not pass: gunzip them.
// LoadChakraTrace refuses what does not pass as "not a Chakra execution trace".
bool LooksLikeChakra(std::string_view head);

}  // namespace trainsim::observe
