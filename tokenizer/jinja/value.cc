#include "tokenizer/jinja/value.h"

#include <algorithm>
#include <cmath>

#include "tokenizer/jinja/text.h"

namespace surge::jinja {

const Value* CallArgs::Keyword(std::string_view name) const {
  for (const auto& [key, value] : keyword) {
    if (key == name) return &value;
  }
  return nullptr;
}

const Value* CallArgs::Get(size_t index, std::string_view name) const {
  if (index < positional.size()) return &positional[index];
  return Keyword(name);
}

Value Value::None() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}

Value Value::Bool(bool value) {
  Value v;
  v.kind_ = Kind::kBool;
  v.data_ = value;
  return v;
}

Value Value::Int(int64_t value) {
  Value v;
  v.kind_ = Kind::kInt;
  v.data_ = value;
  return v;
}

Value Value::Float(double value) {
  Value v;
  v.kind_ = Kind::kFloat;
  v.data_ = value;
  return v;
}

Value Value::String(std::string value) {
  Value v;
  v.kind_ = Kind::kString;
  v.data_ = std::make_shared<const std::string>(std::move(value));
  return v;
}

namespace {
uint16_t DepthAbove(int child_depth) {
  return static_cast<uint16_t>(std::min(child_depth + 1, 0xFFFF));
}
}  // namespace

Value Value::MakeArray(Array items, bool is_tuple) {
  Value v;
  v.kind_ = Kind::kArray;
  v.tuple_ = is_tuple;
  int child_depth = 0;
  for (const Value& item : items) child_depth = std::max(child_depth, item.depth());
  v.depth_ = DepthAbove(child_depth);
  v.data_ = std::make_shared<const Array>(std::move(items));
  return v;
}

Value Value::MakeObject(Object object) {
  Value v;
  v.kind_ = Kind::kObject;
  int child_depth = 0;
  for (const auto& entry : object.entries()) child_depth = std::max(child_depth, entry.second.depth());
  v.depth_ = DepthAbove(child_depth);
  v.data_ = std::make_shared<Object>(std::move(object));
  return v;
}

Value Value::MakeNamespace(Object object) {
  Value v = MakeObject(std::move(object));
  v.kind_ = Kind::kNamespace;
  v.depth_ = 1;
  return v;
}

Value Value::MakeFunction(std::string name, NativeFunction fn) {
  Value v;
  v.kind_ = Kind::kFunction;
  v.data_ = std::make_shared<const Function>(Function{std::move(name), std::move(fn)});
  return v;
}

double Value::AsNumber() const {
  switch (kind_) {
    case Kind::kInt: return static_cast<double>(AsInt());
    case Kind::kFloat: return AsFloat();
    case Kind::kBool: return AsBool() ? 1.0 : 0.0;
    default: return 0.0;
  }
}

bool Value::Truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return AsBool();
    case Kind::kInt: return AsInt() != 0;
    case Kind::kFloat: return AsFloat() != 0.0;  // NaN is truthy in Python
    case Kind::kString: return !AsString().empty();
    case Kind::kArray: return !AsArray().empty();
    case Kind::kObject: return !AsObject().empty();
    case Kind::kNamespace:
    case Kind::kFunction: return true;
  }
  return false;
}

std::string_view Value::TypeName() const {
  switch (kind_) {
    case Kind::kUndefined: return "undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kArray: return tuple_ ? "tuple" : "list";
    case Kind::kObject: return "dict";
    case Kind::kNamespace: return "Namespace";
    case Kind::kFunction: return "function";
  }
  return "?";
}

const Value* Object::Find(std::string_view key) const {
  if (entries_.size() > kIndexThreshold) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &entries_[it->second].second;
  }
  for (const auto& [k, v] : entries_) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Object::Set(std::string_view key, Value value) {
  if (const Value* existing = Find(key)) {
    *const_cast<Value*>(existing) = std::move(value);
    return;
  }
  entries_.emplace_back(std::string(key), std::move(value));
  if (entries_.size() > kIndexThreshold) {
    if (index_.empty()) {
      for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
    } else {
      index_.emplace(entries_.back().first, entries_.size() - 1);
    }
  }
}

