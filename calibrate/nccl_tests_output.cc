#include "calibrate/nccl_tests_output.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>

#include "calibrate/calibration.h"
#include "core/durable_file.h"

namespace trainsim::calibrate {
namespace {

// printf onto the end of *out.
[[gnu::format(printf, 2, 3)]] void Appendf(std::string* out, const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  if (n > 0) {
    const size_t at = out->size();
    out->resize(at + n + 1);
    std::vsnprintf(out->data() + at, n + 1, format, again);
    out->resize(at + n);
  }
  va_end(again);
}

// How nccl-tests runs a profile's collective, from its src/*.cu: the test's
// name (TEST_perf), the reduction it prints ("sum", the -o default; "none"
// where there is none), the root (broadcast: -r 0 by default; else -1) and
// whether the count column is per rank (all_gather and reduce_scatter print
// their per-rank paramcount; the others the whole buffer's).
struct TestShape {
  const char* test;
  const char* redop;
  int root;
  bool count_per_rank;
};

const TestShape* FindTest(const std::string& op) {
  static const std::map<std::string, TestShape> kTests = {
      {"all_reduce", {"all_reduce", "sum", -1, false}},
      {"all_gather", {"all_gather", "none", -1, true}},
      {"reduce_scatter", {"reduce_scatter", "sum", -1, true}},
      {"broadcast", {"broadcast", "none", 0, false}},
      {"send_recv", {"sendrecv", "sum", -1, false}}};
  const auto it = kTests.find(op);
  return it == kTests.end() ? nullptr : &it->second;
}

// The collective points of one op on one set of ranks, in the order measured.
struct Group {
  std::string op;
  int ranks = 0, nodes = 1;
  std::vector<const ProfilePoint*> points;
};

std::vector<Group> CollectiveGroups(const HardwareProfile& profile) {
  std::vector<Group> groups;
  for (const ProfilePoint& point : profile.points) {
    if (point.kind != "collective") continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.op == point.what && g.ranks == point.ranks && g.nodes == point.nodes;
    });
    if (it == groups.end()) {
      it = groups.insert(groups.end(), Group{point.what, point.ranks, point.nodes, {}});
    }
    it->points.push_back(&point);
  }
  return groups;
}

std::string Plural(int n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string GroupText(const Group& g) {
  return g.op + " over " + Plural(g.ranks, "rank") + " on " + Plural(g.nodes, "node");
}

// The rank lines' device: the CUDA device's name; on the cpu backend the
// catalog GPU its profile defines first ("local-cpu-core: AMD EPYC ..."), so
// that `trainsim observe --instance local-cpu` takes the run as that machine's.
std::string DeviceName(const HardwareProfile& profile) {
  const ProfileProvenance& v = profile.provenance;
  if (v.backend == "cpu" && !profile.gpu.empty()) return profile.gpu + ": " + v.device;
  return v.device;
}

long long Bytes(const ProfilePoint& point) { return std::llround(point.bytes); }

// What differs from an nccl-tests run, then nccl-tests' device report.
void AppendPreface(const Group& g, const TestShape& test, const HardwareProfile& profile,
                   const NcclTestsContext& context, std::string* out) {
  const ProfileProvenance& v = profile.provenance;
  const bool cpu = v.backend == "cpu";
  Appendf(out, "# %s\n", context.command_line.c_str());
  Appendf(out,
          "# trainsim-calibrate: its own %s (%s backend: %s), measured %s, in nccl-tests' "
          "output layout; not an nccl-tests run\n",
          GroupText(g).c_str(), v.backend.c_str(), v.collectives.c_str(), v.date.c_str());
  Appendf(out,
          "# trainsim-calibrate: time: the median of %s after %s (nccl-tests: the mean of "
          "iters); out of place only: the in-place columns repeat it; #wrong: not counted\n",
          Plural(v.repetitions, "timed run").c_str(), Plural(v.warmup, "warm-up run").c_str());
  Appendf(out, "# trainsim-calibrate: Pid: this process's, on every rank line%s\n",
          cpu ? "; device D: the D-th CPU the run may use" : "");
  Appendf(out, "# Collective test starting: %s_perf\n", test.test);
  Appendf(out,
          "# nThread 1 nGpus %d minBytes %lld maxBytes %lld step: %ld(factor) warmup iters: %d "
          "iters: %d agg iters: 1 validation: 0 graph: 0 unalign: 0\n",
          g.ranks, Bytes(*g.points.front()), Bytes(*g.points.back()), context.size_factor, v.warmup,
          v.repetitions);
  Appendf(out, "#\n# Using devices\n");
  const std::string device = DeviceName(profile);
  for (int rank = 0; rank < g.ranks; ++rank) {
    Appendf(out, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s\n", rank, 0, context.pid,
            v.host.c_str(), rank, cpu ? "cpu" : "n/a", device.c_str());
  }
}

void AppendColumnHeader(std::string* out) {
  const char* e = "";
  Appendf(out, "#\n");
  Appendf(out,
          "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place    "
          "      \n",
          e, e, e, e, e);
  Appendf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size",
          "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
          "busbw", "#wrong", 0, e);
  Appendf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)",
          "(elements)", e, e, e, "(us)", "(GB/s)", "(GB/s)", e, "(us)", "(GB/s)", "(GB/s)", e, 0,
          e);
}

