#include "observe/kineto.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <tuple>

namespace trainsim::observe {
namespace {

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// What PyTorch records of a collective (the args of record_param_comms, which libkineto also
// copies to the NCCL kernel it launched): "Collective name", "dtype", "In msg nelems",
// "Out msg nelems", "Group size".
struct CommMeta {
  std::string name, dtype;
  double in_nelems = 0, out_nelems = 0;
  int group_size = 0;
  std::vector<int> ranks;  // "Process Group Ranks": "[0, 8, 16, 24]"; empty when cut ("...")
};

// "[0, 8, 16]" -> {0, 8, 16}; empty for a list PyTorch shortened ("[0, 1, ..., 63]") or not
// a list of ranks.
std::vector<int> ParseRanks(std::string_view text) {
  std::vector<int> out;
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return {};
  std::string_view body = text.substr(1, text.size() - 2);
  while (!body.empty()) {
    const size_t comma = body.find(',');
    std::string_view item = body.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty() || item.size() > 9 ||
        item.find_first_not_of("0123456789") != std::string_view::npos) {
      return {};
    }
    out.push_back(std::stoi(std::string(item)));
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  return out;
}

// The bytes of one element of a c10 dtype as PyTorch names it ("Float", "BFloat16"); 0 unknown.
double DtypeBytes(std::string_view d) {
  if (d == "Double" || d == "Long" || d == "ComplexFloat") return 8;
  if (d == "Float" || d == "Int") return 4;
  if (d == "BFloat16" || d == "Half" || d == "Short") return 2;
  if (d == "Byte" || d == "Char" || d == "Bool" || d.rfind("Float8", 0) == 0) return 1;
  return 0;
}

// trainsim's name of a collective from PyTorch's ("allreduce", "_allgather_base",
// "reduce_scatter_tensor_coalesced", "all_to_all", "send"); "" for others (barrier).
std::string CommOp(std::string_view name) {
  auto has = [&](std::string_view part) { return Contains(name, part); };
  if (has("allreduce") || has("all_reduce")) return "all_reduce";
  if (has("allgather") || has("all_gather")) return "all_gather";
  if (has("reduce_scatter")) return "reduce_scatter";
  if (has("alltoall") || has("all_to_all")) return "all_to_all";
  if (has("broadcast")) return "broadcast";
  if (has("send") || has("recv")) return "send_recv";
  return "";
}

// `v` as an integer of type T (truncated) where it is within T's range; nullopt for a value
// out of range, infinite or NaN (no profiler writes one; it is ignored, never cast).
template <typename T>
std::optional<T> InRange(double v) {
  const double low = static_cast<double>(std::numeric_limits<T>::min());  // -2^(bits-1)
  if (!(v >= low && v < -low)) return std::nullopt;
  return static_cast<T>(v);
}

struct Kernel {
  TimedKernel t;  // with a GEMM's shape where its args give it
  int pid = 0;
  int64_t external_id = -1;
  CommMeta comm;  // a collective's, where its args give it
};

struct Annotation {
  int64_t step = 0;
  double start_us = 0, dur_us = 0;
  bool gpu = false;
};

// The fields of one event that matter here, filled key by key.
struct Event {
  std::string ph, cat, name;
  double ts = 0, dur = 0;
  int64_t pid = 0;
  bool has_ts = false, has_dur = false;
  double m = 0, n = 0, k = 0;  // args.M, args.N, args.K
  int64_t external_id = -1;    // args["External id"]: joins a kernel to the op that launched it
  std::vector<std::vector<double>> dims;  // args["Input Dims"] of a CPU op
  CommMeta comm;                          // a collective's args (record_param_comms' fields)
};

// A SAX handler that keeps one event of the top-level "traceEvents" array at a time.
class TraceHandler : public nlohmann::json::json_sax_t {
 public:
  std::vector<Kernel> kernels;
  std::vector<Annotation> annotations;
  std::map<int64_t, std::array<double, 3>> mm_shapes;  // External id -> (M, N, K)
  std::map<int64_t, CommMeta> comm_ops;                // External id -> record_param_comms
  int64_t events = 0;
  int rank = -1, world_size = 0;  // distributedInfo
  std::string device;
  bool saw_trace_events = false;
  size_t error_at = 0;
  std::string error;

