// Precompiled header for the SURGE_FUZZ build only (fuzz/CMakeLists.txt): nlohmann/json
// and its common instantiations, parsed and instantiated once per target instead of once
// per file, which roughly halves the sanitizer build's time (fuzz/README.md's budget).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

// Uses what nearly every file here uses, so -fpch-instantiate-templates compiles it into
// the PCH. Never called.
inline void SurgeFuzzPchInstantiate() {
  nlohmann::ordered_json ordered = nlohmann::ordered_json::parse("{}", nullptr, false);
  (void)ordered.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  (void)ordered["key"];
  (void)ordered.contains("key");
  (void)ordered.find("key");
  (void)ordered.value("key", std::string());
  nlohmann::json plain = nlohmann::json::parse("{}", nullptr, false);
  (void)plain.dump();
  (void)plain["key"];
}
