#include "observe/chakra.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <vector>

namespace trainsim::observe {
namespace {

// Protobuf's wire types (protobuf.dev, "Encoding").
constexpr int kVarint = 0, kI64 = 1, kLen = 2, kI32 = 5;
const char* const kWireNames[8] = {
    "varint", "64-bit", "length-delimited", "group start", "group end", "32-bit", "6", "7"};

// The messages of et_def.proto that are decoded here.
enum class Msg { kMetadata, kNode, kAttr };

const char* MsgName(Msg m) {
  return m == Msg::kMetadata ? "GlobalMetadata" : m == Msg::kNode ? "Node" : "AttributeProto";
}

// Node's fields, by number.
const char* const kNodeFields[11] = {"",
                                     "id",
                                     "name",
                                     "type",
                                     "ctrl_deps",
                                     "data_deps",
                                     "start_time_micros",
                                     "duration_micros",
                                     "inputs",
                                     "outputs",
                                     "attr"};

// et_def.proto's NodeType values that can be GPU kernels.
constexpr uint64_t kCompNode = 4, kCommSendNode = 5, kCommRecvNode = 6, kCommCollNode = 7;

// A bit per wire type that et_def.proto allows for field `number` of `m`; 0 for a field it
// does not have (skipped, as protobuf skips unknown fields).
unsigned AllowedWires(Msg m, uint64_t number) {
  const unsigned varint = 1u << kVarint, i64 = 1u << kI64, len = 1u << kLen, i32 = 1u << kI32;
  switch (m) {
    case Msg::kMetadata:  // version = 1, attr = 2
      return number == 1 || number == 2 ? len : 0;
    case Msg::kNode:  // kNodeFields; ctrl_deps and data_deps are repeated, packed or not
      if (number == 4 || number == 5) return varint | len;
      if (number == 1 || number == 3 || number == 6 || number == 7) return varint;
      return number >= 2 && number <= 10 ? len : 0;
    case Msg::kAttr:  // name, doc_string, then the oneof: scalars at odd numbers, lists at even
      if (number > 32) return 0;
      if (number <= 2 || number % 2 == 0 || number == 29 || number == 31) return len;
      if (number == 3 || number == 21 || number == 25) return i64;  // double, (s)fixed64
      if (number == 5 || number == 19 || number == 23) return i32;  // float, (s)fixed32
      return varint;                                                // (u)int32/64, sint32/64, bool
  }
  return 0;
}

std::string FieldName(Msg m, uint64_t number) {
  std::string out = std::string(MsgName(m)) + " field " + std::to_string(number);
  if (m == Msg::kNode && number >= 1 && number <= 10) return out + " (" + kNodeFields[number] + ")";
  if (m == Msg::kMetadata && number >= 1 && number <= 2) {
    return out + (number == 1 ? " (version)" : " (attr)");
  }
  return out;
}

// A varint at bytes[*pos]: false where it runs past the end or past 10 bytes.
bool ReadVarint(std::string_view bytes, size_t* pos, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64 && *pos < bytes.size(); shift += 7) {
    const auto c = static_cast<uint8_t>(bytes[(*pos)++]);
    *value |= static_cast<uint64_t>(c & 0x7f) << shift;
    if ((c & 0x80) == 0) return true;
  }
  return false;
}

struct Field {
  uint64_t number = 0;
  int wire = 0;
  uint64_t value = 0;      // a varint, or a fixed32 / fixed64 (little-endian)
  std::string_view bytes;  // a length-delimited field's contents
};

// The fields of one message, `bytes`, that begins at byte `base` of the file `file`.
class FieldReader {
 public:
  FieldReader(std::string_view bytes, size_t base, Msg msg, const std::string& file)
      : bytes_(bytes), base_(base), msg_(msg), file_(file) {}
  bool Done() const { return pos_ == bytes_.size(); }
  // The byte of the file where `inner`, a view into this message, begins.
  size_t Offset(std::string_view inner) const {
    return base_ + static_cast<size_t>(inner.data() - bytes_.data());
  }

