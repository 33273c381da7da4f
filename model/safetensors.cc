#include "model/safetensors.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/json_depth.h"

namespace surge {
namespace {

using Json = nlohmann::json;

// Names the safetensors format uses for types we know of but cannot read yet; anything
// else is unknown. Both are UNIMPLEMENTED, but the distinction is not worth a code.
std::optional<TensorDType> ParseDType(std::string_view name) {
  if (name == "F32") return TensorDType::kF32;
  if (name == "F16") return TensorDType::kF16;
  if (name == "BF16") return TensorDType::kBF16;
  if (name == "F8_E4M3") return TensorDType::kF8E4M3;
  if (name == "I64") return TensorDType::kI64;
  return std::nullopt;
}

Status Corrupt(const std::string& path, const std::string& message) {
  return DataLossError(path + ": " + message);
}

Status CorruptTensor(const std::string& path, const std::string& tensor,
                     const std::string& message) {
  return DataLossError(path + ": tensor '" + tensor + "': " + message);
}

// A JSON integer that fits in uint64 (negative values and floats are not).
std::optional<uint64_t> AsUnsigned(const Json& value) {
  if (!value.is_number_unsigned()) return std::nullopt;
  return value.get<uint64_t>();
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// Shape: a list of non-negative integers whose product times the element size fits in
// uint64. Returns that byte size.
StatusOr<uint64_t> ParseShape(const Json& shape_json, size_t element_bytes,
                              const std::string& path, const std::string& name,
                              std::vector<int64_t>* shape) {
  if (!shape_json.is_array()) {
    return CorruptTensor(path, name, "'shape' must be a list, got " + shape_json.dump());
  }
  uint64_t num_bytes = element_bytes;
  for (const Json& dim_json : shape_json) {
    std::optional<uint64_t> dim = AsUnsigned(dim_json);
    if (!dim || *dim > uint64_t(INT64_MAX)) {
      return CorruptTensor(path, name, "'shape' must hold non-negative integers, got " +
                                           shape_json.dump());
    }
    if (__builtin_mul_overflow(num_bytes, *dim, &num_bytes)) {
      return CorruptTensor(path, name, "shape " + shape_json.dump() + " overflows 64 bits");
    }
    shape->push_back(static_cast<int64_t>(*dim));
  }
  return num_bytes;
}

Status ParseOffsets(const Json& offsets, uint64_t data_size, const std::string& path,
                    SafetensorsEntry* entry) {
  const std::string& name = entry->name;
  std::optional<uint64_t> begin, end;
  if (offsets.is_array() && offsets.size() == 2) {
    begin = AsUnsigned(offsets[0]);
    end = AsUnsigned(offsets[1]);
  }
  if (!begin || !end) {
    return CorruptTensor(path, name, "'data_offsets' must be two non-negative integers, got " +
                                         offsets.dump());
  }
  if (*end < *begin) {
    return CorruptTensor(path, name, "data_offsets " + offsets.dump() + " end before begin");
  }
  if (*end > data_size) {
    return CorruptTensor(path, name, "data_offsets " + offsets.dump() +
                                         " out of range of the data section (" +
                                         std::to_string(data_size) + " bytes)");
  }
  entry->begin_bytes = *begin;
  entry->end_bytes = *end;
  return OkStatus();
}

StatusOr<SafetensorsEntry> ParseEntry(const std::string& name, const Json& value,
                                      uint64_t data_size, const std::string& path) {
  if (!value.is_object()) return CorruptTensor(path, name, "entry is not a JSON object");
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!value.contains(key)) {
      return CorruptTensor(path, name, std::string("missing '") + key + "'");
    }
  }
  const Json& dtype_json = value.at("dtype");
  if (!dtype_json.is_string()) {
    return CorruptTensor(path, name, "'dtype' must be a string, got " + dtype_json.dump());
  }
  std::string dtype_name = dtype_json.get<std::string>();
  std::optional<TensorDType> dtype = ParseDType(dtype_name);
  if (!dtype) {
    return UnimplementedError("unsupported dtype '" + dtype_name + "' for tensor '" + name +
                              "' in " + path + " (supported: F32, F16, BF16, F8_E4M3, I64)");
  }
  SafetensorsEntry entry;
  entry.name = name;
  entry.dtype = *dtype;
  ASSIGN_OR_RETURN(uint64_t num_bytes, ParseShape(value.at("shape"), TensorDTypeSize(*dtype),
                                                  path, name, &entry.shape));
  RETURN_IF_ERROR(ParseOffsets(value.at("data_offsets"), data_size, path, &entry));
  const uint64_t stored_bytes = entry.end_bytes - entry.begin_bytes;
  if (stored_bytes != num_bytes) {
    return CorruptTensor(path, name, "holds " + std::to_string(stored_bytes) + " bytes but " +
                                         dtype_name + ShapeString(entry.shape) + " needs " +
                                         std::to_string(num_bytes));
  }
  return entry;
}

Status ParseMetadata(const Json& value, const std::string& path,
                     std::map<std::string, std::string>* metadata) {
  if (!value.is_object()) return Corrupt(path, "'__metadata__' is not a JSON object");
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) {
      return Corrupt(path, "'__metadata__' value for '" + key + "' is not a string");
    }
    (*metadata)[key] = item.get<std::string>();
  }
  return OkStatus();
}