namespace {

bool NumberLike(const Value& v) { return v.is_number() || v.is_bool(); }

bool NumbersEqual(const Value& a, const Value& b) {
  if (!a.is_float() && !b.is_float()) {
    int64_t x = a.is_bool() ? a.AsBool() : a.AsInt();
    int64_t y = b.is_bool() ? b.AsBool() : b.AsInt();
    return x == y;
  }
  return a.AsNumber() == b.AsNumber();
}

bool EqualsAt(const Value& a, const Value& b, int depth) {
  if (NumberLike(a) && NumberLike(b)) return NumbersEqual(a, b);
  if (a.kind() != b.kind()) return false;
  if (depth > 1000) return false;  // only reachable through pathological nesting
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.AsString() == b.AsString();
    case Value::Kind::kArray: {
      const Array& x = a.AsArray();
      const Array& y = b.AsArray();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!EqualsAt(x[i], y[i], depth + 1)) return false;
      }
      return true;
    }
    case Value::Kind::kObject: {
      const Object& x = a.AsObject();
      const Object& y = b.AsObject();
      if (x.size() != y.size()) return false;
      for (const auto& [key, value] : x.entries()) {
        const Value* other = y.Find(key);
        if (other == nullptr || !EqualsAt(value, *other, depth + 1)) return false;
      }
      return true;
    }
    default: return a.SameObject(b);
  }
}

Status CheckSize(const std::string& out, const Limits& limits) {
  if (out.size() > limits.max_string_bytes) {
    return ResourceExhaustedError("string of " + std::to_string(out.size()) + " bytes exceeds the limit of " +
                                  std::to_string(limits.max_string_bytes));
  }
  return OkStatus();
}

Status AppendAt(const Value& value, const Limits& limits, std::string* out, bool repr, int depth);

Status AppendContainer(const Value& value, const Limits& limits, std::string* out, int depth) {
  if (depth > limits.max_nesting) return InvalidArgumentError("value nested too deeply to print");
  if (value.is_array()) {
    const Array& items = value.AsArray();
    out->push_back(value.is_tuple() ? '(' : '[');
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out->append(", ");
      RETURN_IF_ERROR(AppendAt(items[i], limits, out, /*repr=*/true, depth + 1));
    }
    if (value.is_tuple() && items.size() == 1) out->push_back(',');
    out->push_back(value.is_tuple() ? ')' : ']');
    return CheckSize(*out, limits);
  }
  if (value.is_namespace()) out->append("<Namespace ");
  out->push_back('{');
  bool first = true;
  for (const auto& [key, item] : value.AsObject().entries()) {
    if (!first) out->append(", ");
    first = false;
    out->append(text::QuoteString(key));
    out->append(": ");
    RETURN_IF_ERROR(AppendAt(item, limits, out, /*repr=*/true, depth + 1));
  }
  out->push_back('}');
  if (value.is_namespace()) out->push_back('>');
  return CheckSize(*out, limits);
}

Status AppendAt(const Value& value, const Limits& limits, std::string* out, bool repr, int depth) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
      if (repr) out->append("Undefined");
      return OkStatus();
    case Value::Kind::kNone: out->append("None"); return OkStatus();
    case Value::Kind::kBool: out->append(value.AsBool() ? "True" : "False"); return OkStatus();
    case Value::Kind::kInt: out->append(std::to_string(value.AsInt())); return OkStatus();
    case Value::Kind::kFloat: out->append(text::FormatFloat(value.AsFloat())); return OkStatus();
    case Value::Kind::kString:
      out->append(repr ? text::QuoteString(value.AsString()) : value.AsString());
      return CheckSize(*out, limits);
    case Value::Kind::kFunction:
      out->append("<function " + value.AsFunction().name + ">");
      return OkStatus();
    default: return AppendContainer(value, limits, out, depth);
  }
}

}  // namespace

bool Equals(const Value& a, const Value& b) { return EqualsAt(a, b, 0); }

StatusOr<int> Compare(const Value& a, const Value& b) {
  if (NumberLike(a) && NumberLike(b)) {
    if (!a.is_float() && !b.is_float()) {
      int64_t x = a.is_bool() ? a.AsBool() : a.AsInt();
      int64_t y = b.is_bool() ? b.AsBool() : b.AsInt();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    double x = a.AsNumber();
    double y = b.AsNumber();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    int c = a.AsString().compare(b.AsString());  // UTF-8 byte order is code point order
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_array() && b.is_array()) {
    const Array& x = a.AsArray();
    const Array& y = b.AsArray();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (Equals(x[i], y[i])) continue;
      return Compare(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  return InvalidArgumentError("cannot compare " + std::string(a.TypeName()) + " with " +
                              std::string(b.TypeName()));
}

Status AppendStr(const Value& value, const Limits& limits, std::string* out) {
  return AppendAt(value, limits, out, /*repr=*/false, 0);
}

StatusOr<std::string> ToStr(const Value& value, const Limits& limits) {
  if (value.is_string()) return value.AsString();
  std::string out;
  RETURN_IF_ERROR(AppendStr(value, limits, &out));
  return out;
}

Status AppendRepr(const Value& value, const Limits& limits, std::string* out) {
  return AppendAt(value, limits, out, /*repr=*/true, 0);
}

}  // namespace surge::jinja
