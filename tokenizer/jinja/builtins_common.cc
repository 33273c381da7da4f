// Attribute and item access plus the argument helpers used by all built-ins.
#include <charconv>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/builtins_internal.h"
#include "tokenizer/jinja/text.h"

namespace surge::jinja {
namespace internal {

Status ArgError(std::string_view function, const std::string& message) {
  return InvalidArgumentError(std::string(function) + ": " + message);
}

Value ArgOr(const CallArgs& args, size_t index, std::string_view name, Value fallback) {
  const Value* v = args.Get(index, name);
  return v == nullptr ? std::move(fallback) : *v;
}

StatusOr<bool> BoolArg(const CallArgs& args, size_t index, std::string_view name, bool fallback,
                       std::string_view function) {
  const Value* v = args.Get(index, name);
  if (v == nullptr || v->is_undefined()) return fallback;
  if (v->is_bool()) return v->AsBool();
  if (v->is_int()) return v->AsInt() != 0;
  return ArgError(function, "'" + std::string(name) + "' must be a boolean, got " + std::string(v->TypeName()));
}

StatusOr<int64_t> IntArg(const CallArgs& args, size_t index, std::string_view name, int64_t fallback,
                         std::string_view function) {
  const Value* v = args.Get(index, name);
  if (v == nullptr || v->is_undefined() || v->is_none()) return fallback;
  if (v->is_int()) return v->AsInt();
  if (v->is_bool()) return static_cast<int64_t>(v->AsBool());
  return ArgError(function, "'" + std::string(name) + "' must be an integer, got " + std::string(v->TypeName()));
}

StatusOr<std::optional<std::string>> StringArg(const CallArgs& args, size_t index, std::string_view name,
                                               std::string_view function) {
  const Value* v = args.Get(index, name);
  if (v == nullptr || v->is_undefined() || v->is_none()) return std::optional<std::string>();
  if (!v->is_string()) {
    return ArgError(function, "'" + std::string(name) + "' must be a string, got " + std::string(v->TypeName()));
  }
  return std::optional<std::string>(v->AsString());
}

StatusOr<Array> Iterate(const Value& value, std::string_view context) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return Array();
    case Value::Kind::kArray: return value.AsArray();
    case Value::Kind::kObject: {
      Array keys;
      keys.reserve(value.AsObject().size());
      for (const auto& entry : value.AsObject().entries()) keys.push_back(Value::String(entry.first));
      return keys;
    }
    case Value::Kind::kString: {
      Array chars;
      const std::string& s = value.AsString();
      std::vector<size_t> offsets = text::CodePointOffsets(s);
      for (size_t i = 0; i + 1 < offsets.size(); ++i) {
        chars.push_back(Value::String(s.substr(offsets[i], offsets[i + 1] - offsets[i])));
      }
      return chars;
    }
    default:
      return InvalidArgumentError(std::string(context) + ": '" + std::string(value.TypeName()) +
                                  "' object is not iterable");
  }
}

Value GetAttributePath(const Value& value, std::string_view path, const Limits& limits) {
  Value current = value;
  while (true) {
    size_t dot = path.find('.');
    std::string_view part = path.substr(0, dot);
    int64_t index = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), index);
    bool numeric = !part.empty() && ec == std::errc() && ptr == part.data() + part.size();
    current = GetItem(current, numeric ? Value::Int(index) : Value::String(std::string(part)), limits);
    if (dot == std::string_view::npos) return current;
    path.remove_prefix(dot + 1);
  }
}

StatusOr<bool> Contains(const Value& haystack, const Value& needle) {
  switch (haystack.kind()) {
    case Value::Kind::kUndefined: return false;
    case Value::Kind::kString:
      if (!needle.is_string()) {
        return InvalidArgumentError("'in <string>' requires string as left operand, not " +
                                    std::string(needle.TypeName()));
      }
      return haystack.AsString().find(needle.AsString()) != std::string::npos;
    case Value::Kind::kArray:
      for (const Value& item : haystack.AsArray()) {
        if (Equals(item, needle)) return true;
      }
      return false;
    case Value::Kind::kObject:
      return needle.is_string() && haystack.AsObject().Find(needle.AsString()) != nullptr;
    default:
      return InvalidArgumentError("argument of type '" + std::string(haystack.TypeName()) +
                                  "' is not iterable");
  }
}

Status CheckStringSize(size_t bytes, const Limits& limits) {
  if (bytes > limits.max_string_bytes) {
    return ResourceExhaustedError("string of " + std::to_string(bytes) + " bytes exceeds the limit of " +
                                  std::to_string(limits.max_string_bytes));
  }
  return OkStatus();
}

bool ContainsReference(const Value& value, int depth) {
  if (value.is_namespace() || value.is_function()) return true;
  if (depth > 1000) return true;  // unreachable for bounded values; refuse rather than recurse
  if (value.is_array()) {
    for (const Value& item : value.AsArray()) {
      if (ContainsReference(item, depth + 1)) return true;
    }
  } else if (value.is_object()) {
    for (const auto& entry : value.AsObject().entries()) {
      if (ContainsReference(entry.second, depth + 1)) return true;
    }
  }
  return false;
}

}  // namespace internal

namespace {

Value BoundMethod(const Value& self, std::string_view name, const Limits& limits) {
  std::string method(name);
  return Value::MakeFunction(method, [self, method, limits](const CallArgs& args) -> StatusOr<Value> {
    bool found = false;
    return CallMethod(self, method, args, limits, &found);
  });
}

Value IndexSequence(const Value& object, int64_t index) {
  if (object.is_array()) {
    const Array& items = object.AsArray();
    int64_t size = static_cast<int64_t>(items.size());
    if (index < 0) index += size;
    if (index < 0 || index >= size) return Value();
    return items[index];
  }
  const std::string& s = object.AsString();
  std::vector<size_t> offsets = text::CodePointOffsets(s);
  int64_t size = static_cast<int64_t>(offsets.size()) - 1;
  if (index < 0) index += size;
  if (index < 0 || index >= size) return Value();
  return Value::String(s.substr(offsets[index], offsets[index + 1] - offsets[index]));
}

}  // namespace

Value GetAttr(const Value& object, std::string_view name, const Limits& limits) {
  // As in Python, obj.items is the dict method even when the dict has an "items" key.
  if (object.is_object() && HasMethod(object, name)) return BoundMethod(object, name, limits);
  if (object.is_mapping_like()) {
    const Value* v = object.AsObject().Find(name);
    return v == nullptr ? Value() : *v;
  }
  if (HasMethod(object, name)) return BoundMethod(object, name, limits);
  return Value();
}

Value GetItem(const Value& object, const Value& key, const Limits& limits) {
  if (object.is_mapping_like()) {
    if (!key.is_string()) return Value();
    const Value* v = object.AsObject().Find(key.AsString());
    if (v != nullptr) return *v;
    return object.is_object() && HasMethod(object, key.AsString())
               ? BoundMethod(object, key.AsString(), limits)
               : Value();
  }
  if ((object.is_array() || object.is_string()) && (key.is_int() || key.is_bool())) {
    return IndexSequence(object, key.is_int() ? key.AsInt() : key.AsBool());
  }
  if (key.is_string()) return GetAttr(object, key.AsString(), limits);
  return Value();
}

}  // namespace surge::jinja
