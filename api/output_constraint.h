// OutputConstraint: a request's structured-output constraint as the client wrote it —
// OpenAI's response_format, or one of vLLM's guided_json / guided_regex / guided_choice /
// guided_grammar — read and shape-checked. Compiling it is the server's job (api/ knows
// nothing of grammars).
#pragma once

#include <string>
#include <vector>

#include "api/field_reader.h"

namespace surge::api {

enum class OutputConstraintKind { kNone, kJsonObject, kJsonSchema, kRegex, kChoice, kGrammar };

struct OutputConstraint {
  OutputConstraintKind kind = OutputConstraintKind::kNone;
  std::string text;                  // kJsonSchema: the schema as JSON; kRegex / kGrammar: the source
  std::vector<std::string> choices;  // kChoice
  std::string param;                 // the field it came from, for errors: "response_format", "guided_json", ...
};

// Reads response_format and the guided_* fields; at most one may constrain the output
// (response_format {"type": "text"} does not). Errors are kept in `reader`.
void ReadOutputConstraint(FieldReader& reader, OutputConstraint* constraint);

}  // namespace surge::api
