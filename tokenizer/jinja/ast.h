// AST of a parsed template: statements (text, output, control flow) over expressions.
// Nodes are plain structs; the interpreter switches on their kind.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/value.h"

namespace surge::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class ExprKind : uint8_t {
  kLiteral,    // literal
  kName,       // name
  kList,       // [items...]
  kTuple,      // (items...)
  kDict,       // {items[0]: items[1], items[2]: items[3], ...}
  kAttr,       // items[0].name
  kItem,       // items[0][items[1]]
  kSlice,      // items[0][items[1]:items[2]:items[3]], omitted parts null
  kCall,       // items[0](args)
  kFilter,     // items[0] | name(args); items[0] is null in {% filter %} blocks
  kTest,       // items[0] is [not] name(args)
  kUnary,      // op items[0]
  kBinary,     // items[0] op items[1]
  kAnd,        // items[0] and items[1]
  kOr,         // items[0] or items[1]
  kCompare,    // items[0] ops[0] items[1] ops[1] items[2] ...  (a chain, as in Python)
  kCondition,  // items[1] if items[0] else items[2]; items[2] null -> undefined
};

enum class Op : uint8_t {
  kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow, kConcat,  // binary
  kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn,              // comparison
  kNot, kNeg, kPos,                                       // unary
};

struct Arg {
  enum class Kind : uint8_t { kPositional, kKeyword, kSpread, kKeywordSpread };
  Kind kind = Kind::kPositional;
  std::string name;  // kKeyword
  ExprPtr value;
};

struct Expr {
  ExprKind kind;
  size_t offset = 0;  // source offset, for error messages
  Value literal;      // kLiteral
  std::string name;   // kName, kAttr, kFilter, kTest
  Op op = Op::kAdd;   // kUnary, kBinary
  bool negate = false;           // kTest: `is not`
  FilterFn filter = nullptr;     // kFilter, resolved at parse time (null: unknown)
  TestFn test = nullptr;         // kTest, resolved at parse time (null: unknown)
  std::vector<Op> ops;           // kCompare
  std::vector<ExprPtr> items;
  std::vector<Arg> args;         // kCall, kFilter, kTest
};

enum class StmtKind : uint8_t {
  kText,         // text
  kOutput,       // {{ expr }}
  kIf,           // {% if expr %} body {% else %} else_body; elif nests an kIf in else_body
  kFor,          // {% for target in expr if condition %} body {% else %} else_body
  kSet,          // {% set target = expr %}
  kSetBlock,     // {% set target %} body {% endset %}
  kMacro,        // {% macro name(params) %} body
  kCallBlock,    // {% call(params) expr %} body: expr is a kCall; body becomes caller()
  kFilterBlock,  // {% filter expr %} body: expr is a chain of kFilter with a null innermost
  kBreak,
  kContinue,
};

struct Param {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct Stmt {
  StmtKind kind;
  size_t offset = 0;
  std::string text;         // kText
  ExprPtr expr;
  ExprPtr target;           // kFor, kSet, kSetBlock: kName, kTuple of kName, or kAttr
  ExprPtr condition;        // kFor: the inline `if`
  Body body;
  Body else_body;
  std::string name;         // kMacro
  std::vector<Param> params;  // kMacro, kCallBlock
};

}  // namespace surge::jinja
