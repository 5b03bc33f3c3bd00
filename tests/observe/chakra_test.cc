// Chakra execution traces read back (observe/chakra.h): the steps of the synthetic fixture
// counted by hand, the rank, the format's detection, and every refusal with its file and byte,
// down to cut files and random bytes.
#include "observe/chakra.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace trainsim::observe {
namespace {

const std::string kData = std::string(TRAINSIM_SOURCE_DIR) + "/tests/observe/data/";
const std::string kFixture = kData + "chakra-synthetic.0.et";

// The protobuf encoding of the small traces built here (make_chakra_fixture.py writes the
// fixture's). Field numbers from et_def.proto: Node name 2, type 3, start_time_micros 6,
// duration_micros 7, attr 10; AttributeProto name 1, int64_val 9, bool_val 27.
std::string Varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out += static_cast<char>(v | 0x80);
  return out + static_cast<char>(v);
}
std::string Len(int field, const std::string& bytes) {
  return Varint(field << 3 | 2) + Varint(bytes.size()) + bytes;
}
std::string Int(int field, uint64_t v) { return Varint(field << 3) + Varint(v); }
std::string IntAttr(const std::string& name, int64_t v) {
  return Len(10, Len(1, name) + Int(9, static_cast<uint64_t>(v)));
}
std::string CpuOp() { return Len(10, Len(1, "is_cpu_op") + Int(27, 1)); }
std::string Node(const std::string& name, int type, uint64_t start, uint64_t dur,
                 const std::string& attrs = "") {
  return Len(2, name) + Int(3, type) + Int(6, start) + Int(7, dur) + attrs;
}
constexpr int kComp = 4, kCommColl = 7, kMemLoad = 2;

// A trace: its GlobalMetadata (version "0.0.4" unless given), then the nodes, each with its
// length before it.
std::string Trace(const std::vector<std::string>& nodes,
                  const std::string& metadata = Len(1, "0.0.4")) {
  std::string out = Varint(metadata.size()) + metadata;
  for (const std::string& n : nodes) out += Varint(n.size()) + n;
  return out;
}

Expected<KinetoTrace> Read(const std::string& bytes, const std::string& name = "t.et") {
  std::istringstream in(bytes);
  return ReadChakraTrace(in, name);
}

double Kind(const TraceStep& s, KernelKind k) { return s.kernel_s[static_cast<int>(k)]; }

// The fixture (make_chakra_fixture.py; synthetic). Step 3 (1000-2000 us): GEMM 1000-1400,
// all-reduce of 32 MiB 1300-1600 (1400-1600 with no compute: 200 us exposed), a fill kernel
// 1650-1700 (no is_cpu_op attribute: a GPU node); the CPU ops (aten::mm, aten::add_ at
// 1420-1440) and the MEM_LOAD_NODE (1450-1550) are no kernels. Step 4 (2010-2910): flash
// 2010-2210 and GEMM 2150-2450 overlap (attention 200, GEMM 300 us), a reduce-scatter of 16 MiB
// 2300-2400 under the GEMM, a send of 1 MiB 2600-2650 (50 us exposed), an all-gather 2800-3000
// clipped to 2910 (110 us, exposed; not wholly inside, so no sample); a GPU node without a
// duration is no kernel.
TEST(Chakra, StepsKernelTimeAndExposedCommunication) {
  Expected<KinetoTrace> t = LoadChakraTrace(kFixture);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->file, kFixture);
  EXPECT_EQ(t->events, 16);
  EXPECT_EQ(t->kernels, 8);
  EXPECT_EQ(t->device_pid, 0);
  EXPECT_EQ(t->device, "");
  ASSERT_EQ(t->steps.size(), 2u);
  const TraceStep& a = t->steps[0];
  EXPECT_EQ(a.step, 3);
  EXPECT_DOUBLE_EQ(a.start_us, 1000);
  EXPECT_DOUBLE_EQ(a.wall_s, 1000e-6);
  EXPECT_DOUBLE_EQ(Kind(a, KernelKind::kGemm), 400e-6);
  EXPECT_DOUBLE_EQ(Kind(a, KernelKind::kAttention), 0);
  EXPECT_DOUBLE_EQ(Kind(a, KernelKind::kComm), 300e-6);
  EXPECT_DOUBLE_EQ(Kind(a, KernelKind::kOther), 50e-6);
  EXPECT_DOUBLE_EQ(a.exposed_comm_s, 200e-6);
  EXPECT_DOUBLE_EQ(a.compute_s, 450e-6);  // 1000-1400, 1650-1700
  EXPECT_DOUBLE_EQ(a.idle_s, 350e-6);     // 1000 - 450 - 200
  ASSERT_EQ(a.comms.size(), 1u);
  EXPECT_EQ(a.comms[0].op, "all_reduce");
  EXPECT_DOUBLE_EQ(a.comms[0].bytes, 32 << 20);
  EXPECT_EQ(a.comms[0].group_ranks, 0);  // not recorded
  EXPECT_DOUBLE_EQ(a.comms[0].seconds, 300e-6);
  const TraceStep& b = t->steps[1];
  EXPECT_EQ(b.step, 4);
  EXPECT_DOUBLE_EQ(b.wall_s, 900e-6);
  EXPECT_DOUBLE_EQ(Kind(b, KernelKind::kAttention), 200e-6);
  EXPECT_DOUBLE_EQ(Kind(b, KernelKind::kGemm), 300e-6);
  EXPECT_DOUBLE_EQ(Kind(b, KernelKind::kComm), 260e-6);  // 100 + 50 + 110
  EXPECT_DOUBLE_EQ(Kind(b, KernelKind::kOther), 0);
  EXPECT_DOUBLE_EQ(b.exposed_comm_s, 160e-6);  // 50 + 110
  EXPECT_DOUBLE_EQ(b.compute_s, 440e-6);       // 2010-2450
  EXPECT_DOUBLE_EQ(b.idle_s, 300e-6);          // 900 - 440 - 160
  ASSERT_EQ(b.comms.size(), 2u);
  EXPECT_EQ(b.comms[0].op, "reduce_scatter");
  EXPECT_DOUBLE_EQ(b.comms[0].bytes, 16 << 20);
  EXPECT_DOUBLE_EQ(b.comms[0].seconds, 100e-6);
  EXPECT_EQ(b.comms[1].op, "send_recv");
  EXPECT_DOUBLE_EQ(b.comms[1].bytes, 1 << 20);
  EXPECT_DOUBLE_EQ(b.comms[1].seconds, 50e-6);
}

