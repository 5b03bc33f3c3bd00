#include "launch/local/checkpoint.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "core/durable_file.h"

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
  auto view = [](const void* data, size_t size) {
    return std::string_view(static_cast<const char*>(data), size);
  };
  const std::string_view pieces[] = {view(&h, sizeof(h)), view(state.params, bytes),
                                     view(state.first_moment, bytes),
                                     view(state.second_moment, bytes)};
  return WriteFileDurably(RankFile(dir, step, rank), pieces);
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
  // The step's folder, made by the ranks, must outlive a power loss before latest.json names it.
  if (Status s = SyncFolder(dir); !s.ok()) return s;
  if (Status s = WriteFileDurably(dir + "/latest.json", j.dump(2) + "\n"); !s.ok()) return s;
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
