// MappedFile: a read-only memory map of a whole file, unmapped when destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/status.h"

namespace surge {

class MappedFile {
 public:
  // Maps `path` read-only. Errors name the path. An empty file maps to an empty span.
  static StatusOr<std::unique_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_bytes_}; }
  size_t size_bytes() const { return size_bytes_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size_bytes)
      : path_(std::move(path)), data_(data), size_bytes_(size_bytes) {}

  std::string path_;
  const uint8_t* data_;
  size_t size_bytes_;
};

// Reads a whole (small) file into a string. Errors name the path.
StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace surge
