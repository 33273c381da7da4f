// The recursive-descent parser shared by parser.cc (statements) and parser_expr.cc
// (expressions). Internal to the jinja library.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/lexer.h"

namespace surge::jinja::internal {

class Parser {
 public:
  Parser(std::string_view source, std::vector<Token> tokens)
      : source_(source), tokens_(std::move(tokens)) {}

  StatusOr<Body> ParseAll();

 private:
  // Deep nesting would overflow the stack here and in the interpreter.
  static constexpr int kMaxDepth = 200;

  // RAII nesting counter; check `ok()` right after construction.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser* p) : p_(p) { ++p_->depth_; }
    ~DepthGuard() { --p_->depth_; }
    bool ok() const { return p_->depth_ <= kMaxDepth; }

   private:
    Parser* p_;
  };

  // Token access.
  bool AtEnd() const { return pos_ >= tokens_.size(); }
  const Token& Peek(size_t ahead = 0) const;
  bool Is(TokenKind kind, size_t ahead = 0) const;
  bool IsName(std::string_view name, size_t ahead = 0) const;
  bool IsOp(TokenKind kind, std::string_view value) const;
  bool IsBlockTag(std::initializer_list<std::string_view> names) const;
  size_t Offset() const;
  Status Error(const std::string& message) const;
  Status ErrorAt(size_t offset, const std::string& message) const;
  Status Expect(TokenKind kind, std::string_view what);
  Status ExpectName(std::string_view name);
  StatusOr<std::string> ExpectIdentifier(std::string_view what);

  // Statements (parser.cc).
  StatusOr<Body> ParseBody(std::initializer_list<std::string_view> end_names, std::string_view block);
  StatusOr<StmtPtr> ParseNode();
  StatusOr<StmtPtr> ParseStatement();
  Status ParseIfTail(Stmt* stmt);
  StatusOr<StmtPtr> ParseFor(size_t offset);
  StatusOr<StmtPtr> ParseSet(size_t offset);
  StatusOr<StmtPtr> ParseMacro(size_t offset);
  StatusOr<StmtPtr> ParseCallBlock(size_t offset);
  StatusOr<StmtPtr> ParseFilterBlock(size_t offset);
  StatusOr<std::vector<Param>> ParseParams();
  StatusOr<ExprPtr> ParseAssignTarget(bool allow_attribute);
  Status ExpectEndTag(std::string_view name);

  // Expressions (parser_expr.cc), from lowest to highest precedence.
  StatusOr<ExprPtr> ParseExpression(bool allow_condition = true);
  StatusOr<ExprPtr> ParseTupleOrExpression();
  StatusOr<ExprPtr> ParseCondition();
  StatusOr<ExprPtr> ParseOr();
  StatusOr<ExprPtr> ParseAnd();
  StatusOr<ExprPtr> ParseNot();
  StatusOr<ExprPtr> ParseCompare();
  StatusOr<ExprPtr> ParseMath1();
  StatusOr<ExprPtr> ParseConcat();
  StatusOr<ExprPtr> ParseMath2();
  StatusOr<ExprPtr> ParsePow();
  StatusOr<ExprPtr> ParseUnary(bool with_filter);
  StatusOr<ExprPtr> ParsePostfix(ExprPtr node);
  StatusOr<ExprPtr> ParseSubscript(ExprPtr node);
  StatusOr<ExprPtr> ParseFilterAndTests(ExprPtr node);
  StatusOr<ExprPtr> ParseFilter(ExprPtr operand);
  StatusOr<ExprPtr> ParseTest(ExprPtr operand);
  StatusOr<ExprPtr> ParsePrimary();
  StatusOr<ExprPtr> ParseNumber(const Token& token);
  StatusOr<ExprPtr> ParseParenthesized(size_t offset);
  StatusOr<ExprPtr> ParseList(size_t offset);
  StatusOr<ExprPtr> ParseDict(size_t offset);
  StatusOr<std::vector<Arg>> ParseArgs();

  static ExprPtr MakeExpr(ExprKind kind, size_t offset);
  static ExprPtr MakeBinary(ExprKind kind, Op op, ExprPtr left, ExprPtr right, size_t offset);

  std::string_view source_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;  // for break/continue
};

}  // namespace surge::jinja::internal
