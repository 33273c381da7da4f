// The YAML limits every YAML-reading fuzz target parses its input with: small enough that
// libFuzzer explores structure rather than size (64 KiB, depth 16, 5,000 nodes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/yaml/yaml_to_json.h"

namespace surge::fuzz {

inline YamlLimits FuzzYamlLimits() {
  YamlLimits limits;
  limits.max_bytes = 64 << 10;
  limits.max_depth = 16;
  limits.max_nodes = 5'000;
  return limits;
}

inline auto ParseFuzzYaml(const uint8_t* data, size_t size) {
  return YamlToJson(std::string_view(reinterpret_cast<const char*>(data), size), FuzzYamlLimits());
}

}  // namespace surge::fuzz
