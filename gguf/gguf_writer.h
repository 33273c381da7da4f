// GgufWriter: builds a GGUF v3 (or v2) file: metadata of every type and tensors whose
// data are padded to the alignment. Used by the converter and by tests.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_types.h"

namespace surge {

class GgufWriter {
 public:
  // `alignment` must be a power of two; it is written as general.alignment when it is
  // not the default 32 (as llama.cpp's writer does).
  explicit GgufWriter(uint32_t alignment = 32, uint32_t version = 3);

  // Setting a key again replaces its value (keeping its first position).
  void SetU8(const std::string& key, uint8_t v) { SetScalar(key, GgufValueType::kU8, &v, 1); }
  void SetI8(const std::string& key, int8_t v) { SetScalar(key, GgufValueType::kI8, &v, 1); }
  void SetU16(const std::string& key, uint16_t v) { SetScalar(key, GgufValueType::kU16, &v, 2); }
  void SetI16(const std::string& key, int16_t v) { SetScalar(key, GgufValueType::kI16, &v, 2); }
  void SetU32(const std::string& key, uint32_t v) { SetScalar(key, GgufValueType::kU32, &v, 4); }
  void SetI32(const std::string& key, int32_t v) { SetScalar(key, GgufValueType::kI32, &v, 4); }
  void SetU64(const std::string& key, uint64_t v) { SetScalar(key, GgufValueType::kU64, &v, 8); }
  void SetI64(const std::string& key, int64_t v) { SetScalar(key, GgufValueType::kI64, &v, 8); }
  void SetF32(const std::string& key, float v) { SetScalar(key, GgufValueType::kF32, &v, 4); }
  void SetF64(const std::string& key, double v) { SetScalar(key, GgufValueType::kF64, &v, 8); }
  void SetBool(const std::string& key, bool v);
  void SetString(const std::string& key, const std::string& v);
  void SetStringArray(const std::string& key, const std::vector<std::string>& v);
  // An array of fixed-size elements given as packed little-endian bytes.
  void SetArray(const std::string& key, GgufValueType element_type,
                std::span<const uint8_t> packed, uint64_t count);
  void SetF32Array(const std::string& key, std::span<const float> v);
  void SetI32Array(const std::string& key, std::span<const int32_t> v);
  // An array of arrays of strings (rare, but the format allows it; tests use it).
  void SetNestedStringArray(const std::string& key,
                            const std::vector<std::vector<std::string>>& v);

  // `dims` in ggml order (dims[0] = row length); `data` must hold exactly the bytes the
  // type and shape need. INVALID_ARGUMENT naming the tensor otherwise, or on a duplicate.
  Status AddTensor(const std::string& name, std::vector<int64_t> dims, GgmlType type,
                   std::vector<uint8_t> data);

  std::vector<uint8_t> Serialize() const;
  Status WriteFile(const std::string& path) const;  // errors name the path

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> dims;
    GgmlType type;
    std::vector<uint8_t> data;
  };
  void SetScalar(const std::string& key, GgufValueType type, const void* v, size_t size);
  void SetEncoded(const std::string& key, std::vector<uint8_t> encoded);
  std::vector<uint8_t> Header() const;  // everything before the data section, padded

  uint32_t alignment_;
  uint32_t version_;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> metadata_;  // key, type + value
  std::vector<Tensor> tensors_;
};

}  // namespace surge
