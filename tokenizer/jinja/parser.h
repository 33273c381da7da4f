// Parser: tokens -> AST, with Jinja's operator precedence and the statements chat
// templates use. Unknown filters and tests fail when applied, not here (as Jinja 3 does
// inside conditionals), so a template with one in a dead branch still renders.
#pragma once

#include <string_view>

#include "base/status.h"
#include "tokenizer/jinja/ast.h"

namespace surge::jinja {

// Tokenizes and parses `source`. Errors name the line and column.
StatusOr<Body> ParseTemplate(std::string_view source);

}  // namespace surge::jinja
