// The GGUF header parser: a bounds-checked cursor over the mapped bytes. Every count
// and length is checked against the bytes left before anything is allocated, so a
// corrupt or hostile file costs at most its own size in memory.
#include <algorithm>
#include <cstring>

#include "gguf/gguf_file.h"

namespace surge {
namespace {

constexpr int kMaxArrayDepth = 4;
constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
constexpr uint64_t kMaxKeyBytes = 65536;

Status Corrupt(const std::string& path, const std::string& message) {
  return DataLossError(path + ": " + message);
}

}  // namespace

class GgufParser {
 public:
  GgufParser(std::span<const uint8_t> bytes, GgufFile* file)
      : bytes_(bytes), file_(file), path_(file->path_) {}

  Status Run() {
    RETURN_IF_ERROR(ParseHeader());
    for (uint64_t i = 0; i < num_kv_; ++i) RETURN_IF_ERROR(ParseKeyValue(i));
    RETURN_IF_ERROR(ReadAlignment());
    for (uint64_t i = 0; i < num_tensors_; ++i) RETURN_IF_ERROR(ParseTensorInfo(i));
    return PlaceTensors();
  }

 private:
  uint64_t Left() const { return bytes_.size() - pos_; }

  Status Need(uint64_t num_bytes, const std::string& what) {
    if (num_bytes > Left()) {
      return Corrupt(path_, "truncated: " + what + " needs " + std::to_string(num_bytes) +
                                " bytes at offset " + std::to_string(pos_) + ", file has " +
                                std::to_string(Left()) + " left");
    }
    return OkStatus();
  }

