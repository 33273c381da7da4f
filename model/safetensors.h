// Safetensors header parsing: one file's tensor table, fully validated before any use.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/tensor_dtype.h"

namespace surge {

// The file layout: an 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"key": "value"}}
// then the data section; offsets are relative to its start (byte 8 + N).
// Headers above this size are refused as corrupt rather than parsed (the format's own
// reader uses the same bound).
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

struct SafetensorsEntry {
  std::string name;
  TensorDType dtype = TensorDType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin_bytes = 0;  // offset in the data section
  uint64_t end_bytes = 0;    // one past the last byte; end - begin == product(shape) * size
};

struct SafetensorsHeader {
  uint64_t data_offset_bytes = 0;  // where the data section starts in the file: 8 + N
  std::vector<SafetensorsEntry> tensors;  // in data order (sorted by begin_bytes)
  std::map<std::string, std::string> metadata;  // "__metadata__", string values only
};

// Parses and validates the header of a safetensors file whose full contents are
// `file_bytes`; `path` names the file in errors. Checks: length prefix present and sane,
// JSON object, each entry's dtype/shape/data_offsets well typed, dims >= 0 without
// overflow, offsets inside the data section, byte size == elements * dtype size, no two
// tensors overlapping. Errors are DATA_LOSS (corrupt file) or UNIMPLEMENTED (a dtype we
// do not read yet) and name the file and, where one is at fault, the tensor.
// Gaps between tensors are allowed: they are harmless and some writers pad for alignment.
StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::span<const uint8_t> file_bytes,
                                                   const std::string& path);

}  // namespace surge
