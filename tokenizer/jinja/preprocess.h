// Template preprocessing as @huggingface/jinja does it before lexing (trim_blocks,
// lstrip_blocks, trailing newline, {% generation %} tags), keeping a map back to the source.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace surge::jinja {

// Preprocessed template text; origin[i] is the source offset of text[i] (one extra entry
// for the end), so errors point into the template as written.
struct Mapped {
  std::string text;
  std::vector<size_t> origin;

  void Keep(const Mapped& from, size_t i) {
    text.push_back(from.text[i]);
    origin.push_back(from.origin[i]);
  }
  void Finish(const Mapped& from) { origin.push_back(from.origin.back()); }
};

Mapped Preprocess(std::string_view source);

// Offset after the run of whitespace (Python's str.isspace) starting at `pos`.
size_t SkipSpaces(std::string_view s, size_t pos);
// Length of `s` without its trailing whitespace, never below `floor`.
size_t TrimmedLength(std::string_view s, size_t floor);

}  // namespace surge::jinja
