// Built-in filters (`x | trim`), tests (`x is defined`), methods (`s.strip()`,
// `d.items()`) and global functions (range, namespace, raise_exception, strftime_now).
#pragma once

#include <string_view>

#include "base/status.h"
#include "tokenizer/jinja/value.h"

namespace surge::jinja {

using FilterFn = StatusOr<Value> (*)(const Value& operand, const CallArgs& args, const Limits& limits);
using TestFn = StatusOr<bool> (*)(const Value& operand, const CallArgs& args);

// Null when there is no filter or test of that name (a parse error, as in Jinja).
FilterFn FindFilter(std::string_view name);
TestFn FindTest(std::string_view name);
// Whether the test takes an argument, so `x is divisibleby 3` may omit the parentheses.
bool TestTakesArgument(std::string_view name);

// Calls method `name` of a string, list or dict: "a,b".split(","), d.get("k", 0).
// Returns undefined in *found=false when the type has no such method.
StatusOr<Value> CallMethod(const Value& self, std::string_view name, const CallArgs& args,
                           const Limits& limits, bool* found);
// Whether `self.name` is a method of its type (for attribute access without a call).
bool HasMethod(const Value& self, std::string_view name);

// obj.name: a dict key, else a method of the value's type, else undefined.
Value GetAttr(const Value& object, std::string_view name, const Limits& limits);
// obj[key]: dict key, list or string index (negative from the end), else as GetAttr for a
// string key, else undefined. Never an error: missing things are undefined, as in Jinja.
Value GetItem(const Value& object, const Value& key, const Limits& limits);

// The global functions every template sees.
Object MakeGlobals(const Limits& limits);

}  // namespace surge::jinja
