// Expression evaluation. Undefined names and attributes evaluate to undefined, as in Jinja.
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/builtins_internal.h"
#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/text.h"

namespace surge::jinja::internal {
namespace {

// Python slice bounds (start, stop) for a sequence of `size` items.
void SliceBounds(int64_t size, int64_t step, const Value& start_v, const Value& stop_v, int64_t* start,
                 int64_t* stop) {
  auto given = [](const Value& v) { return !v.is_undefined() && !v.is_none(); };
  auto as_int = [](const Value& v) { return v.is_int() ? v.AsInt() : static_cast<int64_t>(v.AsBool()); };
  auto clamp = [&](int64_t i, int64_t lo, int64_t hi) {
    if (i < 0) i += size;
    return std::min(std::max(i, lo), hi);
  };
  if (step > 0) {
    *start = given(start_v) ? clamp(as_int(start_v), 0, size) : 0;
    *stop = given(stop_v) ? clamp(as_int(stop_v), 0, size) : size;
  } else {
    *start = given(start_v) ? clamp(as_int(start_v), -1, size - 1) : size - 1;
    *stop = given(stop_v) ? clamp(as_int(stop_v), -1, size - 1) : -1;
  }
}

bool IsSliceIndex(const Value& v) { return v.is_undefined() || v.is_none() || v.is_int() || v.is_bool(); }

}  // namespace

StatusOr<Value> Interpreter::Eval(const Expr& expr, const ScopePtr& scope) {
  DepthGuard guard(this);
  if (depth_ > limits_.max_render_depth) {
    return Locate(ResourceExhaustedError("template nesting or recursion too deep"), expr.offset);
  }
  StatusOr<Value> result = EvalNode(expr, scope);
  if (!result.ok()) return Locate(result.status(), expr.offset);
  if (result->depth() > limits_.max_nesting) {
    return Locate(InvalidArgumentError("value nested deeper than " + std::to_string(limits_.max_nesting)),
                  expr.offset);
  }
  return result;
}

// One case per kind; the bodies live in helpers so this frame stays small (it sits on the
// stack once per nesting level).
StatusOr<Value> Interpreter::EvalNode(const Expr& expr, const ScopePtr& scope) {
  switch (expr.kind) {
    case ExprKind::kLiteral: return expr.literal;
    case ExprKind::kName: return EvalName(expr, scope);
    case ExprKind::kList:
    case ExprKind::kTuple:
    case ExprKind::kDict: return EvalCollection(expr, scope);
    case ExprKind::kAttr:
    case ExprKind::kItem: return EvalAccess(expr, scope);
    case ExprKind::kSlice: return EvalSlice(expr, scope);
    case ExprKind::kCall: return EvalCall(expr, scope);
    case ExprKind::kFilter: return EvalFilter(expr, scope, nullptr);
    case ExprKind::kTest: return EvalTest(expr, scope);
    case ExprKind::kUnary: return EvalUnary(expr, scope);
    case ExprKind::kBinary: return EvalBinary(expr, scope);
    case ExprKind::kAnd:
    case ExprKind::kOr:
    case ExprKind::kCondition: return EvalLogical(expr, scope);
    case ExprKind::kCompare: return EvalCompare(expr, scope);
  }
  return InternalError("unknown expression kind");
}

StatusOr<Value> Interpreter::EvalAccess(const Expr& expr, const ScopePtr& scope) {
  ASSIGN_OR_RETURN(Value object, Eval(*expr.items[0], scope));
  if (expr.kind == ExprKind::kAttr) return GetAttr(object, expr.name, limits_);
  ASSIGN_OR_RETURN(Value key, Eval(*expr.items[1], scope));
  return GetItem(object, key, limits_);
}

StatusOr<Value> Interpreter::EvalBinary(const Expr& expr, const ScopePtr& scope) {
  ASSIGN_OR_RETURN(Value left, Eval(*expr.items[0], scope));
  ASSIGN_OR_RETURN(Value right, Eval(*expr.items[1], scope));
  return BinaryOp(expr.op, left, right, limits_);
}

// and / or return the deciding operand, as in Python; `a if c else b` evaluates one side.
StatusOr<Value> Interpreter::EvalLogical(const Expr& expr, const ScopePtr& scope) {
  ASSIGN_OR_RETURN(Value first, Eval(*expr.items[0], scope));
  if (expr.kind == ExprKind::kCondition) {
    if (first.Truthy()) return Eval(*expr.items[1], scope);
    if (!expr.items[2]) return Value();
    return Eval(*expr.items[2], scope);
  }
  if (first.Truthy() == (expr.kind == ExprKind::kOr)) return first;
  return Eval(*expr.items[1], scope);
}

StatusOr<Value> Interpreter::EvalName(const Expr& expr, const ScopePtr& scope) {
  const Value* value = scope->Lookup(expr.name);
  return value == nullptr ? Value() : *value;
}

StatusOr<Value> Interpreter::EvalCollection(const Expr& expr, const ScopePtr& scope) {
  if (expr.kind == ExprKind::kDict) {
    Object object;
    for (size_t i = 0; i + 1 < expr.items.size(); i += 2) {
      ASSIGN_OR_RETURN(Value key, Eval(*expr.items[i], scope));
      if (!key.is_string()) {
        return InvalidArgumentError("dict keys must be strings, got " + std::string(key.TypeName()));
      }
      ASSIGN_OR_RETURN(Value value, Eval(*expr.items[i + 1], scope));
      object.Set(key.AsString(), std::move(value));
    }
    return Value::MakeObject(std::move(object));
  }
  Array items;
  items.reserve(expr.items.size());
  for (const ExprPtr& item : expr.items) {
    ASSIGN_OR_RETURN(Value v, Eval(*item, scope));
    items.push_back(std::move(v));
  }
  return Value::MakeArray(std::move(items), expr.kind == ExprKind::kTuple);
}

StatusOr<Value> Interpreter::EvalSlice(const Expr& expr, const ScopePtr& scope) {
  ASSIGN_OR_RETURN(Value object, Eval(*expr.items[0], scope));
  Value bounds[3];
  for (int i = 0; i < 3; ++i) {
    if (expr.items[i + 1]) {
      ASSIGN_OR_RETURN(bounds[i], Eval(*expr.items[i + 1], scope));
    }
    if (!IsSliceIndex(bounds[i])) return InvalidArgumentError("slice indices must be integers or none");
  }
  int64_t step = bounds[2].is_int() ? bounds[2].AsInt() : (bounds[2].is_bool() ? bounds[2].AsBool() : 1);
  if (step == 0) return InvalidArgumentError("slice step cannot be zero");
  if (object.is_undefined()) return Value();
  if (!object.is_array() && !object.is_string()) {
    return InvalidArgumentError("'" + std::string(object.TypeName()) + "' object is not subscriptable");
  }
  std::vector<size_t> offsets;
  if (object.is_string()) offsets = text::CodePointOffsets(object.AsString());
  int64_t size = object.is_array() ? static_cast<int64_t>(object.AsArray().size())
                                   : static_cast<int64_t>(offsets.size()) - 1;
  int64_t start = 0;
  int64_t stop = 0;
  SliceBounds(size, step, bounds[0], bounds[1], &start, &stop);
  Array items;
  std::string chars;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (object.is_array()) {
      items.push_back(object.AsArray()[i]);
    } else {
      chars.append(object.AsString(), offsets[i], offsets[i + 1] - offsets[i]);
    }
  }
  if (object.is_string()) return Value::String(std::move(chars));
  return Value::MakeArray(std::move(items), object.is_tuple());
}

