#include "observe/nccl_tests.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace trainsim::observe {
namespace {

constexpr NcclOp kOps[] = {NcclOp::kAllReduce, NcclOp::kAllGather, NcclOp::kReduceScatter,
                           NcclOp::kAllToAll,  NcclOp::kSendRecv,  NcclOp::kBroadcast,
                           NcclOp::kReduce};

std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::optional<double> Number(const std::string& s) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

// A count or root column: a whole number (nccl-tests prints them with %li and %i) small
// enough to be one exactly; nullopt otherwise.
std::optional<int64_t> WholeNumber(const std::string& s) {
  const std::optional<double> v = Number(s);
  if (!v || *v != std::floor(*v) || std::fabs(*v) > 9e15) return std::nullopt;
  return static_cast<int64_t>(*v);
}

// The test a line names ("... /build/all_reduce_perf -b 8 ..."), if any.
std::optional<NcclOp> NamedOp(std::string_view line) {
  for (NcclOp op : kOps) {
    const std::string name = std::string(ToString(op)) + "_perf";
    const size_t at = line.find(name);
    if (at == std::string_view::npos) continue;
    // "reduce_perf" inside "all_reduce_perf": the name must start the word or follow a '/'.
    if (at > 0 && line[at - 1] != '/' && line[at - 1] != ' ' && line[at - 1] != '\t') continue;
    return op;
  }
  return std::nullopt;
}

}  // namespace

const char* ToString(NcclOp op) {
  switch (op) {
    case NcclOp::kAllReduce:
      return "all_reduce";
    case NcclOp::kAllGather:
      return "all_gather";
    case NcclOp::kReduceScatter:
      return "reduce_scatter";
    case NcclOp::kAllToAll:
      return "alltoall";
    case NcclOp::kSendRecv:
      return "sendrecv";
    case NcclOp::kBroadcast:
      return "broadcast";
    case NcclOp::kReduce:
      return "reduce";
  }
  return "?";
}

Expected<NcclOp> ParseNcclOp(std::string_view name, std::string_view field) {
  std::string_view bare = name;
  if (bare.size() > 5 && bare.substr(bare.size() - 5) == "_perf") bare.remove_suffix(5);
  for (NcclOp op : kOps) {
    if (bare == ToString(op)) return op;
  }
  return Status::InvalidInput(std::string(field) + ": unknown nccl-tests test \"" +
                              std::string(name) +
                              "\"; expected all_reduce, all_gather, reduce_scatter, alltoall, "
                              "sendrecv, broadcast or reduce");
}

Expected<NcclTestsRun> ParseNcclTests(std::string_view text, const std::string& file,
                                      std::optional<NcclOp> op) {
  NcclTestsRun run;
  run.file = file;
  run.op = op;
  std::set<std::string> hosts;
  int number = 0;
  size_t start = 0;
  auto where = [&](int line) { return file + ":" + std::to_string(line) + ": "; };
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (const std::optional<NcclOp> named = NamedOp(line)) {
      if (op && *named != *op) {
        return Status::InvalidInput(where(number) + "the output of " + ToString(*named) +
                                    "_perf, not of " + ToString(*op) + "_perf (--op)");
      }
      if (run.op && *run.op != *named) {
        return Status::InvalidInput(where(number) + "a second test (" + ToString(*named) +
                                    "_perf after " + ToString(*run.op) +
                                    "_perf): give each test its own file");
      }
      run.op = named;
    }
    std::vector<std::string> w = Words(line);
    // `srun -l` labels every line with its task ("0: "): dropped.
    if (!w.empty() && w[0].size() > 1 && w[0].back() == ':' &&
        w[0].find_first_not_of("0123456789") == w[0].size() - 1) {
      w.erase(w.begin());
      const size_t colon = line.find(':');
      line = line.substr(colon + 1);
    }
    if (w.empty()) continue;
    if (w[0] == "#") {
      // "#  Rank  0 Group  0 Pid  33583 on HOST device  0 [0x53] NVIDIA H100 80GB HBM3"
      if (w.size() >= 9 && w[1] == "Rank" && w[7] == "on") {
        ++run.ranks;
        hosts.insert(w[8]);
        if (run.ranks == 1) {
          const size_t bracket = line.find("] ");
          if (bracket != std::string_view::npos) run.gpu = std::string(line.substr(bracket + 2));
          while (!run.gpu.empty() && (run.gpu.back() == '\r' || run.gpu.back() == ' ')) {
            run.gpu.pop_back();
          }
        }
      }
      // "# Avg bus bandwidth    : 74.2146"
      const size_t avg = line.find("Avg bus bandwidth");
      if (avg != std::string_view::npos) {
        const size_t colon = line.find(':', avg);
        if (colon != std::string_view::npos) {
          const std::vector<std::string> v = Words(line.substr(colon + 1));
          if (!v.empty()) run.avg_busbw_GBps = Number(v[0]);
        }
      }
      continue;
    }
    // A row: size count type redop root, then time algbw busbw #wrong twice. Other lines
    // (the launcher's, NCCL's INFO lines) do not start with a number.
    if (!Number(w[0])) continue;
    if (w.size() != 13) {
      return Status::InvalidInput(
          where(number) + "a result row of " + std::to_string(w.size()) +
          " columns; expected 13 (size count type redop root, then time algbw busbw #wrong "
          "out of place and in place): a cut line?");
    }
    NcclRow r;
    r.line = number;
    const int numeric[] = {0, 1, 4, 5, 6, 7, 9, 10, 11};
    for (int i : numeric) {
      if (!Number(w[i])) {
        return Status::InvalidInput(where(number) + "column " + std::to_string(i + 1) +
                                    ": expected a number, got \"" + w[i] + "\"");
      }
    }
    for (int i : {1, 4}) {  // count, root
      if (!WholeNumber(w[i])) {
        return Status::InvalidInput(where(number) + "column " + std::to_string(i + 1) +
                                    ": expected a whole number, got \"" + w[i] + "\"");
      }
    }
    r.bytes = *Number(w[0]);
    r.count = *WholeNumber(w[1]);
    r.type = w[2];
    r.redop = w[3];
    r.root = *WholeNumber(w[4]);
    r.time_us = *Number(w[5]);
    r.algbw_GBps = *Number(w[6]);
    r.busbw_GBps = *Number(w[7]);
    r.inplace_time_us = *Number(w[9]);
    r.inplace_algbw_GBps = *Number(w[10]);
    r.inplace_busbw_GBps = *Number(w[11]);
    run.rows.push_back(r);
  }
  if (run.rows.empty()) {
    return Status::InvalidInput(file +
                                ": no nccl-tests result row (\"SIZE COUNT TYPE REDOP ROOT TIME "
                                "ALGBW BUSBW #WRONG ...\")");
  }
  if (run.ranks == 0) {
    return Status::InvalidInput(file +
                                ": no \"#  Rank N Group G Pid P on HOST device D\" line: "
                                "the output is cut, or not nccl-tests'");
  }
  if (!run.op) {
    return Status::InvalidInput(file +
                                ": the output does not name its test (no *_perf command line "
                                "in it): give --op all_reduce|all_gather|reduce_scatter|...");
  }
  run.nodes = static_cast<int>(hosts.size());
  return run;
}

Expected<NcclTestsRun> LoadNcclTests(const std::string& path, std::optional<NcclOp> op) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidInput(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseNcclTests(text.str(), path, op);
}

}  // namespace trainsim::observe
