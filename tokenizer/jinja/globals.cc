// Global functions: range, namespace, dict, raise_exception, strftime_now.
#include <ctime>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/builtins_internal.h"

namespace surge::jinja {
namespace {

using internal::ArgError;

StatusOr<Value> Range(const CallArgs& args, const Limits& limits) {
  if (args.positional.empty() || args.positional.size() > 3 || !args.keyword.empty()) {
    return ArgError("range", "expected 1 to 3 integer arguments");
  }
  int64_t bounds[3] = {0, 0, 1};
  for (size_t i = 0; i < args.positional.size(); ++i) {
    const Value& v = args.positional[i];
    if (!v.is_int() && !v.is_bool()) {
      return ArgError("range", "'" + std::string(v.TypeName()) + "' object cannot be interpreted as an integer");
    }
    bounds[args.positional.size() == 1 ? 1 : i] = v.is_int() ? v.AsInt() : v.AsBool();
  }
  auto [start, stop, step] = bounds;
  if (step == 0) return ArgError("range", "arg 3 must not be zero");
  // Count first (in floating point to dodge overflow), then refuse huge ranges.
  double span = (static_cast<double>(stop) - static_cast<double>(start)) / static_cast<double>(step);
  if (span > static_cast<double>(limits.max_items)) {
    return ResourceExhaustedError("range() of more than " + std::to_string(limits.max_items) + " items");
  }
  Array items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) items.push_back(Value::Int(i));
  return Value::MakeArray(std::move(items));
}

StatusOr<Value> MakeNamespace(const CallArgs& args) {
  if (args.positional.size() > 1) return ArgError("namespace", "expected at most 1 positional argument");
  Object object;
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (!source.is_object()) return ArgError("namespace", "positional argument must be a dict");
    for (const auto& [key, value] : source.AsObject().entries()) object.Set(key, value);
  }
  for (const auto& [key, value] : args.keyword) object.Set(key, value);
  for (const auto& entry : object.entries()) {
    if (internal::ContainsReference(entry.second)) {
      return ArgError("namespace", "a namespace cannot hold a namespace or a function");
    }
  }
  return Value::MakeNamespace(std::move(object));
}

StatusOr<Value> MakeDict(const CallArgs& args) {
  if (!args.positional.empty()) return ArgError("dict", "only keyword arguments are supported");
  Object object;
  for (const auto& [key, value] : args.keyword) object.Set(key, value);
  return Value::MakeObject(std::move(object));
}

StatusOr<Value> StrftimeNow(const CallArgs& args) {
  if (args.positional.size() != 1 || !args.positional[0].is_string()) {
    return ArgError("strftime_now", "expected a format string");
  }
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string buffer(256, '\0');
  size_t n = std::strftime(buffer.data(), buffer.size(), args.positional[0].AsString().c_str(), &local);
  if (n == 0 && !args.positional[0].AsString().empty()) {
    return ArgError("strftime_now", "format produced no output or is too long");
  }
  buffer.resize(n);
  return Value::String(std::move(buffer));
}

}  // namespace

Object MakeGlobals(const Limits& limits) {
  Object globals;
  globals.Set("range", Value::MakeFunction("range", [limits](const CallArgs& args) { return Range(args, limits); }));
  globals.Set("namespace", Value::MakeFunction("namespace", MakeNamespace));
  globals.Set("dict", Value::MakeFunction("dict", MakeDict));
  globals.Set("strftime_now", Value::MakeFunction("strftime_now", StrftimeNow));
  globals.Set("raise_exception", Value::MakeFunction("raise_exception", [](const CallArgs& args) -> StatusOr<Value> {
    std::string message = "raise_exception() called";
    if (!args.positional.empty() && args.positional[0].is_string()) message = args.positional[0].AsString();
    return InvalidArgumentError(message);
  }));
  return globals;
}

}  // namespace surge::jinja
