// Subset construction of a Nfa into the per-rule DFAs of a CompiledGrammar, then pruning of
// states that can never finish and the left-recursion check.
#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <unordered_map>

#include "engine/constraint/compile_budget.h"
#include "engine/constraint/compiled_grammar.h"
#include "engine/constraint/nfa.h"

namespace surge {
namespace {

// The NFA node sets of the DFA states, each stored once (in one arena) and found by hash.
class NodeSetTable {
 public:
  int32_t size() const { return static_cast<int32_t>(begin_.size()) - 1; }
  std::span<const NfaNodeId> Get(DfaState s) const {
    return {arena_.data() + begin_[s], static_cast<size_t>(begin_[s + 1] - begin_[s])};
  }
  // The state whose set has `hash` and satisfies `same` (a test of equality), or
  // kDeadState when there is none yet.
  template <typename Same>
  DfaState Find(uint64_t hash, Same same) const {
    auto [first, last] = by_hash_.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      if (same(Get(it->second))) return it->second;
    }
    return kDeadState;
  }
  DfaState Add(std::span<const NfaNodeId> set, uint64_t hash) {
    DfaState id = size();
    arena_.insert(arena_.end(), set.begin(), set.end());
    begin_.push_back(static_cast<int64_t>(arena_.size()));
    by_hash_.emplace(hash, id);
    return id;
  }
  // Bytes held: the sets, their offsets and the hash index (about 32 bytes a state).
  int64_t bytes() const {
    return static_cast<int64_t>(arena_.size() * sizeof(NfaNodeId) + begin_.size() * (sizeof(int64_t) + 32));
  }
  // Independent of the order of the set's nodes (so that closures need no sorting).
  static uint64_t Hash(std::span<const NfaNodeId> set) {
    uint64_t h = set.size();
    for (NfaNodeId n : set) {
      uint64_t x = static_cast<uint64_t>(n) + 0x9e3779b97f4a7c15ull;  // splitmix64's finalizer
      x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
      x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
      h += x ^ (x >> 31);
    }
    return h;
  }

 private:
  std::vector<NfaNodeId> arena_;     // every state's set, one after another (any order)
  std::vector<int64_t> begin_ = {0}; // [num_states + 1] offsets into arena_
  std::unordered_multimap<uint64_t, DfaState> by_hash_;
};

}  // namespace

class AutomatonBuilder {
 public:
  AutomatonBuilder(const Nfa& nfa, const ConstraintLimits& limits, CompileBudget* budget)
      : nfa_(nfa), budget_(budget), mark_(nfa.nodes.size(), 0) {
    out_ = std::make_shared<CompiledGrammar>();
    out_->limits_ = limits;
  }

  StatusOr<std::shared_ptr<const CompiledGrammar>> Build() {
    ComputeByteClasses();
    rule_start_.assign(nfa_.rule_entry.size(), kDeadState);
    for (size_t r = 0; r < nfa_.rule_entry.size(); ++r) {
      if (nfa_.rule_entry[r] >= 0) rule_start_[r] = InternClosureOf({nfa_.rule_entry[r]});
    }
    out_->start_state_ = InternClosureOf({nfa_.start});
    for (DfaState s = 0; s < sets_.size() && failure_.ok(); ++s) Expand(s);
    if (failure_.ok() && budget_->exhausted()) failure_ = budget_->status();  // never a partial automaton
    if (!failure_.ok()) return failure_;
    FinishCalls();
    Prune();
    if (!productive_[out_->start_state_]) {
      return InvalidArgumentError("constraint: the grammar matches no string");
    }
    RETURN_IF_ERROR(CheckLeftRecursion());
    return std::shared_ptr<const CompiledGrammar>(out_);
  }

