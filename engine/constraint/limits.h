// ConstraintLimits: the bounds every constraint compiler and matcher enforces, so that a
// request body can never make the server build an unbounded grammar or state.
#pragma once

#include <cstdint>

namespace surge {

struct ConstraintLimits {
  int32_t max_text_bytes = 64 * 1024;       // schema / regex / grammar / choices text
  int32_t max_schema_depth = 32;            // nesting of schemas inside schemas
  int32_t max_properties = 256;             // properties of one object schema
  int32_t max_enum_values = 1024;           // enum values, const alternatives, choices
  int32_t max_regex_bytes = 4096;           // one regex (also a schema's pattern)
  int32_t max_repeat = 1024;                // {m,n} counts, minLength/maxLength, min/maxItems
  int32_t max_json_nesting = 16;            // json_object and free JSON values: levels of {} / []
  int32_t max_nfa_nodes = 200000;           // compiled grammar, before determinization
  int32_t max_dfa_states = 100000;          // compiled grammar, after determinization
  // Memory of determinization: every DFA state's set of NFA nodes plus the transition
  // table (what a tiny regex like `a?{1000}{8}` blows up, far below the state cap).
  int64_t max_automaton_bytes = 64 << 20;
  // Work of one compile (closure visits, edges followed): bounds its time whatever the
  // machine's load; the server adds a wall-clock deadline and cancellation on top.
  int64_t max_compile_steps = 10'000'000;
  // Matcher (matcher.h): its state's words (heads and shared frames: grows with nesting and
  // with the distinct frames of ambiguous parses), and the work of one byte's step.
  int32_t max_matcher_words = 16384;
  int64_t max_step_work = 1 << 16;
  // Token masks (token_mask.h): the work of one mask's walk of the vocabulary (the sum of
  // its steps' work), so that a costly grammar cannot hold the engine thread for long.
  int64_t max_mask_work = int64_t{1} << 25;
};

}  // namespace surge
