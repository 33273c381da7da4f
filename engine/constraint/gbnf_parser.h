// GBNF text grammar -> Grammar (vLLM guided_grammar, llama.cpp's grammar format):
//   root ::= item ("," item)*        rules `name ::= alternatives`, one per line (a rule
//   item ::= [a-z]+ | "quoted" | .  may continue on later lines inside ( ) or after '|')
// with "literals" (escapes \n \r \t \\ \" \[ \] \xHH \uHHHH \UHHHHHHHH), [classes] with
// ranges and [^negation], '.', ( ) groups, '|', postfix * + ? {m} {m,} {m,n}, and
// # comments. The start rule is `root`. Errors give line and column.
#pragma once

#include <string_view>

#include "base/status.h"
#include "engine/constraint/grammar.h"
#include "engine/constraint/limits.h"

namespace surge {

StatusOr<Grammar> GbnfToGrammar(std::string_view text, const ConstraintLimits& limits);

}  // namespace surge
