// Subset construction of a Nfa into the per-rule DFAs of a CompiledGrammar, then pruning of
// states that can never finish and the left-recursion check.
#include <algorithm>
#include <map>
#include <string>

#include "engine/constraint/compiled_grammar.h"
#include "engine/constraint/nfa.h"

namespace surge {

class AutomatonBuilder {
 public:
  AutomatonBuilder(const Nfa& nfa, const ConstraintLimits& limits) : nfa_(nfa) {
    out_ = std::make_shared<CompiledGrammar>();
    out_->limits_ = limits;
  }

  StatusOr<std::shared_ptr<const CompiledGrammar>> Build() {
    ComputeByteClasses();
    rule_start_.assign(nfa_.rule_entry.size(), kDeadState);
    for (size_t r = 0; r < nfa_.rule_entry.size(); ++r) {
      if (nfa_.rule_entry[r] >= 0) rule_start_[r] = Intern(Closure({nfa_.rule_entry[r]}));
    }
    out_->start_state_ = Intern(Closure({nfa_.start}));
    for (size_t s = 0; s < sets_.size() && !overflow_; ++s) Expand(static_cast<DfaState>(s));
    if (overflow_) {
      return ResourceExhaustedError("constraint: grammar too large (more than " +
                                    std::to_string(out_->limits_.max_dfa_states) + " DFA states)");
    }
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

  std::vector<NfaNodeId> Closure(std::vector<NfaNodeId> nodes) const {
    std::vector<NfaNodeId> out;
    std::vector<NfaNodeId> todo = std::move(nodes);
    while (!todo.empty()) {
      NfaNodeId n = todo.back();
      todo.pop_back();
      if (std::find(out.begin(), out.end(), n) != out.end()) continue;
      out.push_back(n);
      for (NfaNodeId e : nfa_.nodes[n].epsilons) todo.push_back(e);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  DfaState Intern(std::vector<NfaNodeId> set) {
    auto it = index_.find(set);
    if (it != index_.end()) return it->second;
    if (static_cast<int32_t>(sets_.size()) >= out_->limits_.max_dfa_states) {
      overflow_ = true;
      return kDeadState;
    }
    DfaState id = static_cast<DfaState>(sets_.size());
    index_.emplace(set, id);
    sets_.push_back(std::move(set));
    out_->next_.resize(sets_.size() * out_->num_classes_, kDeadState);
    out_->flags_.push_back(0);
    calls_.emplace_back();
    return id;
  }

  void Expand(DfaState s) {
    std::vector<std::vector<NfaNodeId>> buckets(out_->num_classes_);
    std::map<RuleId, std::vector<NfaNodeId>> calls;
    bool accepting = false;
    for (NfaNodeId n : sets_[s]) {
      const NfaNode& node = nfa_.nodes[n];
      accepting |= node.final;
      for (auto [set, target] : node.byte_edges) {
        for (int32_t c : classes_of_set_[set]) buckets[c].push_back(target);
      }
      for (auto [rule, ret] : node.calls) calls[rule].push_back(ret);
    }
    if (accepting) out_->flags_[s] |= CompiledGrammar::kAccepting;
    for (int32_t c = 0; c < out_->num_classes_; ++c) {
      if (buckets[c].empty()) continue;
      DfaState t = Intern(Closure(std::move(buckets[c])));
      out_->next_[static_cast<size_t>(s) * out_->num_classes_ + c] = t;
    }
    for (auto& [rule, rets] : calls) {
      CallEdge edge{rule_start_[rule], Intern(Closure(std::move(rets)))};  // Intern grows calls_
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
  std::vector<std::vector<NfaNodeId>> sets_;         // [num_states] NFA nodes of each state
  std::map<std::vector<NfaNodeId>, DfaState> index_;
  std::vector<std::vector<CallEdge>> calls_;         // [num_states] before flattening
  std::vector<bool> productive_;
  bool overflow_ = false;
};

StatusOr<std::shared_ptr<const CompiledGrammar>> CompileGrammar(const Grammar& grammar,
                                                               const ConstraintLimits& limits) {
  ASSIGN_OR_RETURN(Nfa nfa, BuildNfa(grammar, limits));
  return AutomatonBuilder(nfa, limits).Build();
}

}  // namespace surge
