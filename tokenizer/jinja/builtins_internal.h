// Helpers shared by the filter, test and method implementations. Internal to the library.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "tokenizer/jinja/value.h"

namespace surge::jinja::internal {

Status ArgError(std::string_view function, const std::string& message);

// The argument at `index` (positional) or `name` (keyword), or `fallback` when absent.
Value ArgOr(const CallArgs& args, size_t index, std::string_view name, Value fallback);
StatusOr<bool> BoolArg(const CallArgs& args, size_t index, std::string_view name, bool fallback,
                       std::string_view function);
StatusOr<int64_t> IntArg(const CallArgs& args, size_t index, std::string_view name, int64_t fallback,
                         std::string_view function);
// Absent or none gives nullopt.
StatusOr<std::optional<std::string>> StringArg(const CallArgs& args, size_t index, std::string_view name,
                                               std::string_view function);

// Items of an iterable as Python iterates them: list elements, string characters, dict
// keys; undefined iterates as empty. Other types are an error.
StatusOr<Array> Iterate(const Value& value, std::string_view context);

// Follows "a.b.0" through dicts and lists, as Jinja's attribute= arguments do.
Value GetAttributePath(const Value& value, std::string_view path, const Limits& limits);

// Python `needle in haystack`.
StatusOr<bool> Contains(const Value& haystack, const Value& needle);

// Python-style string repetition and checks against limits.max_string_bytes.
Status CheckStringSize(size_t bytes, const Limits& limits);

// Python's `format % args` as Jinja's |format filter uses it: %s %r %d %i %f %e %g %x %o %c
// %% with flags, width and precision; %(name)s takes keyword arguments.
StatusOr<std::string> PercentFormat(const std::string& format, const CallArgs& args, const Limits& limits);

// Whether `value` holds a namespace or a function. Namespaces may not store those: it could
// build reference cycles, which shared ownership would leak.
bool ContainsReference(const Value& value, int depth = 0);

}  // namespace surge::jinja::internal
