// Filters over sequences and dicts: length, first, sort, map, select, join, items, ...
#include <algorithm>
#include <unordered_set>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/builtins_internal.h"
#include "tokenizer/jinja/filters_internal.h"
#include "tokenizer/jinja/text.h"

namespace surge::jinja::internal {
namespace {

// The sort key of `item`: an attribute path, lower-cased for case-insensitive string order.
Value SortKey(const Value& item, const std::optional<std::string>& attribute, bool case_sensitive,
              const Limits& limits) {
  Value key = attribute ? GetAttributePath(item, *attribute, limits) : item;
  if (!case_sensitive && key.is_string()) return Value::String(text::Lower(key.AsString()));
  return key;
}

// Stable sort by keys; the first incomparable pair is an error, as in Python.
StatusOr<Array> SortByKeys(const Array& items, const Array& keys, bool reverse) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Status error;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (!error.ok()) return false;
    StatusOr<int> c = reverse ? Compare(keys[b], keys[a]) : Compare(keys[a], keys[b]);
    if (!c.ok()) {
      error = c.status();
      return false;
    }
    return *c < 0;
  });
  RETURN_IF_ERROR(error);
  Array sorted;
  sorted.reserve(items.size());
  for (size_t i : order) sorted.push_back(items[i]);
  return sorted;
}

StatusOr<Value> SelectItems(const Value& v, const CallArgs& args, bool want, bool by_attribute,
                            const Limits& limits) {
  const char* name = by_attribute ? (want ? "selectattr" : "rejectattr") : (want ? "select" : "reject");
  ASSIGN_OR_RETURN(Array items, Iterate(v, name));
  size_t first_test_arg = by_attribute ? 1 : 0;
  std::optional<std::string> attribute;
  if (by_attribute) {
    if (args.positional.empty() || !args.positional[0].is_string()) {
      return ArgError(name, "needs an attribute name");
    }
    attribute = args.positional[0].AsString();
  }
  TestFn test = nullptr;
  CallArgs test_args;
  if (args.positional.size() > first_test_arg) {
    const Value& test_name = args.positional[first_test_arg];
    if (!test_name.is_string() || (test = FindTest(test_name.AsString())) == nullptr) {
      return ArgError(name, "no test named " + (test_name.is_string() ? "'" + test_name.AsString() + "'" : "given"));
    }
    test_args.positional.assign(args.positional.begin() + first_test_arg + 1, args.positional.end());
    test_args.keyword = args.keyword;
  }
  Array kept;
  for (const Value& item : items) {
    Value subject = attribute ? GetAttributePath(item, *attribute, limits) : item;
    bool result = subject.Truthy();
    if (test != nullptr) {
      ASSIGN_OR_RETURN(result, test(subject, test_args));
    }
    if (result == want) kept.push_back(item);
  }
  return Value::MakeArray(std::move(kept));
}

StatusOr<Value> MinMax(const Value& v, const CallArgs& args, const Limits& limits, bool max) {
  ASSIGN_OR_RETURN(Array items, Iterate(v, max ? "max" : "min"));
  ASSIGN_OR_RETURN(bool case_sensitive, BoolArg(args, 0, "case_sensitive", false, max ? "max" : "min"));
  ASSIGN_OR_RETURN(std::optional<std::string> attribute, StringArg(args, 1, "attribute", max ? "max" : "min"));
  if (items.empty()) return Value();
  size_t best = 0;
  Value best_key = SortKey(items[0], attribute, case_sensitive, limits);
  for (size_t i = 1; i < items.size(); ++i) {
    Value key = SortKey(items[i], attribute, case_sensitive, limits);
    ASSIGN_OR_RETURN(int c, Compare(key, best_key));
    if (max ? c > 0 : c < 0) {
      best = i;
      best_key = std::move(key);
    }
  }
  return items[best];
}

StatusOr<const Object*> RequireDict(const Value& v, std::string_view filter) {
  if (!v.is_object()) return ArgError(filter, "expected a dict, got " + std::string(v.TypeName()));
  return &v.AsObject();
}

}  // namespace

StatusOr<Value> FilterLength(const Value& v, const CallArgs& args, const Limits& limits) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return Value::Int(0);
    case Value::Kind::kString: return Value::Int(static_cast<int64_t>(text::CodePointCount(v.AsString())));
    case Value::Kind::kArray: return Value::Int(static_cast<int64_t>(v.AsArray().size()));
    case Value::Kind::kObject: return Value::Int(static_cast<int64_t>(v.AsObject().size()));
    default: return ArgError("length", "object of type '" + std::string(v.TypeName()) + "' has no len()");
  }
}