// One size: the preamble, then the same measurement as out of place and in place.
void AppendRow(const ProfilePoint& point, const TestShape& test, std::string* out) {
  const long long count = Bytes(point) / static_cast<long long>(sizeof(float)) /
                          (test.count_per_rank ? std::max(1, point.ranks) : 1);
  char root[16];
  std::snprintf(root, sizeof root, "%6i", test.root);
  Appendf(out, "%12lli  %12lli  %8s  %6s  %6s", Bytes(point), count, "float", test.redop, root);
  const std::string time = NcclTestsNumber(point.median_s * 1e6, 7);
  const std::string algbw = NcclTestsNumber(point.algbw_Bps / 1e9, 6);
  const std::string busbw = NcclTestsNumber(point.rate / 1e9, 6);
  for (int side = 0; side < 2; ++side) {
    Appendf(out, "  %7s  %6s  %6s    N/A", time.c_str(), algbw.c_str(), busbw.c_str());
  }
  Appendf(out, "\n");
}

// nccl-tests averages the bus bandwidth of every out-of-place and in-place
// result: here, of every size.
void AppendFooter(const Group& g, const TestShape& test, std::string* out) {
  double sum = 0;
  for (const ProfilePoint* p : g.points) sum += p->rate / 1e9;
  Appendf(out, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
  Appendf(out, "# %-20s : %g %s\n", "Avg bus bandwidth", sum / g.points.size(), "");
  Appendf(out, "#\n# Collective test concluded: %s_perf\n", test.test);
}

}  // namespace

std::string NcclTestsNumber(double value, int width) {
  std::string text(static_cast<size_t>(width) + 1, '\0');
  for (int decimals : {2, 1, 0}) {
    const int n = std::snprintf(text.data(), text.size(), "%*.*f", width, decimals, value);
    if (n <= width) return text.substr(0, static_cast<size_t>(n));
  }
  const int n = std::snprintf(text.data(), text.size(), "%*.*e", width, width >= 7 ? 1 : 0, value);
  return text.substr(0, static_cast<size_t>(std::min(n, width)));
}

NcclTestsTexts FormatNcclTests(const HardwareProfile& profile, const NcclTestsContext& context) {
  NcclTestsTexts out;
  for (const Group& g : CollectiveGroups(profile)) {
    const TestShape* test = FindTest(g.op);
    if (test == nullptr) {
      out.left_out.push_back(GroupText(g) + ": nccl-tests has no such test");
      continue;
    }
    if (g.nodes != 1) {
      out.left_out.push_back(GroupText(g) +
                             ": the profile records rank 0's host only, and the rank lines "
                             "need every rank's");
      continue;
    }
    NcclTestsText t;
    t.name = std::string(test->test) + ".ranks" + std::to_string(g.ranks) + ".nodes" +
             std::to_string(g.nodes);
    AppendPreface(g, *test, profile, context, &t.text);
    AppendColumnHeader(&t.text);
    for (const ProfilePoint* p : g.points) AppendRow(*p, *test, &t.text);
    AppendFooter(g, *test, &t.text);
    out.texts.push_back(std::move(t));
  }
  return out;
}

Status WriteNcclTests(const std::vector<NcclTestsText>& texts, const std::string& prefix,
                      std::vector<std::string>* paths) {
  for (const NcclTestsText& t : texts) {
    const std::string path = prefix + "." + t.name + ".txt";
    if (Status s = WriteFileDurably(path, t.text); !s.ok()) return s;
    paths->push_back(path);
  }
  return Status::Ok();
}

}  // namespace trainsim::calibrate
