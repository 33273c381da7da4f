// Grammar: the internal form of every constraint (JSON schema, regex, choice, GBNF) before
// it is compiled into an automaton. A context-free grammar over bytes: rules whose bodies
// are expression trees of byte sets, sequences, alternatives, bounded or unbounded
// repetition (with an optional separator) and references to rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/constraint/byte_set.h"

namespace surge {

using ExprId = int32_t;
using RuleId = int32_t;

inline constexpr int32_t kUnbounded = -1;

struct Expr {
  enum class Kind : uint8_t { kBytes, kSeq, kAlt, kRepeat, kRef };
  Kind kind = Kind::kSeq;
  ByteSet bytes;              // kBytes: one byte from this set
  std::vector<ExprId> items;  // kSeq, kAlt: the parts; kRepeat: {body} or {body, separator}
  int32_t min = 0;            // kRepeat
  int32_t max = 0;            // kRepeat; kUnbounded for no limit
  RuleId rule = -1;           // kRef
};

struct Rule {
  std::string name;
  ExprId body = -1;
  // Compile as a sub-automaton entered through a stack frame instead of inlining it at
  // each use. Recursive rules are always called; others are inlined unless marked.
  bool call = false;
};

// Expressions may be shared by several parents (the tree is a DAG); the compiler expands
// a shared expression once per use, and a non-called rule once per distinct continuation.
class Grammar {
 public:
  ExprId Bytes(const ByteSet& bytes);
  ExprId Byte(uint8_t byte) { return Bytes(ByteSet::Single(byte)); }
  ExprId Literal(std::string_view text);  // "" is the empty sequence
  ExprId Seq(std::vector<ExprId> items);
  ExprId Alt(std::vector<ExprId> items);   // no items: matches nothing
  ExprId Empty() { return Seq({}); }
  ExprId Repeat(ExprId body, int32_t min, int32_t max);
  // body (separator body)*, min..max bodies.
  ExprId SepRepeat(ExprId body, ExprId separator, int32_t min, int32_t max);
  ExprId Optional(ExprId body) { return Repeat(body, 0, 1); }
  ExprId Star(ExprId body) { return Repeat(body, 0, kUnbounded); }
  ExprId Ref(RuleId rule);

  RuleId AddRule(std::string name, bool call = false);
  void SetBody(RuleId rule, ExprId body) { rules_[rule].body = body; }
  void set_root(RuleId rule) { root_ = rule; }

  const Expr& expr(ExprId id) const { return exprs_[id]; }
  const Rule& rule(RuleId id) const { return rules_[id]; }
  int32_t num_exprs() const { return static_cast<int32_t>(exprs_.size()); }
  int32_t num_rules() const { return static_cast<int32_t>(rules_.size()); }
  RuleId root() const { return root_; }

 private:
  ExprId Add(Expr expr);

  std::vector<Expr> exprs_;
  std::vector<Rule> rules_;
  RuleId root_ = -1;
};

}  // namespace surge