 private:
  // Bytes that every edge set treats alike share a class (partition refinement).
  void ComputeByteClasses() {
    std::array<int32_t, 256> cls{};
    int32_t num = 1;
    for (const ByteSet& set : nfa_.sets) {
      std::map<std::pair<int32_t, bool>, int32_t> renumber;
      for (int b = 0; b < 256; ++b) {
        auto key = std::make_pair(cls[b], set.Contains(static_cast<uint8_t>(b)));
        auto [it, inserted] = renumber.emplace(key, static_cast<int32_t>(renumber.size()));
        cls[b] = it->second;
      }
      num = static_cast<int32_t>(renumber.size());
    }
    out_->num_classes_ = num;
    representative_.assign(num, 0);
    for (int b = 255; b >= 0; --b) {
      out_->byte_class_[b] = static_cast<uint8_t>(cls[b]);
      representative_[cls[b]] = static_cast<uint8_t>(b);
    }
    classes_of_set_.resize(nfa_.sets.size());
    for (size_t i = 0; i < nfa_.sets.size(); ++i) {
      for (int32_t c = 0; c < num; ++c) {
        if (nfa_.sets[i].Contains(representative_[c])) classes_of_set_[i].push_back(c);
      }
    }
  }

  // The epsilon-closure of the nodes in `todo` (emptied, no repeats) into closure_: each
  // node visited once and left marked with stamp_ (what Find's equality test reads), every
  // visit a step of the budget. Unsorted: the set's hash ignores order.
  void Closure(std::vector<NfaNodeId>* todo) {
    ++stamp_;
    closure_.clear();
    for (NfaNodeId n : *todo) mark_[n] = stamp_;
    closure_.swap(*todo);
    for (size_t i = 0; i < closure_.size(); ++i) {
      for (NfaNodeId e : nfa_.nodes[closure_[i]].epsilons) {
        if (mark_[e] != stamp_) { mark_[e] = stamp_; closure_.push_back(e); }
      }
    }
    budget_->Spend(static_cast<int64_t>(closure_.size()));
  }

  DfaState InternClosureOf(std::vector<NfaNodeId> nodes) { return Intern(&nodes); }

  // The state of the closure of `nodes` (duplicates allowed; emptied), added when new.
  DfaState Intern(std::vector<NfaNodeId>* nodes) {
    DedupInPlace(nodes);
    Closure(nodes);
    if (budget_->exhausted()) return Fail(budget_->status());
    const uint64_t hash = NodeSetTable::Hash(closure_);
    const size_t size = closure_.size();
    DfaState found = sets_.Find(hash, [&](std::span<const NfaNodeId> other) {
      budget_->Spend(static_cast<int64_t>(other.size()));
      return other.size() == size &&
             std::all_of(other.begin(), other.end(), [&](NfaNodeId n) { return mark_[n] == stamp_; });
    });
    if (found != kDeadState) return found;
    const ConstraintLimits& limits = out_->limits_;
    if (sets_.size() >= limits.max_dfa_states) {
      return Fail(ResourceExhaustedError("constraint: grammar too large (more than " +
                                         std::to_string(limits.max_dfa_states) + " DFA states)"));
    }
    DfaState id = sets_.Add(closure_, hash);
    out_->next_.resize(static_cast<size_t>(sets_.size()) * out_->num_classes_, kDeadState);
    out_->flags_.push_back(0);
    calls_.emplace_back();
    const int64_t bytes = sets_.bytes() + static_cast<int64_t>(out_->next_.size() * sizeof(DfaState));
    if (bytes > limits.max_automaton_bytes) {
      return Fail(ResourceExhaustedError("constraint: grammar too large (its automaton needs more than " +
                                         std::to_string(limits.max_automaton_bytes >> 20) + " MiB)"));
    }
    return id;
  }

  // Drops repeated nodes (targets reached from several nodes of a state) with the marks.
  void DedupInPlace(std::vector<NfaNodeId>* nodes) {
    ++stamp_;
    size_t kept = 0;
    for (NfaNodeId n : *nodes) {
      if (mark_[n] != stamp_) { mark_[n] = stamp_; (*nodes)[kept++] = n; }
    }
    nodes->resize(kept);
  }

  DfaState Fail(Status status) {
    if (failure_.ok()) failure_ = std::move(status);
    return kDeadState;
  }

