#include "engine/constraint/token_vocabulary.h"

#include <algorithm>
#include <numeric>

namespace surge {

TokenVocabulary::TokenVocabulary(std::vector<std::string> token_bytes,
                                 const std::vector<uint8_t>& excluded,
                                 std::vector<int32_t> eos_token_ids)
    : token_bytes_(std::move(token_bytes)), eos_token_ids_(std::move(eos_token_ids)) {
  in_trie_.assign(token_bytes_.size(), 0);
  for (size_t id = 0; id < token_bytes_.size(); ++id) {
    bool skip = token_bytes_[id].empty() || (id < excluded.size() && excluded[id]) ||
                is_eos(static_cast<int32_t>(id));
    in_trie_[id] = !skip;
  }
  BuildTrie();
}

bool TokenVocabulary::is_eos(int32_t id) const {
  return std::find(eos_token_ids_.begin(), eos_token_ids_.end(), id) != eos_token_ids_.end();
}

void TokenVocabulary::BuildTrie() {
  std::vector<int32_t> order;
  for (int32_t id = 0; id < num_tokens(); ++id) {
    if (in_trie_[id]) order.push_back(id);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return token_bytes_[a] < token_bytes_[b]; });
  label_ = {0};
  depth_ = {0};
  subtree_end_ = {0};
  token_begin_ = {0};
  std::vector<int32_t> path = {0};  // path[d]: the node at depth d on the current branch
  const std::string* previous = nullptr;
  auto close_to = [&](size_t depth) {  // finishes the nodes deeper than `depth`
    while (path.size() > depth + 1) {
      subtree_end_[path.back()] = num_nodes();
      path.pop_back();
    }
  };
  for (int32_t id : order) {
    const std::string& bytes = token_bytes_[id];
    size_t common = 0;
    if (previous != nullptr) {
      size_t limit = std::min({bytes.size(), previous->size(), path.size() - 1});
      while (common < limit && bytes[common] == (*previous)[common]) ++common;
    }
    close_to(common);
    for (size_t d = common; d < bytes.size(); ++d) {
      path.push_back(num_nodes());
      label_.push_back(static_cast<uint8_t>(bytes[d]));
      depth_.push_back(static_cast<int32_t>(d + 1));
      subtree_end_.push_back(0);
      token_begin_.push_back(static_cast<int32_t>(node_tokens_.size()));
    }
    node_tokens_.push_back(id);
    max_depth_ = std::max(max_depth_, static_cast<int32_t>(bytes.size()));
    previous = &bytes;
  }
  close_to(0);
  subtree_end_[0] = num_nodes();
  token_begin_.push_back(static_cast<int32_t>(node_tokens_.size()));
}

}  // namespace surge