// Without ProfilerStep#N nodes the trace is one step, 0, from the first kernel's start to the
// last kernel's end: GEMM 100-150, all-reduce 120-200 (50 us exposed). The rank is the
// metadata's "rank" attribute.
TEST(Chakra, WithoutProfilerStepsTheTraceIsOneStep) {
  const std::string metadata = Len(2, Len(1, "rank") + Int(9, 5));
  Expected<KinetoTrace> t =
      Read(Trace({Node("aten::mm", kComp, 90, 70, CpuOp()), Node("gemm_fp32", kComp, 100, 50),
                  Node("ncclDevKernel_AllReduce", kCommColl, 120, 80,
                       IntAttr("comm_type", 0) + IntAttr("comm_size", 4096))},
                 metadata));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->device_pid, 5);
  ASSERT_EQ(t->steps.size(), 1u);
  const TraceStep& s = t->steps[0];
  EXPECT_EQ(s.step, 0);
  EXPECT_DOUBLE_EQ(s.start_us, 100);
  EXPECT_DOUBLE_EQ(s.wall_s, 100e-6);
  EXPECT_DOUBLE_EQ(Kind(s, KernelKind::kGemm), 50e-6);
  EXPECT_DOUBLE_EQ(Kind(s, KernelKind::kComm), 80e-6);
  EXPECT_DOUBLE_EQ(s.exposed_comm_s, 50e-6);
  EXPECT_DOUBLE_EQ(s.idle_s, 0);
  ASSERT_EQ(s.comms.size(), 1u);
  EXPECT_EQ(s.comms[0].op, "all_reduce");
  EXPECT_DOUBLE_EQ(s.comms[0].bytes, 4096);
}

// Without a "rank" in the metadata, RANK of NAME.RANK.et (ASTRA-sim's names), else 0.
TEST(Chakra, RankFromTheFileName) {
  const std::string bytes = test::ReadFile(kFixture);
  EXPECT_EQ(Read(bytes, "runs/llama.12.et")->device_pid, 12);
  EXPECT_EQ(Read(bytes, "trace.et")->device_pid, 0);
  EXPECT_EQ(Read(bytes, "trace.x1.et")->device_pid, 0);
}