  void Expand(DfaState s) {
    std::vector<std::vector<NfaNodeId>>& buckets = buckets_;
    buckets.resize(out_->num_classes_);
    std::map<RuleId, std::vector<NfaNodeId>> calls;
    bool accepting = false;
    for (NfaNodeId n : sets_.Get(s)) {
      const NfaNode& node = nfa_.nodes[n];
      accepting |= node.final;
      int64_t steps = 1;
      for (auto [set, target] : node.byte_edges) {
        steps += static_cast<int64_t>(classes_of_set_[set].size());
        for (int32_t c : classes_of_set_[set]) buckets[c].push_back(target);
      }
      for (auto [rule, ret] : node.calls) calls[rule].push_back(ret);
      if (!budget_->Spend(steps)) {
        for (auto& bucket : buckets) bucket.clear();
        Fail(budget_->status());
        return;
      }
    }
    if (accepting) out_->flags_[s] |= CompiledGrammar::kAccepting;
    for (int32_t c = 0; c < out_->num_classes_ && failure_.ok(); ++c) {
      if (buckets[c].empty()) continue;
      DfaState t = Intern(&buckets[c]);
      out_->next_[static_cast<size_t>(s) * out_->num_classes_ + c] = t;
    }
    for (auto& bucket : buckets) bucket.clear();
    for (auto& [rule, rets] : calls) {
      CallEdge edge{rule_start_[rule], Intern(&rets)};  // Intern grows calls_
      calls_[s].push_back(edge);
    }
  }

  void FinishCalls() {
    out_->call_begin_.assign(1, 0);
    for (auto& edges : calls_) {
      for (const CallEdge& e : edges) out_->calls_.push_back(e);
      out_->call_begin_.push_back(static_cast<int32_t>(out_->calls_.size()));
    }
  }

  // productive: some path (through calls that can finish) reaches acceptance. Edges into
  // unproductive states are removed so that the matcher never walks into a dead end.
  void Prune() {
    const int32_t n = out_->num_states();
    const int32_t num_classes = out_->num_classes_;
    productive_.assign(n, false);
    std::vector<std::vector<DfaState>> byte_preds(n);
    std::vector<std::vector<int32_t>> call_watch(n);  // call edge indices to re-check
    std::vector<DfaState> call_owner(out_->calls_.size());
    for (DfaState s = 0; s < n; ++s) {
      for (int32_t c = 0; c < num_classes; ++c) {
        DfaState t = out_->next_[static_cast<size_t>(s) * num_classes + c];
        if (t >= 0) byte_preds[t].push_back(s);
      }
      for (int32_t i = out_->call_begin_[s]; i < out_->call_begin_[s + 1]; ++i) {
        call_owner[i] = s;
        call_watch[out_->calls_[i].callee_start].push_back(i);
        call_watch[out_->calls_[i].return_state].push_back(i);
      }
    }
    std::vector<DfaState> todo;
    for (DfaState s = 0; s < n; ++s) {
      if (out_->flags_[s] & CompiledGrammar::kAccepting) { productive_[s] = true; todo.push_back(s); }
    }
    while (!todo.empty()) {
      DfaState t = todo.back();
      todo.pop_back();
      auto mark = [&](DfaState s) { if (!productive_[s]) { productive_[s] = true; todo.push_back(s); } };
      for (DfaState s : byte_preds[t]) mark(s);
      for (int32_t i : call_watch[t]) {
        const CallEdge& e = out_->calls_[i];
        if (productive_[e.callee_start] && productive_[e.return_state]) mark(call_owner[i]);
      }
    }
    RemoveUnproductive();
  }

