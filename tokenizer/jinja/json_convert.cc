#include "tokenizer/jinja/json_convert.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tokenizer/jinja/text.h"

namespace surge::jinja {
namespace {

void AppendJsonString(std::string_view s, bool ensure_ascii, std::string* out) {
  out->push_back('"');
  for (size_t pos = 0; pos < s.size();) {
    size_t start = pos;
    char32_t cp = text::NextCodePoint(s, &pos);
    char buf[16];
    switch (cp) {
      case '"': out->append("\\\""); continue;
      case '\\': out->append("\\\\"); continue;
      case '\n': out->append("\\n"); continue;
      case '\r': out->append("\\r"); continue;
      case '\t': out->append("\\t"); continue;
      case '\b': out->append("\\b"); continue;
      case '\f': out->append("\\f"); continue;
      default: break;
    }
    if (cp < 0x20 || (ensure_ascii && cp >= 0x7F)) {
      if (cp >= 0x10000) {  // a surrogate pair, as Python writes it
        char32_t v = cp - 0x10000;
        std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                      static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
      } else {
        std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
      }
      out->append(buf);
    } else {
      out->append(s.substr(start, pos - start));  // keeps malformed bytes untouched
    }
  }
  out->push_back('"');
}

std::string JsonNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-Infinity" : "Infinity";
  return text::FormatFloat(value);
}

class JsonWriter {
 public:
  JsonWriter(const JsonOptions& options, const Limits& limits) : options_(options), limits_(limits) {}

  Status Write(const Value& value, int depth, std::string* out) {
    if (out->size() > limits_.max_string_bytes) {
      return ResourceExhaustedError("tojson output longer than " +
                                    std::to_string(limits_.max_string_bytes) + " bytes");
    }
    switch (value.kind()) {
      case Value::Kind::kUndefined:
      case Value::Kind::kNone: out->append("null"); return OkStatus();
      case Value::Kind::kBool: out->append(value.AsBool() ? "true" : "false"); return OkStatus();
      case Value::Kind::kInt: out->append(std::to_string(value.AsInt())); return OkStatus();
      case Value::Kind::kFloat: out->append(JsonNumber(value.AsFloat())); return OkStatus();
      case Value::Kind::kString:
        AppendJsonString(value.AsString(), options_.ensure_ascii, out);
        return OkStatus();
      case Value::Kind::kFunction:
        return InvalidArgumentError("Object of type function is not JSON serializable");
      default: break;
    }
    if (depth > limits_.max_nesting) return InvalidArgumentError("value nested too deeply for tojson");
    return value.is_array() ? WriteArray(value.AsArray(), depth, out)
                            : WriteObject(value.AsObject(), depth, out);
  }

 private:
  void Newline(int depth, std::string* out) {
    if (!options_.pretty) return;
    out->push_back('\n');
    for (int i = 0; i < depth; ++i) out->append(options_.indent);
  }

  Status WriteArray(const Array& items, int depth, std::string* out) {
    out->push_back('[');
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out->append(options_.item_separator);
      Newline(depth + 1, out);
      RETURN_IF_ERROR(Write(items[i], depth + 1, out));
    }
    if (!items.empty()) Newline(depth, out);
    out->push_back(']');
    return OkStatus();
  }

  Status WriteObject(const Object& object, int depth, std::string* out) {
    std::vector<const std::pair<std::string, Value>*> entries;
    for (const auto& entry : object.entries()) entries.push_back(&entry);
    if (options_.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto* a, const auto* b) { return a->first < b->first; });
    }
    out->push_back('{');
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) out->append(options_.item_separator);
      Newline(depth + 1, out);
      AppendJsonString(entries[i]->first, options_.ensure_ascii, out);
      out->append(options_.key_separator);
      RETURN_IF_ERROR(Write(entries[i]->second, depth + 1, out));
    }
    if (!entries.empty()) Newline(depth, out);
    out->push_back('}');
    return OkStatus();
  }

  const JsonOptions& options_;
  const Limits& limits_;
};

template <typename Json>
StatusOr<Value> Convert(const Json& json, const Limits& limits, int depth) {
  if (depth > limits.max_nesting) {
    return InvalidArgumentError("JSON input nested deeper than " + std::to_string(limits.max_nesting));
  }
  switch (json.type()) {
    case nlohmann::json::value_t::null: return Value::None();
    case nlohmann::json::value_t::boolean: return Value::Bool(json.template get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::Int(json.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      uint64_t u = json.template get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value::Float(static_cast<double>(u));
      return Value::Int(static_cast<int64_t>(u));
    }
    case nlohmann::json::value_t::number_float: return Value::Float(json.template get<double>());
    case nlohmann::json::value_t::string: return Value::String(json.template get<std::string>());
    case nlohmann::json::value_t::array: {
      Array items;
      items.reserve(json.size());
      for (const auto& item : json) {
        ASSIGN_OR_RETURN(Value v, Convert(item, limits, depth + 1));
        items.push_back(std::move(v));
      }
      return Value::MakeArray(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Object object;
      for (auto it = json.begin(); it != json.end(); ++it) {
        ASSIGN_OR_RETURN(Value v, Convert(it.value(), limits, depth + 1));
        object.Set(it.key(), std::move(v));
      }
      return Value::MakeObject(std::move(object));
    }
    default: return InvalidArgumentError("unsupported JSON value (binary or discarded)");
  }
}

}  // namespace

StatusOr<std::string> ToJson(const Value& value, const JsonOptions& options, const Limits& limits) {
  std::string out;
  JsonWriter writer(options, limits);
  RETURN_IF_ERROR(writer.Write(value, 0, &out));
  if (out.size() > limits.max_string_bytes) {
    return ResourceExhaustedError("tojson output longer than " + std::to_string(limits.max_string_bytes) +
                                  " bytes");
  }
  return out;
}

StatusOr<Value> FromJson(const nlohmann::ordered_json& json, const Limits& limits) {
  return Convert(json, limits, 0);
}

StatusOr<Value> FromJson(const nlohmann::json& json, const Limits& limits) {
  return Convert(json, limits, 0);
}

}  // namespace surge::jinja
