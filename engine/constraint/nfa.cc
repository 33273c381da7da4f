#include "engine/constraint/nfa.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

namespace surge {
namespace {

// Rules each rule's body refers to (directly).
std::vector<std::vector<RuleId>> RuleReferences(const Grammar& grammar) {
  std::vector<std::vector<RuleId>> refs(grammar.num_rules());
  std::vector<int32_t> seen(grammar.num_exprs(), -1);
  for (RuleId r = 0; r < grammar.num_rules(); ++r) {
    std::vector<ExprId> todo = {grammar.rule(r).body};
    while (!todo.empty()) {
      ExprId e = todo.back();
      todo.pop_back();
      if (e < 0 || seen[e] == r) continue;
      seen[e] = r;
      const Expr& expr = grammar.expr(e);
      if (expr.kind == Expr::Kind::kRef) refs[r].push_back(expr.rule);
      for (ExprId item : expr.items) todo.push_back(item);
    }
  }
  return refs;
}

struct Tarjan {
  const std::vector<std::vector<RuleId>>& refs;
  std::vector<int32_t> index, low;
  std::vector<bool> on_stack, recursive;
  std::vector<RuleId> stack;
  int32_t counter = 0;

  void Visit(RuleId r) {
    index[r] = low[r] = counter++;
    stack.push_back(r);
    on_stack[r] = true;
    for (RuleId next : refs[r]) {
      if (index[next] < 0) {
        Visit(next);
        low[r] = std::min(low[r], low[next]);
      } else if (on_stack[next]) {
        low[r] = std::min(low[r], index[next]);
      }
      if (next == r) recursive[r] = true;
    }
    if (low[r] != index[r]) return;
    std::vector<RuleId> component;
    RuleId member;
    do {
      member = stack.back();
      stack.pop_back();
      on_stack[member] = false;
      component.push_back(member);
    } while (member != r);
    if (component.size() > 1) for (RuleId m : component) recursive[m] = true;
  }
};

struct ByteSetHash {
  size_t operator()(const ByteSet& s) const { return s.Hash(); }
};

class NfaBuilder {
 public:
  NfaBuilder(const Grammar& grammar, const ConstraintLimits& limits, std::vector<bool> called,
             CompileBudget* budget)
      : grammar_(grammar), limits_(limits), called_(std::move(called)), budget_(budget) {}

  StatusOr<Nfa> Build() {
    nfa_.rule_entry.assign(grammar_.num_rules(), -1);
    for (RuleId r = 0; r < grammar_.num_rules(); ++r) {
      if (!called_[r]) continue;
      NfaNodeId final_node = NewNode();
      nfa_.nodes[final_node].final = true;
      nfa_.rule_entry[r] = BuildExpr(grammar_.rule(r).body, final_node);
    }
    NfaNodeId top_final = NewNode();
    nfa_.nodes[top_final].final = true;
    nfa_.start = BuildRef(grammar_.root(), top_final);
    if (budget_->exhausted()) return budget_->status();
    if (overflow_) {
      return ResourceExhaustedError("constraint: grammar too large (more than " +
                                    std::to_string(limits_.max_nfa_nodes) + " NFA nodes)");
    }
    return std::move(nfa_);
  }

 private:
  NfaNodeId NewNode() {
    if (static_cast<int32_t>(nfa_.nodes.size()) >= limits_.max_nfa_nodes || !budget_->Spend(1)) {
      overflow_ = true;
      if (!nfa_.nodes.empty()) return 0;  // keep building harmlessly; the result is dropped
    }
    nfa_.nodes.emplace_back();
    return static_cast<NfaNodeId>(nfa_.nodes.size() - 1);
  }
  void Epsilon(NfaNodeId from, NfaNodeId to) { nfa_.nodes[from].epsilons.push_back(to); }

  int32_t SetIndex(const ByteSet& set) {
    auto [it, inserted] = set_index_.emplace(set, static_cast<int32_t>(nfa_.sets.size()));
    if (inserted) nfa_.sets.push_back(set);
    return it->second;
  }

  // Builds `e` so that it continues into `next`; returns its entry node.
  NfaNodeId BuildExpr(ExprId e, NfaNodeId next) {
    if (overflow_) return next;
    const Expr& expr = grammar_.expr(e);
    switch (expr.kind) {
      case Expr::Kind::kBytes: {
        NfaNodeId n = NewNode();
        if (!expr.bytes.empty()) nfa_.nodes[n].byte_edges.push_back({SetIndex(expr.bytes), next});
        return n;
      }
      case Expr::Kind::kSeq: {
        NfaNodeId cur = next;
        for (auto it = expr.items.rbegin(); it != expr.items.rend(); ++it) cur = BuildExpr(*it, cur);
        return cur;
      }
      case Expr::Kind::kAlt: {
        NfaNodeId n = NewNode();
        for (ExprId item : expr.items) {
          NfaNodeId entry = BuildExpr(item, next);
          Epsilon(n, entry);
        }
        return n;
      }
      case Expr::Kind::kRepeat:
        return BuildRepeat(expr, next);
      case Expr::Kind::kRef:
        return BuildRef(expr.rule, next);
    }
    return next;
  }

