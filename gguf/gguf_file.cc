#include "gguf/gguf_file.h"

#include <cstring>
#include <limits>

namespace surge {
namespace {

bool IsUnsigned(GgufValueType t) {
  return t == GgufValueType::kU8 || t == GgufValueType::kU16 || t == GgufValueType::kU32 ||
         t == GgufValueType::kU64;
}
bool IsSigned(GgufValueType t) {
  return t == GgufValueType::kI8 || t == GgufValueType::kI16 || t == GgufValueType::kI32 ||
         t == GgufValueType::kI64;
}
bool IsFloat(GgufValueType t) { return t == GgufValueType::kF32 || t == GgufValueType::kF64; }

// Element `i` of a packed array of integers, widened; false when it does not fit int64.
bool ArrayInt(const GgufValue& v, uint64_t i, int64_t* out) {
  size_t size = GgufValueTypeSize(v.array_type);
  const uint8_t* p = v.array_bytes.data() + i * size;
  uint64_t u = 0;
  std::memcpy(&u, p, size);
  if (IsUnsigned(v.array_type)) {
    if (u > uint64_t(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  int shift = 64 - 8 * static_cast<int>(size);  // sign-extend
  *out = static_cast<int64_t>(u << shift) >> shift;
  return true;
}

}  // namespace

std::string GgufValue::TypeName() const {
  if (type != GgufValueType::kArray) return GgufValueTypeName(type);
  return "array[" + GgufValueTypeName(array_type) + "]";
}

int64_t GgufTensorInfo::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string GgufTensorInfo::ShapeString() const {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

const GgufValue* GgufFile::Find(std::string_view key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

StatusOr<const GgufValue*> GgufFile::Require(std::string_view key) const {
  const GgufValue* value = Find(key);
  if (value == nullptr) {
    return NotFoundError(path_ + ": metadata key '" + std::string(key) + "' is missing");
  }
  return value;
}

Status GgufFile::WrongType(std::string_view key, const GgufValue& value,
                           std::string_view expected) const {
  return InvalidArgumentError(path_ + ": metadata key '" + std::string(key) + "' should be " +
                              std::string(expected) + ", but is " + value.TypeName());
}

StatusOr<int64_t> GgufFile::GetInt(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* value, Require(key));
  if (IsSigned(value->type)) return value->i64;
  if (IsUnsigned(value->type)) {
    if (value->u64 > uint64_t(std::numeric_limits<int64_t>::max())) {
      return InvalidArgumentError(path_ + ": metadata key '" + std::string(key) + "' value " +
                                  std::to_string(value->u64) + " is out of range");
    }
    return static_cast<int64_t>(value->u64);
  }
  return WrongType(key, *value, "an integer");
}

StatusOr<uint64_t> GgufFile::GetUint(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* value, Require(key));
  if (IsUnsigned(value->type)) return value->u64;
  if (IsSigned(value->type)) {
    if (value->i64 < 0) {
      return InvalidArgumentError(path_ + ": metadata key '" + std::string(key) +
                                  "' should be non-negative, but is " + std::to_string(value->i64));
    }
    return static_cast<uint64_t>(value->i64);
  }
  return WrongType(key, *value, "an unsigned integer");
}

StatusOr<double> GgufFile::GetFloat(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* value, Require(key));
  if (!IsFloat(value->type)) return WrongType(key, *value, "f32 or f64");
  return value->f64;
}

StatusOr<bool> GgufFile::GetBool(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* value, Require(key));
  if (value->type != GgufValueType::kBool) return WrongType(key, *value, "bool");
  return value->u64 != 0;
}

StatusOr<std::string> GgufFile::GetString(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* value, Require(key));
  if (value->type != GgufValueType::kString) return WrongType(key, *value, "string");
  return std::string(value->str);
}

StatusOr<std::vector<std::string>> GgufFile::GetStringArray(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* value, Require(key));
  if (value->type != GgufValueType::kArray || value->array_type != GgufValueType::kString) {
    return WrongType(key, *value, "array[string]");
  }
  std::vector<std::string> out;
  out.reserve(value->array_items.size());
  for (const GgufValue& item : value->array_items) out.emplace_back(item.str);
  return out;
}

StatusOr<std::vector<float>> GgufFile::GetFloatArray(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* value, Require(key));
  if (value->type != GgufValueType::kArray || !IsFloat(value->array_type)) {
    return WrongType(key, *value, "array[f32] or array[f64]");
  }
  std::vector<float> out(value->array_size);
  for (uint64_t i = 0; i < value->array_size; ++i) {
    if (value->array_type == GgufValueType::kF32) {
      std::memcpy(&out[i], value->array_bytes.data() + 4 * i, 4);
    } else {
      double d;
      std::memcpy(&d, value->array_bytes.data() + 8 * i, 8);
      out[i] = static_cast<float>(d);
    }
  }
  return out;
}

StatusOr<std::vector<int64_t>> GgufFile::GetIntArray(std::string_view key) const {
  ASSIGN_OR_RETURN(const GgufValue* value, Require(key));
  if (value->type != GgufValueType::kArray ||
      !(IsSigned(value->array_type) || IsUnsigned(value->array_type))) {
    return WrongType(key, *value, "an integer array");
  }
  std::vector<int64_t> out(value->array_size);
  for (uint64_t i = 0; i < value->array_size; ++i) {
    if (!ArrayInt(*value, i, &out[i])) {
      return InvalidArgumentError(path_ + ": metadata key '" + std::string(key) + "' element " +
                                  std::to_string(i) + " is out of range");
    }
  }
  return out;
}

const GgufTensorInfo* GgufFile::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

StatusOr<const GgufTensorInfo*> GgufFile::GetTensor(std::string_view name) const {
  const GgufTensorInfo* info = FindTensor(name);
  if (info == nullptr) {
    return NotFoundError(path_ + ": tensor '" + std::string(name) + "' is missing");
  }
  return info;
}

}  // namespace surge
