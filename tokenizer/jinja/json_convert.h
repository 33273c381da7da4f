// Conversion between Jinja values and JSON: context input (nlohmann) and the |tojson filter.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "tokenizer/jinja/value.h"

namespace surge::jinja {

// Options of |tojson, as transformers' override of it passes them to Python's json.dumps:
// ensure_ascii=False, no HTML escaping, key order as given unless sort_keys.
struct JsonOptions {
  bool pretty = false;       // indent given: one item per line
  std::string indent;        // the indent unit when pretty
  std::string item_separator = ", ";  // "," when pretty and no separators given
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};

// JSON text of `value`. Undefined becomes null; functions are an error.
StatusOr<std::string> ToJson(const Value& value, const JsonOptions& options, const Limits& limits);

// Converts a JSON document into a value. Use ordered_json to keep the key order of objects
// (it shows in |tojson output); plain json sorts keys. Fails past limits.max_nesting.
StatusOr<Value> FromJson(const nlohmann::ordered_json& json, const Limits& limits);
StatusOr<Value> FromJson(const nlohmann::json& json, const Limits& limits);

}  // namespace surge::jinja
