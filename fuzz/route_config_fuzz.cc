// libFuzzer target: `surge route --config FILE` (router/route_config.cc compiled in alone,
// with router/tiers for its section): YamlToJson, RouteConfigFromJson, then
// ValidateRouteConfig. Errors are INVALID_ARGUMENT; nothing throws or aborts.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/check.h"
#include "base/yaml/yaml_to_json.h"
#include "router/route_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  surge::YamlLimits limits;
  limits.max_bytes = 64 << 10;
  limits.max_depth = 16;
  limits.max_nodes = 5'000;
  auto tree = surge::YamlToJson(std::string_view(reinterpret_cast<const char*>(data), size), limits);
  if (!tree.ok()) return 0;
  auto config = surge::router::RouteConfigFromJson(*tree);
  if (!config.ok()) {
    CHECK(config.status().code() == surge::StatusCode::kInvalidArgument) << config.status().ToString();
    return 0;
  }
  (void)surge::router::ValidateRouteConfig(*config);
  return 0;
}
