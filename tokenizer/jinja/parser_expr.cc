// Expression half of the parser. Precedence, lowest first, as in Jinja:
//   x if c else y  <  or  <  and  <  not  <  comparisons, in  <  + -  <  ~  <  * / // %
//   <  **  <  unary + -  <  postfix (.a [i] (args)), then filters `|` and tests `is`.
#include "tokenizer/jinja/parser_internal.h"

namespace surge::jinja::internal {
namespace {

bool ComparisonOp(std::string_view text, Op* op) {
  static constexpr std::pair<std::string_view, Op> kOps[] = {
      {"==", Op::kEq}, {"!=", Op::kNe}, {"<", Op::kLt}, {"<=", Op::kLe}, {">", Op::kGt}, {">=", Op::kGe}};
  for (const auto& [t, o] : kOps) {
    if (t == text) {
      *op = o;
      return true;
    }
  }
  return false;
}

// Names after which a test takes no bare argument: `x is defined and y`.
bool IsKeyword(std::string_view name) {
  for (std::string_view k : {"and", "or", "not", "if", "else", "in", "is"}) {
    if (name == k) return true;
  }
  return false;
}

}  // namespace

StatusOr<ExprPtr> Parser::ParseExpression(bool allow_condition) {
  DepthGuard guard(this);
  if (!guard.ok()) return Error("expression nested too deeply");
  return allow_condition ? ParseCondition() : ParseOr();
}

// `a, b` in {% set x = a, b %} makes a tuple.
StatusOr<ExprPtr> Parser::ParseTupleOrExpression() {
  size_t offset = Offset();
  ASSIGN_OR_RETURN(ExprPtr first, ParseExpression());
  if (!Is(TokenKind::kComma)) return first;
  auto tuple = MakeExpr(ExprKind::kTuple, offset);
  tuple->items.push_back(std::move(first));
  while (Is(TokenKind::kComma)) {
    ++pos_;
    if (Is(TokenKind::kCloseStatement)) break;
    ASSIGN_OR_RETURN(ExprPtr item, ParseExpression());
    tuple->items.push_back(std::move(item));
  }
  return tuple;
}

StatusOr<ExprPtr> Parser::ParseCondition() {
  size_t offset = Offset();
  ASSIGN_OR_RETURN(ExprPtr value, ParseOr());
  if (!IsName("if")) return value;
  ++pos_;
  auto cond = MakeExpr(ExprKind::kCondition, offset);
  ASSIGN_OR_RETURN(ExprPtr test, ParseOr());
  cond->items.push_back(std::move(test));
  cond->items.push_back(std::move(value));
  ExprPtr otherwise;
  if (IsName("else")) {
    ++pos_;
    DepthGuard guard(this);
    if (!guard.ok()) return Error("expression nested too deeply");
    ASSIGN_OR_RETURN(otherwise, ParseCondition());
  }
  cond->items.push_back(std::move(otherwise));
  return cond;
}

StatusOr<ExprPtr> Parser::ParseOr() {
  size_t offset = Offset();
  ASSIGN_OR_RETURN(ExprPtr left, ParseAnd());
  while (IsName("or")) {
    ++pos_;
    ASSIGN_OR_RETURN(ExprPtr right, ParseAnd());
    left = MakeBinary(ExprKind::kOr, Op::kAdd, std::move(left), std::move(right), offset);
  }
  return left;
}

StatusOr<ExprPtr> Parser::ParseAnd() {
  size_t offset = Offset();
  ASSIGN_OR_RETURN(ExprPtr left, ParseNot());
  while (IsName("and")) {
    ++pos_;
    ASSIGN_OR_RETURN(ExprPtr right, ParseNot());
    left = MakeBinary(ExprKind::kAnd, Op::kAdd, std::move(left), std::move(right), offset);
  }
  return left;
}

StatusOr<ExprPtr> Parser::ParseNot() {
  if (!IsName("not")) return ParseCompare();
  DepthGuard guard(this);
  if (!guard.ok()) return Error("expression nested too deeply");
  auto expr = MakeExpr(ExprKind::kUnary, Offset());
  ++pos_;
  expr->op = Op::kNot;
  ASSIGN_OR_RETURN(ExprPtr operand, ParseNot());
  expr->items.push_back(std::move(operand));
  return expr;
}

StatusOr<ExprPtr> Parser::ParseCompare() {
  size_t offset = Offset();
  ASSIGN_OR_RETURN(ExprPtr first, ParseMath1());
  ExprPtr chain;
  while (true) {
    Op op;
    if (Is(TokenKind::kComparison) && ComparisonOp(Peek().value, &op)) {
      ++pos_;
    } else if (IsName("in")) {
      op = Op::kIn;
      ++pos_;
    } else if (IsName("not") && IsName("in", 1)) {
      op = Op::kNotIn;
      pos_ += 2;
    } else {
      break;
    }
    if (!chain) {
      chain = MakeExpr(ExprKind::kCompare, offset);
      chain->items.push_back(std::move(first));
    }
    ASSIGN_OR_RETURN(ExprPtr right, ParseMath1());
    chain->ops.push_back(op);
    chain->items.push_back(std::move(right));
  }
  return chain ? std::move(chain) : std::move(first);
}

StatusOr<ExprPtr> Parser::ParseMath1() {
  size_t offset = Offset();
  ASSIGN_OR_RETURN(ExprPtr left, ParseConcat());
  while (IsOp(TokenKind::kAdditive, "+") || IsOp(TokenKind::kAdditive, "-")) {
    Op op = Peek().value == "+" ? Op::kAdd : Op::kSub;
    ++pos_;
    ASSIGN_OR_RETURN(ExprPtr right, ParseConcat());
    left = MakeBinary(ExprKind::kBinary, op, std::move(left), std::move(right), offset);
  }
  return left;
}

StatusOr<ExprPtr> Parser::ParseConcat() {
  size_t offset = Offset();
  ASSIGN_OR_RETURN(ExprPtr left, ParseMath2());
  while (IsOp(TokenKind::kAdditive, "~")) {
    ++pos_;
    ASSIGN_OR_RETURN(ExprPtr right, ParseMath2());
    left = MakeBinary(ExprKind::kBinary, Op::kConcat, std::move(left), std::move(right), offset);
  }
  return left;
}

StatusOr<ExprPtr> Parser::ParseMath2() {
  size_t offset = Offset();
  ASSIGN_OR_RETURN(ExprPtr left, ParsePow());
  while (Is(TokenKind::kMultiplicative)) {
    const std::string& text = Peek().value;
    Op op = text == "*" ? Op::kMul : text == "/" ? Op::kDiv : text == "//" ? Op::kFloorDiv : Op::kMod;
    ++pos_;
    ASSIGN_OR_RETURN(ExprPtr right, ParsePow());
    left = MakeBinary(ExprKind::kBinary, op, std::move(left), std::move(right), offset);
  }
  return left;
}

StatusOr<ExprPtr> Parser::ParsePow() {
  size_t offset = Offset();
  ASSIGN_OR_RETURN(ExprPtr left, ParseUnary(/*with_filter=*/true));
  while (Is(TokenKind::kPower)) {  // left-associative in Jinja
    ++pos_;
    ASSIGN_OR_RETURN(ExprPtr right, ParseUnary(/*with_filter=*/true));
    left = MakeBinary(ExprKind::kBinary, Op::kPow, std::move(left), std::move(right), offset);
  }
  return left;
}

StatusOr<ExprPtr> Parser::ParseUnary(bool with_filter) {
  DepthGuard guard(this);
  if (!guard.ok()) return Error("expression nested too deeply");
  ExprPtr node;
  bool sign = (Is(TokenKind::kUnary) || Is(TokenKind::kAdditive)) &&
              (Peek().value == "-" || Peek().value == "+");
  if (sign) {
    node = MakeExpr(ExprKind::kUnary, Offset());
    node->op = Peek().value == "-" ? Op::kNeg : Op::kPos;
    ++pos_;
    ASSIGN_OR_RETURN(ExprPtr operand, ParseUnary(/*with_filter=*/false));
    node->items.push_back(std::move(operand));
  } else {
    ASSIGN_OR_RETURN(node, ParsePrimary());
  }
  ASSIGN_OR_RETURN(node, ParsePostfix(std::move(node)));
  if (with_filter) return ParseFilterAndTests(std::move(node));
  return node;
}

StatusOr<ExprPtr> Parser::ParsePostfix(ExprPtr node) {
  while (true) {
    size_t offset = Offset();
    if (Is(TokenKind::kDot)) {
      ++pos_;
      if (Is(TokenKind::kNumber)) {  // foo.0 is foo[0]
        auto item = MakeExpr(ExprKind::kItem, offset);
        ASSIGN_OR_RETURN(ExprPtr index, ParseNumber(tokens_[pos_++]));
        item->items.push_back(std::move(node));
        item->items.push_back(std::move(index));
        node = std::move(item);
        continue;
      }
      auto attr = MakeExpr(ExprKind::kAttr, offset);
      ASSIGN_OR_RETURN(attr->name, ExpectIdentifier("an attribute name after '.'"));
      attr->items.push_back(std::move(node));
      node = std::move(attr);
    } else if (Is(TokenKind::kOpenBracket)) {
      ASSIGN_OR_RETURN(node, ParseSubscript(std::move(node)));
    } else if (Is(TokenKind::kOpenParen)) {
      auto call = MakeExpr(ExprKind::kCall, offset);
      call->items.push_back(std::move(node));
      ASSIGN_OR_RETURN(call->args, ParseArgs());
      node = std::move(call);
    } else {
      return node;
    }
  }
}

// x[i], x[a:b], x[a:b:c], x[::-1]
StatusOr<ExprPtr> Parser::ParseSubscript(ExprPtr node) {
  size_t offset = Offset();
  ++pos_;  // [
  ExprPtr parts[3];
  int index = 0;
  bool is_slice = false;
  if (!Is(TokenKind::kColon)) {
    ASSIGN_OR_RETURN(parts[0], ParseExpression());
  }
  while (Is(TokenKind::kColon)) {
    ++pos_;
    is_slice = true;
    if (++index > 2) return Error("a slice has at most three parts");
    if (!Is(TokenKind::kColon) && !Is(TokenKind::kCloseBracket)) {
      ASSIGN_OR_RETURN(parts[index], ParseExpression());
    }
  }
  RETURN_IF_ERROR(Expect(TokenKind::kCloseBracket, "']'"));
  if (!is_slice && !parts[0]) return ErrorAt(offset, "empty subscript '[]'");
  auto expr = MakeExpr(is_slice ? ExprKind::kSlice : ExprKind::kItem, offset);
  expr->items.push_back(std::move(node));
  expr->items.push_back(std::move(parts[0]));
  if (is_slice) {
    expr->items.push_back(std::move(parts[1]));
    expr->items.push_back(std::move(parts[2]));
  }
  return expr;
}

StatusOr<ExprPtr> Parser::ParseFilterAndTests(ExprPtr node) {
  while (true) {
    if (Is(TokenKind::kPipe)) {
      ++pos_;
      ASSIGN_OR_RETURN(node, ParseFilter(std::move(node)));
    } else if (IsName("is")) {
      ++pos_;
      ASSIGN_OR_RETURN(node, ParseTest(std::move(node)));
    } else {
      return node;
    }
  }
}

// After `|`: name or name(args). `operand` may be null for {% filter %} blocks.
StatusOr<ExprPtr> Parser::ParseFilter(ExprPtr operand) {
  auto expr = MakeExpr(ExprKind::kFilter, Offset());
  ASSIGN_OR_RETURN(expr->name, ExpectIdentifier("a filter name"));
  expr->filter = FindFilter(expr->name);  // null: an error if it is ever applied, as in Jinja 3
  if (Is(TokenKind::kOpenParen)) {
    ASSIGN_OR_RETURN(expr->args, ParseArgs());
  }
  expr->items.push_back(std::move(operand));
  return expr;
}

// After `is`: [not] name, name(args) or name arg.
StatusOr<ExprPtr> Parser::ParseTest(ExprPtr operand) {
  auto expr = MakeExpr(ExprKind::kTest, Offset());
  if (IsName("not")) {
    expr->negate = true;
    ++pos_;
  }
  ASSIGN_OR_RETURN(expr->name, ExpectIdentifier("a test name after 'is'"));
  expr->test = FindTest(expr->name);  // null: an error if it is ever applied
  if (Is(TokenKind::kOpenParen)) {
    ASSIGN_OR_RETURN(expr->args, ParseArgs());
  } else if (TestTakesArgument(expr->name) &&
             (Is(TokenKind::kNumber) || Is(TokenKind::kString) || Is(TokenKind::kOpenBracket) ||
              Is(TokenKind::kOpenBrace) || (Is(TokenKind::kIdentifier) && !IsKeyword(Peek().value)))) {
    Arg arg;
    ASSIGN_OR_RETURN(arg.value, ParsePrimary());
    ASSIGN_OR_RETURN(arg.value, ParsePostfix(std::move(arg.value)));
    expr->args.push_back(std::move(arg));
  }
  expr->items.push_back(std::move(operand));
  return expr;
}

}  // namespace surge::jinja::internal
