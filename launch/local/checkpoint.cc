#include "launch/local/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace trainsim::local {
namespace {

namespace fs = std::filesystem;
constexpr char kMagic[8] = {'T', 'S', 'T', 'R', 'A', 'I', 'N', '1'};
constexpr char kKind[] = "trainsim-train-checkpoint";

struct Header {
  char magic[8];
  int64_t step;
  uint64_t fingerprint;
  int64_t count;
  int64_t rank;
};

std::string StepDir(const std::string& dir, int64_t step) {
  return dir + "/step-" + std::to_string(step);
}

std::string RankFile(const std::string& dir, int64_t step, int rank) {
  return StepDir(dir, step) + "/rank-" + std::to_string(rank) + ".bin";
}

Status IoError(const std::string& path, const std::string& what) {
  return Status::Internal(path + ": " + what + ": " + std::strerror(errno));
}

// Writes the pieces to path.tmp, flushes them to disk, renames to path.
Status WriteAtomically(const std::string& path,
                       const std::vector<std::pair<const void*, size_t>>& pieces) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return IoError(tmp, "cannot create");
  for (const auto& [data, size] : pieces) {
    const char* p = static_cast<const char*>(data);
    for (size_t left = size; left > 0;) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        Status s = IoError(tmp, "cannot write");
        ::close(fd);
        return s;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) return IoError(tmp, "cannot flush");
  if (::rename(tmp.c_str(), path.c_str()) != 0) return IoError(path, "cannot rename into place");
  return Status::Ok();
}

Status ReadExactly(std::ifstream& in, void* data, size_t size, const std::string& path) {
  in.read(static_cast<char*>(data), static_cast<std::streamsize>(size));
  if (!in) return Status::Internal(path + ": truncated checkpoint");
  return Status::Ok();
}

}  // namespace

uint64_t Fingerprint(const ConfigFields& fields, int world) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto add = [&](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull;
  };
  for (const auto& [name, value] : fields) {
    add(name);
    add(value);
  }
  add(std::to_string(world));
  return h;
}

Status WriteRankCheckpoint(const std::string& dir, int64_t step, int rank, uint64_t fingerprint,
                           const RankState& state) {
  std::error_code error;
  fs::create_directories(StepDir(dir, step), error);
  if (error) return Status::Internal(StepDir(dir, step) + ": cannot create: " + error.message());
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.step = step;
  h.fingerprint = fingerprint;
  h.count = state.count;
  h.rank = rank;
  const size_t bytes = static_cast<size_t>(state.count) * sizeof(float);
  return WriteAtomically(RankFile(dir, step, rank), {{&h, sizeof(h)},
                                                     {state.params, bytes},
                                                     {state.first_moment, bytes},
                                                     {state.second_moment, bytes}});
}

Status ReadRankCheckpoint(const std::string& dir, int64_t step, int rank, uint64_t fingerprint,
                          const RankState& state) {
  const std::string path = RankFile(dir, step, rank);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot read the checkpoint");
  Header h{};
  if (Status s = ReadExactly(in, &h, sizeof(h), path); !s.ok()) return s;
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0) {
    return Status::Internal(path + ": not a trainsim-train checkpoint");
  }
  if (h.step != step || h.rank != rank || h.fingerprint != fingerprint || h.count != state.count) {
    return Status::Internal(path + ": written for step " + std::to_string(h.step) + ", rank " +
                            std::to_string(h.rank) + " with " + std::to_string(h.count) +
                            " parameters, but latest.json names step " + std::to_string(step) +
                            " and this rank has " + std::to_string(state.count));
  }
  const size_t bytes = static_cast<size_t>(state.count) * sizeof(float);
  for (float* p : {state.params, state.first_moment, state.second_moment}) {
    if (Status s = ReadExactly(in, p, bytes, path); !s.ok()) return s;
  }
  return Status::Ok();
}

Status WriteLatest(const std::string& dir, int64_t step, int world, const ConfigFields& fields) {
  nlohmann::ordered_json j;
  j["kind"] = kKind;
  j["step"] = step;
  j["world"] = world;
  std::ostringstream fp;
  fp << std::hex << Fingerprint(fields, world);
  j["fingerprint"] = fp.str();
  for (const auto& [name, value] : fields) j["config"][name] = value;
  const std::string text = j.dump(2) + "\n";
  if (Status s = WriteAtomically(dir + "/latest.json", {{text.data(), text.size()}}); !s.ok()) {
    return s;
  }
  const std::string keep = "step-" + std::to_string(step);
  std::error_code error;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, error)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step-", 0) == 0 && name != keep) fs::remove_all(e.path(), error);
  }
  return Status::Ok();
}

Expected<std::optional<int64_t>> ReadLatest(const std::string& dir, int world,
                                            const ConfigFields& fields) {
  const std::string path = dir + "/latest.json";
  std::ifstream in(path);
  if (!in) return std::optional<int64_t>();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  auto invalid = [&](const std::string& what) {
    return Status::InvalidInput("resume: " + path + ": " + what);
  };
  if (!j.is_object() || j.value("kind", "") != kKind || !j["step"].is_number_integer() ||
      !j["world"].is_number_integer() || !j["config"].is_object()) {
    return invalid("not a trainsim-train checkpoint index");
  }
  if (j["world"] != world) {
    return invalid("the checkpoint was written by " + j["world"].dump() + " ranks, this run has " +
                   std::to_string(world) + ": start it with as many");
  }
  for (const auto& [name, value] : fields) {
    const nlohmann::json& there = j["config"][name];
    if (!there.is_string() || there.get<std::string>() != value) {
      return invalid("the checkpoint is of another configuration: " + name + " = " +
                     (there.is_string() ? there.get<std::string>() : std::string("(none)")) +
                     " there, " + value + " here");
    }
  }
  return std::optional<int64_t>(j["step"].get<int64_t>());
}

}  // namespace trainsim::local
