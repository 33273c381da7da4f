#include "tokenizer/jinja/parser.h"

#include "tokenizer/jinja/parser_internal.h"

namespace surge::jinja {
namespace internal {
namespace {

const Token kEndToken{TokenKind::kText, "", 0};

std::string Describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kText: return "text";
    case TokenKind::kComment: return "comment";
    case TokenKind::kString: return "string literal";
    case TokenKind::kNumber: return "number " + token.value;
    case TokenKind::kIdentifier: return "'" + token.value + "'";
    default: return "'" + token.value + "'";
  }
}

// Tags that end or split a block; seen where none is open they are errors.
bool IsBlockKeyword(std::string_view name) {
  for (std::string_view k : {"elif", "else", "endif", "endfor", "endset", "endmacro", "endcall",
                             "endfilter", "endraw"}) {
    if (name == k) return true;
  }
  return false;
}

}  // namespace

const Token& Parser::Peek(size_t ahead) const {
  return pos_ + ahead < tokens_.size() ? tokens_[pos_ + ahead] : kEndToken;
}

bool Parser::Is(TokenKind kind, size_t ahead) const {
  return pos_ + ahead < tokens_.size() && tokens_[pos_ + ahead].kind == kind;
}

bool Parser::IsName(std::string_view name, size_t ahead) const {
  return Is(TokenKind::kIdentifier, ahead) && tokens_[pos_ + ahead].value == name;
}

bool Parser::IsOp(TokenKind kind, std::string_view value) const {
  return Is(kind) && tokens_[pos_].value == value;
}

bool Parser::IsBlockTag(std::initializer_list<std::string_view> names) const {
  if (!Is(TokenKind::kOpenStatement) || !Is(TokenKind::kIdentifier, 1)) return false;
  for (std::string_view name : names) {
    if (tokens_[pos_ + 1].value == name) return true;
  }
  return false;
}

size_t Parser::Offset() const {
  if (pos_ < tokens_.size()) return tokens_[pos_].offset;
  return source_.size();
}

Status Parser::ErrorAt(size_t offset, const std::string& message) const {
  return InvalidArgumentError("template syntax error at " + DescribePosition(source_, offset) + ": " +
                              message);
}

Status Parser::Error(const std::string& message) const { return ErrorAt(Offset(), message); }

Status Parser::Expect(TokenKind kind, std::string_view what) {
  if (!Is(kind)) {
    return Error("expected " + std::string(what) + ", got " +
                 (AtEnd() ? std::string("end of template") : Describe(Peek())));
  }
  ++pos_;
  return OkStatus();
}

Status Parser::ExpectName(std::string_view name) {
  if (!IsName(name)) return Error("expected '" + std::string(name) + "'");
  ++pos_;
  return OkStatus();
}

StatusOr<std::string> Parser::ExpectIdentifier(std::string_view what) {
  if (!Is(TokenKind::kIdentifier)) return Error("expected " + std::string(what));
  return tokens_[pos_++].value;
}

StatusOr<Body> Parser::ParseAll() {
  Body body;
  while (!AtEnd()) {
    if (Is(TokenKind::kOpenStatement) && Is(TokenKind::kIdentifier, 1) && IsBlockKeyword(Peek(1).value)) {
      return Error("unexpected '{% " + Peek(1).value + " %}' with no open block");
    }
    ASSIGN_OR_RETURN(StmtPtr stmt, ParseNode());
    if (stmt) body.push_back(std::move(stmt));
  }
  return body;
}

// Parses statements until one of `end_names` opens a tag (not consumed).
StatusOr<Body> Parser::ParseBody(std::initializer_list<std::string_view> end_names, std::string_view block) {
  Body body;
  while (true) {
    if (AtEnd()) return Error("unclosed '" + std::string(block) + "' block: reached end of template");
    if (IsBlockTag(end_names)) return body;
    if (Is(TokenKind::kOpenStatement) && Is(TokenKind::kIdentifier, 1) && IsBlockKeyword(Peek(1).value)) {
      return Error("unexpected '{% " + Peek(1).value + " %}' inside '" + std::string(block) + "' block");
    }
    ASSIGN_OR_RETURN(StmtPtr stmt, ParseNode());
    if (stmt) body.push_back(std::move(stmt));
  }
}

