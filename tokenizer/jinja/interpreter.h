// Interpreter: renders a parsed template against a context. One Interpreter per render;
// internal to the jinja library (the public entry point is template.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/value.h"

namespace surge::jinja::internal {

// Variables of one block level: the template's top level, a for loop, a macro call.
// Lookups walk out to the parent; assignments stay in this scope, as in Jinja.
class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent) : parent_(std::move(parent)) {}
  const Value* Lookup(std::string_view name) const;
  void Set(std::string_view name, Value value) { vars_.Set(name, std::move(value)); }

 private:
  std::shared_ptr<Scope> parent_;
  Object vars_;
};
using ScopePtr = std::shared_ptr<Scope>;

class Interpreter {
 public:
  Interpreter(std::string_view source, const Limits& limits) : source_(source), limits_(limits) {}

  // Renders `body` with `context` (a dict of variables) on top of the globals.
  StatusOr<std::string> Render(const Body& body, const Object& context);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  // Counts nesting of Exec/Eval so no template can overflow the stack.
  class DepthGuard {
   public:
    explicit DepthGuard(Interpreter* in) : in_(in) { ++in_->depth_; }
    ~DepthGuard() { --in_->depth_; }

   private:
    Interpreter* in_;
  };

  // Statements (interpreter.cc).
  StatusOr<Flow> ExecBody(const Body& body, const ScopePtr& scope);
  StatusOr<Flow> Exec(const Stmt& stmt, const ScopePtr& scope);
  StatusOr<Flow> ExecIf(const Stmt& stmt, const ScopePtr& scope);
  Status ExecFor(const Stmt& stmt, const ScopePtr& scope);
  StatusOr<Array> LoopItems(const Stmt& stmt, const Value& iterable, const ScopePtr& loop_scope);
  Status ExecSet(const Stmt& stmt, const ScopePtr& scope);
  Status Assign(const Expr& target, Value value, const ScopePtr& scope);
  Status ExecMacro(const Stmt& stmt, const ScopePtr& scope);
  Status ExecCallBlock(const Stmt& stmt, const ScopePtr& scope);
  Status ExecFilterBlock(const Stmt& stmt, const ScopePtr& scope);
  StatusOr<Value> CallMacro(const Stmt& macro, const ScopePtr& closure, const CallArgs& args);
  Status BindParams(const Stmt& macro, const CallArgs& args, const ScopePtr& scope);
  StatusOr<std::string> Capture(const Body& body, const ScopePtr& scope);
  Status Write(std::string_view text);
  Status WriteValue(const Value& value);
  Status Step();

  // Expressions (interpreter_expr.cc).
  StatusOr<Value> Eval(const Expr& expr, const ScopePtr& scope);
  StatusOr<Value> EvalNode(const Expr& expr, const ScopePtr& scope);
  StatusOr<Value> EvalName(const Expr& expr, const ScopePtr& scope);
  StatusOr<Value> EvalAccess(const Expr& expr, const ScopePtr& scope);
  StatusOr<Value> EvalBinary(const Expr& expr, const ScopePtr& scope);
  StatusOr<Value> EvalLogical(const Expr& expr, const ScopePtr& scope);
  StatusOr<Value> EvalSlice(const Expr& expr, const ScopePtr& scope);
  StatusOr<Value> EvalCall(const Expr& expr, const ScopePtr& scope);
  StatusOr<Value> EvalFilter(const Expr& expr, const ScopePtr& scope, const Value* base);
  StatusOr<Value> EvalTest(const Expr& expr, const ScopePtr& scope);
  StatusOr<Value> EvalUnary(const Expr& expr, const ScopePtr& scope);
  StatusOr<Value> EvalCompare(const Expr& expr, const ScopePtr& scope);
  StatusOr<Value> EvalCollection(const Expr& expr, const ScopePtr& scope);
  StatusOr<CallArgs> EvalArgs(const std::vector<Arg>& args, const ScopePtr& scope);
  StatusOr<Value> CallFunction(const Value& callee, const CallArgs& args, std::string_view what);

  // Attaches the source position to the first error of a render; later frames pass it on.
  Status Locate(const Status& status, size_t offset);

  std::string_view source_;
  Limits limits_;
  std::string* out_ = nullptr;
  uint64_t steps_ = 0;
  int depth_ = 0;
  int call_depth_ = 0;
  bool error_located_ = false;
};

// Python arithmetic on values: + - * / // % ** and ~ (interpreter_ops.cc).
StatusOr<Value> BinaryOp(Op op, const Value& left, const Value& right, const Limits& limits);

}  // namespace surge::jinja::internal
