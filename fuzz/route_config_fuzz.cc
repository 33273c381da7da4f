// libFuzzer target: `surge route --config FILE` (router/route_config.cc compiled in alone,
// with router/tiers for its section): YamlToJson, RouteConfigFromJson, then
// ValidateRouteConfig. Errors are INVALID_ARGUMENT; nothing throws or aborts.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/check.h"
#include "fuzz/fuzz_yaml.h"
#include "router/route_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tree = surge::fuzz::ParseFuzzYaml(data, size);
  if (!tree.ok()) return 0;
  auto config = surge::router::RouteConfigFromJson(*tree);
  if (!config.ok()) {
    CHECK(config.status().code() == surge::StatusCode::kInvalidArgument) << config.status().ToString();
    return 0;
  }
  (void)surge::router::ValidateRouteConfig(*config);
  return 0;
}