  Status Next(Field* f) {
    const size_t at = pos_;
    uint64_t tag = 0;
    if (!ReadVarint(bytes_, &pos_, &tag)) return Bad(at, VarintTrouble("a field's tag"));
    f->number = tag >> 3;
    f->wire = static_cast<int>(tag & 7);
    const unsigned allowed = AllowedWires(msg_, f->number);
    if (f->number == 0 || (allowed == 0 && f->wire != kVarint && f->wire != kI64 &&
                           f->wire != kLen && f->wire != kI32)) {
      return Bad(at, FieldName(msg_, f->number) + " of wire type " + kWireNames[f->wire] +
                         ", which no Chakra trace has");
    }
    if (allowed != 0 && (allowed & (1u << f->wire)) == 0) {
      const int expected = std::countr_zero(allowed);
      return Bad(at, FieldName(msg_, f->number) + " has wire type " + kWireNames[f->wire] +
                         ", where the schema has " + kWireNames[expected]);
    }
    if (f->wire == kVarint) {
      if (!ReadVarint(bytes_, &pos_, &f->value)) return Bad(at, VarintTrouble("a varint"));
      return Status::Ok();
    }
    if (f->wire == kI64 || f->wire == kI32) {
      const size_t n = f->wire == kI64 ? 8 : 4;
      if (n > bytes_.size() - pos_) return Bad(at, Overrun(n));
      f->value = 0;
      for (size_t i = 0; i < n; ++i) {
        f->value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[pos_ + i])) << (8 * i);
      }
      pos_ += n;
      return Status::Ok();
    }
    uint64_t n = 0;
    if (!ReadVarint(bytes_, &pos_, &n)) return Bad(at, VarintTrouble("a length"));
    if (n > bytes_.size() - pos_) return Bad(at, Overrun(n));
    f->bytes = bytes_.substr(pos_, n);
    pos_ += n;
    return Status::Ok();
  }

 private:
  std::string VarintTrouble(const std::string& what) const {
    return what + (pos_ == bytes_.size()
                       ? " runs past the end of its " + std::string(MsgName(msg_)) + " message"
                       : " of more than 10 bytes");
  }
  std::string Overrun(uint64_t n) const {
    return "a field of " + std::to_string(n) + " bytes runs past the end of its " + MsgName(msg_) +
           " message (" + std::to_string(bytes_.size() - pos_) + " bytes left)";
  }
  Status Bad(size_t at, const std::string& what) const {
    return Status::InvalidInput(file_ + ": byte " + std::to_string(base_ + at) + ": " + what +
                                ": a corrupt trace, or not a Chakra one");
  }

  std::string_view bytes_;
  size_t base_;
  Msg msg_;
  const std::string& file_;
  size_t pos_ = 0;
};

// An AttributeProto's name and its value where that is an integer or a bool (fields 7-27).
struct Attr {
  std::string_view name;
  std::optional<int64_t> integer;
};

Status ParseAttr(std::string_view bytes, size_t base, const std::string& file, Attr* a) {
  FieldReader r(bytes, base, Msg::kAttr, file);
  Field f;
  while (!r.Done()) {
    if (Status s = r.Next(&f); !s.ok()) return s;
    if (f.number == 1) a->name = f.bytes;
    if (f.wire == kLen || f.number < 7 || f.number > 27) continue;
    if (f.number == 15 || f.number == 17) {  // sint32, sint64: zigzag
      a->integer = static_cast<int64_t>(f.value >> 1) ^ -static_cast<int64_t>(f.value & 1);
    } else if (f.number == 23) {  // sfixed32
      a->integer = static_cast<int32_t>(static_cast<uint32_t>(f.value));
    } else {  // int32 / int64 (two's complement in 64 bits), uint32 / uint64, fixed, bool
      a->integer = static_cast<int64_t>(f.value);
    }
  }
  return Status::Ok();
}

// The fields of a Node that matter here.
struct ChakraNode {
  std::string_view name;
  uint64_t type = 0, start_us = 0, dur_us = 0;
  bool cpu_op = false;
  std::optional<int64_t> comm_type;
  int64_t comm_size = 0;
};