StatusOr<Value> FilterFirst(const Value& v, const CallArgs& args, const Limits& limits) {
  if (v.is_array()) return v.AsArray().empty() ? Value() : v.AsArray().front();
  ASSIGN_OR_RETURN(Array items, Iterate(v, "first"));
  return items.empty() ? Value() : items.front();
}

StatusOr<Value> FilterLast(const Value& v, const CallArgs& args, const Limits& limits) {
  if (v.is_array()) return v.AsArray().empty() ? Value() : v.AsArray().back();
  ASSIGN_OR_RETURN(Array items, Iterate(v, "last"));
  return items.empty() ? Value() : items.back();
}

StatusOr<Value> FilterList(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(Array items, Iterate(v, "list"));
  return Value::MakeArray(std::move(items));
}

StatusOr<Value> FilterReverse(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(Array items, Iterate(v, "reverse"));
  std::reverse(items.begin(), items.end());
  if (!v.is_string()) return Value::MakeArray(std::move(items));
  std::string out;
  out.reserve(v.AsString().size());
  for (const Value& c : items) out += c.AsString();
  return Value::String(std::move(out));
}

StatusOr<Value> FilterSort(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(Array items, Iterate(v, "sort"));
  ASSIGN_OR_RETURN(bool reverse, BoolArg(args, 0, "reverse", false, "sort"));
  ASSIGN_OR_RETURN(bool case_sensitive, BoolArg(args, 1, "case_sensitive", false, "sort"));
  ASSIGN_OR_RETURN(std::optional<std::string> attribute, StringArg(args, 2, "attribute", "sort"));
  Array keys;
  keys.reserve(items.size());
  for (const Value& item : items) keys.push_back(SortKey(item, attribute, case_sensitive, limits));
  ASSIGN_OR_RETURN(Array sorted, SortByKeys(items, keys, reverse));
  return Value::MakeArray(std::move(sorted));
}

StatusOr<Value> FilterUnique(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(Array items, Iterate(v, "unique"));
  ASSIGN_OR_RETURN(bool case_sensitive, BoolArg(args, 0, "case_sensitive", false, "unique"));
  ASSIGN_OR_RETURN(std::optional<std::string> attribute, StringArg(args, 1, "attribute", "unique"));
  std::unordered_set<std::string> seen;  // keyed by repr(), so "1" and 1 stay distinct
  Array kept;
  for (const Value& item : items) {
    std::string key;
    RETURN_IF_ERROR(AppendRepr(SortKey(item, attribute, case_sensitive, limits), limits, &key));
    if (seen.insert(std::move(key)).second) kept.push_back(item);
  }
  return Value::MakeArray(std::move(kept));
}

StatusOr<Value> FilterJoin(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(Array items, Iterate(v, "join"));
  ASSIGN_OR_RETURN(std::optional<std::string> separator, StringArg(args, 0, "d", "join"));
  ASSIGN_OR_RETURN(std::optional<std::string> attribute, StringArg(args, 1, "attribute", "join"));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0 && separator) out += *separator;
    RETURN_IF_ERROR(AppendStr(attribute ? GetAttributePath(items[i], *attribute, limits) : items[i], limits, &out));
    RETURN_IF_ERROR(CheckStringSize(out.size(), limits));
  }
  return Value::String(std::move(out));
}

// map(attribute="a.b", default=x) or map("filter", args...).
StatusOr<Value> FilterMap(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(Array items, Iterate(v, "map"));
  Array out;
  out.reserve(items.size());
  if (const Value* attribute = args.Keyword("attribute")) {
    if (!attribute->is_string()) return ArgError("map", "attribute must be a string");
    const Value* fallback = args.Keyword("default");
    for (const Value& item : items) {
      Value mapped = GetAttributePath(item, attribute->AsString(), limits);
      out.push_back(mapped.is_undefined() && fallback != nullptr ? *fallback : mapped);
    }
    return Value::MakeArray(std::move(out));
  }
  if (args.positional.empty() || !args.positional[0].is_string()) {
    return ArgError("map", "needs a filter name or attribute=");
  }
  FilterFn filter = FindFilter(args.positional[0].AsString());
  if (filter == nullptr) return ArgError("map", "no filter named '" + args.positional[0].AsString() + "'");
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const Value& item : items) {
    ASSIGN_OR_RETURN(Value mapped, filter(item, rest, limits));
    out.push_back(std::move(mapped));
  }
  return Value::MakeArray(std::move(out));
}