TEST(Chakra, Detection) {
  const std::string bytes = test::ReadFile(kFixture);
  EXPECT_TRUE(LooksLikeChakra(bytes));
  EXPECT_TRUE(LooksLikeChakra(std::string_view(bytes).substr(0, 60)));  // inside the metadata
  EXPECT_TRUE(LooksLikeChakra(Trace({Node("k", kComp, 1, 1)}, "")));    // an empty GlobalMetadata
  for (const char* text : {"kineto-synthetic.json", "megatron-synthetic.log",
                           "nccl-tests-p5-2node.txt", "trainsim-local.jsonl", "README.md"}) {
    EXPECT_FALSE(LooksLikeChakra(test::ReadFile(kData + text))) << text;
  }
  EXPECT_FALSE(LooksLikeChakra(""));
  EXPECT_FALSE(LooksLikeChakra(std::string("\x1f\x8b\x08\x00\x00\x00", 6)));  // gzip
  EXPECT_TRUE(LooksLikeChakra(Trace({Node("k", kComp, 1, 1)}, Len(3, "x") + Int(4, 1))));
  EXPECT_FALSE(LooksLikeChakra(Varint(2) + Int(1, 1)));  // version is length-delimited
  EXPECT_FALSE(LooksLikeChakra(Varint(2) + Varint(3 << 3 | 3) + "\x01"));  // a group
  EXPECT_FALSE(LooksLikeChakra(Varint(2) + Len(1, "x")));  // a field past the metadata's end
  EXPECT_FALSE(LooksLikeChakra(Varint(2) + Int(2, 1)));    // attr is length-delimited
  EXPECT_FALSE(LooksLikeChakra(Trace({Int(11, 1)})));      // Node has no field 11
}

// A file cut inside a message is refused with the message's byte; a file cut between two
// messages reads as a shorter trace (the format has no end marker).
TEST(Chakra, CutFiles) {
  const std::string bytes = test::ReadFile(kFixture);
  ASSERT_EQ(bytes.size(), 2448u);
  EXPECT_EQ(Read(bytes.substr(0, 50), "cut.et").status().message(),
            "cut.et: byte 0: a GlobalMetadata message of 121 bytes, but the file ends 49 bytes "
            "after its length (cut short?)");
  EXPECT_EQ(Read(bytes.substr(0, 123), "cut.et").status().message(),
            "cut.et: byte 122: a Node message's length cut short at the end of the file (cut "
            "short?)");
  EXPECT_EQ(Read(bytes.substr(0, 1000), "cut.et").status().message(),
            "cut.et: byte 961: a Node message of 217 bytes, but the file ends 37 bytes after its "
            "length (cut short?)");
  EXPECT_EQ(Read(bytes.substr(0, 122), "cut.et").status().message(),
            "cut.et: no timed GPU node (a COMP_NODE or COMM_*_NODE with duration_micros, not "
            "is_cpu_op) among its 0 nodes: nothing to measure");
  Expected<KinetoTrace> step3 = Read(bytes.substr(0, 1321));  // after the fill kernel's node
  ASSERT_TRUE(step3.ok()) << step3.status().message();
  EXPECT_EQ(step3->events, 8);
  EXPECT_EQ(step3->steps.size(), 1u);
  // Every other cut: the message boundaries from the length prefixes, then each byte.
  std::vector<bool> boundary(bytes.size() + 1, false);
  for (size_t at = 0; at < bytes.size();) {
    boundary[at] = true;
    uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      const auto c = static_cast<uint8_t>(bytes[at++]);
      len |= uint64_t{c & 0x7fu} << shift;
      if ((c & 0x80) == 0) break;
    }
    at += len;
  }
  // The first two bytes, "y\n" (a length of 121, version's tag), could be text.
  EXPECT_EQ(Read(bytes.substr(0, 2)).status().message(),
            "t.et: not a Chakra execution trace: it does not begin with a length-prefixed "
            "GlobalMetadata message (mlcommons/chakra schema/protobuf/et_def.proto)");
  for (size_t n = 3; n < bytes.size(); ++n) {
    if (boundary[n]) continue;
    const std::string m = Read(bytes.substr(0, n)).status().message();
    EXPECT_NE(m.find("(cut short?)"), std::string::npos) << n << ": " << m;
  }
}