  bool null() override { return Scalar(); }
  bool boolean(bool) override { return Scalar(); }
  bool number_integer(number_integer_t v) override { return Number(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Number(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Number(v); }
  bool string(string_t& v) override {
    // "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", ...}]: the first GPU's name.
    if (depth_ == 3 && top_key_ == "deviceProperties" && key_ == "name" && device.empty()) {
      device = v;
    }
    if (in_events_ && depth_ == 4 && key_ == "args") {
      if (arg_key_ == "Collective name") event_.comm.name = v;
      if (arg_key_ == "dtype") event_.comm.dtype = v;
      if (arg_key_ == "Process Group Ranks") event_.comm.ranks = ParseRanks(v);
    }
    if (InEvent()) {
      if (key_ == "ph") event_.ph = v;
      if (key_ == "cat") event_.cat = v;
      if (key_ == "name") event_.name = v;
    }
    return Scalar();
  }
  bool binary(binary_t&) override { return Scalar(); }
  bool start_object(std::size_t) override {
    ++depth_;
    if (depth_ == 3 && in_events_) event_ = Event();
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ == 1) top_key_ = k;
    if (depth_ == 3) key_ = k;
    if (depth_ == 4) arg_key_ = k;
    if (depth_ == 2) info_key_ = k;
    return true;
  }
  bool end_object() override {
    if (depth_ == 3 && in_events_) Finish();
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth_;
    if (depth_ == 2 && top_key_ == "traceEvents") in_events_ = saw_trace_events = true;
    if (InDims() && depth_ == 6) event_.dims.emplace_back();
    return true;
  }
  bool end_array() override {
    if (depth_ == 2) in_events_ = false;
    --depth_;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::json::exception& e) override {
    error_at = position;
    error = e.what();
    return false;
  }

 private:
  bool InEvent() const { return in_events_ && depth_ == 3; }
  // Inside args["Input Dims"] (depth 5: the list, 6: one input's dims).
  bool InDims() const {
    return in_events_ && depth_ >= 5 && key_ == "args" && arg_key_ == "Input Dims";
  }
  bool Scalar() { return true; }
  bool Number(double v) {
    if (in_events_ && depth_ == 4 && key_ == "args") {
      if (arg_key_ == "M") event_.m = v;
      if (arg_key_ == "N") event_.n = v;
      if (arg_key_ == "K") event_.k = v;
      if (arg_key_ == "External id") Set(InRange<int64_t>(v), &event_.external_id);
      if (arg_key_ == "In msg nelems") event_.comm.in_nelems = v;
      if (arg_key_ == "Out msg nelems") event_.comm.out_nelems = v;
      if (arg_key_ == "Group size") Set(InRange<int>(v), &event_.comm.group_size);
    }
    // "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 64}
    if (depth_ == 2 && top_key_ == "distributedInfo") {
      if (info_key_ == "rank") Set(InRange<int>(v), &rank);
      if (info_key_ == "world_size") Set(InRange<int>(v), &world_size);
    }
    if (InDims() && depth_ == 6 && !event_.dims.empty()) event_.dims.back().push_back(v);
    if (InEvent()) {
      if (key_ == "ts") event_.ts = v, event_.has_ts = true;
      if (key_ == "dur") event_.dur = v, event_.has_dur = true;
      if (key_ == "pid") Set(InRange<int64_t>(v), &event_.pid);
    }
    return true;
  }
  template <typename T>
  static void Set(std::optional<T> v, T* out) {
    if (v) *out = *v;
  }
  void Finish() {
    if (event_.ph != "X" || !event_.has_ts || !event_.has_dur) return;
    ++events;
    if (event_.cat == "kernel") {
      Kernel k;
      k.t.start_us = event_.ts;
      k.t.end_us = event_.ts + event_.dur;
      k.t.kind = ClassifyKernel(event_.name);
      std::tie(k.t.m, k.t.n, k.t.k) = std::tie(event_.m, event_.n, event_.k);
      k.pid = static_cast<int>(event_.pid);
      k.external_id = event_.external_id;
      k.comm = event_.comm;
      kernels.push_back(k);
      return;
    }
    // A matrix multiply's shape, for the kernels it launched: aten::mm (M x K, K x N) and
    // aten::addmm (bias, M x K, K x N), as torch.profiler(record_shapes=True) records them.
    if (event_.cat == "cpu_op" && event_.external_id >= 0 && !event_.comm.name.empty()) {
      comm_ops[event_.external_id] = event_.comm;
    }
    if (event_.cat == "cpu_op" && event_.external_id >= 0) {
      const std::vector<std::vector<double>>& d = event_.dims;
      const size_t first = event_.name == "aten::mm" ? 0 : event_.name == "aten::addmm" ? 1 : 9;
      if (first + 1 < d.size() && d[first].size() == 2 && d[first + 1].size() == 2 &&
          d[first][1] == d[first + 1][0]) {
        mm_shapes[event_.external_id] = {d[first][0], d[first + 1][1], d[first][1]};
      }
    }
    const bool cpu = event_.cat == "user_annotation", gpu = event_.cat == "gpu_user_annotation";
    if ((cpu || gpu) && event_.name.rfind("ProfilerStep#", 0) == 0) {
      char* end = nullptr;
      const long long n = std::strtoll(event_.name.c_str() + 13, &end, 10);
      if (end != event_.name.c_str() + 13) annotations.push_back({n, event_.ts, event_.dur, gpu});
    }
  }

  int depth_ = 0;
  bool in_events_ = false;
  std::string top_key_, key_, arg_key_, info_key_;
  Event event_;
};

// The union of intervals, sorted and merged.
std::vector<std::pair<double, double>> Union(std::vector<std::pair<double, double>> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<double, double>> out;
  for (const auto& [a, b] : v) {
    if (!out.empty() && a <= out.back().second) {
      out.back().second = std::max(out.back().second, b);
    } else {
      out.push_back({a, b});
    }
  }
  return out;
}

double Length(const std::vector<std::pair<double, double>>& u) {
  double s = 0;
  for (const auto& [a, b] : u) s += b - a;
  return s;
}

// The length of `a` not covered by `b` (both unions).
double Uncovered(const std::vector<std::pair<double, double>>& a,
                 const std::vector<std::pair<double, double>>& b) {
  double out = 0;
  size_t j = 0;
  for (const auto& [s, e] : a) {
    double at = s;
    while (j < b.size() && b[j].second <= at) ++j;
    for (size_t k = j; k < b.size() && b[k].first < e; ++k) {
      if (b[k].first > at) out += b[k].first - at;
      at = std::max(at, b[k].second);
      if (at >= e) break;
    }
    if (at < e) out += e - at;
  }
  return out;
}

// Line and column (from 1) of byte `offset` of the text `in` reads.
std::string LineColumn(std::istream& in, size_t offset) {
  int line = 1, column = 1;
  char c;
  for (size_t i = 0; i + 1 < offset && in.get(c); ++i) {
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

}  // namespace

const char* ToString(KernelKind k) {
  switch (k) {
    case KernelKind::kGemm:
      return "gemm";
    case KernelKind::kAttention:
      return "attention";
    case KernelKind::kComm:
      return "comm";
    case KernelKind::kOther:
      return "other";
  }
  return "?";
}

KernelKind ClassifyKernel(std::string_view name) {
  // NCCL's kernels; trainsim-train's trace names its waits for other ranks mpi_*.
  if (name.rfind("nccl", 0) == 0 || name.rfind("mpi_", 0) == 0) return KernelKind::kComm;
  std::string lower(name.substr(0, 200));
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (Contains(lower, "flash") || Contains(lower, "fmha") || Contains(lower, "attention") ||
      Contains(lower, "attn")) {
    return KernelKind::kAttention;
  }
  if (Contains(lower, "gemm") || Contains(lower, "cutlass") || Contains(lower, "xmma") ||
      Contains(lower, "cublas")) {
    return KernelKind::kGemm;
  }
  return KernelKind::kOther;
}

std::vector<TraceStep> SumSteps(std::vector<TimedKernel> kernels, std::vector<StepSpan> spans,
                                std::vector<StepKernel>* last_step) {
  std::sort(spans.begin(), spans.end(),
            [](const StepSpan& a, const StepSpan& b) { return a.start_us < b.start_us; });
  std::sort(kernels.begin(), kernels.end(),
            [](const TimedKernel& a, const TimedKernel& b) { return a.start_us < b.start_us; });
  std::vector<TraceStep> out;
  size_t first = 0;
  for (const StepSpan& a : spans) {
    TraceStep s;
    s.step = a.step;
    s.start_us = a.start_us;
    s.wall_s = a.dur_us / 1e6;
    const double lo = a.start_us, hi = a.start_us + a.dur_us;
    std::vector<std::pair<double, double>> by_kind[4], compute;
    while (first < kernels.size() && kernels[first].end_us <= lo) ++first;
    for (size_t i = first; i < kernels.size() && kernels[i].start_us < hi; ++i) {
      const TimedKernel& g = kernels[i];
      const double s0 = std::max(lo, g.start_us), s1 = std::min(hi, g.end_us);
      if (s1 <= s0) continue;
      by_kind[static_cast<int>(g.kind)].push_back({s0, s1});
      if (last_step && &a == &spans.back()) {
        last_step->push_back({g.kind, (s0 - lo) / 1e6, (s1 - lo) / 1e6});
      }
      if (g.kind != KernelKind::kComm) compute.push_back({s0, s1});
      const bool inside = g.start_us >= lo && g.end_us <= hi;
      const double seconds = (g.end_us - g.start_us) / 1e6;
      if (inside && g.kind == KernelKind::kGemm && g.m > 0 && g.n > 0 && g.k > 0) {
        s.gemms.push_back({g.m, g.n, g.k, seconds});
      }
      if (inside && g.kind == KernelKind::kComm && !g.comm_op.empty() && g.comm_bytes > 0) {
        s.comms.push_back({g.comm_op, g.comm_bytes, g.comm_group_ranks, seconds, g.comm_group});
      }
    }
    for (int k = 0; k < 4; ++k) s.kernel_s[k] = Length(Union(by_kind[k])) / 1e6;
    const auto busy = Union(compute);
    s.exposed_comm_s = Uncovered(Union(by_kind[static_cast<int>(KernelKind::kComm)]), busy) / 1e6;
    s.compute_s = Length(busy) / 1e6;
    s.idle_s = std::max(0.0, s.wall_s - s.compute_s - s.exposed_comm_s);
    out.push_back(s);
  }
  return out;
}

namespace {

// The trace the handler read, or why it is none; `path` names it in errors.
Expected<KinetoTrace> TraceOf(TraceHandler& h, const std::string& path) {
  if (!h.saw_trace_events) {
    return Status::InvalidInput(path + ": no traceEvents array: not a Chrome / Kineto trace");
  }
  KinetoTrace t;
  t.file = path;
  t.events = h.events;
  t.kernels = static_cast<int64_t>(h.kernels.size());
  if (h.kernels.empty()) {
    return Status::InvalidInput(path +
                                ": no GPU kernel event (\"cat\": \"kernel\"): profile "
                                "with activities including ProfilerActivity.CUDA");
  }
  t.device_pid = h.kernels.front().pid;
  t.device = h.device;
  t.rank = h.rank;
  t.world_size = h.world_size;
  for (Kernel& k : h.kernels) {  // GEMM kernels take the shape of the op that launched them
    if (k.t.kind != KernelKind::kGemm || k.t.m > 0 || k.external_id < 0) continue;
    const auto it = h.mm_shapes.find(k.external_id);
    if (it != h.mm_shapes.end())
      std::tie(k.t.m, k.t.n, k.t.k) = std::tie(it->second[0], it->second[1], it->second[2]);
  }
  // Collectives: the kernel's own args, else those of the record_param_comms that launched it;
  // the size as nccl-tests counts it (the larger buffer).
  for (Kernel& k : h.kernels) {
    if (k.t.kind != KernelKind::kComm) continue;
    if (k.comm.name.empty() && k.external_id >= 0) {
      const auto it = h.comm_ops.find(k.external_id);
      if (it != h.comm_ops.end()) k.comm = it->second;
    }
    k.t.comm_op = CommOp(k.comm.name);
    k.t.comm_bytes = std::max(k.comm.in_nelems, k.comm.out_nelems) * DtypeBytes(k.comm.dtype);
    k.t.comm_group_ranks = k.comm.group_size;
    if (static_cast<int>(k.comm.ranks.size()) == k.comm.group_size) k.t.comm_group = k.comm.ranks;
  }
  // Steps: the GPU-side annotations where the trace has them, else the CPU-side ones.
  const bool gpu = std::any_of(h.annotations.begin(), h.annotations.end(),
                               [](const Annotation& a) { return a.gpu; });
  std::vector<StepSpan> spans;
  for (const Annotation& a : h.annotations) {
    if (a.gpu == gpu) spans.push_back({a.step, a.start_us, a.dur_us});
  }
  if (spans.empty()) {
    return Status::InvalidInput(path +
                                ": no ProfilerStep#N annotation: profile with "
                                "torch.profiler's schedule and call prof.step() each step");
  }
  std::vector<TimedKernel> kernels;
  for (const Kernel& k : h.kernels) {
    if (k.pid == t.device_pid) kernels.push_back(k.t);
  }
  t.steps = SumSteps(std::move(kernels), std::move(spans), &t.last_step);
  return t;
}

}  // namespace

Expected<KinetoTrace> LoadKinetoTrace(const std::string& path) {
  // stdio with a large buffer: nlohmann's FILE* adapter reads a character at a time.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) return Status::InvalidInput(path + ": cannot read the file");
  std::vector<char> buffer(1 << 20);
  std::setvbuf(file.get(), buffer.data(), _IOFBF, buffer.size());
  TraceHandler h;
  if (!nlohmann::json::sax_parse(file.get(), &h)) {
    std::ifstream in(path, std::ios::binary);
    return Status::InvalidInput(path + ":" + LineColumn(in, h.error_at) +
                                ": not a whole JSON trace (cut short?): " + h.error);
  }
  return TraceOf(h, path);
}

Expected<KinetoTrace> ParseKinetoTrace(std::string_view text, const std::string& name) {
  TraceHandler h;
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &h)) {
    std::istringstream in{std::string(text)};
    return Status::InvalidInput(name + ":" + LineColumn(in, h.error_at) +
                                ": not a whole JSON trace (cut short?): " + h.error);
  }
  return TraceOf(h, name);
}

}  // namespace trainsim::observe
