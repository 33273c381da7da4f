// libFuzzer target: YamlToJson (base/yaml/), the reader of `surge route --config
// route.yaml`. Small limits so that the bounds themselves are exercised: every input must
// fail with INVALID_ARGUMENT or give a tree within them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/check.h"
#include "base/yaml/yaml_to_json.h"
#include "fuzz/fuzz_yaml.h"

namespace {

// The deepest nesting of `tree` and its number of nodes, without recursion.
void Measure(const nlohmann::json& tree, int32_t* depth, int64_t* num_nodes) {
  std::vector<std::pair<const nlohmann::json*, int32_t>> stack{{&tree, 0}};
  while (!stack.empty()) {
    auto [node, level] = stack.back();
    stack.pop_back();
    ++*num_nodes;
    if (!node->is_structured()) continue;
    *depth = std::max(*depth, level + 1);
    for (const nlohmann::json& child : *node) stack.push_back({&child, level + 1});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const surge::YamlLimits limits = surge::fuzz::FuzzYamlLimits();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto tree = surge::YamlToJson(text, limits);
  if (!tree.ok()) {
    CHECK(tree.status().code() == surge::StatusCode::kInvalidArgument) << tree.status().ToString();
    return 0;
  }
  int32_t depth = 0;
  int64_t num_nodes = 0;
  Measure(*tree, &depth, &num_nodes);
  CHECK(depth <= limits.max_depth) << depth;
  CHECK(num_nodes <= limits.max_nodes) << num_nodes;  // keys are nodes too: the tree has fewer
  (void)tree->dump();  // every value is one JSON can hold
  return 0;
}