StatusOr<CallArgs> Interpreter::EvalArgs(const std::vector<Arg>& args, const ScopePtr& scope) {
  CallArgs out;
  auto add_keyword = [&](const std::string& name, Value value) -> Status {
    if (out.Keyword(name) != nullptr) return InvalidArgumentError("got multiple values for keyword argument '" + name + "'");
    out.keyword.emplace_back(name, std::move(value));
    return OkStatus();
  };
  for (const Arg& arg : args) {
    ASSIGN_OR_RETURN(Value value, Eval(*arg.value, scope));
    switch (arg.kind) {
      case Arg::Kind::kPositional: out.positional.push_back(std::move(value)); break;
      case Arg::Kind::kKeyword: RETURN_IF_ERROR(add_keyword(arg.name, std::move(value))); break;
      case Arg::Kind::kSpread: {
        ASSIGN_OR_RETURN(Array items, Iterate(value, "*args"));
        for (Value& item : items) out.positional.push_back(std::move(item));
        break;
      }
      case Arg::Kind::kKeywordSpread:
        if (!value.is_object()) return InvalidArgumentError("argument after ** must be a dict");
        for (const auto& [name, v] : value.AsObject().entries()) RETURN_IF_ERROR(add_keyword(name, v));
        break;
    }
  }
  return out;
}

StatusOr<Value> Interpreter::CallFunction(const Value& callee, const CallArgs& args, std::string_view what) {
  if (!callee.is_function()) {
    if (callee.is_undefined()) return InvalidArgumentError(std::string(what) + " is undefined");
    return InvalidArgumentError("'" + std::string(callee.TypeName()) + "' object is not callable");
  }
  const Function& fn = callee.AsFunction();
  StatusOr<Value> result = fn.fn(args);
  if (!result.ok() && fn.name == "raise_exception") {
    error_located_ = true;  // the template's own message, shown as written
  }
  return result;
}

