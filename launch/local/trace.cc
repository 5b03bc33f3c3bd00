#include "launch/local/trace.h"

#include <cstdio>
#include <sstream>

#include "core/durable_file.h"

namespace trainsim::local {
namespace {

std::string Shape(int64_t m, int64_t n, int64_t k) {
  return "{\"M\": " + std::to_string(m) + ", \"N\": " + std::to_string(n) +
         ", \"K\": " + std::to_string(k) + "}";
}

std::string Count(int64_t n) { return "{\"elements\": " + std::to_string(n) + "}"; }

class TracedOps : public Ops {
 public:
  TracedOps(std::unique_ptr<Ops> inner, TraceRecorder* t) : in_(std::move(inner)), t_(t) {}

  FloatBuffer Alloc(int64_t count) override { return in_->Alloc(count); }
  void Zero(float* p, int64_t n) override {
    Time("zero", Count(n), [&] { in_->Zero(p, n); });
  }
  void Copy(const float* from, float* to, int64_t n) override {
    Time("copy", Count(n), [&] { in_->Copy(from, to, n); });
  }
  void CopyFromHost(const float* host, float* to, int64_t n) override {
    Time("copy_from_host", Count(n), [&] { in_->CopyFromHost(host, to, n); });
  }
  void CopyToHost(const float* from, float* host, int64_t n) override {
    Time("copy_to_host", Count(n), [&] { in_->CopyToHost(from, host, n); });
  }
  void Synchronize() override { in_->Synchronize(); }
  void Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
            bool accumulate) override {
    Time("gemm_fp32", Shape(m, n, k), [&] { in_->Gemm(m, n, k, a, b, c, accumulate); });
  }
  void Transpose(const float* a, int64_t rows, int64_t cols, float* at) override {
    Time("transpose", Count(rows * cols), [&] { in_->Transpose(a, rows, cols, at); });
  }
  void AddInto(const float* x, float* y, int64_t n) override {
    Time("add", Count(n), [&] { in_->AddInto(x, y, n); });
  }
  void LayerNorm(const float* x, float* y, int64_t rows, int64_t cols) override {
    Time("layer_norm", Count(rows * cols), [&] { in_->LayerNorm(x, y, rows, cols); });
  }
  void LayerNormBackwardAdd(const float* x, const float* dy, float* dx, int64_t rows,
                            int64_t cols) override {
    Time("layer_norm_backward", Count(rows * cols),
         [&] { in_->LayerNormBackwardAdd(x, dy, dx, rows, cols); });
  }
  void Gelu(const float* u, float* y, int64_t n) override {
    Time("gelu", Count(n), [&] { in_->Gelu(u, y, n); });
  }
  void GeluBackward(const float* u, const float* dy, float* du, int64_t n) override {
    Time("gelu_backward", Count(n), [&] { in_->GeluBackward(u, dy, du, n); });
  }
  void CausalSoftmax(float* s, int64_t batches, int64_t n, float scale) override {
    Time("causal_softmax", Count(batches * n * n),
         [&] { in_->CausalSoftmax(s, batches, n, scale); });
  }
  void CausalSoftmaxBackward(const float* p, const float* dp, float* ds, int64_t batches, int64_t n,
                             float scale) override {
    Time("causal_softmax_backward", Count(batches * n * n),
         [&] { in_->CausalSoftmaxBackward(p, dp, ds, batches, n, scale); });
  }
  double CrossEntropy(float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                      float grad_scale) override {
    double loss = 0;
    Time("cross_entropy", Count(rows * vocab),
         [&] { loss = in_->CrossEntropy(logits, targets, rows, vocab, grad_scale); });
    return loss;
  }
  void GatherBlock(const float* m, int64_t base, int64_t stride, int64_t rows, int64_t cols,
                   bool transposed, float* out) override {
    Time("gather_block", Count(rows * cols),
         [&] { in_->GatherBlock(m, base, stride, rows, cols, transposed, out); });
  }
  void ScatterBlock(const float* in, int64_t rows, int64_t cols, float* m, int64_t base,
                    int64_t stride) override {
    Time("scatter_block", Count(rows * cols),
         [&] { in_->ScatterBlock(in, rows, cols, m, base, stride); });
  }
  void EmbedGather(const float* table, const int32_t* tokens, int64_t rows, int64_t width,
                   float* out) override {
    Time("embedding", Count(rows * width),
         [&] { in_->EmbedGather(table, tokens, rows, width, out); });
  }
  void EmbedScatterAdd(const float* dy, const int32_t* tokens, int64_t rows, int64_t width,
                       float* table) override {
    Time("embedding_backward", Count(rows * width),
         [&] { in_->EmbedScatterAdd(dy, tokens, rows, width, table); });
  }
  void AdamUpdate(float* params, const float* grads, float* m, float* v, int64_t n, float step_size,
                  float eps, float b1, float b2) override {
    Time("adam", Count(n),
         [&] { in_->AdamUpdate(params, grads, m, v, n, step_size, eps, b1, b2); });
  }