Status ParseNode(std::string_view bytes, size_t base, const std::string& file, ChakraNode* n) {
  FieldReader r(bytes, base, Msg::kNode, file);
  Field f;
  while (!r.Done()) {
    if (Status s = r.Next(&f); !s.ok()) return s;
    if (f.number == 2) n->name = f.bytes;
    if (f.number == 3) n->type = f.value;
    if (f.number == 6) n->start_us = f.value;
    if (f.number == 7) n->dur_us = f.value;
    if (f.number != 10) continue;
    Attr a;
    if (Status s = ParseAttr(f.bytes, r.Offset(f.bytes), file, &a); !s.ok()) return s;
    if (a.name == "is_cpu_op") n->cpu_op = a.integer.value_or(0) != 0;
    if (a.name == "comm_type") n->comm_type = a.integer;
    if (a.name == "comm_size") n->comm_size = a.integer.value_or(0);
  }
  return Status::Ok();
}

// The GlobalMetadata's integer attribute "rank", where it has one.
Status ParseMetadata(std::string_view bytes, size_t base, const std::string& file,
                     std::optional<int64_t>* rank) {
  FieldReader r(bytes, base, Msg::kMetadata, file);
  Field f;
  while (!r.Done()) {
    if (Status s = r.Next(&f); !s.ok()) return s;
    if (f.number != 2) continue;
    Attr a;
    if (Status s = ParseAttr(f.bytes, r.Offset(f.bytes), file, &a); !s.ok()) return s;
    if (a.name == "rank" && a.integer) *rank = a.integer;
  }
  return Status::Ok();
}

// trainsim's name of a CollectiveCommType; "" for a value the schema does not have.
std::string CollectiveName(int64_t comm_type) {
  static const char* const kNames[] = {"all_reduce", "reduce",         "all_gather",
                                       "gather",     "scatter",        "broadcast",
                                       "all_to_all", "reduce_scatter", "reduce_scatter",
                                       "barrier"};  // REDUCE_SCATTER_BLOCK is a reduce-scatter
  return comm_type >= 0 && comm_type <= 9 ? kNames[comm_type] : "";
}

// Reads the length-prefixed message at byte `*at` of `in` (`size` bytes in all) into `buf`.
Status ReadMessage(std::istream& in, uint64_t size, uint64_t* at, Msg msg, const std::string& file,
                   std::string* buf) {
  const uint64_t start = *at;
  const std::string where = file + ": byte " + std::to_string(start) + ": a " + MsgName(msg);
  uint64_t len = 0;
  for (int shift = 0;; shift += 7) {
    const int c = in.get();
    if (c == std::char_traits<char>::eof()) {
      return Status::InvalidInput(where +
                                  " message's length cut short at the end of the file "
                                  "(cut short?)");
    }
    ++*at;
    len |= static_cast<uint64_t>(c & 0x7f) << shift;
    if ((c & 0x80) == 0) break;
    if (shift >= 63) {
      return Status::InvalidInput(where +
                                  " message's length of more than 10 bytes: a corrupt "
                                  "trace, or not a Chakra one");
    }
  }
  if (len > size - *at) {
    return Status::InvalidInput(where + " message of " + std::to_string(len) +
                                " bytes, but the file ends " + std::to_string(size - *at) +
                                " bytes after its length (cut short?)");
  }
  buf->resize(len);
  in.read(buf->data(), static_cast<std::streamsize>(len));
  if (static_cast<uint64_t>(in.gcount()) != len) {
    return Status::InvalidInput(file + ": cannot read byte " + std::to_string(*at));
  }
  *at += len;
  return Status::Ok();
}

// RANK of a file named NAME.RANK.et (ASTRA-sim's name for rank RANK's trace), else 0.
int RankFromName(const std::string& file) {
  const std::string base = file.substr(file.find_last_of('/') + 1);
  if (base.size() < 4 || base.substr(base.size() - 3) != ".et") return 0;
  const size_t dot = base.find_last_of('.', base.size() - 4);
  if (dot == std::string::npos) return 0;
  const std::string digits = base.substr(dot + 1, base.size() - 3 - dot - 1);
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return 0;
  }
  return std::atoi(digits.c_str());
}

