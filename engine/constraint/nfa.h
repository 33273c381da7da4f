// Nfa: a Grammar expanded into a Thompson-style automaton with epsilon, byte-set and call
// edges, one entry per called rule plus the top level. Internal to engine/constraint/.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/constraint/byte_set.h"
#include "engine/constraint/compile_budget.h"
#include "engine/constraint/grammar.h"
#include "engine/constraint/limits.h"

namespace surge {

using NfaNodeId = int32_t;

struct NfaNode {
  std::vector<std::pair<int32_t, NfaNodeId>> byte_edges;  // (index into Nfa::sets, target)
  std::vector<NfaNodeId> epsilons;
  std::vector<std::pair<RuleId, NfaNodeId>> calls;        // (called rule, return node)
  bool final = false;                                     // the end of its rule (or top)
};

struct Nfa {
  std::vector<NfaNode> nodes;
  std::vector<ByteSet> sets;          // distinct byte sets on edges
  NfaNodeId start = -1;               // top level
  std::vector<NfaNodeId> rule_entry;  // [num_rules] entry of called rules, -1 if inlined
};

// Rules that lie on a cycle of references (and so must be called, never inlined).
std::vector<bool> FindRecursiveRules(const Grammar& grammar);

// Each node spends one step of `budget` (not null); its failure is returned as is.
StatusOr<Nfa> BuildNfa(const Grammar& grammar, const ConstraintLimits& limits, CompileBudget* budget);

}  // namespace surge
