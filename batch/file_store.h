// FileStore: the Batch API's file bytes on disk, one file per id under a directory. A
// write goes to a temporary name, is fsynced and renamed into place (and the directory
// fsynced), so a file is either whole or absent after a crash.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace surge::batch {

class FileStore {
 public:
  // Creates `dir` when absent; removes temporaries a crash left behind.
  static StatusOr<FileStore> Open(std::string dir);

  Status Write(std::string_view id, std::string_view bytes);
  StatusOr<std::string> Read(std::string_view id) const;  // NOT_FOUND
  Status Remove(std::string_view id);                     // absent is fine
  std::vector<std::string> Ids() const;

 private:
  explicit FileStore(std::string dir) : dir_(std::move(dir)) {}
  std::string PathOf(std::string_view id) const;

  std::string dir_;
};

// Writes `bytes` to `path` through a temporary beside it (fsync, rename, fsync of the
// directory): after a crash the path holds the old file or the whole new one.
Status WriteFileAtomically(const std::string& path, std::string_view bytes);

// Ids the store may name: letters, digits, '-' and '_' only (never a path).
bool IsSafeId(std::string_view id);

}  // namespace surge::batch
