#include "gguf/gguf_writer.h"

#include <cstdio>
#include <cstring>
#include <memory>

#include "base/check.h"
#include "gguf/gguf_file.h"

namespace surge {
namespace {

void Put(std::vector<uint8_t>* out, const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  out->insert(out->end(), p, p + size);
}
void PutU32(std::vector<uint8_t>* out, uint32_t v) { Put(out, &v, 4); }
void PutU64(std::vector<uint8_t>* out, uint64_t v) { Put(out, &v, 8); }
void PutString(std::vector<uint8_t>* out, const std::string& s) {
  PutU64(out, s.size());
  Put(out, s.data(), s.size());
}
uint64_t Align(uint64_t n, uint64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

}  // namespace

GgufWriter::GgufWriter(uint32_t alignment, uint32_t version)
    : alignment_(alignment), version_(version) {
  CHECK(alignment > 0 && (alignment & (alignment - 1)) == 0) << "alignment " << alignment;
  if (alignment != kGgufDefaultAlignment) SetU32("general.alignment", alignment);
}

void GgufWriter::SetEncoded(const std::string& key, std::vector<uint8_t> encoded) {
  for (auto& [k, v] : metadata_) {
    if (k == key) {
      v = std::move(encoded);
      return;
    }
  }
  metadata_.emplace_back(key, std::move(encoded));
}

void GgufWriter::SetScalar(const std::string& key, GgufValueType type, const void* v,
                           size_t size) {
  std::vector<uint8_t> encoded;
  PutU32(&encoded, static_cast<uint32_t>(type));
  Put(&encoded, v, size);
  SetEncoded(key, std::move(encoded));
}

void GgufWriter::SetBool(const std::string& key, bool v) {
  uint8_t byte = v ? 1 : 0;
  SetScalar(key, GgufValueType::kBool, &byte, 1);
}

void GgufWriter::SetString(const std::string& key, const std::string& v) {
  std::vector<uint8_t> encoded;
  PutU32(&encoded, static_cast<uint32_t>(GgufValueType::kString));
  PutString(&encoded, v);
  SetEncoded(key, std::move(encoded));
}

void GgufWriter::SetStringArray(const std::string& key, const std::vector<std::string>& v) {
  std::vector<uint8_t> encoded;
  PutU32(&encoded, static_cast<uint32_t>(GgufValueType::kArray));
  PutU32(&encoded, static_cast<uint32_t>(GgufValueType::kString));
  PutU64(&encoded, v.size());
  for (const std::string& s : v) PutString(&encoded, s);
  SetEncoded(key, std::move(encoded));
}

void GgufWriter::SetNestedStringArray(const std::string& key,
                                      const std::vector<std::vector<std::string>>& v) {
  std::vector<uint8_t> encoded;
  PutU32(&encoded, static_cast<uint32_t>(GgufValueType::kArray));
  PutU32(&encoded, static_cast<uint32_t>(GgufValueType::kArray));
  PutU64(&encoded, v.size());
  for (const auto& inner : v) {
    PutU32(&encoded, static_cast<uint32_t>(GgufValueType::kString));
    PutU64(&encoded, inner.size());
    for (const std::string& s : inner) PutString(&encoded, s);
  }
  SetEncoded(key, std::move(encoded));
}

void GgufWriter::SetArray(const std::string& key, GgufValueType element_type,
                          std::span<const uint8_t> packed, uint64_t count) {
  CHECK_EQ(packed.size(), count * GgufValueTypeSize(element_type)) << key;
  std::vector<uint8_t> encoded;
  PutU32(&encoded, static_cast<uint32_t>(GgufValueType::kArray));
  PutU32(&encoded, static_cast<uint32_t>(element_type));
  PutU64(&encoded, count);
  Put(&encoded, packed.data(), packed.size());
  SetEncoded(key, std::move(encoded));
}

void GgufWriter::SetF32Array(const std::string& key, std::span<const float> v) {
  SetArray(key, GgufValueType::kF32,
           std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4),
           v.size());
}

void GgufWriter::SetI32Array(const std::string& key, std::span<const int32_t> v) {
  SetArray(key, GgufValueType::kI32,
           std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4),
           v.size());
}

Status GgufWriter::AddTensor(const std::string& name, std::vector<int64_t> dims,
                             GgmlType type, std::vector<uint8_t> data) {
  std::optional<GgmlTypeInfo> info = GetGgmlTypeInfo(static_cast<uint32_t>(type));
  if (!info) return InvalidArgumentError("tensor '" + name + "': unknown type");
  if (dims.empty() || dims.size() > 4 || dims[0] % info->block_elements != 0) {
    return InvalidArgumentError("tensor '" + name + "': bad shape for type " + info->name);
  }
  uint64_t size = info->block_bytes * static_cast<uint64_t>(dims[0] / info->block_elements);
  for (size_t d = 1; d < dims.size(); ++d) size *= static_cast<uint64_t>(dims[d]);
  if (size != data.size()) {
    return InvalidArgumentError("tensor '" + name + "': " + std::to_string(data.size()) +
                                " bytes given, type " + info->name + " needs " +
                                std::to_string(size));
  }
  for (const Tensor& t : tensors_) {
    if (t.name == name) return InvalidArgumentError("duplicate tensor '" + name + "'");
  }
  tensors_.push_back({name, std::move(dims), type, std::move(data)});
  return OkStatus();
}

std::vector<uint8_t> GgufWriter::Header() const {
  std::vector<uint8_t> out;
  PutU32(&out, kGgufMagic);
  PutU32(&out, version_);
  PutU64(&out, tensors_.size());
  PutU64(&out, metadata_.size());
  for (const auto& [key, encoded] : metadata_) {
    PutString(&out, key);
    Put(&out, encoded.data(), encoded.size());
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    PutString(&out, t.name);
    PutU32(&out, static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) PutU64(&out, static_cast<uint64_t>(d));
    PutU32(&out, static_cast<uint32_t>(t.type));
    PutU64(&out, offset);
    offset = Align(offset + t.data.size(), alignment_);
  }
  out.resize(Align(out.size(), alignment_), 0);
  return out;
}

std::vector<uint8_t> GgufWriter::Serialize() const {
  std::vector<uint8_t> out = Header();
  for (const Tensor& t : tensors_) {
    Put(&out, t.data.data(), t.data.size());
    out.resize(Align(out.size(), alignment_), 0);
  }
  return out;
}

Status GgufWriter::WriteFile(const std::string& path) const {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!file) return InternalError(path + ": cannot open for writing: " + std::strerror(errno));
  std::vector<uint8_t> header = Header();
  bool ok = std::fwrite(header.data(), 1, header.size(), file.get()) == header.size();
  static const uint8_t kZeros[256] = {};
  for (const Tensor& t : tensors_) {
    if (!ok) break;
    ok = std::fwrite(t.data.data(), 1, t.data.size(), file.get()) == t.data.size();
    uint64_t pad = Align(t.data.size(), alignment_) - t.data.size();
    while (ok && pad > 0) {
      uint64_t n = pad < sizeof(kZeros) ? pad : sizeof(kZeros);
      ok = std::fwrite(kZeros, 1, n, file.get()) == n;
      pad -= n;
    }
  }
  if (!ok || std::fflush(file.get()) != 0) {
    return InternalError(path + ": write failed: " + std::strerror(errno));
  }
  return OkStatus();
}

}  // namespace surge