// Sorted by begin, each tensor must start at or after the previous one's end.
Status CheckNoOverlap(std::vector<SafetensorsEntry>& tensors, const std::string& path) {
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) {
    return a.begin_bytes != b.begin_bytes ? a.begin_bytes < b.begin_bytes
                                          : a.end_bytes < b.end_bytes;
  });
  for (size_t i = 1; i < tensors.size(); ++i) {
    const SafetensorsEntry& prev = tensors[i - 1];
    const SafetensorsEntry& cur = tensors[i];
    if (cur.begin_bytes < prev.end_bytes) {
      return Corrupt(path, "tensors '" + prev.name + "' [" + std::to_string(prev.begin_bytes) +
                               ", " + std::to_string(prev.end_bytes) + ") and '" + cur.name +
                               "' [" + std::to_string(cur.begin_bytes) + ", " +
                               std::to_string(cur.end_bytes) + ") overlap");
    }
  }
  return OkStatus();
}

// Reads the length prefix and returns the header's JSON text.
StatusOr<std::string_view> HeaderText(std::span<const uint8_t> bytes, const std::string& path) {
  if (bytes.size() < 8) {
    return Corrupt(path, "file is " + std::to_string(bytes.size()) +
                             " bytes, shorter than the 8-byte header length");
  }
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | bytes[i];  // little-endian
  if (header_bytes > kMaxSafetensorsHeaderBytes) {
    return Corrupt(path, "header length " + std::to_string(header_bytes) + " exceeds the " +
                             std::to_string(kMaxSafetensorsHeaderBytes) + "-byte limit");
  }
  if (header_bytes > bytes.size() - 8) {
    return Corrupt(path, "header length " + std::to_string(header_bytes) +
                             " runs past the end of the file (" + std::to_string(bytes.size()) +
                             " bytes)");
  }
  return std::string_view(reinterpret_cast<const char*>(bytes.data()) + 8, header_bytes);
}

StatusOr<Json> ParseJson(std::string_view text, const std::string& path) {
  if (!JsonDepthWithin(text)) return Corrupt(path, "header JSON is nested too deep");
  // nlohmann reports errors by exception; they stop here and become a Status.
  try {
    Json root = Json::parse(text);
    if (!root.is_object()) return Corrupt(path, "header is not a JSON object");
    return root;
  } catch (const Json::exception& e) {
    return Corrupt(path, std::string("header is not valid JSON: ") + e.what());
  }
}

}  // namespace

StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::span<const uint8_t> file_bytes,
                                                   const std::string& path) {
  ASSIGN_OR_RETURN(std::string_view text, HeaderText(file_bytes, path));
  ASSIGN_OR_RETURN(Json root, ParseJson(text, path));
  SafetensorsHeader header;
  header.data_offset_bytes = 8 + text.size();
  uint64_t data_size = file_bytes.size() - header.data_offset_bytes;
  for (const auto& [name, value] : root.items()) {
    if (name == "__metadata__") {
      RETURN_IF_ERROR(ParseMetadata(value, path, &header.metadata));
      continue;
    }
    ASSIGN_OR_RETURN(SafetensorsEntry entry, ParseEntry(name, value, data_size, path));
    header.tensors.push_back(std::move(entry));
  }
  RETURN_IF_ERROR(CheckNoOverlap(header.tensors, path));
  return header;
}

}  // namespace surge
