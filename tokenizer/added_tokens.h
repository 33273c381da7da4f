// AddedTokenMatcher: finds added tokens (specials like <|im_start|> and user-added
// tokens) in text before the model sees it: leftmost, longest match first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace surge {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool lstrip = false;       // swallow the whitespace on its left
  bool rstrip = false;       // swallow the whitespace on its right
  bool normalized = false;   // matched in normalized rather than raw text
  bool single_word = false;  // only matches when not inside a word
};

// A stretch of text: either one added token (`token` non-null) or plain text.
struct Section {
  std::string_view text;
  const AddedToken* token = nullptr;
};

// Which match wins where added tokens overlap.
enum class AddedTokenOrder {
  kLeftmostLongest,  // tokenizers.js: scan left to right, longest token at each position
  // llama.cpp (tokenizer_st_partition): the longest token first, all its occurrences left
  // to right, then the next longest in what is left (equal lengths by increasing id).
  kLongestFirst,
};

class AddedTokenMatcher {
 public:
  // Each entry is the text to find and the token it stands for (its content, or its
  // normalized content for tokens matched after normalization). Tokens must outlive the
  // matcher.
  explicit AddedTokenMatcher(const std::vector<std::pair<std::string, const AddedToken*>>& entries,
                             AddedTokenOrder order = AddedTokenOrder::kLeftmostLongest);

  bool empty() const { return nodes_.size() == 1; }
  // Splits `text` into sections in order. At each position the longest token that matches
  // wins, as in tokenizers.js's DictionarySplitter; single_word tokens (a Rust-crate rule
  // tokenizers.js ignores) must not touch a word character on either side. lstrip/rstrip
  // then trim JavaScript whitespace off the neighbouring text sections, which may leave
  // them empty. Texts of `sections` point into `text`.
  void Split(std::string_view text, std::vector<Section>* sections) const;

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> children;  // sorted by byte
    const AddedToken* token = nullptr;                  // a token ends here
  };
  int32_t Child(int32_t node, uint8_t byte) const;
  // The longest acceptable token starting at `pos` (nullptr if none) and its length.
  std::pair<const AddedToken*, size_t> MatchAt(std::string_view text, size_t pos) const;
  // The two orders' Split, before lstrip/rstrip.
  void SplitLeftmostLongest(std::string_view text, std::vector<Section>* sections) const;
  void SplitLongestFirst(std::string_view text, std::vector<Section>* sections) const;

  AddedTokenOrder order_;
  std::vector<Node> nodes_;    // [0] is the root
  bool first_byte_[256] = {};  // bytes that can start a token
};

}  // namespace surge