StatusOr<StmtPtr> Parser::ParseNode() {
  const Token& token = Peek();
  auto stmt = std::make_unique<Stmt>();
  stmt->offset = token.offset;
  switch (token.kind) {
    case TokenKind::kComment: ++pos_; return StmtPtr();
    case TokenKind::kText:
      stmt->kind = StmtKind::kText;
      stmt->text = token.value;
      ++pos_;
      return stmt;
    case TokenKind::kOpenExpression: {
      ++pos_;
      stmt->kind = StmtKind::kOutput;
      ASSIGN_OR_RETURN(stmt->expr, ParseExpression());
      RETURN_IF_ERROR(Expect(TokenKind::kCloseExpression, "'}}'"));
      return stmt;
    }
    case TokenKind::kOpenStatement: return ParseStatement();
    default: return Error("unexpected " + Describe(token) + " outside of a tag");
  }
}

StatusOr<StmtPtr> Parser::ParseStatement() {
  DepthGuard guard(this);
  if (!guard.ok()) return Error("blocks nested too deeply");
  size_t offset = Offset();
  ++pos_;  // {%
  ASSIGN_OR_RETURN(std::string name, ExpectIdentifier("a statement name after '{%'"));
  if (name == "if") {
    auto stmt = std::make_unique<Stmt>();
    stmt->kind = StmtKind::kIf;
    stmt->offset = offset;
    ASSIGN_OR_RETURN(stmt->expr, ParseExpression());
    RETURN_IF_ERROR(Expect(TokenKind::kCloseStatement, "'%}'"));
    RETURN_IF_ERROR(ParseIfTail(stmt.get()));
    RETURN_IF_ERROR(ExpectEndTag("endif"));
    return stmt;
  }
  if (name == "for") return ParseFor(offset);
  if (name == "set") return ParseSet(offset);
  if (name == "macro") return ParseMacro(offset);
  if (name == "call") return ParseCallBlock(offset);
  if (name == "filter") return ParseFilterBlock(offset);
  if (name == "break" || name == "continue") {
    if (loop_depth_ == 0) return ErrorAt(offset, "'" + name + "' outside of a for loop");
    RETURN_IF_ERROR(Expect(TokenKind::kCloseStatement, "'%}'"));
    auto stmt = std::make_unique<Stmt>();
    stmt->kind = name == "break" ? StmtKind::kBreak : StmtKind::kContinue;
    stmt->offset = offset;
    return stmt;
  }
  return ErrorAt(offset, "unknown statement '" + name + "'");
}

// After `{% if x %}`: the body, then any elif/else branches; leaves `{% endif %}` unread.
Status Parser::ParseIfTail(Stmt* stmt) {
  ASSIGN_OR_RETURN(stmt->body, ParseBody({"elif", "else", "endif"}, "if"));
  if (IsBlockTag({"elif"})) {
    auto branch = std::make_unique<Stmt>();
    branch->kind = StmtKind::kIf;
    branch->offset = Offset();
    pos_ += 2;
    ASSIGN_OR_RETURN(branch->expr, ParseExpression());
    RETURN_IF_ERROR(Expect(TokenKind::kCloseStatement, "'%}'"));
    RETURN_IF_ERROR(ParseIfTail(branch.get()));
    stmt->else_body.push_back(std::move(branch));
  } else if (IsBlockTag({"else"})) {
    pos_ += 2;
    RETURN_IF_ERROR(Expect(TokenKind::kCloseStatement, "'%}'"));
    ASSIGN_OR_RETURN(stmt->else_body, ParseBody({"endif"}, "if"));
  }
  return OkStatus();
}