  template <typename T>
  StatusOr<T> Read(const std::string& what) {
    RETURN_IF_ERROR(Need(sizeof(T), what));
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));  // the format is little-endian
    pos_ += sizeof(T);
    return value;
  }

  StatusOr<std::string_view> ReadString(const std::string& what) {
    ASSIGN_OR_RETURN(uint64_t length, Read<uint64_t>(what + " length"));
    RETURN_IF_ERROR(Need(length, what + " (" + std::to_string(length) + " bytes)"));
    std::string_view text(reinterpret_cast<const char*>(bytes_.data() + pos_), length);
    pos_ += length;
    return text;
  }

  Status ParseHeader() {
    ASSIGN_OR_RETURN(uint32_t magic, Read<uint32_t>("magic"));
    if (magic != kGgufMagic) {
      char text[5] = {};
      std::memcpy(text, &magic, 4);
      for (char& c : text) if (c != 0 && (c < 32 || c > 126)) c = '?';
      return Corrupt(path_, std::string("not a GGUF file: bad magic '") + text +
                                "' (expected 'GGUF')");
    }
    ASSIGN_OR_RETURN(file_->version_, Read<uint32_t>("version"));
    if (file_->version_ != 2 && file_->version_ != 3) {
      return UnimplementedError(path_ + ": unsupported GGUF version " +
                                std::to_string(file_->version_) + " (supported: 2, 3)");
    }
    ASSIGN_OR_RETURN(num_tensors_, Read<uint64_t>("tensor count"));
    ASSIGN_OR_RETURN(num_kv_, Read<uint64_t>("metadata count"));
    // Each tensor info takes at least 8+1+4+8+4+8 bytes and each key/value at least
    // 8+1+4+1: larger counts cannot be real.
    if (num_tensors_ > Left() / 33 || num_kv_ > Left() / 14) {
      return Corrupt(path_, "absurd counts: " + std::to_string(num_tensors_) + " tensors and " +
                                std::to_string(num_kv_) + " metadata entries in a file of " +
                                std::to_string(bytes_.size()) + " bytes");
    }
    return OkStatus();
  }

  Status ParseKeyValue(uint64_t index) {
    ASSIGN_OR_RETURN(std::string_view key, ReadString("metadata key #" + std::to_string(index)));
    if (key.empty() || key.size() > kMaxKeyBytes) {
      return Corrupt(path_, "metadata key #" + std::to_string(index) + " has length " +
                                std::to_string(key.size()));
    }
    std::string name(key);
    if (file_->metadata_.count(name)) return Corrupt(path_, "duplicate metadata key '" + name + "'");
    ASSIGN_OR_RETURN(uint32_t raw_type, Read<uint32_t>("type of '" + name + "'"));
    GgufValue value;
    RETURN_IF_ERROR(ParseValue(raw_type, name, 0, &value));
    file_->keys_.push_back(name);
    file_->metadata_.emplace(std::move(name), std::move(value));
    return OkStatus();
  }

  Status ParseValue(uint32_t raw_type, const std::string& key, int depth, GgufValue* value) {
    if (!IsKnownGgufValueType(raw_type)) {
      return Corrupt(path_, "metadata '" + key + "' has unknown value type " +
                                std::to_string(raw_type));
    }
    value->type = static_cast<GgufValueType>(raw_type);
    switch (value->type) {
      case GgufValueType::kString: {
        ASSIGN_OR_RETURN(value->str, ReadString("string '" + key + "'"));
        return OkStatus();
      }
      case GgufValueType::kArray: return ParseArray(key, depth, value);
      default: return ParseScalar(key, value);
    }
  }

  Status ParseScalar(const std::string& key, GgufValue* value) {
    size_t size = GgufValueTypeSize(value->type);
    RETURN_IF_ERROR(Need(size, "value of '" + key + "'"));
    const uint8_t* p = bytes_.data() + pos_;
    pos_ += size;
    auto load = [p](auto zero) { std::memcpy(&zero, p, sizeof(zero)); return zero; };
    switch (value->type) {
      case GgufValueType::kU8: value->u64 = load(uint8_t{}); break;
      case GgufValueType::kU16: value->u64 = load(uint16_t{}); break;
      case GgufValueType::kU32: value->u64 = load(uint32_t{}); break;
      case GgufValueType::kU64: value->u64 = load(uint64_t{}); break;
      case GgufValueType::kI8: value->i64 = load(int8_t{}); break;
      case GgufValueType::kI16: value->i64 = load(int16_t{}); break;
      case GgufValueType::kI32: value->i64 = load(int32_t{}); break;
      case GgufValueType::kI64: value->i64 = load(int64_t{}); break;
      case GgufValueType::kF32: value->f64 = load(float{}); break;
      case GgufValueType::kF64: value->f64 = load(double{}); break;
      case GgufValueType::kBool: {
        uint8_t raw = load(uint8_t{});
        if (raw > 1) return Corrupt(path_, "bool '" + key + "' holds " + std::to_string(raw));
        value->u64 = raw;
        break;
      }
      default: break;
    }
    return OkStatus();
  }

  Status ParseArray(const std::string& key, int depth, GgufValue* value) {
    if (depth >= kMaxArrayDepth) return Corrupt(path_, "arrays nested too deep in '" + key + "'");
    ASSIGN_OR_RETURN(uint32_t raw_type, Read<uint32_t>("array type of '" + key + "'"));
    ASSIGN_OR_RETURN(uint64_t count, Read<uint64_t>("array length of '" + key + "'"));
    if (!IsKnownGgufValueType(raw_type)) {
      return Corrupt(path_, "array '" + key + "' has unknown element type " +
                                std::to_string(raw_type));
    }
    value->array_type = static_cast<GgufValueType>(raw_type);
    value->array_size = count;
    size_t element_size = GgufValueTypeSize(value->array_type);
    // Strings take >= 8 bytes, arrays >= 12: the bound holds before any allocation.
    uint64_t min_size = element_size ? element_size : (raw_type == 8 ? 8 : 12);
    if (count > Left() / min_size) {
      return Corrupt(path_, "array '" + key + "' of " + std::to_string(count) + " " +
                                GgufValueTypeName(value->array_type) +
                                " elements runs past the end of the file");
    }
    if (element_size) {
      value->array_bytes = bytes_.subspan(pos_, count * element_size);
      pos_ += count * element_size;
      if (value->array_type == GgufValueType::kBool) {
        for (uint8_t b : value->array_bytes) {
          if (b > 1) return Corrupt(path_, "bool array '" + key + "' holds " + std::to_string(b));
        }
      }
      return OkStatus();
    }
    value->array_items.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      RETURN_IF_ERROR(ParseValue(raw_type, key + "[" + std::to_string(i) + "]", depth + 1,
                                 &value->array_items[i]));
    }
    return OkStatus();
  }

  Status ReadAlignment() {
    const GgufValue* value = file_->Find("general.alignment");
    if (value == nullptr) return OkStatus();
    if (value->type != GgufValueType::kU32) {
      return Corrupt(path_, "general.alignment must be u32, got " + value->TypeName());
    }
    uint64_t alignment = value->u64;
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      return Corrupt(path_, "general.alignment " + std::to_string(alignment) +
                                " is not a power of two");
    }
    file_->alignment_ = static_cast<uint32_t>(alignment);
    return OkStatus();
  }

  Status ParseTensorInfo(uint64_t index) {
    GgufTensorInfo info;
    ASSIGN_OR_RETURN(std::string_view name, ReadString("tensor name #" + std::to_string(index)));
    info.name = std::string(name);
    const std::string where = "tensor '" + info.name + "'";
    if (file_->tensor_index_.count(info.name)) return Corrupt(path_, "duplicate " + where);
    ASSIGN_OR_RETURN(uint32_t num_dims, Read<uint32_t>(where + " dimension count"));
    if (num_dims == 0 || num_dims > kMaxDims) {
      return Corrupt(path_, where + " has " + std::to_string(num_dims) + " dimensions (1..4)");
    }
    for (uint32_t d = 0; d < num_dims; ++d) {
      ASSIGN_OR_RETURN(uint64_t dim, Read<uint64_t>(where + " dimension"));
      if (dim > uint64_t(INT64_MAX)) return Corrupt(path_, where + " has a negative dimension");
      info.dims.push_back(static_cast<int64_t>(dim));
    }
    ASSIGN_OR_RETURN(uint32_t raw_type, Read<uint32_t>(where + " type"));
    ASSIGN_OR_RETURN(info.offset_bytes, Read<uint64_t>(where + " offset"));
    RETURN_IF_ERROR(CheckTensorType(raw_type, where, &info));
    file_->tensor_index_.emplace(info.name, file_->tensors_.size());
    file_->tensors_.push_back(std::move(info));
    return OkStatus();
  }

  // Known type, rows made of whole blocks, byte size without overflow.
  Status CheckTensorType(uint32_t raw_type, const std::string& where, GgufTensorInfo* info) {
    std::optional<GgmlTypeInfo> type = GetGgmlTypeInfo(raw_type);
    if (!type) {
      return Corrupt(path_, where + " has unknown tensor type " + std::to_string(raw_type));
    }
    info->type = static_cast<GgmlType>(raw_type);
    if (info->dims[0] % type->block_elements != 0) {
      return Corrupt(path_, where + " of type " + type->name + " has row length " +
                                std::to_string(info->dims[0]) + ", not a multiple of its block size " +
                                std::to_string(type->block_elements));
    }
    uint64_t size = type->block_bytes;
    uint64_t blocks_per_row = static_cast<uint64_t>(info->dims[0] / type->block_elements);
    bool overflow = __builtin_mul_overflow(size, blocks_per_row, &size);
    for (size_t d = 1; d < info->dims.size(); ++d) {
      overflow |= __builtin_mul_overflow(size, static_cast<uint64_t>(info->dims[d]), &size);
    }
    if (overflow) return Corrupt(path_, where + " shape " + info->ShapeString() + " overflows");
    info->size_bytes = size;
    return OkStatus();
  }

  // The data section starts at the next multiple of the alignment; every tensor must be
  // aligned, inside the file, and not overlap another.
  Status PlaceTensors() {
    uint64_t alignment = file_->alignment_;
    uint64_t data_offset = (pos_ + alignment - 1) / alignment * alignment;
    file_->data_offset_bytes_ = data_offset;
    if (file_->tensors_.empty()) return OkStatus();
    if (data_offset > bytes_.size()) {
      return Corrupt(path_, "truncated: the data section would start at byte " +
                                std::to_string(data_offset) + " of a " +
                                std::to_string(bytes_.size()) + "-byte file");
    }
    uint64_t data_size = bytes_.size() - data_offset;
    for (GgufTensorInfo& info : file_->tensors_) {
      const std::string where = "tensor '" + info.name + "'";
      if (info.offset_bytes % alignment != 0) {
        return Corrupt(path_, where + " offset " + std::to_string(info.offset_bytes) +
                                  " is not a multiple of the alignment " + std::to_string(alignment));
      }
      if (info.offset_bytes > data_size || info.size_bytes > data_size - info.offset_bytes) {
        return Corrupt(path_, where + " data [" + std::to_string(info.offset_bytes) + ", +" +
                                  std::to_string(info.size_bytes) +
                                  ") runs past the end of the data section (" +
                                  std::to_string(data_size) + " bytes): file truncated or offset out of range");
      }
      info.bytes = bytes_.subspan(data_offset + info.offset_bytes, info.size_bytes);
    }
    return CheckOverlap();
  }

  Status CheckOverlap() {
    std::vector<const GgufTensorInfo*> order;
    for (const GgufTensorInfo& info : file_->tensors_) order.push_back(&info);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->offset_bytes < b->offset_bytes; });
    for (size_t i = 1; i < order.size(); ++i) {
      if (order[i - 1]->offset_bytes + order[i - 1]->size_bytes > order[i]->offset_bytes &&
          order[i]->size_bytes > 0) {
        return Corrupt(path_, "tensors '" + order[i - 1]->name + "' and '" + order[i]->name +
                                  "' overlap");
      }
    }
    return OkStatus();
  }

  std::span<const uint8_t> bytes_;
  GgufFile* file_;
  const std::string& path_;
  uint64_t pos_ = 0;
  uint64_t num_tensors_ = 0;
  uint64_t num_kv_ = 0;
};

StatusOr<std::unique_ptr<GgufFile>> GgufFile::Parse(std::span<const uint8_t> bytes,
                                                    const std::string& path) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->path_ = path;
  GgufParser parser(bytes, file.get());
  RETURN_IF_ERROR(parser.Run());
  return file;
}

StatusOr<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> mapped, MappedFile::Open(path));
  ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, Parse(mapped->bytes(), path));
  file->file_ = std::move(mapped);
  return file;
}

}  // namespace surge