  void RemoveUnproductive() {
    const int32_t n = out_->num_states();
    std::vector<CallEdge> kept;
    std::vector<int32_t> begin = {0};
    for (DfaState s = 0; s < n; ++s) {
      uint8_t flags = out_->flags_[s] & CompiledGrammar::kAccepting;
      for (int32_t c = 0; c < out_->num_classes_; ++c) {
        DfaState& t = out_->next_[static_cast<size_t>(s) * out_->num_classes_ + c];
        if (t >= 0 && !productive_[t]) t = kDeadState;
        if (t >= 0) flags |= CompiledGrammar::kHasBytes;
      }
      for (int32_t i = out_->call_begin_[s]; i < out_->call_begin_[s + 1]; ++i) {
        const CallEdge& e = out_->calls_[i];
        if (!productive_[e.callee_start] || !productive_[e.return_state]) continue;
        kept.push_back(e);
        flags |= CompiledGrammar::kHasCalls;
      }
      begin.push_back(static_cast<int32_t>(kept.size()));
      out_->flags_[s] = flags;
    }
    out_->calls_ = std::move(kept);
    out_->call_begin_ = std::move(begin);
  }

  // A rule that can call itself before consuming a byte would make the matcher's stacks
  // grow without bound.
  Status CheckLeftRecursion() const {
    if (out_->calls_.empty()) return OkStatus();
    std::vector<bool> nullable = NullableStates();
    for (size_t r = 0; r < rule_start_.size(); ++r) {
      DfaState start = rule_start_[r];
      if (start < 0 || !productive_[start]) continue;
      std::vector<DfaState> todo = {start};
      std::vector<bool> seen(out_->num_states(), false);
      while (!todo.empty()) {
        DfaState s = todo.back();
        todo.pop_back();
        for (const CallEdge* e = out_->calls_begin(s); e != out_->calls_end(s); ++e) {
          if (e->callee_start == start) {
            return InvalidArgumentError("constraint: rule is left-recursive (it can reach itself "
                                        "without consuming input)");
          }
          for (DfaState next : {e->callee_start, e->return_state}) {
            if (next == e->return_state && !nullable[e->callee_start]) continue;
            if (!seen[next]) { seen[next] = true; todo.push_back(next); }
          }
        }
      }
    }
    return OkStatus();
  }

  // States from which acceptance is reachable without consuming a byte.
  std::vector<bool> NullableStates() const {
    std::vector<bool> nullable(out_->num_states(), false);
    for (bool changed = true; changed;) {
      changed = false;
      for (DfaState s = 0; s < out_->num_states(); ++s) {
        if (nullable[s]) continue;
        bool v = out_->accepting(s);
        for (const CallEdge* e = out_->calls_begin(s); !v && e != out_->calls_end(s); ++e) {
          v = nullable[e->callee_start] && nullable[e->return_state];
        }
        if (v) { nullable[s] = true; changed = true; }
      }
    }
    return nullable;
  }

  const Nfa& nfa_;
  std::shared_ptr<CompiledGrammar> out_;
  std::vector<uint8_t> representative_;              // [num_classes] a byte of each class
  std::vector<std::vector<int32_t>> classes_of_set_; // [nfa sets] classes inside each set
  std::vector<DfaState> rule_start_;                 // [num_rules]
  CompileBudget* budget_;
  NodeSetTable sets_;                                // [num_states] NFA nodes of each state
  std::vector<uint32_t> mark_;                       // [nfa nodes] == stamp_: seen this pass
  uint32_t stamp_ = 0;
  std::vector<NfaNodeId> closure_;                   // the closure being built
  std::vector<std::vector<NfaNodeId>> buckets_;      // [num_classes] targets, reused by Expand
  std::vector<std::vector<CallEdge>> calls_;         // [num_states] before flattening
  std::vector<bool> productive_;
  Status failure_;                                   // the first limit passed
};

StatusOr<std::shared_ptr<const CompiledGrammar>> CompileGrammar(const Grammar& grammar,
                                                               const ConstraintLimits& limits,
                                                               CompileBudget* budget) {
  CompileBudget own_budget(limits.max_compile_steps);
  if (budget == nullptr) budget = &own_budget;
  ASSIGN_OR_RETURN(Nfa nfa, BuildNfa(grammar, limits, budget));
  return AutomatonBuilder(nfa, limits, budget).Build();
}

}  // namespace surge