Status Parser::ExpectEndTag(std::string_view name) {
  RETURN_IF_ERROR(Expect(TokenKind::kOpenStatement, "'{% " + std::string(name) + " %}'"));
  RETURN_IF_ERROR(ExpectName(name));
  if (name == "endmacro" && Is(TokenKind::kIdentifier)) ++pos_;  // {% endmacro name %}
  return Expect(TokenKind::kCloseStatement, "'%}'");
}

// A name, `a, b`, `(a, b)`, or (for set) `ns.attr`.
StatusOr<ExprPtr> Parser::ParseAssignTarget(bool allow_attribute) {
  bool parenthesized = Is(TokenKind::kOpenParen);
  if (parenthesized) ++pos_;
  auto tuple = MakeExpr(ExprKind::kTuple, Offset());
  while (true) {
    size_t offset = Offset();
    ASSIGN_OR_RETURN(std::string name, ExpectIdentifier("a variable name"));
    auto target = MakeExpr(ExprKind::kName, offset);
    target->name = name;
    if (allow_attribute && Is(TokenKind::kDot)) {
      ++pos_;
      auto attr = MakeExpr(ExprKind::kAttr, offset);
      ASSIGN_OR_RETURN(attr->name, ExpectIdentifier("an attribute name"));
      attr->items.push_back(std::move(target));
      if (Is(TokenKind::kComma)) return Error("cannot assign to an attribute inside a tuple");
      return attr;
    }
    tuple->items.push_back(std::move(target));
    if (!Is(TokenKind::kComma)) break;
    ++pos_;
  }
  if (parenthesized) RETURN_IF_ERROR(Expect(TokenKind::kCloseParen, "')'"));
  if (tuple->items.size() == 1 && !parenthesized) return std::move(tuple->items[0]);
  return tuple;
}

StatusOr<StmtPtr> Parser::ParseFor(size_t offset) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::kFor;
  stmt->offset = offset;
  ASSIGN_OR_RETURN(stmt->target, ParseAssignTarget(/*allow_attribute=*/false));
  RETURN_IF_ERROR(ExpectName("in"));
  ASSIGN_OR_RETURN(stmt->expr, ParseExpression(/*allow_condition=*/false));
  if (IsName("if")) {
    ++pos_;
    ASSIGN_OR_RETURN(stmt->condition, ParseExpression());
  }
  if (IsName("recursive")) return Error("recursive for loops are not supported");
  RETURN_IF_ERROR(Expect(TokenKind::kCloseStatement, "'%}'"));
  ++loop_depth_;
  auto body = ParseBody({"else", "endfor"}, "for");
  --loop_depth_;
  if (!body.ok()) return body.status();
  stmt->body = std::move(body).value();
  if (IsBlockTag({"else"})) {
    pos_ += 2;
    RETURN_IF_ERROR(Expect(TokenKind::kCloseStatement, "'%}'"));
    ASSIGN_OR_RETURN(stmt->else_body, ParseBody({"endfor"}, "for"));
  }
  RETURN_IF_ERROR(ExpectEndTag("endfor"));
  return stmt;
}

StatusOr<StmtPtr> Parser::ParseSet(size_t offset) {
  auto stmt = std::make_unique<Stmt>();
  stmt->offset = offset;
  ASSIGN_OR_RETURN(stmt->target, ParseAssignTarget(/*allow_attribute=*/true));
  if (Is(TokenKind::kEquals)) {
    ++pos_;
    stmt->kind = StmtKind::kSet;
    ASSIGN_OR_RETURN(stmt->expr, ParseTupleOrExpression());
    RETURN_IF_ERROR(Expect(TokenKind::kCloseStatement, "'%}'"));
    return stmt;
  }
  stmt->kind = StmtKind::kSetBlock;
  RETURN_IF_ERROR(Expect(TokenKind::kCloseStatement, "'=' or '%}'"));
  ASSIGN_OR_RETURN(stmt->body, ParseBody({"endset"}, "set"));
  RETURN_IF_ERROR(ExpectEndTag("endset"));
  return stmt;
}