// The node as a GPU kernel, or nothing where it is none.
std::optional<TimedKernel> AsKernel(const ChakraNode& n) {
  const bool gpu_type = n.type == kCompNode || n.type == kCommSendNode || n.type == kCommRecvNode ||
                        n.type == kCommCollNode;
  if (!gpu_type || n.cpu_op || n.dur_us == 0) return std::nullopt;
  TimedKernel k;
  k.start_us = static_cast<double>(n.start_us);
  k.end_us = static_cast<double>(n.start_us + n.dur_us);
  k.kind = n.type == kCompNode ? ClassifyKernel(n.name) : KernelKind::kComm;
  if (n.type == kCommCollNode && n.comm_type) k.comm_op = CollectiveName(*n.comm_type);
  if (n.type == kCommSendNode || n.type == kCommRecvNode) k.comm_op = "send_recv";
  k.comm_bytes = static_cast<double>(std::max<int64_t>(n.comm_size, 0));
  return k;
}

// N of a node named "ProfilerStep#N".
std::optional<int64_t> ProfilerStep(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (name.substr(0, kPrefix.size()) != kPrefix || name.size() == kPrefix.size()) return {};
  int64_t n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9' || n > 1'000'000'000'000) return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

// What a trace's nodes give.
struct Nodes {
  int64_t count = 0;
  std::vector<TimedKernel> kernels;
  std::vector<StepSpan> spans;  // of the ProfilerStep#N nodes
};

// The Node messages from byte `at` to the end (`size`).
Status ReadNodes(std::istream& in, uint64_t size, uint64_t at, const std::string& name,
                 Nodes* out) {
  std::string buf;
  while (at < size) {
    if (Status s = ReadMessage(in, size, &at, Msg::kNode, name, &buf); !s.ok()) return s;
    ChakraNode n;
    if (Status s = ParseNode(buf, at - buf.size(), name, &n); !s.ok()) return s;
    ++out->count;
    if (std::optional<int64_t> step = ProfilerStep(n.name)) {
      if (n.dur_us > 0) {
        out->spans.push_back(
            {*step, static_cast<double>(n.start_us), static_cast<double>(n.dur_us)});
      }
    } else if (std::optional<TimedKernel> k = AsKernel(n)) {
      out->kernels.push_back(std::move(*k));
    }
  }
  return Status::Ok();
}

// Refuses a trace without a timed GPU node, or whose GPU nodes have no start times.
Status CheckTimed(const std::string& name, const Nodes& nodes) {
  if (nodes.kernels.empty()) {
    return Status::InvalidInput(name +
                                ": no timed GPU node (a COMP_NODE or COMM_*_NODE with "
                                "duration_micros, not is_cpu_op) among its " +
                                std::to_string(nodes.count) + " nodes: nothing to measure");
  }
  if (std::all_of(nodes.kernels.begin(), nodes.kernels.end(),
                  [](const TimedKernel& k) { return k.start_us == 0; })) {
    return Status::InvalidInput(
        name + ": none of its " + std::to_string(nodes.kernels.size()) +
        " GPU nodes has a start_time_micros: a trace converted without timing (Chakra's PyTorch "
        "converter writes durations only); observe needs when each kernel ran");
  }
  return Status::Ok();
}

bool IsControlByte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u < 0x20 && u != '\t' && u != '\n' && u != '\r') || u == 0x7f;
}

Status NotChakra(const std::string& file, std::string_view head) {
  std::string why = "it does not begin with a length-prefixed GlobalMetadata message";
  if (head.empty()) why = "the file is empty";
  if (head.size() >= 2 && head[0] == '\x1f' && head[1] == '\x8b') {
    why = "it is gzip-compressed: gunzip it first";
  }
  return Status::InvalidInput(file + ": not a Chakra execution trace: " + why +
                              " (mlcommons/chakra schema/protobuf/et_def.proto)");
}

}  // namespace