 private:
  template <typename F>
  void Time(const char* name, std::string args, F&& call) {
    const double start = t_->NowUs();
    call();
    t_->Kernel(name, 0, start, std::move(args));
  }
  std::unique_ptr<Ops> in_;
  TraceRecorder* t_;
};

class TracedTransport : public Transport {
 public:
  TracedTransport(std::unique_ptr<Transport> inner, TraceRecorder* t)
      : in_(std::move(inner)), t_(t) {}
  void Send(int to, int tag, const float* data, int64_t count) override {
    in_->Send(to, tag, data, count);
  }
  void Receive(int from, int tag, float* data, int64_t count) override {
    Time("mpi_recv", Count(count), [&] { in_->Receive(from, tag, data, count); });
  }
  void WaitSends() override {
    Time("mpi_wait_sends", "{}", [&] { in_->WaitSends(); });
  }
  void StartReplicaSum(float* data, int64_t count) override {
    Time("mpi_start_replica_sum", Count(count), [&] { in_->StartReplicaSum(data, count); });
  }
  void WaitReplicaSums() override {
    Time("mpi_wait_replica_sums", "{}", [&] { in_->WaitReplicaSums(); });
  }
  double ReplicaSum(double value) override { return in_->ReplicaSum(value); }
  void Barrier() override {
    Time("mpi_barrier", "{}", [&] { in_->Barrier(); });
  }
  void MaxOverAll(double* values, int count) override { in_->MaxOverAll(values, count); }

 private:
  template <typename F>
  void Time(const char* name, std::string args, F&& call) {
    const double start = t_->NowUs();
    call();
    t_->Kernel(name, 1, start, std::move(args));
  }
  std::unique_ptr<Transport> in_;
  TraceRecorder* t_;
};

}  // namespace

TraceRecorder::TraceRecorder() : start_(std::chrono::steady_clock::now()) {}

double TraceRecorder::NowUs() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_)
      .count();
}

void TraceRecorder::Kernel(const char* name, int thread, double start_us, std::string args) {
  events_.push_back({name, "kernel", std::move(args), thread, start_us, NowUs() - start_us});
}

void TraceRecorder::Step(int step, double start_us, double end_us) {
  events_.push_back({"ProfilerStep#" + std::to_string(step), "user_annotation", "{}", 0, start_us,
                     end_us - start_us});
}

Status TraceRecorder::Write(const std::string& path, int pid) const {
  std::ostringstream out;
  out << "{\n  \"schemaVersion\": 1,\n  \"traceName\": \"trainsim-train rank " << pid
      << "\",\n  \"traceEvents\": [";
  char buf[96];
  for (size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    std::snprintf(buf, sizeof buf, "\"ts\": %.3f, \"dur\": %.3f", e.ts, e.dur);
    out << (i ? ",\n" : "\n") << "    {\"ph\": \"X\", \"cat\": \"" << e.cat << "\", \"name\": \""
        << e.name << "\", \"pid\": " << pid << ", \"tid\": " << e.thread << ", " << buf
        << ", \"args\": " << e.args << "}";
  }
  out << "\n  ]\n}\n";
  return WriteFileDurably(path, out.str());
}

std::unique_ptr<Ops> TracingOps(std::unique_ptr<Ops> inner, TraceRecorder* trace) {
  return std::make_unique<TracedOps>(std::move(inner), trace);
}

std::unique_ptr<Transport> TracingTransport(std::unique_ptr<Transport> inner,
                                            TraceRecorder* trace) {
  return std::make_unique<TracedTransport>(std::move(inner), trace);
}

}  // namespace trainsim::local