StatusOr<std::vector<Param>> Parser::ParseParams() {
  std::vector<Param> params;
  RETURN_IF_ERROR(Expect(TokenKind::kOpenParen, "'('"));
  while (!Is(TokenKind::kCloseParen)) {
    Param param;
    ASSIGN_OR_RETURN(param.name, ExpectIdentifier("a parameter name"));
    for (const Param& p : params) {
      if (p.name == param.name) return Error("duplicate parameter '" + param.name + "'");
    }
    if (Is(TokenKind::kEquals)) {
      ++pos_;
      ASSIGN_OR_RETURN(param.default_value, ParseExpression());
    } else if (!params.empty() && params.back().default_value) {
      return Error("parameter without a default follows one with a default");
    }
    params.push_back(std::move(param));
    if (!Is(TokenKind::kComma)) break;
    ++pos_;
  }
  RETURN_IF_ERROR(Expect(TokenKind::kCloseParen, "')'"));
  return params;
}

StatusOr<StmtPtr> Parser::ParseMacro(size_t offset) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::kMacro;
  stmt->offset = offset;
  ASSIGN_OR_RETURN(stmt->name, ExpectIdentifier("a macro name"));
  ASSIGN_OR_RETURN(stmt->params, ParseParams());
  RETURN_IF_ERROR(Expect(TokenKind::kCloseStatement, "'%}'"));
  int saved_loop_depth = loop_depth_;
  loop_depth_ = 0;  // a macro body cannot break out of the caller's loop
  auto body = ParseBody({"endmacro"}, "macro");
  loop_depth_ = saved_loop_depth;
  if (!body.ok()) return body.status();
  stmt->body = std::move(body).value();
  RETURN_IF_ERROR(ExpectEndTag("endmacro"));
  return stmt;
}

StatusOr<StmtPtr> Parser::ParseCallBlock(size_t offset) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::kCallBlock;
  stmt->offset = offset;
  if (Is(TokenKind::kOpenParen)) {
    ASSIGN_OR_RETURN(stmt->params, ParseParams());
  }
  ASSIGN_OR_RETURN(stmt->expr, ParseExpression());
  if (stmt->expr->kind != ExprKind::kCall) return ErrorAt(offset, "{% call %} needs a macro call");
  RETURN_IF_ERROR(Expect(TokenKind::kCloseStatement, "'%}'"));
  int saved_loop_depth = loop_depth_;
  loop_depth_ = 0;
  auto body = ParseBody({"endcall"}, "call");
  loop_depth_ = saved_loop_depth;
  if (!body.ok()) return body.status();
  stmt->body = std::move(body).value();
  RETURN_IF_ERROR(ExpectEndTag("endcall"));
  return stmt;
}

StatusOr<StmtPtr> Parser::ParseFilterBlock(size_t offset) {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::kFilterBlock;
  stmt->offset = offset;
  ExprPtr chain;  // null innermost operand stands for the block's text
  do {
    if (chain) ++pos_;  // |
    ASSIGN_OR_RETURN(chain, ParseFilter(std::move(chain)));
  } while (Is(TokenKind::kPipe));
  stmt->expr = std::move(chain);
  RETURN_IF_ERROR(Expect(TokenKind::kCloseStatement, "'%}'"));
  ASSIGN_OR_RETURN(stmt->body, ParseBody({"endfilter"}, "filter"));
  RETURN_IF_ERROR(ExpectEndTag("endfilter"));
  return stmt;
}

ExprPtr Parser::MakeExpr(ExprKind kind, size_t offset) {
  auto expr = std::make_unique<Expr>();
  expr->kind = kind;
  expr->offset = offset;
  return expr;
}

ExprPtr Parser::MakeBinary(ExprKind kind, Op op, ExprPtr left, ExprPtr right, size_t offset) {
  auto expr = MakeExpr(kind, offset);
  expr->op = op;
  expr->items.push_back(std::move(left));
  expr->items.push_back(std::move(right));
  return expr;
}

}  // namespace internal

StatusOr<Body> ParseTemplate(std::string_view source) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(source));
  internal::Parser parser(source, std::move(tokens));
  return parser.ParseAll();
}

}  // namespace surge::jinja
