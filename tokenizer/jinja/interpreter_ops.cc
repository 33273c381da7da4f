// Arithmetic and concatenation with Python's rules: int/float promotion, floor division
// and modulo rounding toward negative infinity, str/list concatenation and repetition.
#include <cmath>

#include "tokenizer/jinja/builtins_internal.h"
#include "tokenizer/jinja/interpreter.h"

namespace surge::jinja::internal {
namespace {

const char* OpSymbol(Op op) {
  switch (op) {
    case Op::kAdd: return "+";
    case Op::kSub: return "-";
    case Op::kMul: return "*";
    case Op::kDiv: return "/";
    case Op::kFloorDiv: return "//";
    case Op::kMod: return "%";
    case Op::kPow: return "**";
    default: return "~";
  }
}

Status Unsupported(Op op, const Value& a, const Value& b) {
  return InvalidArgumentError(std::string("unsupported operand type(s) for ") + OpSymbol(op) + ": '" +
                              std::string(a.TypeName()) + "' and '" + std::string(b.TypeName()) + "'");
}

bool Numeric(const Value& v) { return v.is_number() || v.is_bool(); }
int64_t IntOf(const Value& v) { return v.is_int() ? v.AsInt() : static_cast<int64_t>(v.AsBool()); }

StatusOr<Value> IntOp(Op op, int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflow = false;
  switch (op) {
    case Op::kAdd: overflow = __builtin_add_overflow(a, b, &r); break;
    case Op::kSub: overflow = __builtin_sub_overflow(a, b, &r); break;
    case Op::kMul: overflow = __builtin_mul_overflow(a, b, &r); break;
    case Op::kFloorDiv:
    case Op::kMod:
      if (b == 0) return InvalidArgumentError("integer division or modulo by zero");
      if (a == INT64_MIN && b == -1) return InvalidArgumentError("integer overflow");
      r = op == Op::kMod ? a % b : a / b;
      if (op == Op::kMod && r != 0 && ((r < 0) != (b < 0))) r += b;
      if (op == Op::kFloorDiv && (a % b != 0) && ((a < 0) != (b < 0))) --r;
      break;
    default:  // kPow with a non-negative exponent
      if (a == 0 || a == 1 || a == -1) {
        r = b == 0 ? 1 : (a == -1 ? (b % 2 == 1 ? -1 : 1) : a);
      } else if (b > 64) {
        overflow = true;  // |a| >= 2 overflows int64 long before that
      } else {
        r = 1;
        for (int64_t i = 0; i < b && !overflow; ++i) overflow = __builtin_mul_overflow(r, a, &r);
      }
  }
  if (overflow) return InvalidArgumentError(std::string("integer overflow in ") + OpSymbol(op));
  return Value::Int(r);
}

StatusOr<Value> NumberOp(Op op, const Value& left, const Value& right) {
  if (op == Op::kDiv) {
    if (right.AsNumber() == 0) return InvalidArgumentError("division by zero");
    return Value::Float(left.AsNumber() / right.AsNumber());
  }
  if (!left.is_float() && !right.is_float()) {
    int64_t a = IntOf(left);
    int64_t b = IntOf(right);
    if (op != Op::kPow || b >= 0) return IntOp(op, a, b);
  }
  double a = left.AsNumber();
  double b = right.AsNumber();
  switch (op) {
    case Op::kAdd: return Value::Float(a + b);
    case Op::kSub: return Value::Float(a - b);
    case Op::kMul: return Value::Float(a * b);
    case Op::kFloorDiv:
    case Op::kMod: {
      if (b == 0) return InvalidArgumentError("float division or modulo by zero");
      double m = std::fmod(a, b);
      if (m != 0 && ((m < 0) != (b < 0))) m += b;
      return Value::Float(op == Op::kMod ? m : std::round((a - m) / b));
    }
    default:
      if (a == 0 && b < 0) return InvalidArgumentError("0.0 cannot be raised to a negative power");
      return Value::Float(std::pow(a, b));
  }
}

StatusOr<Value> Repeat(const Value& sequence, int64_t times, const Limits& limits) {
  if (times < 0) times = 0;
  if (sequence.is_string()) {
    const std::string& s = sequence.AsString();
    if (!s.empty() && static_cast<uint64_t>(times) > limits.max_string_bytes / s.size()) {
      return CheckStringSize(limits.max_string_bytes + 1, limits);
    }
    std::string out;
    out.reserve(s.size() * times);
    for (int64_t i = 0; i < times; ++i) out += s;
    return Value::String(std::move(out));
  }
  const Array& items = sequence.AsArray();
  if (!items.empty() && static_cast<uint64_t>(times) > limits.max_items / items.size()) {
    return ResourceExhaustedError("list repetition makes more than " + std::to_string(limits.max_items) + " items");
  }
  Array out;
  out.reserve(items.size() * times);
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::MakeArray(std::move(out), sequence.is_tuple());
}

// "%s and %s" % (a, b), as Python strings allow.
StatusOr<Value> StringPercent(const Value& format, const Value& args, const Limits& limits) {
  CallArgs call_args;
  if (args.is_tuple()) {
    call_args.positional = args.AsArray();
  } else if (args.is_object()) {
    call_args.keyword = args.AsObject().entries();
  } else {
    call_args.positional.push_back(args);
  }
  ASSIGN_OR_RETURN(std::string out, PercentFormat(format.AsString(), call_args, limits));
  return Value::String(std::move(out));
}

}  // namespace

StatusOr<Value> BinaryOp(Op op, const Value& left, const Value& right, const Limits& limits) {
  if (op == Op::kConcat) {
    std::string out;
    RETURN_IF_ERROR(AppendStr(left, limits, &out));
    RETURN_IF_ERROR(AppendStr(right, limits, &out));
    RETURN_IF_ERROR(CheckStringSize(out.size(), limits));
    return Value::String(std::move(out));
  }
  if (Numeric(left) && Numeric(right)) return NumberOp(op, left, right);
  if (op == Op::kAdd && left.is_string() && right.is_string()) {
    RETURN_IF_ERROR(CheckStringSize(left.AsString().size() + right.AsString().size(), limits));
    return Value::String(left.AsString() + right.AsString());
  }
  if (op == Op::kAdd && left.is_array() && right.is_array()) {
    Array items = left.AsArray();
    items.insert(items.end(), right.AsArray().begin(), right.AsArray().end());
    if (items.size() > limits.max_items) return ResourceExhaustedError("list too long");
    return Value::MakeArray(std::move(items), left.is_tuple() && right.is_tuple());
  }
  if (op == Op::kMul && (left.is_string() || left.is_array()) && (right.is_int() || right.is_bool())) {
    return Repeat(left, IntOf(right), limits);
  }
  if (op == Op::kMul && (right.is_string() || right.is_array()) && (left.is_int() || left.is_bool())) {
    return Repeat(right, IntOf(left), limits);
  }
  if (op == Op::kMod && left.is_string()) return StringPercent(left, right, limits);
  return Unsupported(op, left, right);
}

}  // namespace surge::jinja::internal
