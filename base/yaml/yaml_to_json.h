// YamlToJson: a YAML file (`surge route --config route.yaml`, alarm rules, a kubeconfig) as
// the JSON tree its JSON parser reads, so both spellings of a file parse identically.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace surge {

// Bounds checked before and while the tree is built (DESIGN.md: inputs bounded before
// anything recursive touches them). Aliases count as the nodes they expand to, so a
// billion-laughs input fails at max_nodes instead of filling memory.
struct YamlLimits {
  size_t max_bytes = 1 << 20;
  int32_t max_depth = 64;       // nested mappings and sequences
  int64_t max_nodes = 100'000;  // scalars + collections, aliases expanded
};

// One YAML document (YAML 1.2, through libyaml) as JSON: mappings become objects (keys are
// the key scalars' text; a duplicate key is refused by name; a non-scalar key is refused),
// sequences arrays. Plain scalars are typed as the YAML 1.2 core schema types them: null
// (`null`, `Null`, `NULL`, `~`, empty), booleans (`true`/`True`/`TRUE`, `false`/...), integers
// (decimal, `0o` octal, `0x` hex; out of 64-bit range refused), floats (`1.5`, `-2e3`, `.5`;
// `.inf`/`.nan` refused: JSON has none); any other plain scalar, and every quoted or block
// scalar, is a string. Tags: only `!!str` (forces a string); others are refused. Anchors
// and aliases are resolved (a copy; within the limits). An empty stream is null; a second
// document is refused. Errors are INVALID_ARGUMENT "line L, column C: ..." (1-based).
StatusOr<nlohmann::json> YamlToJson(std::string_view text, const YamlLimits& limits = {});

// A config file as JSON: *.json through nlohmann (depth-checked first, duplicate keys
// refused by name as in YAML), anything else
// (*.yaml, *.yml) through YamlToJson. Errors name the path. NOT_FOUND when unreadable.
StatusOr<nlohmann::json> LoadConfigFile(const std::string& path, const YamlLimits& limits = {});

}  // namespace surge
