// TokenVocabulary: a model's tokens as the bytes each adds to the output, arranged as a byte
// trie for computing token masks. Built once per vocabulary; immutable and shareable
// read-only across threads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace surge {

class TokenVocabulary {
 public:
  // token_bytes[id]: the bytes token `id` appends to the output. Tokens with no bytes and
  // tokens flagged in `excluded` (special tokens; may be empty or [num_tokens]) are never
  // allowed, except `eos_token_ids`, which are allowed exactly when the output may end.
  TokenVocabulary(std::vector<std::string> token_bytes, const std::vector<uint8_t>& excluded,
                  std::vector<int32_t> eos_token_ids);

  int32_t num_tokens() const { return static_cast<int32_t>(token_bytes_.size()); }
  // uint64 words of a mask: one bit per token id.
  int32_t mask_words() const { return (num_tokens() + 63) / 64; }
  const std::string& bytes(int32_t id) const { return token_bytes_[id]; }
  bool is_eos(int32_t id) const;
  // Not EOS, not excluded, not empty: a token that the grammar decides.
  bool in_trie(int32_t id) const { return in_trie_[id]; }
  const std::vector<int32_t>& eos_token_ids() const { return eos_token_ids_; }

  // The trie in preorder: node 0 is the root (the empty prefix); node i's subtree is
  // [i, subtree_end(i)); its children follow it directly. Tokens whose bytes end at node i
  // are tokens_at(i).
  int32_t num_nodes() const { return static_cast<int32_t>(label_.size()); }
  uint8_t label(int32_t node) const { return label_[node]; }
  int32_t depth(int32_t node) const { return depth_[node]; }
  int32_t subtree_end(int32_t node) const { return subtree_end_[node]; }
  std::span<const int32_t> tokens_at(int32_t node) const {
    return {node_tokens_.data() + token_begin_[node], node_tokens_.data() + token_begin_[node + 1]};
  }
  int32_t max_depth() const { return max_depth_; }

 private:
  void BuildTrie();

  std::vector<std::string> token_bytes_;  // [num_tokens]
  std::vector<uint8_t> in_trie_;          // [num_tokens]
  std::vector<int32_t> eos_token_ids_;
  std::vector<uint8_t> label_;            // [num_nodes] the byte leading into the node
  std::vector<int32_t> depth_;            // [num_nodes]
  std::vector<int32_t> subtree_end_;      // [num_nodes]
  std::vector<int32_t> token_begin_;      // [num_nodes + 1] into node_tokens_
  std::vector<int32_t> node_tokens_;      // token ids grouped by trie node, in preorder
  int32_t max_depth_ = 0;
};

}  // namespace surge
