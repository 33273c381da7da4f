// Primary expressions of the parser: literals, names, parentheses, lists, dicts and call
// arguments.
#include <charconv>
#include <cstdlib>

#include "tokenizer/jinja/parser_internal.h"

namespace surge::jinja::internal {

StatusOr<ExprPtr> Parser::ParseNumber(const Token& token) {
  auto expr = MakeExpr(ExprKind::kLiteral, token.offset);
  const std::string& text = token.value;
  if (text.find_first_of(".eE") == std::string::npos) {
    int64_t value = 0;
    const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), value);
    if (ec == std::errc() && ptr == text.data() + text.size()) {
      expr->literal = Value::Int(value);
      return expr;
    }
  }
  expr->literal = Value::Float(std::strtod(text.c_str(), nullptr));  // fractions and huge integers
  return expr;
}

StatusOr<ExprPtr> Parser::ParsePrimary() {
  if (AtEnd()) return Error("unexpected end of template in an expression");
  const Token& token = tokens_[pos_];
  size_t offset = token.offset;
  switch (token.kind) {
    case TokenKind::kNumber: ++pos_; return ParseNumber(token);
    case TokenKind::kString: {
      std::string value;
      while (Is(TokenKind::kString)) value += tokens_[pos_++].value;  // "a" "b" == "ab"
      auto expr = MakeExpr(ExprKind::kLiteral, offset);
      expr->literal = Value::String(std::move(value));
      return expr;
    }
    case TokenKind::kIdentifier: {
      ++pos_;
      auto expr = MakeExpr(ExprKind::kLiteral, offset);
      const std::string& name = token.value;
      if (name == "true" || name == "True") {
        expr->literal = Value::Bool(true);
      } else if (name == "false" || name == "False") {
        expr->literal = Value::Bool(false);
      } else if (name == "none" || name == "None") {
        expr->literal = Value::None();
      } else {
        expr->kind = ExprKind::kName;
        expr->name = name;
      }
      return expr;
    }
    case TokenKind::kOpenParen: ++pos_; return ParseParenthesized(offset);
    case TokenKind::kOpenBracket: ++pos_; return ParseList(offset);
    case TokenKind::kOpenBrace: ++pos_; return ParseDict(offset);
    default: return Error("unexpected '" + token.value + "' in an expression");
  }
}

// After `(`: (), (x), (x,), (x, y).
StatusOr<ExprPtr> Parser::ParseParenthesized(size_t offset) {
  auto tuple = MakeExpr(ExprKind::kTuple, offset);
  if (Is(TokenKind::kCloseParen)) {
    ++pos_;
    return tuple;
  }
  ASSIGN_OR_RETURN(ExprPtr first, ParseExpression());
  if (Is(TokenKind::kCloseParen)) {
    ++pos_;
    return first;
  }
  tuple->items.push_back(std::move(first));
  while (Is(TokenKind::kComma)) {
    ++pos_;
    if (Is(TokenKind::kCloseParen)) break;
    ASSIGN_OR_RETURN(ExprPtr item, ParseExpression());
    tuple->items.push_back(std::move(item));
  }
  RETURN_IF_ERROR(Expect(TokenKind::kCloseParen, "')'"));
  return tuple;
}

StatusOr<ExprPtr> Parser::ParseList(size_t offset) {
  auto list = MakeExpr(ExprKind::kList, offset);
  while (!Is(TokenKind::kCloseBracket)) {
    ASSIGN_OR_RETURN(ExprPtr item, ParseExpression());
    list->items.push_back(std::move(item));
    if (!Is(TokenKind::kComma)) break;
    ++pos_;
  }
  RETURN_IF_ERROR(Expect(TokenKind::kCloseBracket, "']'"));
  return list;
}

StatusOr<ExprPtr> Parser::ParseDict(size_t offset) {
  auto dict = MakeExpr(ExprKind::kDict, offset);
  while (!Is(TokenKind::kCloseBrace)) {
    ASSIGN_OR_RETURN(ExprPtr key, ParseExpression());
    RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' in a dict literal"));
    ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
    dict->items.push_back(std::move(key));
    dict->items.push_back(std::move(value));
    if (!Is(TokenKind::kComma)) break;
    ++pos_;
  }
  RETURN_IF_ERROR(Expect(TokenKind::kCloseBrace, "'}'"));
  return dict;
}

// (a, b, key=c, *list, **dict)
StatusOr<std::vector<Arg>> Parser::ParseArgs() {
  std::vector<Arg> args;
  RETURN_IF_ERROR(Expect(TokenKind::kOpenParen, "'('"));
  bool seen_keyword = false;
  while (!Is(TokenKind::kCloseParen)) {
    Arg arg;
    if (IsOp(TokenKind::kPower, "**")) {
      arg.kind = Arg::Kind::kKeywordSpread;
      ++pos_;
    } else if (IsOp(TokenKind::kMultiplicative, "*")) {
      arg.kind = Arg::Kind::kSpread;
      ++pos_;
    } else if (Is(TokenKind::kIdentifier) && Is(TokenKind::kEquals, 1)) {
      arg.kind = Arg::Kind::kKeyword;
      arg.name = tokens_[pos_].value;
      pos_ += 2;
    }
    if (arg.kind == Arg::Kind::kPositional && seen_keyword) {
      return Error("positional argument follows keyword argument");
    }
    seen_keyword = seen_keyword || arg.kind == Arg::Kind::kKeyword;
    ASSIGN_OR_RETURN(arg.value, ParseExpression());
    args.push_back(std::move(arg));
    if (!Is(TokenKind::kComma)) break;
    ++pos_;
  }
  RETURN_IF_ERROR(Expect(TokenKind::kCloseParen, "')'"));
  return args;
}

}  // namespace surge::jinja::internal