StatusOr<Value> Interpreter::EvalCall(const Expr& expr, const ScopePtr& scope) {
  const Expr& callee = *expr.items[0];
  if (callee.kind == ExprKind::kAttr) {  // obj.method(...) without building a bound method
    ASSIGN_OR_RETURN(Value object, Eval(*callee.items[0], scope));
    if (HasMethod(object, callee.name)) {
      ASSIGN_OR_RETURN(CallArgs args, EvalArgs(expr.args, scope));
      bool found = false;
      return CallMethod(object, callee.name, args, limits_, &found);
    }
    Value fn = GetAttr(object, callee.name, limits_);
    if (fn.is_undefined()) {
      return InvalidArgumentError("'" + std::string(object.TypeName()) + "' object has no attribute '" +
                                  callee.name + "'");
    }
    ASSIGN_OR_RETURN(CallArgs args, EvalArgs(expr.args, scope));
    return CallFunction(fn, args, callee.name);
  }
  ASSIGN_OR_RETURN(Value fn, Eval(callee, scope));
  ASSIGN_OR_RETURN(CallArgs args, EvalArgs(expr.args, scope));
  std::string what = callee.kind == ExprKind::kName ? "'" + callee.name + "'" : std::string("the called value");
  return CallFunction(fn, args, what);
}

// `base` replaces the innermost (null) operand in a {% filter %} block's chain.
StatusOr<Value> Interpreter::EvalFilter(const Expr& expr, const ScopePtr& scope, const Value* base) {
  Value operand;
  if (expr.items[0]) {
    if (expr.items[0]->kind == ExprKind::kFilter && base != nullptr) {
      ASSIGN_OR_RETURN(operand, EvalFilter(*expr.items[0], scope, base));
    } else {
      ASSIGN_OR_RETURN(operand, Eval(*expr.items[0], scope));
    }
  } else if (base != nullptr) {
    operand = *base;
  }
  if (expr.filter == nullptr) return InvalidArgumentError("no filter named '" + expr.name + "'");
  ASSIGN_OR_RETURN(CallArgs args, EvalArgs(expr.args, scope));
  StatusOr<Value> result = expr.filter(operand, args, limits_);
  if (!result.ok()) return Status(result.status().code(), "filter '" + expr.name + "': " + result.status().message());
  return result;
}

StatusOr<Value> Interpreter::EvalTest(const Expr& expr, const ScopePtr& scope) {
  if (expr.test == nullptr) return InvalidArgumentError("no test named '" + expr.name + "'");
  ASSIGN_OR_RETURN(Value operand, Eval(*expr.items[0], scope));
  ASSIGN_OR_RETURN(CallArgs args, EvalArgs(expr.args, scope));
  ASSIGN_OR_RETURN(bool result, expr.test(operand, args));
  return Value::Bool(result != expr.negate);
}

StatusOr<Value> Interpreter::EvalUnary(const Expr& expr, const ScopePtr& scope) {
  ASSIGN_OR_RETURN(Value operand, Eval(*expr.items[0], scope));
  if (expr.op == Op::kNot) return Value::Bool(!operand.Truthy());
  if (operand.is_float()) return Value::Float(expr.op == Op::kNeg ? -operand.AsFloat() : operand.AsFloat());
  if (operand.is_int() || operand.is_bool()) {
    int64_t i = operand.is_int() ? operand.AsInt() : operand.AsBool();
    if (expr.op == Op::kNeg && i == INT64_MIN) return InvalidArgumentError("integer overflow");
    return Value::Int(expr.op == Op::kNeg ? -i : i);
  }
  return InvalidArgumentError(std::string("bad operand type for unary ") + (expr.op == Op::kNeg ? "-" : "+") +
                              ": '" + std::string(operand.TypeName()) + "'");
}

// a < b < c means a < b and b < c, evaluating each operand once.
StatusOr<Value> Interpreter::EvalCompare(const Expr& expr, const ScopePtr& scope) {
  ASSIGN_OR_RETURN(Value left, Eval(*expr.items[0], scope));
  for (size_t i = 0; i < expr.ops.size(); ++i) {
    ASSIGN_OR_RETURN(Value right, Eval(*expr.items[i + 1], scope));
    bool result = false;
    switch (expr.ops[i]) {
      case Op::kEq: result = Equals(left, right); break;
      case Op::kNe: result = !Equals(left, right); break;
      case Op::kIn:
      case Op::kNotIn: {
        ASSIGN_OR_RETURN(bool found, Contains(right, left));
        result = found == (expr.ops[i] == Op::kIn);
        break;
      }
      default: {
        ASSIGN_OR_RETURN(int c, Compare(left, right));
        Op op = expr.ops[i];
        result = op == Op::kLt ? c < 0 : op == Op::kLe ? c <= 0 : op == Op::kGt ? c > 0 : c >= 0;
      }
    }
    if (!result) return Value::Bool(false);
    left = std::move(right);
  }
  return Value::Bool(true);
}

}  // namespace surge::jinja::internal
