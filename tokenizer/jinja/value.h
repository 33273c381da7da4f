// Value: what Jinja expressions evaluate to. Python semantics (str(), ==, truthiness), with
// shared immutable strings, lists and dicts so that copies are cheap.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"

namespace surge::jinja {

// Bounds that keep a hostile or buggy template from exhausting memory, stack or time.
struct Limits {
  size_t max_string_bytes = size_t{64} << 20;  // any one string, and the whole output
  size_t max_items = size_t{1} << 20;          // elements made by range() or list repetition
  int max_call_depth = 64;                     // nested macro calls
  int max_render_depth = 400;                  // nested statements + expressions (stack use)
  uint64_t max_steps = 1'000'000;              // loop iterations + macro calls per render
  int max_nesting = 128;                       // nesting of lists/dicts (input, tojson, repr)
};

class Value;
class Object;
using Array = std::vector<Value>;

// Arguments of a call: f(a, b, key=c).
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;

  const Value* Keyword(std::string_view name) const;
  // The argument at `index` if given positionally, else the keyword `name`, else null.
  const Value* Get(size_t index, std::string_view name) const;
};

using NativeFunction = std::function<StatusOr<Value>(const CallArgs& args)>;
struct Function {
  std::string name;
  NativeFunction fn;
};

class Value {
 public:
  enum class Kind : uint8_t {
    kUndefined, kNone, kBool, kInt, kFloat, kString, kArray, kObject, kNamespace, kFunction
  };

  Value() = default;  // undefined
  static Value None();
  static Value Bool(bool value);
  static Value Int(int64_t value);
  static Value Float(double value);
  static Value String(std::string value);
  static Value MakeArray(Array items, bool is_tuple = false);
  static Value MakeObject(Object object);
  // A namespace() object: the only mutable value, shared by reference.
  static Value MakeNamespace(Object object);
  static Value MakeFunction(std::string name, NativeFunction fn);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_tuple() const { return kind_ == Kind::kArray && tuple_; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool is_namespace() const { return kind_ == Kind::kNamespace; }
  bool is_mapping_like() const { return is_object() || is_namespace(); }
  bool is_function() const { return kind_ == Kind::kFunction; }

  bool AsBool() const { return std::get<bool>(data_); }
  int64_t AsInt() const { return std::get<int64_t>(data_); }
  double AsFloat() const { return std::get<double>(data_); }
  // int, float or bool as a double (bool counts as 0/1, as in Python).
  double AsNumber() const;
  const std::string& AsString() const { return *std::get<StringPtr>(data_); }
  const Array& AsArray() const { return *std::get<ArrayPtr>(data_); }
  const Object& AsObject() const { return *std::get<ObjectPtr>(data_); }
  // Namespaces (and the interpreter's own `loop` object) change in place; JSON input and
  // dict literals never do.
  Object& MutableObject() const { return *std::get<ObjectPtr>(data_); }
  const Function& AsFunction() const { return *std::get<FunctionPtr>(data_); }
  // True when both share the same storage (namespaces and functions compare this way).
  bool SameObject(const Value& other) const { return data_ == other.data_; }

  bool Truthy() const;
  std::string_view TypeName() const;  // Python type name for error messages
  // Container nesting: 0 for scalars, 1 + the deepest element for lists and dicts. A
  // namespace counts as 1 (namespaces may not hold namespaces, so this stays bounded).
  int depth() const { return depth_; }

 private:
  using StringPtr = std::shared_ptr<const std::string>;
  using ArrayPtr = std::shared_ptr<const Array>;
  using ObjectPtr = std::shared_ptr<Object>;
  using FunctionPtr = std::shared_ptr<const Function>;

  Kind kind_ = Kind::kUndefined;
  bool tuple_ = false;
  uint16_t depth_ = 0;
  std::variant<std::monostate, bool, int64_t, double, StringPtr, ArrayPtr, ObjectPtr, FunctionPtr>
      data_;
};

// Insertion-ordered map from string keys to values (a Python dict, a JSON object).
class Object {
 public:
  const Value* Find(std::string_view key) const;
  void Set(std::string_view key, Value value);  // replaces in place, or appends
  void SetAt(size_t index, Value value) { entries_[index].second = std::move(value); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }

 private:
  static constexpr size_t kIndexThreshold = 16;  // linear search below this size
  std::vector<std::pair<std::string, Value>> entries_;
  std::map<std::string, size_t, std::less<>> index_;  // key -> position, once large
};

// Python ==: numbers by value (True == 1), strings, lists and dicts deeply; namespaces and
// functions by identity; undefined equals only undefined.
bool Equals(const Value& a, const Value& b);
// Python ordering for <, <=, >, >=: numbers, strings (by code point), lists element-wise.
// Returns -1, 0 or 1; an error for other types.
StatusOr<int> Compare(const Value& a, const Value& b);

// str(value) as Jinja prints it: undefined is "", none is "None", True/False, floats as
// Python repr, lists and dicts as Python repr. Fails past limits.max_string_bytes.
Status AppendStr(const Value& value, const Limits& limits, std::string* out);
StatusOr<std::string> ToStr(const Value& value, const Limits& limits);
// repr(value): strings quoted.
Status AppendRepr(const Value& value, const Limits& limits, std::string* out);

}  // namespace surge::jinja
