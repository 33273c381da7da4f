#include "model/safetensors_writer.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace surge {

uint64_t SafetensorsTensorSpec::num_bytes() const {
  uint64_t n = TensorDTypeSize(dtype);
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

namespace {

std::string HeaderJson(const std::vector<SafetensorsTensorSpec>& specs,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const SafetensorsTensorSpec& spec : specs) {
    header[spec.name] = {{"dtype", TensorDTypeName(spec.dtype)},
                         {"shape", spec.shape},
                         {"data_offsets", {offset, offset + spec.num_bytes()}}};
    offset += spec.num_bytes();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

}  // namespace

Status WriteSafetensors(const std::string& path, const std::vector<SafetensorsTensorSpec>& specs,
                        const SafetensorsTensorBytes& bytes, const std::map<std::string, std::string>& metadata) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return NotFoundError("cannot create " + path);
  const std::string header = HeaderJson(specs, metadata);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i));
  out.write(reinterpret_cast<const char*>(length), 8);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (size_t i = 0; i < specs.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<uint8_t> data, bytes(i));
    if (data.size() != specs[i].num_bytes()) {
      return InternalError(path + ": tensor '" + specs[i].name + "' has " + std::to_string(data.size()) +
                           " bytes, expected " + std::to_string(specs[i].num_bytes()));
    }
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }
  out.close();
  if (!out) return DataLossError("failed writing " + path);
  return OkStatus();
}

}  // namespace surge
