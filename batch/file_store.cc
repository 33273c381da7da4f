#include "batch/file_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/check.h"

namespace surge::batch {
namespace {

constexpr std::string_view kTempSuffix = ".tmp";

Status ErrnoError(const std::string& what) { return InternalError(what + ": " + std::strerror(errno)); }

Status FsyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return ErrnoError("open " + path);
  const int rc = ::fsync(fd);
  ::close(fd);
  return rc == 0 ? OkStatus() : ErrnoError("fsync " + path);
}

Status WriteAll(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("create " + path);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return ErrnoError("write " + path);
    }
    written += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  return synced ? OkStatus() : ErrnoError("fsync " + path);
}

}  // namespace

bool IsSafeId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

StatusOr<FileStore> FileStore::Open(std::string dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InternalError("create " + dir + ": " + ec.message());
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == kTempSuffix) std::filesystem::remove(entry.path(), ec);
  }
  return FileStore(std::move(dir));
}

std::string FileStore::PathOf(std::string_view id) const {
  CHECK(IsSafeId(id)) << "unsafe file id";
  return dir_ + "/" + std::string(id);
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  const std::string temp = path + std::string(kTempSuffix);
  RETURN_IF_ERROR(WriteAll(temp, bytes));
  if (std::rename(temp.c_str(), path.c_str()) != 0) return ErrnoError("rename " + temp);
  std::string dir = std::filesystem::path(path).parent_path().string();
  return FsyncPath(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY);  // the rename itself is durable
}

Status FileStore::Write(std::string_view id, std::string_view bytes) { return WriteFileAtomically(PathOf(id), bytes); }

StatusOr<std::string> FileStore::Read(std::string_view id) const {
  std::ifstream file(PathOf(id), std::ios::binary);
  if (!file) return NotFoundError("file '" + std::string(id) + "' has no content on disk");
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

Status FileStore::Remove(std::string_view id) {
  std::error_code ec;
  std::filesystem::remove(PathOf(id), ec);
  return ec ? InternalError("remove " + std::string(id) + ": " + ec.message()) : OkStatus();
}

std::vector<std::string> FileStore::Ids() const {
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (IsSafeId(name)) ids.push_back(name);
  }
  return ids;
}

}  // namespace surge::batch
