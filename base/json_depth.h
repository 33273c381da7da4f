// The nesting depth of JSON text, measured without parsing it, so that untrusted JSON
// (request bodies, model and config files) is refused before a recursive copy, dump or
// walk of the parsed value could run out of stack.
#pragma once

#include <string_view>

namespace surge {

// Model and config files (config.json, tokenizer.json, safetensors headers, ...) nest a
// few levels; this leaves room for any real one.
inline constexpr int kMaxFileJsonDepth = 128;

// The deepest nesting of arrays and objects in `text`, scanning no further than the
// point where it passes `max_depth` (then the result is max_depth + 1). Strings are
// skipped, so brackets inside them do not count. Not a validator: invalid JSON gives
// some depth, and the parser then reports the syntax error.
int JsonNestingDepth(std::string_view text, int max_depth);

// True when `text` nests at most `max_depth` deep.
inline bool JsonDepthWithin(std::string_view text, int max_depth = kMaxFileJsonDepth) {
  return JsonNestingDepth(text, max_depth) <= max_depth;
}

}  // namespace surge
