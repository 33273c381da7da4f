// GgufFile: a memory-mapped GGUF model file (v2/v3): metadata and tensor table, fully
// validated at open so that later lookups fail only with "missing" or "wrong type".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/mapped_file.h"
#include "base/status.h"
#include "gguf/gguf_types.h"

namespace surge {

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as little-endian u32
inline constexpr uint32_t kGgufDefaultAlignment = 32;

// One metadata value. Strings and arrays of fixed-size elements point into the mapped
// file (valid while the GgufFile lives); arrays of strings/arrays are expanded.
struct GgufValue {
  GgufValueType type = GgufValueType::kU8;
  uint64_t u64 = 0;  // u8..u64 and bool
  int64_t i64 = 0;   // i8..i64
  double f64 = 0;    // f32, f64
  std::string_view str;  // string
  // Arrays: element type, count, and either the packed little-endian elements
  // (fixed-size types: count * size bytes) or the expanded elements.
  GgufValueType array_type = GgufValueType::kU8;
  uint64_t array_size = 0;
  std::span<const uint8_t> array_bytes;
  std::vector<GgufValue> array_items;  // string and nested-array elements

  std::string TypeName() const;  // "u32", "array[string]"
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // ggml order: dims[0] is the contiguous (row) dimension
  GgmlType type = GgmlType::kF32;
  uint64_t offset_bytes = 0;  // from the start of the data section
  uint64_t size_bytes = 0;
  std::span<const uint8_t> bytes;  // the tensor's data inside the mapped file

  int64_t num_elements() const;
  std::string ShapeString() const;  // "[768, 32000]"
};

class GgufFile {
 public:
  // Maps and validates `path`. Errors (DATA_LOSS for corrupt/truncated, UNIMPLEMENTED
  // for an unsupported version) name the file and the problem.
  static StatusOr<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // The same over bytes that outlive the GgufFile (tests); `path` names them in errors.
  static StatusOr<std::unique_ptr<GgufFile>> Parse(std::span<const uint8_t> bytes,
                                                   const std::string& path);

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  const std::string& path() const { return path_; }
  uint64_t data_offset_bytes() const { return data_offset_bytes_; }

  // Metadata in file order and by key; nullptr when absent.
  const std::vector<std::string>& keys() const { return keys_; }
  const GgufValue* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }

  // Typed getters: NOT_FOUND naming the key when absent; INVALID_ARGUMENT naming the
  // key, the expected and the actual type when the type does not fit. Integers accept
  // any integer type whose value fits; floats accept f32 and f64.
  StatusOr<int64_t> GetInt(std::string_view key) const;
  StatusOr<uint64_t> GetUint(std::string_view key) const;
  StatusOr<double> GetFloat(std::string_view key) const;
  StatusOr<bool> GetBool(std::string_view key) const;
  StatusOr<std::string> GetString(std::string_view key) const;
  StatusOr<std::vector<std::string>> GetStringArray(std::string_view key) const;
  StatusOr<std::vector<float>> GetFloatArray(std::string_view key) const;
  StatusOr<std::vector<int64_t>> GetIntArray(std::string_view key) const;

  // Tensors in file order and by name.
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* FindTensor(std::string_view name) const;
  StatusOr<const GgufTensorInfo*> GetTensor(std::string_view name) const;  // NOT_FOUND

 private:
  friend class GgufParser;
  GgufFile() = default;
  Status WrongType(std::string_view key, const GgufValue& value,
                   std::string_view expected) const;
  StatusOr<const GgufValue*> Require(std::string_view key) const;

  std::string path_;
  std::unique_ptr<MappedFile> file_;  // null when parsed over caller-owned bytes
  uint32_t version_ = 0;
  uint32_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_bytes_ = 0;
  std::vector<std::string> keys_;
  std::map<std::string, GgufValue, std::less<>> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace surge