  // One more body, preceded by the separator unless it is the first.
  NfaNodeId BuildUnit(const Expr& expr, bool first, NfaNodeId next) {
    NfaNodeId body = BuildExpr(expr.items[0], next);
    if (first || expr.items.size() < 2) return body;
    return BuildExpr(expr.items[1], body);
  }

  // Bodies 1..min are required, then either a loop (unbounded) or optional bodies up to
  // max, each of which may instead stop at `next`. Built back to front.
  NfaNodeId BuildRepeat(const Expr& expr, NfaNodeId next) {
    if (expr.max == kUnbounded) return BuildLoop(expr, next);
    const int32_t min = expr.min;
    NfaNodeId cur = next;
    for (int32_t i = expr.max; i > min; --i) {
      NfaNodeId opt = NewNode();
      Epsilon(opt, next);
      Epsilon(opt, BuildUnit(expr, i == 1, cur));
      cur = opt;
    }
    for (int32_t i = min; i >= 1; --i) cur = BuildUnit(expr, i == 1, cur);
    return cur;
  }

  // body{min,} (with separators): the body is built once, as `unit` = body -> loop, and
  // loop -> next | (separator ->) unit. The first body and the min-th one enter that same
  // unit (building it again per use doubled the NFA at every nested star: b***...).
  NfaNodeId BuildLoop(const Expr& expr, NfaNodeId next) {
    const bool separated = expr.items.size() >= 2;
    NfaNodeId loop = NewNode();
    NfaNodeId unit = BuildExpr(expr.items[0], loop);
    NfaNodeId again = separated ? BuildExpr(expr.items[1], unit) : unit;
    Epsilon(loop, next);
    Epsilon(loop, again);
    if (expr.min == 0) {
      if (!separated) return loop;
      NfaNodeId entry = NewNode();
      Epsilon(entry, next);
      Epsilon(entry, unit);
      return entry;
    }
    NfaNodeId cur = expr.min == 1 ? unit : again;
    for (int32_t i = expr.min - 1; i >= 1; --i) cur = BuildUnit(expr, i == 1, cur);
    return cur;
  }

  NfaNodeId BuildRef(RuleId rule, NfaNodeId next) {
    if (called_[rule]) {
      NfaNodeId n = NewNode();
      nfa_.nodes[n].calls.push_back({rule, next});
      return n;
    }
    auto key = std::make_pair(rule, next);
    auto it = inlined_.find(key);
    if (it != inlined_.end()) return it->second;
    NfaNodeId entry = BuildExpr(grammar_.rule(rule).body, next);
    inlined_[key] = entry;
    return entry;
  }

  const Grammar& grammar_;
  const ConstraintLimits& limits_;
  std::vector<bool> called_;
  CompileBudget* budget_;
  Nfa nfa_;
  std::unordered_map<ByteSet, int32_t, ByteSetHash> set_index_;
  std::map<std::pair<RuleId, NfaNodeId>, NfaNodeId> inlined_;
  bool overflow_ = false;
};

}  // namespace

std::vector<bool> FindRecursiveRules(const Grammar& grammar) {
  std::vector<std::vector<RuleId>> refs = RuleReferences(grammar);
  int32_t n = grammar.num_rules();
  Tarjan tarjan{refs, std::vector<int32_t>(n, -1), std::vector<int32_t>(n, 0),
                std::vector<bool>(n, false), std::vector<bool>(n, false), {}, 0};
  for (RuleId r = 0; r < n; ++r) {
    if (tarjan.index[r] < 0) tarjan.Visit(r);
  }
  return tarjan.recursive;
}

StatusOr<Nfa> BuildNfa(const Grammar& grammar, const ConstraintLimits& limits, CompileBudget* budget) {
  if (grammar.root() < 0) return InvalidArgumentError("constraint: grammar has no root rule");
  std::vector<bool> called = FindRecursiveRules(grammar);
  for (RuleId r = 0; r < grammar.num_rules(); ++r) {
    if (grammar.rule(r).body < 0) {
      return InvalidArgumentError("constraint: rule '" + grammar.rule(r).name + "' has no body");
    }
    if (grammar.rule(r).call) called[r] = true;
  }
  return NfaBuilder(grammar, limits, std::move(called), budget).Build();
}

}  // namespace surge
