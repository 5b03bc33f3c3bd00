// The shell part of a bundle: torchrun.sh and mpirun.sh with their hostfile,
// and slurm.sbatch. Every value is ShellQuote'd; the only unquoted words are
// the scripts' own double-quoted expansions ("$here/hostfile").
#include <cstdio>

#include "launch/bundle_parts.h"
#include "launch/names.h"

namespace trainsim::launch {
namespace {

std::string Exports(const JobFacts& f) {
  std::string out;
  for (const std::string& kv : NetworkEnv(f)) {
    const size_t eq = kv.find('=');
    out += "export " + kv.substr(0, eq) + "=" + ShellQuote(kv.substr(eq + 1)) + "\n";
  }
  return out;
}

// torchrun's arguments up to the script: one node standalone, else a c10d
// rendezvous at `endpoint` (raw: the script's own expansion) under `id`.
std::vector<std::string> TorchrunArgs(const JobFacts& f, const std::string& endpoint,
                                      const std::string& id, std::vector<size_t>* raw,
                                      bool raw_id) {
  std::vector<std::string> argv = {"torchrun", "--nnodes", std::to_string(f.nodes),
                                   "--nproc-per-node", std::to_string(f.gpus_per_node)};
  if (f.nodes == 1) {
    argv.push_back("--standalone");
  } else {
    argv.insert(argv.end(), {"--rdzv-backend", "c10d", "--rdzv-endpoint", endpoint});
    if (raw && raw_id) raw->push_back(argv.size() - 1);
    argv.insert(argv.end(), {"--rdzv-id", id});
    if (raw && raw_id) raw->push_back(argv.size() - 1);
  }
  for (const std::string& a : f.ScriptArgs()) argv.push_back(a);
  return argv;
}

std::string FirstHost(const JobFacts& f) {
  return f.options->hosts.empty() ? "node-0" : f.options->hosts.front();
}

BundleFile Torchrun(const JobFacts& f) {
  std::string text =
      ScriptHeader(f, "torchrun.sh: run it on every node; " +
                          std::string(f.nodes == 1 ? "one node, standalone."
                                                   : "the nodes meet at the first host "
                                                     "of the hostfile."));
  text += Exports(f);
  const std::string endpoint = FirstHost(f) + ":" + std::to_string(kRendezvousPort);
  text += "exec " + CommandLines(TorchrunArgs(f, endpoint, f.job_name, nullptr, false));
  return {"torchrun.sh", text, true};
}

BundleFile Mpirun(const JobFacts& f) {
  const LaunchOptions& o = *f.options;
  std::string text = ScriptHeader(f,
                                  "mpirun.sh: run it on the first host; mpirun starts one "
                                  "process per GPU on every host.");
  std::vector<size_t> raw;
  std::vector<std::string> argv = {"mpirun", "-np", std::to_string(f.nodes * f.gpus_per_node),
                                   "--hostfile"};
  if (o.hosts_file.empty()) {
    text += "here=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\n";
    raw.push_back(argv.size());
    argv.push_back("\"$here/hostfile\"");
  } else {
    argv.push_back(o.hosts_file);
  }
  argv.insert(argv.end(), {"--map-by", "ppr:" + std::to_string(f.gpus_per_node) + ":node",
                           "--bind-to", "none", "-x", "PATH", "-x", "LD_LIBRARY_PATH"});
  for (const std::string& kv : NetworkEnv(f)) argv.insert(argv.end(), {"-x", kv});
  argv.push_back("python3");
  for (const std::string& a : f.ScriptArgs()) argv.push_back(a);
  text += "exec " + CommandLines(argv, raw);
  return {"mpirun.sh", text, true};
}

// OpenMPI's format, one placeholder per node.
BundleFile Hostfile(const JobFacts& f) {
  std::string text;
  for (int i = 0; i < f.nodes; ++i) {
    text += "node-" + std::to_string(i) + " slots=" + std::to_string(f.gpus_per_node) + "\n";
  }
  return {"hostfile", text, false};
}

std::string Margin() {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f", kTimeMargin);
  return buf;
}

std::string SlurmTime(int64_t minutes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:00", static_cast<long long>(minutes / 1440),
                static_cast<long long>(minutes / 60 % 24), static_cast<long long>(minutes % 60));
  return buf;
}

}  // namespace

std::vector<BundleFile> LauncherScripts(const JobFacts& f) {
  std::vector<BundleFile> files = {Torchrun(f), Mpirun(f)};
  if (f.options->hosts_file.empty()) files.push_back(Hostfile(f));
  return files;
}

BundleFile SlurmScript(const JobFacts& f, bool hyperpod) {
  // #SBATCH lines are read by sbatch, not the shell: their values are checked
  // names and numbers, written bare. HyperPod's Slurm has no GPU resources (GRES) unless its
  // lifecycle scripts add them: --exclusive takes whole nodes there.
  std::string text = "#!/usr/bin/env bash\n#SBATCH --job-name=" + f.job_name +
                     "\n#SBATCH --nodes=" + std::to_string(f.nodes) +
                     "\n#SBATCH --ntasks-per-node=1\n";
  if (!hyperpod) text += "#SBATCH --gpus-per-node=" + std::to_string(f.gpus_per_node) + "\n";
  text += "#SBATCH --exclusive\n#SBATCH --time=" + SlurmTime(f.slurm_minutes) + "\n";
  text += hyperpod ? "# hyperpod/slurm.sbatch: on the HyperPod cluster's head or login node, run "
                     "check-slurm.sh, then\n# sbatch slurm.sbatch; srun starts torchrun once per "
                     "node, and HyperPod's --auto-resume=1 replaces\n# a faulty node and starts "
                     "the step again (the script resumes from its latest checkpoint).\n# "
                   : "# slurm.sbatch: sbatch slurm.sbatch; srun starts torchrun once per node.\n# ";
  text += f.Describe() + "\n# --time: " + Margin() +
          " x the plan's expected hours, rounded up to a minute.\n"
          "# Made by `trainsim launch` (docs/launch.md); every value is single-quoted.\n"
          "set -euo pipefail\n"
          "head_node=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n";
  text += Exports(f);
  std::vector<size_t> raw;
  std::vector<std::string> argv = TorchrunArgs(
      f, "\"$head_node:" + std::to_string(kRendezvousPort) + "\"", "\"$SLURM_JOB_ID\"", &raw, true);
  std::vector<std::string> srun = {"srun"};
  if (hyperpod) srun.push_back("--auto-resume=1");
  argv.insert(argv.begin(), srun.begin(), srun.end());
  for (size_t& i : raw) i += srun.size();
  text += CommandLines(argv, raw);
  return {hyperpod ? "hyperpod/slurm.sbatch" : "slurm.sbatch", text, true};
}

}  // namespace trainsim::launch
