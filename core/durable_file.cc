#include "core/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>

namespace trainsim {
namespace {

namespace fs = std::filesystem;

Status WriteError(const std::string& path, int error) {
  return Status::InvalidInput(path + ": cannot write: " + std::strerror(error));
}

// The file a write replaces: the one a symbolic link names, else `path`.
std::string Destination(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return path;
  const fs::path target = fs::canonical(path, ec);
  return ec ? path : target.string();
}

std::string FolderOf(const std::string& path) {
  const std::string dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// Six letters or digits, mixed from the process, a counter and the clock;
// a clash is possible and handled by the exclusive create.
std::string RandomSuffix() {
  static std::atomic<uint64_t> counter{0};
  uint64_t x = (static_cast<uint64_t>(getpid()) << 40) ^ counter.fetch_add(1) ^
               static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  x += 0x9e3779b97f4a7c15ull;  // splitmix64's finaliser
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string s;
  for (int i = 0; i < 6; ++i, x /= 62) s += kChars[x % 62];
  return s;
}

// Creates ".NAME.XXXXXX" beside `dest` with the permission bits the header
// promises; its descriptor, or -1 with errno set.
int CreateTemporary(const std::string& dest, int mode, std::string* tmp) {
  struct stat old;
  const bool keep = mode == kKeepMode && stat(dest.c_str(), &old) == 0;
  const std::string prefix = FolderOf(dest) + "/." + fs::path(dest).filename().string() + ".";
  for (int attempt = 0; attempt < 100; ++attempt) {
    *tmp = prefix + RandomSuffix();
    const mode_t create = mode == kKeepMode ? 0644 : static_cast<mode_t>(mode);
    const int fd = open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, create);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0 || !keep || fchmod(fd, old.st_mode & 0777) == 0) return fd;
    const int error = errno;
    close(fd);
    unlink(tmp->c_str());
    errno = error;
    return -1;
  }
  errno = EEXIST;
  return -1;
}

// 0 or the errno of the failed write; EINTR and short writes go on.
int WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// 0 or the errno; a file system that cannot sync folders (EINVAL) is no error.
int FsyncFolder(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int error = fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
  close(fd);
  return error;
}

}  // namespace

Status WriteFileDurably(const std::string& path, std::string_view bytes, int mode) {
  return WriteFileDurably(path, std::span<const std::string_view>(&bytes, 1), mode);
}

Status WriteFileDurably(const std::string& path, std::span<const std::string_view> pieces,
                        int mode) {
  const std::string dest = Destination(path);
  std::string tmp;
  const int fd = CreateTemporary(dest, mode, &tmp);
  if (fd < 0) return WriteError(path, errno);
  int error = 0;
  for (size_t i = 0; i < pieces.size() && !error; ++i) error = WriteAll(fd, pieces[i]);
  if (!error && fsync(fd) != 0) error = errno;
  if (close(fd) != 0 && !error) error = errno;
  if (!error && rename(tmp.c_str(), dest.c_str()) != 0) error = errno;
  if (error) {
    unlink(tmp.c_str());
    return WriteError(path, error);
  }
  if (const int e = FsyncFolder(FolderOf(dest)); e != 0) {
    return Status::InvalidInput(
        path + ": written, but its folder could not be synced: " + std::strerror(e));
  }
  return Status::Ok();
}

Status SyncFolder(const std::string& dir) {
  const int e = FsyncFolder(dir);
  if (e == 0) return Status::Ok();
  return Status::InvalidInput(dir + ": cannot sync the folder: " + std::strerror(e));
}

Status CheckWritable(const std::string& path) {
  std::string tmp;
  const int fd = CreateTemporary(Destination(path), kKeepMode, &tmp);
  if (fd < 0) return WriteError(path, errno);
  close(fd);
  unlink(tmp.c_str());
  return Status::Ok();
}

}  // namespace trainsim