StatusOr<Value> FilterSelect(const Value& v, const CallArgs& args, const Limits& limits) {
  return SelectItems(v, args, /*want=*/true, /*by_attribute=*/false, limits);
}
StatusOr<Value> FilterReject(const Value& v, const CallArgs& args, const Limits& limits) {
  return SelectItems(v, args, /*want=*/false, /*by_attribute=*/false, limits);
}
StatusOr<Value> FilterSelectAttr(const Value& v, const CallArgs& args, const Limits& limits) {
  return SelectItems(v, args, /*want=*/true, /*by_attribute=*/true, limits);
}
StatusOr<Value> FilterRejectAttr(const Value& v, const CallArgs& args, const Limits& limits) {
  return SelectItems(v, args, /*want=*/false, /*by_attribute=*/true, limits);
}

StatusOr<Value> FilterItems(const Value& v, const CallArgs& args, const Limits& limits) {
  if (v.is_undefined()) return Value::MakeArray({});
  ASSIGN_OR_RETURN(const Object* object, RequireDict(v, "items"));
  Array out;
  for (const auto& [key, value] : object->entries()) {
    out.push_back(Value::MakeArray({Value::String(key), value}, /*is_tuple=*/true));
  }
  return Value::MakeArray(std::move(out));
}

StatusOr<Value> FilterKeys(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(const Object* object, RequireDict(v, "keys"));
  Array out;
  for (const auto& entry : object->entries()) out.push_back(Value::String(entry.first));
  return Value::MakeArray(std::move(out));
}

StatusOr<Value> FilterValues(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(const Object* object, RequireDict(v, "values"));
  Array out;
  for (const auto& entry : object->entries()) out.push_back(entry.second);
  return Value::MakeArray(std::move(out));
}

StatusOr<Value> FilterDictSort(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(const Object* object, RequireDict(v, "dictsort"));
  ASSIGN_OR_RETURN(bool case_sensitive, BoolArg(args, 0, "case_sensitive", false, "dictsort"));
  ASSIGN_OR_RETURN(std::optional<std::string> by, StringArg(args, 1, "by", "dictsort"));
  ASSIGN_OR_RETURN(bool reverse, BoolArg(args, 2, "reverse", false, "dictsort"));
  if (by && *by != "key" && *by != "value") return ArgError("dictsort", "'by' must be 'key' or 'value'");
  bool by_value = by && *by == "value";
  Array pairs;
  Array keys;
  for (const auto& [key, value] : object->entries()) {
    pairs.push_back(Value::MakeArray({Value::String(key), value}, /*is_tuple=*/true));
    keys.push_back(SortKey(by_value ? value : Value::String(key), std::nullopt, case_sensitive, limits));
  }
  ASSIGN_OR_RETURN(Array sorted, SortByKeys(pairs, keys, reverse));
  return Value::MakeArray(std::move(sorted));
}

StatusOr<Value> FilterSum(const Value& v, const CallArgs& args, const Limits& limits) {
  ASSIGN_OR_RETURN(Array items, Iterate(v, "sum"));
  ASSIGN_OR_RETURN(std::optional<std::string> attribute, StringArg(args, 0, "attribute", "sum"));
  Value total = ArgOr(args, 1, "start", Value::Int(0));
  for (const Value& raw : items) {
    Value item = attribute ? GetAttributePath(raw, *attribute, limits) : raw;
    bool total_numeric = total.is_number() || total.is_bool();
    if (!total_numeric || !(item.is_number() || item.is_bool())) {
      return ArgError("sum", "unsupported operand types " + std::string(total.TypeName()) + " and " +
                                 std::string(item.TypeName()));
    }
    if (total.is_float() || item.is_float()) {
      total = Value::Float(total.AsNumber() + item.AsNumber());
    } else {
      auto as_int = [](const Value& x) { return x.is_int() ? x.AsInt() : static_cast<int64_t>(x.AsBool()); };
      int64_t sum = 0;
      if (__builtin_add_overflow(as_int(total), as_int(item), &sum)) return ArgError("sum", "integer overflow");
      total = Value::Int(sum);
    }
  }
  return total;
}

StatusOr<Value> FilterMin(const Value& v, const CallArgs& args, const Limits& limits) {
  return MinMax(v, args, limits, /*max=*/false);
}
StatusOr<Value> FilterMax(const Value& v, const CallArgs& args, const Limits& limits) {
  return MinMax(v, args, limits, /*max=*/true);
}

}  // namespace surge::jinja::internal
