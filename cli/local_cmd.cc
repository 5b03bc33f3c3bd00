#include "cli/local_cmd.h"

#include <cstdio>
#include <iostream>

#include "launch/names.h"

namespace trainsim {
namespace {

class Printer : public launch::LocalObserver {
 public:
  void Starting(const launch::LocalReport& r) override {
    const local::RunConfig& c = r.config.config;
    predicted_ = r.predicted_step_s;
    std::printf(
        "local run: %d layers, hidden %d, %d heads, FFN %d, seq %d, vocab %d%s; pp %d x dp %d "
        "ranks, micro batch %d, global batch %lld, %d steps\n",
        c.layers, c.hidden, c.heads, c.ffn_hidden, c.seq_len, c.vocab,
        r.config.scaled_down ? " (the plan's model scaled down to train here)" : "", c.pp, c.dp,
        c.micro_batch, static_cast<long long>(c.global_batch), c.steps);
    if (predicted_) {
      std::printf("predicted step (simulator on the profile): %.4f s\n", *predicted_);
    } else {
      std::printf("no prediction: give --profile FILE from `trainsim-calibrate --backend cpu`\n");
    }
    std::printf("running: %s\n\n%6s %10s %12s %12s %8s\n", launch::ShellJoin(r.command).c_str(),
                "step", "loss", "measured s", "predicted s", "error");
    std::fflush(stdout);
  }
  void Step(const launch::StepLine& s) override {
    std::printf("%6d %10.4f %12.4f", s.step, s.loss, s.step_s);
    if (predicted_)
      std::printf(" %12.4f %+7.1f%%", *predicted_, 100 * (*predicted_ / s.step_s - 1));
    std::printf("\n");
    std::fflush(stdout);
  }

 private:
  std::optional<double> predicted_;
};

}  // namespace

int RunLocalCommand(const launch::LaunchPlan& plan, const launch::LocalOptions& options) {
  Expected<Catalog> catalog = Catalog::LoadBuiltin(Catalog::DefaultDir());
  if (!catalog.ok()) {
    std::cerr << "trainsim: built-in catalog: " << catalog.status().message() << "\n";
    return 2;
  }
  Printer printer;
  Expected<launch::LocalReport> r = launch::RunLocal(plan, options, *catalog, &printer);
  if (!r.ok()) {
    std::cerr << "trainsim: " << r.status().message() << "\n";
    return 1;
  }
  const launch::TrainerResult& run = r->run;
  if (run.interrupted || run.exit_code == 130) {
    std::cerr << "trainsim: interrupted after " << run.steps.size()
              << " steps; run the same command with --resume to continue from the last "
                 "checkpoint\n";
    return 130;
  }
  if (run.exit_code == 2 && run.steps.empty()) {  // the trainer's code for a refused config
    std::cerr << "trainsim: the trainer refused the run (its message is above)\n";
    return 1;
  }
  if (run.exit_code != 0) {
    std::cerr << "trainsim: the local run failed (mpirun exited with " << run.exit_code << " after "
              << run.steps.size()
              << " steps; see its messages above); run the same command with --resume to "
                 "continue from the last checkpoint\n";
    return 1;
  }
  if (r->measured_step_s) {
    std::printf("\nmedian step after warm-up: measured %.4f s", *r->measured_step_s);
    if (r->predicted_step_s) {
      std::printf(", predicted %.4f s: error %+.1f%%", *r->predicted_step_s, 100 * *r->error);
    }
    std::printf("\n");
  }
  if (run.summary && (*run.summary)["first_loss"].is_number() &&
      (*run.summary)["last_loss"].is_number()) {
    std::printf("loss %.4f -> %.4f\n", (*run.summary)["first_loss"].get<double>(),
                (*run.summary)["last_loss"].get<double>());
  }
  std::printf("run files: %s\n", r->config_file.c_str());
  return 0;
}

}  // namespace trainsim