bool LooksLikeChakra(std::string_view head) {
  if (std::none_of(head.begin(), head.end(), IsControlByte)) return false;
  size_t pos = 0;
  uint64_t len = 0, tag = 0, n = 0;
  if (!ReadVarint(head, &pos, &len)) return false;
  if (len > (uint64_t{1} << 30)) return false;
  const size_t end = pos + len;
  // The GlobalMetadata's fields: version (1) and attr (2), both length-delimited; fields the
  // schema does not have (yet) are skipped where their wire type is one protobuf writes.
  while (pos < end) {
    if (pos >= head.size()) return true;  // as far as `head` reaches
    if (!ReadVarint(head, &pos, &tag)) return pos == head.size();
    const uint64_t number = tag >> 3, wire = tag & 7;
    const unsigned allowed = AllowedWires(Msg::kMetadata, number);
    if (number == 0 || (allowed != 0 && (allowed & (1u << wire)) == 0)) return false;
    if (wire == kLen || wire == kVarint) {
      if (!ReadVarint(head, &pos, &n)) return pos == head.size();
      if (wire == kVarint) continue;
    } else if (wire == kI64 || wire == kI32) {
      n = wire == kI64 ? 8 : 4;
    } else {
      return false;  // groups, and the wire types 6 and 7, which do not exist
    }
    if (n > end - pos) return false;
    pos += n;
  }
  if (pos >= head.size()) return true;
  if (!ReadVarint(head, &pos, &len)) return pos == head.size();  // the first Node's length
  if (len == 0) return false;
  if (!ReadVarint(head, &pos, &tag)) return pos == head.size();  // and its first field
  const unsigned allowed = AllowedWires(Msg::kNode, tag >> 3);
  return allowed != 0 && (allowed & (1u << (tag & 7))) != 0;
}

Expected<KinetoTrace> ReadChakraTrace(std::istream& in, const std::string& name) {
  in.seekg(0, std::ios::end);
  const auto end = in.tellg();
  in.seekg(0, std::ios::beg);
  if (!in || end < 0) return Status::InvalidInput(name + ": cannot read the file");
  const auto size = static_cast<uint64_t>(end);
  std::string buf(std::min<uint64_t>(size, 1 << 16), '\0');
  in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
  in.seekg(0, std::ios::beg);
  if (!LooksLikeChakra(buf)) return NotChakra(name, buf);

  uint64_t at = 0;
  if (Status s = ReadMessage(in, size, &at, Msg::kMetadata, name, &buf); !s.ok()) return s;
  std::optional<int64_t> rank;
  if (Status s = ParseMetadata(buf, at - buf.size(), name, &rank); !s.ok()) return s;
  Nodes nodes;
  if (Status s = ReadNodes(in, size, at, name, &nodes); !s.ok()) return s;
  if (Status s = CheckTimed(name, nodes); !s.ok()) return s;
  KinetoTrace t;
  t.file = name;
  t.events = nodes.count;
  t.kernels = static_cast<int64_t>(nodes.kernels.size());
  t.device_pid =
      rank && *rank >= 0 && *rank <= INT_MAX ? static_cast<int>(*rank) : RankFromName(name);
  t.rank = t.device_pid;
  if (nodes.spans.empty()) {  // the whole trace, one step
    double lo = nodes.kernels.front().start_us, hi = nodes.kernels.front().end_us;
    for (const TimedKernel& k : nodes.kernels) {
      lo = std::min(lo, k.start_us);
      hi = std::max(hi, k.end_us);
    }
    nodes.spans.push_back({0, lo, hi - lo});
  }
  t.steps = SumSteps(std::move(nodes.kernels), std::move(nodes.spans), &t.last_step);
  return t;
}

Expected<KinetoTrace> LoadChakraTrace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidInput(path + ": cannot read the file");
  return ReadChakraTrace(in, path);
}

}  // namespace trainsim::observe