TEST(Chakra, WireTypesThatDoNotFitTheField) {
  // The metadata takes bytes 0-7 and the node's length byte 8: its fields begin at byte 9.
  const std::string name = Len(2, "gemm");  // bytes 9-14
  EXPECT_EQ(Read(Trace({name + Len(6, "1000")})).status().message(),
            "t.et: byte 15: Node field 6 (start_time_micros) has wire type length-delimited, where "
            "the schema has varint: a corrupt trace, or not a Chakra one");
  EXPECT_EQ(Read(Trace({name + Int(10, 1)})).status().message(),
            "t.et: byte 15: Node field 10 (attr) has wire type varint, where the schema has "
            "length-delimited: a corrupt trace, or not a Chakra one");
  // attr at 15: its tag and length (2 bytes), then the AttributeProto: name "is_cpu_op" (17-27),
  // bool_val at 28.
  EXPECT_EQ(Read(Trace({name + Len(10, Len(1, "is_cpu_op") + Len(27, "1"))})).status().message(),
            "t.et: byte 28: AttributeProto field 27 has wire type length-delimited, where the "
            "schema has varint: a corrupt trace, or not a Chakra one");
  EXPECT_EQ(Read(Trace({name + Varint(11 << 3 | 3)})).status().message(),
            "t.et: byte 15: Node field 11 of wire type group start, which no Chakra trace has: a "
            "corrupt trace, or not a Chakra one");
  EXPECT_EQ(Read(Trace({name + Varint(2 << 3 | 2) + Varint(50) + "gemm"})).status().message(),
            "t.et: byte 15: a field of 50 bytes runs past the end of its Node message (4 bytes "
            "left): a corrupt trace, or not a Chakra one");
  EXPECT_EQ(Read(Trace({name + Varint(6 << 3) + "\x80\x80"})).status().message(),
            "t.et: byte 15: a varint runs past the end of its Node message: a corrupt trace, or "
            "not a Chakra one");
  EXPECT_EQ(
      Read(Trace({name + Varint(6 << 3) + std::string(11, '\x80') + "\x01"})).status().message(),
      "t.et: byte 15: a varint of more than 10 bytes: a corrupt trace, or not a Chakra one");
  // An AttributeProto of the GlobalMetadata (bytes 1-7: its tag and length, then the attr's
  // name "rank" 3-8 and int64_val at 9).
  EXPECT_EQ(Read(Trace({Node("k", kComp, 1, 1)}, Len(2, Len(1, "rank") + Len(9, "5"))))
                .status()
                .message(),
            "t.et: byte 9: AttributeProto field 9 has wire type length-delimited, where the "
            "schema has varint: a corrupt trace, or not a Chakra one");
  // Fields the schema does not have are skipped, as protobuf skips them.
  EXPECT_TRUE(Read(Trace({Node("gemm", kComp, 1, 1) + Int(40, 7) + Len(41, "x")})).ok());
  EXPECT_TRUE(Read(Trace({Node("gemm", kComp, 1, 1)}, Len(3, "x") + Int(4, 1))).ok());
}

TEST(Chakra, NotAChakraTrace) {
  const std::string json = kData + "kineto-synthetic.json";
  EXPECT_EQ(LoadChakraTrace(json).status().message(),
            json +
                ": not a Chakra execution trace: it does not begin with a length-prefixed "
                "GlobalMetadata message (mlcommons/chakra schema/protobuf/et_def.proto)");
  EXPECT_EQ(Read(std::string("\x1f\x8b\x08\x00", 4)).status().message(),
            "t.et: not a Chakra execution trace: it is gzip-compressed: gunzip it first "
            "(mlcommons/chakra schema/protobuf/et_def.proto)");
  EXPECT_EQ(Read("").status().message(),
            "t.et: not a Chakra execution trace: the file is empty (mlcommons/chakra "
            "schema/protobuf/et_def.proto)");
  EXPECT_EQ(LoadChakraTrace(kData + "no-such.et").status().message(),
            kData + "no-such.et: cannot read the file");
}

TEST(Chakra, NoTimedGpuNode) {
  EXPECT_EQ(Read(Trace({Node("ProfilerStep#1", kComp, 10, 100, CpuOp()),
                        Node("aten::mm", kComp, 10, 20, CpuOp()), Node("load", kMemLoad, 30, 20),
                        Node("gemm", kComp, 40, 0)}))
                .status()
                .message(),
            "t.et: no timed GPU node (a COMP_NODE or COMM_*_NODE with duration_micros, not "
            "is_cpu_op) among its 4 nodes: nothing to measure");
}

// As Chakra's PyTorch converter writes them: durations, no start times.
TEST(Chakra, TraceWithoutStartTimesRefused) {
  EXPECT_EQ(Read(Trace({Node("gemm", kComp, 0, 100), Node("ncclDevKernel_AllReduce", kCommColl, 0,
                                                          50, IntAttr("comm_size", 64))}))
                .status()
                .message(),
            "t.et: none of its 2 GPU nodes has a start_time_micros: a trace converted without "
            "timing (Chakra's PyTorch converter writes durations only); observe needs when each "
            "kernel ran");
}

// Arbitrary bytes, alone or after a valid GlobalMetadata, are refused, never a crash; the
// fixture with bytes changed at random is read or refused.
TEST(Chakra, RandomBytesRefusedNotACrash) {
  std::mt19937 rng(18);
  auto random_bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng() & 0xff);
    return s;
  };
  for (int i = 0; i < 500; ++i) {
    const std::string junk = random_bytes(rng() % 300);
    EXPECT_FALSE(Read(junk).ok());
    EXPECT_FALSE(Read(Trace({}) + junk).ok());
  }
  const std::string fixture = test::ReadFile(kFixture);
  for (int i = 0; i < 500; ++i) {
    std::string bytes = fixture;
    for (int k = 0; k < 4; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
    Expected<KinetoTrace> t = Read(bytes);
    if (t.ok()) {
      EXPECT_LE(t->kernels, 16);
    }
  }
}

}  // namespace
}  // namespace trainsim::observe
