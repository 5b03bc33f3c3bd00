#include "launch/trainer_process.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace trainsim::launch {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<pid_t> g_child{0};
// Ctrl-C: mpirun runs in its own process group (so the terminal's SIGINT does
// not reach it: on SIGINT it kills the ranks a second later); it gets SIGUSR1
// instead, which Open MPI forwards to every rank, and the ranks stop cleanly
// after their step (docs/local-run.md, "Signals").
extern "C" void NoteInterrupt(int) {
  g_interrupted = true;
  const pid_t child = g_child;
  if (child > 0) kill(child, SIGUSR1);
}

// Parses one line of the trainer's stdout; anything that is not a step or a
// summary object is ignored.
void ParseLine(const std::string& line, TrainerResult* out, TrainerObserver* observer) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return;
  if (j.contains("summary")) {
    out->summary = j["summary"];
    return;
  }
  if (!j.contains("step") || !j.contains("step_s")) return;
  StepLine s{j["step"].get<int>(), j.value("loss", 0.0), j["step_s"].get<double>()};
  out->steps.push_back(s);
  if (observer) observer->Step(s);
}

// Waits until the child's stdout has data or has closed. With a stop flag it
// wakes every 100 ms to look at the flag, and forwards a raised one once.
void WaitForOutput(int fd, pid_t child, const std::atomic<bool>* stop, bool* stopped) {
  pollfd p = {fd, POLLIN, 0};
  while (true) {
    if (stop && !*stopped && stop->load()) {
      *stopped = true;
      kill(child, SIGUSR1);
    }
    const int ready = poll(&p, 1, stop && !*stopped ? 100 : -1);
    if (ready > 0 || (ready < 0 && errno != EINTR)) return;
  }
}

}  // namespace

std::string TrainerPath() {
  if (const char* env = std::getenv("TRAINSIM_TRAIN")) return env;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = ec ? std::filesystem::path(".") : self.parent_path();
  // build/trainsim, build/gui/trainsim-gui, or installed side by side.
  for (const auto& candidate :
       {dir / "launch" / "local" / "trainsim-train",
        dir.parent_path() / "launch" / "local" / "trainsim-train", dir / "trainsim-train"}) {
    if (std::filesystem::exists(candidate, ec)) return candidate.string();
  }
  return "trainsim-train";
}

std::vector<std::string> MpirunCommand(int ranks, const std::string& trainer,
                                       const std::string& config, bool as_root, int cores) {
  std::vector<std::string> argv = {"mpirun", "-np", std::to_string(ranks)};
  if (as_root) argv.push_back("--allow-run-as-root");
  if (ranks > cores) argv.push_back("--oversubscribe");
  for (const std::string& w : {trainer, std::string("--config"), config}) argv.push_back(w);
  return argv;
}

Expected<TrainerResult> RunTrainer(const std::vector<std::string>& argv, TrainerObserver* observer,
                                   const std::atomic<bool>* stop) {
  // A signal that reached mpirun before it set up its forwarding would kill it
  // outright; a stop that came before the start starts nothing.
  if (stop && stop->load()) {
    TrainerResult none;
    none.interrupted = true;
    return none;
  }
  int fds[2];
  if (pipe(fds) != 0) return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> args;
  std::vector<std::string> words = argv;
  for (std::string& w : words) args.push_back(w.data());
  args.push_back(nullptr);
  // Ctrl-C reaches the whole foreground group; here it is only noted.
  g_interrupted = false;
  struct sigaction note = {}, old = {};
  note.sa_handler = NoteInterrupt;
  sigemptyset(&note.sa_mask);
  sigaction(SIGINT, &note, &old);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err == 0) g_child = pid;
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    sigaction(SIGINT, &old, nullptr);
    return Status::InvalidInput("cannot start " + argv[0] + ": " + std::strerror(err) +
                                (argv[0] == "mpirun" ? " (install openmpi-bin)" : ""));
  }
  TrainerResult out;
  std::string pending;
  char buf[4096];
  bool stopped = false;
  while (true) {
    WaitForOutput(fds[0], pid, stop, &stopped);
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      ParseLine(pending.substr(0, nl), &out, observer);
      pending.erase(0, nl + 1);
    }
  }
  if (!pending.empty()) ParseLine(pending, &out, observer);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  sigaction(SIGINT, &old, nullptr);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  out.interrupted = g_interrupted || stopped;
  return out;
}

}  // namespace trainsim::launch
